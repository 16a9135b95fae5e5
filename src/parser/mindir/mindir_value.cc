#include "parser/mindir/mindir_value.h"

#include <cstring>

#include "parser/onnx/onnx_tensor.h"

namespace oc::mindir {
namespace {

using AT = mind_ir::AttributeProto;

// Nesting deeper than this is no model MindSpore writes; refusing it keeps a
// hostile file from recursing without bound.
constexpr int kMaxDepth = 32;
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

template <typename Src, typename Dst>
TensorData CopyConverted(const Src& src, int64_t count) {
  TensorData d = TensorData::Allocate(static_cast<size_t>(count) * sizeof(Dst));
  Dst* out = reinterpret_cast<Dst*>(d.mutable_data());
  for (int64_t k = 0; k < count; ++k) out[k] = static_cast<Dst>(src.Get(static_cast<int>(k)));
  return d;
}

}  // namespace

std::string Printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

MsValue MsValue::Ints(const std::vector<int64_t>& v) {
  MsValue m;
  m.kind = Kind::kTuple;
  for (int64_t x : v) m.items.push_back(Int(x));
  return m;
}

MsValue MsValue::Tensor(Value* v, DataType dtype, int rank) {
  MsValue m;
  m.kind = Kind::kTensor;
  m.tensor = v;
  m.dtype = dtype != DataType::kUndefined ? dtype : v->dtype;
  m.rank = rank >= 0 ? rank : (v->has_shape ? static_cast<int>(v->shape.size()) : -1);
  return m;
}

std::string MsValue::Describe() const {
  switch (kind) {
    case Kind::kNone: return "None";
    case Kind::kMonad: return "a side-effect monad";
    case Kind::kTensor: return StrCat("tensor '", tensor ? tensor->name : "?", "'");
    case Kind::kInt: return StrCat("int ", i);
    case Kind::kFloat: return StrCat("float ", f);
    case Kind::kBool: return i ? "bool True" : "bool False";
    case Kind::kString: return StrCat("string '", Printable(s), "'");
    case Kind::kTuple: {
      std::string out = "tuple(";
      for (size_t k = 0; k < items.size() && k < 8; ++k) out += (k ? ", " : "") + items[k].Describe();
      if (items.size() > 8) out += ", ...";
      return out + ")";
    }
  }
  return "?";
}

Expected<DataType> ConvertElemType(int32_t code, const std::string& what) {
  switch (code) {
    case mind_ir::ELEM_FLOAT: return DataType::kFloat32;
    case mind_ir::ELEM_UINT8: return DataType::kUInt8;
    case mind_ir::ELEM_INT8: return DataType::kInt8;
    case mind_ir::ELEM_UINT16: return DataType::kUInt16;
    case mind_ir::ELEM_INT16: return DataType::kInt16;
    case mind_ir::ELEM_INT32: return DataType::kInt32;
    case mind_ir::ELEM_INT64: return DataType::kInt64;
    case mind_ir::ELEM_BOOL: return DataType::kBool;
    case mind_ir::ELEM_FLOAT16: return DataType::kFloat16;
    case mind_ir::ELEM_DOUBLE:
    case mind_ir::ELEM_FLOAT64: return DataType::kFloat64;
    case mind_ir::ELEM_UINT32: return DataType::kUInt32;
    case mind_ir::ELEM_UINT64: return DataType::kUInt64;
    case mind_ir::ELEM_BFLOAT16: return DataType::kBFloat16;
    case mind_ir::ELEM_STRING: return NotSupported(what, " is a string tensor; string tensors are not supported");
    case mind_ir::ELEM_COMPLEX64:
    case mind_ir::ELEM_COMPLEX128: return NotSupported(what, " is a complex tensor; complex types are not supported");
    default: return InvalidFile(what, " has data_type ", code, ", which is not a MINDIR element type");
  }
}

Expected<DataType> ConvertTypeId(int64_t type_id, const std::string& what) {
  switch (type_id) {
    case 30: return DataType::kBool;
    case 32: return DataType::kInt8;
    case 33: return DataType::kInt16;
    case 34: return DataType::kInt32;
    case 35: return DataType::kInt64;
    case 37: return DataType::kUInt8;
    case 38: return DataType::kUInt16;
    case 39: return DataType::kUInt32;
    case 40: return DataType::kUInt64;
    case 42: return DataType::kFloat16;
    case 43: return DataType::kFloat32;
    case 44: return DataType::kFloat64;
    case 45: return DataType::kBFloat16;
    default:
      return NotSupported(what, " is MindSpore type id ", type_id,
                          "; supported: bool, int8/16/32/64, uint8/16/32/64, float16/32/64, bfloat16 (30-45)");
  }
}

Expected<DecodedTensor> DecodeTensor(const mind_ir::TensorProto& t, const std::string& what) {
  DecodedTensor out;
  OC_ASSIGN_OR_RETURN(out.dtype, ConvertElemType(t.data_type(), what));
  if (t.has_external_data())
    return NotSupported(what, ": its data is stored outside the model file ('", Printable(t.external_data().location()),
                        "'); external weights are not supported, export a single-file MINDIR (under 2 GiB)");
  if (t.has_compression_type() && t.compression_type() != mind_ir::TensorProto::NO_COMPRESSION)
    return NotSupported(what, ": compressed weights (compression_type ", static_cast<int>(t.compression_type()),
                        ") are not supported");
  out.shape.assign(t.dims().begin(), t.dims().end());
  OC_ASSIGN_OR_RETURN(int64_t count, onnx_parser::CheckedElementCount(out.shape, what));
  const int64_t elem = static_cast<int64_t>(DataTypeSize(out.dtype));
  if (count > kMaxTensorBytes / elem) return InvalidFile(what, ": tensor is too large");
  const int64_t bytes = count * elem;
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != bytes)
      return InvalidFile(what, ": raw_data has ", t.raw_data().size(), " bytes, but ", DataTypeName(out.dtype),
                         " dims [", count, " elements] need ", bytes);
    out.data = TensorData::Copy(t.raw_data().data(), t.raw_data().size());
    return out;
  }
  // Typed fields (rare in MindSpore's own files).
  auto need = [&](int size, const char* field) -> Status {
    if (size != count)
      return InvalidFile(what, ": ", field, " has ", size, " values, but its dims hold ", count);
    return Status::Ok();
  };
  switch (out.dtype) {
    case DataType::kFloat32:
      OC_RETURN_IF_ERROR(need(t.float_data_size(), "float_data"));
      out.data = CopyConverted<decltype(t.float_data()), float>(t.float_data(), count);
      return out;
    case DataType::kInt64:
      OC_RETURN_IF_ERROR(need(t.int64_data_size(), "int64_data"));
      out.data = CopyConverted<decltype(t.int64_data()), int64_t>(t.int64_data(), count);
      return out;
    case DataType::kInt32:
      OC_RETURN_IF_ERROR(need(t.int32_data_size(), "int32_data"));
      out.data = CopyConverted<decltype(t.int32_data()), int32_t>(t.int32_data(), count);
      return out;
    case DataType::kFloat64:
      OC_RETURN_IF_ERROR(need(t.double_data_size(), "double_data"));
      out.data = CopyConverted<decltype(t.double_data()), double>(t.double_data(), count);
      return out;
    default:
      if (count == 0) {
        out.data = TensorData::Allocate(0);
        return out;
      }
      return InvalidFile(what, ": ", DataTypeName(out.dtype), " tensor has no raw_data");
  }
}

Expected<MsValue> DecodeAttribute(const AT& a, Graph& graph, const std::string& name, const std::string& what,
                                  int depth) {
  if (depth > kMaxDepth) return InvalidFile(what, ": values nested deeper than ", kMaxDepth, " levels");
  auto tensor_value = [&](const mind_ir::TensorProto& t) -> Expected<MsValue> {
    OC_ASSIGN_OR_RETURN(DecodedTensor dt, DecodeTensor(t, what));
    const int rank = static_cast<int>(dt.shape.size());
    Value* v = graph.AddConstant(graph.FindValue(name) ? graph.UniqueName(name) : name, dt.dtype,
                                 std::move(dt.shape), std::move(dt.data));
    return MsValue::Tensor(v, v->dtype, rank);
  };
  switch (a.type()) {
    case AT::NONE: return MsValue::None();
    case AT::UMONAD:
    case AT::IOMONAD: {
      MsValue m;
      m.kind = MsValue::Kind::kMonad;
      return m;
    }
    case AT::BOOL: return MsValue::Bool((a.ints_size() ? a.ints(0) : a.i()) != 0);
    case AT::INT8:
    case AT::INT16:
    case AT::INT32:
    case AT::INT64:
    case AT::UINT8:
    case AT::UINT16:
    case AT::UINT32:
    case AT::UINT64: return MsValue::Int(a.ints_size() ? a.ints(0) : a.i());
    case AT::FLOAT: return MsValue::Float(a.floats_size() ? a.floats(0) : a.f());
    case AT::DOUBLE: return MsValue::Float(a.doubles_size() ? a.doubles(0) : a.d());
    case AT::STRING: return MsValue::String(a.strings_size() ? a.strings(0) : a.s());
    case AT::TENSOR: return tensor_value(a.t());
    case AT::TENSORS:
      if (a.tensors_size() != 1)
        return NotSupported(what, " holds ", a.tensors_size(), " tensors; a constant of exactly one is supported");
      return tensor_value(a.tensors(0));
    case AT::TUPLE:
    case AT::LIST: {
      MsValue m;
      m.kind = MsValue::Kind::kTuple;
      for (int k = 0; k < a.values_size(); ++k) {
        OC_ASSIGN_OR_RETURN(MsValue item, DecodeAttribute(a.values(k), graph, StrCat(name, "_", k),
                                                          StrCat(what, " item ", k), depth + 1));
        m.items.push_back(std::move(item));
      }
      return m;
    }
    default:
      if (!AT::AttributeType_IsValid(a.type()))
        return InvalidFile(what, " has attribute type ", static_cast<int>(a.type()), ", which MINDIR does not define");
      return NotSupported(what, " is a ", AT::AttributeType_Name(a.type()), " value, which is not supported");
  }
}

std::vector<TensorType> DecodeResultTypes(const AT& a) {
  std::vector<TensorType> out;
  auto one = [](const AT& x) {
    TensorType t;
    if (x.type() == AT::TENSORS && x.tensors_size() == 1) {
      auto dt = ConvertElemType(x.tensors(0).data_type(), "");
      if (dt.ok()) t.dtype = *dt;
      const auto& dims = x.tensors(0).dims();
      t.rank = dims.size() == 1 && dims[0] == -2 ? -1 : dims.size();  // -2: rank unknown
    }
    return t;
  };
  if (a.type() == AT::TUPLE || a.type() == AT::LIST) {
    for (const AT& item : a.values()) out.push_back(one(item));
  } else {
    out.push_back(one(a));
  }
  return out;
}

}  // namespace oc::mindir

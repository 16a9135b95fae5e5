#include "parser/mindir/mindir_lower.h"

#include <cmath>
#include <cstring>

namespace oc::mindir {

Attribute IntAttr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

Attribute FloatAttr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}

Attribute IntsAttr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

Attribute StringAttr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}

Status Lowering::Error(const std::string& what) const {
  return InvalidFile(def_.op, " node '", node_, "': ", what);
}

Status Lowering::Unsupported(const std::string& what) const {
  return NotSupported(def_.op, " node '", node_, "': ", what);
}

Status Lowering::ArgError(size_t i, const char* expected) const {
  return Error(StrCat("argument ", i, " ('", def_.args[i].name, "') is ", args_[i].Describe(), ", expected ",
                      expected));
}

Expected<MsValue> Lowering::TensorArg(size_t i) const {
  if (args_[i].kind != MsValue::Kind::kTensor) return ArgError(i, "a tensor");
  return args_[i];
}

Expected<int64_t> Lowering::IntArg(size_t i) const {
  const MsValue& v = args_[i];
  if (v.kind == MsValue::Kind::kInt || v.kind == MsValue::Kind::kBool) return v.i;
  // A one-element tuple stands for its element (Softmax's axis is a tuple).
  if (v.kind == MsValue::Kind::kTuple && v.items.size() == 1 && v.items[0].kind == MsValue::Kind::kInt)
    return v.items[0].i;
  return ArgError(i, "an int");
}

Expected<double> Lowering::FloatArg(size_t i) const {
  const MsValue& v = args_[i];
  if (v.kind == MsValue::Kind::kFloat) return v.f;
  if (v.kind == MsValue::Kind::kInt) return static_cast<double>(v.i);
  return ArgError(i, "a float");
}

Expected<bool> Lowering::BoolArg(size_t i) const {
  const MsValue& v = args_[i];
  if (v.kind == MsValue::Kind::kBool || v.kind == MsValue::Kind::kInt) return v.i != 0;
  return ArgError(i, "a bool");
}

Expected<std::string> Lowering::StringArg(size_t i) const {
  if (args_[i].kind != MsValue::Kind::kString) return ArgError(i, "a string");
  return args_[i].s;
}

Expected<std::vector<int64_t>> Lowering::IntsArg(size_t i) const {
  const MsValue& v = args_[i];
  if (v.kind == MsValue::Kind::kInt) return std::vector<int64_t>{v.i};
  if (v.kind != MsValue::Kind::kTuple) return ArgError(i, "an int or a tuple of ints");
  std::vector<int64_t> out;
  for (const MsValue& item : v.items) {
    if (item.kind != MsValue::Kind::kInt) return ArgError(i, "a tuple of ints");
    out.push_back(item.i);
  }
  return out;
}

Expected<Value*> Lowering::TensorOrScalar(size_t i, DataType dtype) {
  const MsValue& v = args_[i];
  if (v.kind == MsValue::Kind::kTensor) return v.tensor;
  if (v.kind == MsValue::Kind::kInt || v.kind == MsValue::Kind::kBool || v.kind == MsValue::Kind::kFloat) {
    if (dtype == DataType::kUndefined)
      return Error(StrCat("argument ", i, " is a scalar, but the type of the tensor it combines with is unknown"));
    return ConstScalar(v.kind == MsValue::Kind::kFloat ? v.f : static_cast<double>(v.i), dtype);
  }
  return ArgError(i, "a tensor or a number");
}

std::vector<Value*> Lowering::Emit(const std::string& op_type, std::vector<Value*> inputs, size_t num_outputs,
                                   std::map<std::string, Attribute> attrs) {
  std::vector<Value*> outs;
  for (size_t k = 0; k < num_outputs; ++k) outs.push_back(g_.AddValue(g_.UniqueName(out_)));
  const std::string name = emitted_++ == 0 ? node_ : StrCat(node_, "/", op_type, "_", emitted_);
  Node* n = g_.AddNode(op_type, name, std::move(inputs), outs);
  n->opset = kEmitOpset;
  n->attrs = std::move(attrs);
  return outs;
}

Value* Lowering::ConstInts(const std::vector<int64_t>& v) {
  return g_.AddConstant(g_.UniqueName(out_ + "/ints"), DataType::kInt64, {static_cast<int64_t>(v.size())},
                        TensorData::Copy(v.data(), v.size() * sizeof(int64_t)));
}

Value* Lowering::ConstScalar(double v, DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32: case DataType::kFloat64: case DataType::kInt64: case DataType::kInt32:
    case DataType::kInt16: case DataType::kInt8: case DataType::kUInt8: case DataType::kBool:
    case DataType::kFloat16: case DataType::kBFloat16: break;
    default: dtype = DataType::kFloat32; break;  // the kernel that reads it names the mismatch
  }
  TensorData d = TensorData::Allocate(DataTypeSize(dtype));
  uint8_t* p = d.mutable_data();
  auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (dtype) {
    case DataType::kFloat64: put(v); break;
    case DataType::kInt64: put(static_cast<int64_t>(v)); break;
    case DataType::kInt32: put(static_cast<int32_t>(v)); break;
    case DataType::kInt16: put(static_cast<int16_t>(v)); break;
    case DataType::kInt8: put(static_cast<int8_t>(v)); break;
    case DataType::kUInt8: put(static_cast<uint8_t>(v)); break;
    case DataType::kBool: put(static_cast<uint8_t>(v != 0)); break;
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      // Made in float32 and cast, so that the half encodings live in one place (the Cast kernel).
      Value* f = ConstScalar(v, DataType::kFloat32);
      return Emit1("Cast", {f}, {{"to", IntAttr(static_cast<int64_t>(dtype))}});
    }
    default: put(static_cast<float>(v)); break;
  }
  return g_.AddConstant(g_.UniqueName(out_ + "/scalar"), dtype, {}, std::move(d));
}

}  // namespace oc::mindir

#include "parser/onnx/onnx_tensor.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace oc::onnx_parser {
namespace {

namespace fs = std::filesystem;

// One tensor may not exceed this many bytes: far above any real weight, far
// below what would overflow size_t arithmetic elsewhere.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

std::string OnnxTypeName(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  return StrCat("code ", t);
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// Strict non-negative decimal, as used by the external_data offset/length keys.
bool ParseUnsigned(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

Expected<TensorData> ReadExternal(const onnx::TensorProto& t, const std::string& base_dir,
                                  const std::string& what, int64_t expected_bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      if (!ParseUnsigned(kv.value(), &offset))
        return InvalidFile(what, ": external data offset '", kv.value(), "' is not a non-negative integer");
    } else if (kv.key() == "length") {
      if (!ParseUnsigned(kv.value(), &length))
        return InvalidFile(what, ": external data length '", kv.value(), "' is not a non-negative integer");
    }
  }
  if (location.empty()) return InvalidFile(what, ": external data has no 'location'");
  fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory())
    return InvalidFile(what, ": external data location '", location,
                       "' is absolute; it must be relative to the model's folder");
  fs::path norm = loc.lexically_normal();
  for (const auto& part : norm)
    if (part == "..")
      return InvalidFile(what, ": external data location '", location,
                         "' leaves the model's folder ('..' is not allowed)");
  fs::path full = base_dir.empty() ? norm : fs::path(base_dir) / norm;
  std::error_code ec;
  if (!fs::is_regular_file(full, ec))
    return IoError(what, ": external data file '", full.string(), "' does not exist or is not a file");
  const auto file_size = static_cast<int64_t>(fs::file_size(full, ec));
  if (ec) return IoError(what, ": cannot stat external data file '", full.string(), "': ", ec.message());
  if (length < 0) length = expected_bytes;
  if (length != expected_bytes)
    return InvalidFile(what, ": external data length ", length, " does not match the ",
                       expected_bytes, " bytes its dims and type need");
  if (offset > file_size || length > file_size - offset)
    return InvalidFile(what, ": external data range [", offset, ", ", offset + length,
                       ") is outside '", full.string(), "' (", file_size, " bytes)");
  TensorData data = TensorData::Allocate(static_cast<size_t>(length));
  if (length > 0) {
    std::ifstream in(full, std::ios::binary);
    in.seekg(offset);
    in.read(reinterpret_cast<char*>(data.mutable_data()), length);
    if (!in || in.gcount() != length)
      return IoError(what, ": failed to read ", length, " bytes at offset ", offset, " of '",
                     full.string(), "'");
  }
  return data;
}

template <typename Dst, typename Field>
TensorData CopyField(const Field& field) {
  TensorData d = TensorData::Allocate(static_cast<size_t>(field.size()) * sizeof(Dst));
  Dst* out = reinterpret_cast<Dst*>(d.mutable_data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field.Get(i));
  return d;
}

// The typed repeated field the ONNX spec assigns to `dtype`, converted to packed
// bytes; returns the number of entries it holds in *count.
// `expected` is the element count the dims give; packed sub-byte fields cover
// it when they hold ceil(expected / elements-per-byte) bytes.
Expected<TensorData> FromTypedField(const onnx::TensorProto& t, DataType dtype, int64_t expected,
                                    int64_t* count) {
  switch (dtype) {
    case DataType::kFloat32:
      *count = t.float_data_size();
      return CopyField<float>(t.float_data());
    case DataType::kFloat64:
      *count = t.double_data_size();
      return CopyField<double>(t.double_data());
    case DataType::kInt64:
      *count = t.int64_data_size();
      return CopyField<int64_t>(t.int64_data());
    case DataType::kUInt32:
      *count = t.uint64_data_size();
      return CopyField<uint32_t>(t.uint64_data());
    case DataType::kUInt64:
      *count = t.uint64_data_size();
      return CopyField<uint64_t>(t.uint64_data());
    case DataType::kInt32:
      *count = t.int32_data_size();
      return CopyField<int32_t>(t.int32_data());
    case DataType::kInt16:
      *count = t.int32_data_size();
      return CopyField<int16_t>(t.int32_data());
    case DataType::kInt8:
      *count = t.int32_data_size();
      return CopyField<int8_t>(t.int32_data());
    case DataType::kUInt8:
      *count = t.int32_data_size();
      return CopyField<uint8_t>(t.int32_data());
    case DataType::kUInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      // Half types store their bit pattern in the low 16 bits of each int32.
      *count = t.int32_data_size();
      return CopyField<uint16_t>(t.int32_data());
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
      *count = t.int32_data_size();
      return CopyField<uint8_t>(t.int32_data());
    case DataType::kUInt4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
    case DataType::kUInt2:
    case DataType::kInt2: {
      // Each int32 holds one packed byte (two 4-bit or four 2-bit elements).
      const int64_t per_byte = 8 / DataTypeBits(dtype);
      *count = t.int32_data_size() * per_byte;
      if (*count >= expected && *count - expected < per_byte) *count = expected;
      return CopyField<uint8_t>(t.int32_data());
    }
    case DataType::kBool: {
      *count = t.int32_data_size();
      TensorData d = TensorData::Allocate(static_cast<size_t>(t.int32_data_size()));
      for (int i = 0; i < t.int32_data_size(); ++i) d.mutable_data()[i] = t.int32_data(i) != 0;
      return d;
    }
    default:
      return Internal("no typed field for ", DataTypeName(dtype));
  }
}

int64_t OtherTypedEntries(const onnx::TensorProto& t) {
  return t.float_data_size() + t.int32_data_size() + t.int64_data_size() + t.double_data_size() +
         t.uint64_data_size() + t.string_data_size();
}

}  // namespace

Expected<DataType> ConvertElemType(int32_t elem_type, const std::string& what) {
  if (elem_type == 0) return InvalidFile(what, ": element type is undefined (0)");
  if (!IsKnownDataType(elem_type))
    return NotSupported(what, ": element type ", OnnxTypeName(elem_type), " is not supported");
  return static_cast<DataType>(elem_type);
}

Expected<int64_t> CheckedElementCount(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return InvalidFile(what, ": dim ", i, " is negative (", dims[i], ")");
    if (dims[i] != 0 && n > kMaxTensorBytes / dims[i])
      return InvalidFile(what, ": element count overflows (dims too large)");
    n *= dims[i];
  }
  return n;
}

Expected<DecodedTensor> DecodeTensor(const onnx::TensorProto& t, const std::string& base_dir,
                                     const std::string& what) {
  DecodedTensor out;
  OC_ASSIGN_OR_RETURN(out.dtype, ConvertElemType(t.data_type(), what));
  if (t.has_segment()) return NotSupported(what, ": segmented tensors are not supported");
  out.shape.assign(t.dims().begin(), t.dims().end());
  OC_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(out.shape, what));
  // Sub-byte types are packed (two int4 / four int2 a byte, low bits first).
  const int64_t elem = std::max<int64_t>(DataTypeBits(out.dtype) / 8, 1);
  if (count > kMaxTensorBytes / elem) return InvalidFile(what, ": tensor is too large");
  const int64_t bytes = DataTypeByteSize(out.dtype, count);

  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    OC_ASSIGN_OR_RETURN(out.data, ReadExternal(t, base_dir, what, bytes));
    return out;
  }
  if (t.has_raw_data()) {
    if (OtherTypedEntries(t) != 0)
      return InvalidFile(what, ": has both raw_data and typed data fields");
    if (static_cast<int64_t>(t.raw_data().size()) != bytes)
      return InvalidFile(what, ": raw_data has ", t.raw_data().size(), " bytes but dims ",
                         DimsString(out.shape), " of ", DataTypeName(out.dtype), " need ", bytes);
    out.data = TensorData::Copy(t.raw_data().data(), t.raw_data().size());
    return out;
  }
  int64_t entries = 0;
  OC_ASSIGN_OR_RETURN(out.data, FromTypedField(t, out.dtype, count, &entries));
  if (entries != count) {
    if (entries == 0 && OtherTypedEntries(t) != 0)
      return InvalidFile(what, ": ", DataTypeName(out.dtype),
                         " data is stored in a field the ONNX spec does not assign to that type");
    return InvalidFile(what, ": holds ", entries, " ", DataTypeName(out.dtype), " values but dims need ",
                       count);
  }
  return out;
}

}  // namespace oc::onnx_parser

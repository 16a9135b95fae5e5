#include "graph/dtype.h"

namespace oc {

int DataTypeBits(DataType t) {
  switch (t) {
    case DataType::kFloat32: case DataType::kInt32: case DataType::kUInt32: return 32;
    case DataType::kFloat64: case DataType::kInt64: case DataType::kUInt64: return 64;
    case DataType::kFloat16: case DataType::kBFloat16:
    case DataType::kInt16: case DataType::kUInt16: return 16;
    case DataType::kInt8: case DataType::kUInt8: case DataType::kBool:
    case DataType::kFloat8E4M3FN: case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2: case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: return 8;
    case DataType::kUInt4: case DataType::kInt4: case DataType::kFloat4E2M1: return 4;
    case DataType::kUInt2: case DataType::kInt2: return 2;
    case DataType::kString: case DataType::kUndefined: return 0;
  }
  return 0;
}

size_t DataTypeSize(DataType t) {
  const int bits = DataTypeBits(t);
  return bits >= 8 ? static_cast<size_t>(bits / 8) : 0;
}

int64_t DataTypeByteSize(DataType t, int64_t count) {
  const int bits = DataTypeBits(t);
  if (count < 0 || bits == 0) return -1;
  int64_t bytes = 0;
  if (bits >= 8) return __builtin_mul_overflow(count, int64_t{bits / 8}, &bytes) ? -1 : bytes;
  const int64_t per_byte = 8 / bits;
  return count / per_byte + (count % per_byte != 0);
}

std::string DataTypeName(DataType t) {
  switch (t) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat32: return "float32";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUInt16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kFloat64: return "float64";
    case DataType::kUInt32: return "uint32";
    case DataType::kUInt64: return "uint64";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat8E4M3FN: return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::kFloat8E5M2: return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::kUInt4: return "uint4";
    case DataType::kInt4: return "int4";
    case DataType::kFloat4E2M1: return "float4e2m1";
    case DataType::kFloat8E8M0: return "float8e8m0";
    case DataType::kUInt2: return "uint2";
    case DataType::kInt2: return "int2";
  }
  return "dtype(" + std::to_string(static_cast<int32_t>(t)) + ")";
}

bool IsKnownDataType(int32_t code) {
  return code > 0 && code <= 26 && code != 14 && code != 15 &&
         DataTypeBits(static_cast<DataType>(code)) > 0;
}

// aclDataType numbers and our types, one table for both directions (the
// numbers are include/acl/acl_base.h's; oc_core does not see that header).
constexpr std::pair<int, DataType> kAclTypes[] = {
    {0, DataType::kFloat32}, {1, DataType::kFloat16}, {2, DataType::kInt8},    {3, DataType::kInt32},
    {4, DataType::kUInt8},   {6, DataType::kInt16},   {7, DataType::kUInt16},  {8, DataType::kUInt32},
    {9, DataType::kInt64},   {10, DataType::kUInt64}, {11, DataType::kFloat64}, {12, DataType::kBool},
    {13, DataType::kString}, {27, DataType::kBFloat16}, {29, DataType::kInt4},
    {35, DataType::kFloat8E5M2}, {36, DataType::kFloat8E4M3FN}, {37, DataType::kFloat8E8M0},
    {40, DataType::kFloat4E2M1}};

DataType DataTypeFromAcl(int acl_type) {
  for (const auto& [number, type] : kAclTypes)
    if (number == acl_type) return type == DataType::kString ? DataType::kUndefined : type;  // no string kernels
  return DataType::kUndefined;
}

int DataTypeToAcl(DataType t) {
  for (const auto& [number, type] : kAclTypes)
    if (type == t) return number;
  return -1;  // ACL_DT_UNDEFINED
}

}  // namespace oc

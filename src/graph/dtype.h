// Element types. The numeric values are ONNX's TensorProto.DataType codes so the
// parser and the .om format can store them unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oc {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  // 8-bit floats (E = exponent bits, M = mantissa bits; FN = finite, no infinity;
  // UZ = unsigned zero, the one NaN is 0x80; E8M0 = power-of-two scales).
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  // Sub-byte types, packed: two 4-bit (four 2-bit) elements per byte, element 0
  // in the lowest bits; an odd tail leaves the high bits of the last byte zero.
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// Bytes per element; 0 for kUndefined, kString and the sub-byte types (which
// have no per-element address: size tensors with DataTypeByteSize).
size_t DataTypeSize(DataType t);
// Bits per element (4 or 2 for the packed types); 0 for kUndefined and kString.
int DataTypeBits(DataType t);
// Bytes `count` packed elements occupy (rounded up to whole bytes); -1 when
// count < 0, the type has no storage size or the size overflows int64.
int64_t DataTypeByteSize(DataType t, int64_t count);
inline bool IsSubByteType(DataType t) {
  return t == DataType::kUInt4 || t == DataType::kInt4 || t == DataType::kFloat4E2M1 ||
         t == DataType::kUInt2 || t == DataType::kInt2;
}
// float8 family (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0) and float4 E2M1.
inline bool IsLowPrecisionFloat(DataType t) {
  const int c = static_cast<int>(t);
  return (c >= 17 && c <= 20) || c == 23 || c == 24;
}
// The types gradients flow through: float32/64, float16, bfloat16.
inline bool IsFloatingPoint(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}
// Sets of element types as bit masks over the ONNX codes (all codes are < 64);
// used by OpDef::native_types.
constexpr uint64_t DataTypeBit(DataType t) { return uint64_t{1} << static_cast<int>(t); }
inline constexpr uint64_t kAllDataTypes = ~uint64_t{0};
// "float32", "int64", ... ; "dtype(<code>)" for unknown codes.
std::string DataTypeName(DataType t);
// True for codes this build knows (storable numeric types and bool).
bool IsKnownDataType(int32_t code);

// AscendCL's aclDataType numbering to ours (kUndefined for ACL_DT_UNDEFINED and
// types the CPU operators lack).
DataType DataTypeFromAcl(int acl_type);
// Ours to aclDataType's numbering (-1, ACL_DT_UNDEFINED, for types it lacks).
int DataTypeToAcl(DataType t);

template <typename T> struct DataTypeOf;
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::kFloat32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::kFloat64; };
template <> struct DataTypeOf<int8_t> { static constexpr DataType value = DataType::kInt8; };
template <> struct DataTypeOf<uint8_t> { static constexpr DataType value = DataType::kUInt8; };
template <> struct DataTypeOf<int16_t> { static constexpr DataType value = DataType::kInt16; };
template <> struct DataTypeOf<uint16_t> { static constexpr DataType value = DataType::kUInt16; };
template <> struct DataTypeOf<int32_t> { static constexpr DataType value = DataType::kInt32; };
template <> struct DataTypeOf<uint32_t> { static constexpr DataType value = DataType::kUInt32; };
template <> struct DataTypeOf<int64_t> { static constexpr DataType value = DataType::kInt64; };
template <> struct DataTypeOf<uint64_t> { static constexpr DataType value = DataType::kUInt64; };
template <> struct DataTypeOf<bool> { static constexpr DataType value = DataType::kBool; };

}  // namespace oc

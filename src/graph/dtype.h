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
};

// Bytes per element; 0 for kUndefined and kString.
size_t DataTypeSize(DataType t);
// "float32", "int64", ... ; "dtype(<code>)" for unknown codes.
std::string DataTypeName(DataType t);
// True for codes this build knows (storable numeric types and bool).
bool IsKnownDataType(int32_t code);

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

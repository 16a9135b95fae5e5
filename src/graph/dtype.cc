#include "graph/dtype.h"

namespace oc {

size_t DataTypeSize(DataType t) {
  switch (t) {
    case DataType::kFloat32: case DataType::kInt32: case DataType::kUInt32: return 4;
    case DataType::kFloat64: case DataType::kInt64: case DataType::kUInt64: return 8;
    case DataType::kFloat16: case DataType::kBFloat16:
    case DataType::kInt16: case DataType::kUInt16: return 2;
    case DataType::kInt8: case DataType::kUInt8: case DataType::kBool: return 1;
    case DataType::kString: case DataType::kUndefined: return 0;
  }
  return 0;
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
  }
  return "dtype(" + std::to_string(static_cast<int32_t>(t)) + ")";
}

bool IsKnownDataType(int32_t code) {
  switch (static_cast<DataType>(code)) {
    case DataType::kFloat32: case DataType::kUInt8: case DataType::kInt8:
    case DataType::kUInt16: case DataType::kInt16: case DataType::kInt32:
    case DataType::kInt64: case DataType::kBool: case DataType::kFloat16:
    case DataType::kFloat64: case DataType::kUInt32: case DataType::kUInt64:
    case DataType::kBFloat16:
      return true;
    default:
      return false;
  }
}

}  // namespace oc

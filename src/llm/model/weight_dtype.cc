#include "llm/model/weight_dtype.h"

namespace oc::llm {

const char* WeightDtypeName(WeightDtype d) {
  switch (d) {
    case WeightDtype::kFloat32:
      return "float32";
    case WeightDtype::kBfloat16:
      return "bfloat16";
    case WeightDtype::kInt8:
      return "int8";
    case WeightDtype::kInt4:
      return "int4";
  }
  return "?";
}

Expected<WeightDtype> ParseWeightDtype(const std::string& s) {
  if (s == "float32" || s == "auto" || s == "float") return WeightDtype::kFloat32;
  if (s == "bfloat16") return WeightDtype::kBfloat16;
  if (s == "int8") return WeightDtype::kInt8;
  if (s == "int4") return WeightDtype::kInt4;
  return InvalidArgument("weight dtype \"", s, "\" is not supported (expected one of auto, float32, bfloat16, int8, ",
                         "int4)");
}

Expected<int64_t> ResolveGroupSize(WeightDtype d, int64_t group_size) {
  if (d == WeightDtype::kFloat32 || d == WeightDtype::kBfloat16) {
    if (group_size != 0)
      return InvalidArgument("a quantization group size (", group_size, ") applies to int8 and int4 weights only, not ",
                             WeightDtypeName(d));
    return int64_t{0};
  }
  if (group_size < 0 || group_size % 32 != 0)
    return InvalidArgument("quantization group size ", group_size,
                           " is invalid (expected a positive multiple of 32, or 0 for the default: ",
                           d == WeightDtype::kInt8 ? "per output channel" : "128", ")");
  if (group_size == 0) return d == WeightDtype::kInt4 ? int64_t{128} : int64_t{0};
  return group_size;
}

}  // namespace oc::llm

#include "hccl/reduce_ops.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops/cpu/common/cast_util.h"

namespace oc::hccl {
namespace {

struct Sum {};
struct Prod {};
struct Max {};
struct Min {};

template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename Op, typename T>
T Apply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_same_v<Op, Sum>) return static_cast<T>(Wide<T>(a) + Wide<T>(b));
    if constexpr (std::is_same_v<Op, Prod>) return static_cast<T>(Wide<T>(a) * Wide<T>(b));
    if constexpr (std::is_same_v<Op, Max>) return a > b ? a : b;
    if constexpr (std::is_same_v<Op, Min>) return a < b ? a : b;
  } else {
    if constexpr (std::is_same_v<Op, Sum>) return a + b;
    if constexpr (std::is_same_v<Op, Prod>) return a * b;
    if constexpr (std::is_same_v<Op, Max>) return std::fmax(a, b);
    if constexpr (std::is_same_v<Op, Min>) return std::fmin(a, b);
  }
}

template <typename Op, typename T>
void Reduce(void* out, const void* a, const void* b, size_t n) {
  T* y = static_cast<T*>(out);
  const T* x0 = static_cast<const T*>(a);
  const T* x1 = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) y[i] = Apply<Op, T>(x0[i], x1[i]);
}

// float16 / bfloat16: through float32, rounded back once per step.
template <typename Op, bool kBf16>
void ReduceHalf(void* out, const void* a, const void* b, size_t n) {
  uint16_t* y = static_cast<uint16_t*>(out);
  const uint16_t* x0 = static_cast<const uint16_t*>(a);
  const uint16_t* x1 = static_cast<const uint16_t*>(b);
  for (size_t i = 0; i < n; ++i) {
    const float u = kBf16 ? ew::BFloat16ToFloat(x0[i]) : ew::HalfToFloat(x0[i]);
    const float v = kBf16 ? ew::BFloat16ToFloat(x1[i]) : ew::HalfToFloat(x1[i]);
    const float r = Apply<Op, float>(u, v);
    y[i] = kBf16 ? ew::FloatToBFloat16(r) : ew::FloatToHalf(r);
  }
}

template <typename Op>
ReduceFn ForType(HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: return Reduce<Op, int8_t>;
    case HCCL_DATA_TYPE_INT16: return Reduce<Op, int16_t>;
    case HCCL_DATA_TYPE_INT32: return Reduce<Op, int32_t>;
    case HCCL_DATA_TYPE_INT64: return Reduce<Op, int64_t>;
    case HCCL_DATA_TYPE_UINT8: return Reduce<Op, uint8_t>;
    case HCCL_DATA_TYPE_UINT16: return Reduce<Op, uint16_t>;
    case HCCL_DATA_TYPE_UINT32: return Reduce<Op, uint32_t>;
    case HCCL_DATA_TYPE_UINT64: return Reduce<Op, uint64_t>;
    case HCCL_DATA_TYPE_FP32: return Reduce<Op, float>;
    case HCCL_DATA_TYPE_FP64: return Reduce<Op, double>;
    case HCCL_DATA_TYPE_FP16: return ReduceHalf<Op, false>;
    case HCCL_DATA_TYPE_BFP16: return ReduceHalf<Op, true>;
    default: return nullptr;
  }
}

// Reads an enum argument through its bits: a C caller may pass any int.
template <typename E>
int Bits(E e) {
  int v;
  static_assert(sizeof(E) == sizeof(int));
  std::memcpy(&v, &e, sizeof v);
  return v;
}

}  // namespace

size_t ElementSize(HcclDataType t) {
  switch (Bits(t)) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: case HCCL_DATA_TYPE_HIF8:
    case HCCL_DATA_TYPE_FP8E4M3: case HCCL_DATA_TYPE_FP8E5M2: case HCCL_DATA_TYPE_FP8E8M0: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16:
      return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    case HCCL_DATA_TYPE_INT64: case HCCL_DATA_TYPE_UINT64: case HCCL_DATA_TYPE_FP64: return 8;
    case HCCL_DATA_TYPE_INT128: return 16;
    default: return 0;
  }
}

const char* DataTypeName(HcclDataType t) {
  switch (Bits(t)) {
    case HCCL_DATA_TYPE_INT8: return "INT8";
    case HCCL_DATA_TYPE_INT16: return "INT16";
    case HCCL_DATA_TYPE_INT32: return "INT32";
    case HCCL_DATA_TYPE_FP16: return "FP16";
    case HCCL_DATA_TYPE_FP32: return "FP32";
    case HCCL_DATA_TYPE_INT64: return "INT64";
    case HCCL_DATA_TYPE_UINT64: return "UINT64";
    case HCCL_DATA_TYPE_UINT8: return "UINT8";
    case HCCL_DATA_TYPE_UINT16: return "UINT16";
    case HCCL_DATA_TYPE_UINT32: return "UINT32";
    case HCCL_DATA_TYPE_FP64: return "FP64";
    case HCCL_DATA_TYPE_BFP16: return "BFP16";
    case HCCL_DATA_TYPE_INT128: return "INT128";
    case HCCL_DATA_TYPE_HIF8: return "HIF8";
    case HCCL_DATA_TYPE_FP8E4M3: return "FP8E4M3";
    case HCCL_DATA_TYPE_FP8E5M2: return "FP8E5M2";
    case HCCL_DATA_TYPE_FP8E8M0: return "FP8E8M0";
    default: return "an unknown HcclDataType";
  }
}

const char* ReduceOpName(HcclReduceOp op) {
  switch (Bits(op)) {
    case HCCL_REDUCE_SUM: return "SUM";
    case HCCL_REDUCE_PROD: return "PROD";
    case HCCL_REDUCE_MAX: return "MAX";
    case HCCL_REDUCE_MIN: return "MIN";
    default: return "an unknown HcclReduceOp";
  }
}

Expected<ReduceFn> FindReduceFn(HcclDataType t, HcclReduceOp op) {
  if (ElementSize(t) == 0) return InvalidArgument("dataType ", Bits(t), " is not an HcclDataType");
  ReduceFn fn = nullptr;
  switch (Bits(op)) {
    case HCCL_REDUCE_SUM: fn = ForType<Sum>(t); break;
    case HCCL_REDUCE_PROD: fn = ForType<Prod>(t); break;
    case HCCL_REDUCE_MAX: fn = ForType<Max>(t); break;
    case HCCL_REDUCE_MIN: fn = ForType<Min>(t); break;
    default: return InvalidArgument("op ", Bits(op), " is not an HcclReduceOp (SUM 0, PROD 1, MAX 2, MIN 3)");
  }
  if (!fn)
    return NotSupported("reduction ", ReduceOpName(op), " on ", DataTypeName(t),
                        " is not supported (HCCL reduces the integer, FP16, BFP16, FP32 and FP64 types only)");
  return fn;
}

}  // namespace oc::hccl

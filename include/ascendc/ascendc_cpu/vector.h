/* The element-wise vector instructions: binary, with a scalar, unary, and
 * Duplicate, each in the count form and in the mask/repeat form (continuous
 * mask or bit mask). */
#ifndef OPENCANN_ASCENDC_VECTOR_H_
#define OPENCANN_ASCENDC_VECTOR_H_

#include "ascendc_cpu/vector_core.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace AscendC {
namespace ocimpl {
/* A scalar as a value of V: V itself when V is a scalar, all lanes otherwise. */
template <typename V, typename S>
inline V Splat(S s) {
  if constexpr (std::is_arithmetic_v<V> || std::is_same_v<V, half>) {
    return static_cast<V>(s);
  } else {
    V v;
    using E = std::remove_reference_t<decltype(v[0])>;
    for (size_t i = 0; i < sizeof(V) / sizeof(E); ++i) v[i] = static_cast<E>(s);
    return v;
  }
}
template <typename V> inline V Zero() { return Splat<V>(0); }
/* a << v with the bits of a two's complement value (a left shift of a negative
 * number is undefined in C++17; the vector unit just shifts the bits). */
template <typename A, typename B>
inline A Shl(A a, B v) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<std::common_type_t<A, int>>;
    return static_cast<A>(static_cast<U>(a) << v);
  } else {
    using E = std::remove_reference_t<decltype(a[0])>;
    typedef std::make_unsigned_t<E> UV __attribute__((vector_size(sizeof(A))));
    UV u, w;
    std::memcpy(&u, &a, sizeof u);
    std::memcpy(&w, &v, sizeof w);
    u <<= w;
    A r;
    std::memcpy(&r, &u, sizeof r);
    return r;
  }
}
}  // namespace ocimpl

/* ---- binary: dst = f(src0, src1) ------------------------------------------ */
#define ASCENDC_OC_BINARY(Name, EXPR)                                                                          \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,          \
                   const int32_t& calCount) {                                                                  \
    ocimpl::CheckCount(#Name, dst, calCount);                                                                  \
    ocimpl::CheckCount(#Name, src0, calCount);                                                                 \
    ocimpl::CheckCount(#Name, src1, calCount);                                                                 \
    ocimpl::Map2(dst.GetPhyAddr(), src0.GetPhyAddr(), src1.GetPhyAddr(), static_cast<uint32_t>(calCount),      \
                 [](auto a, auto b) { return EXPR; });                                                         \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,          \
                   uint64_t mask, const uint8_t repeatTimes, const BinaryRepeatParams& repeatParams) {         \
    ocimpl::Repeat2(#Name, dst, src0, src1, ocimpl::ContinuousMask<T>(#Name, mask), repeatTimes, repeatParams, \
                    [](auto a, auto b) { return EXPR; });                                                      \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,          \
                   const uint64_t mask[], const uint8_t repeatTimes, const BinaryRepeatParams& repeatParams) { \
    ocimpl::Repeat2(#Name, dst, src0, src1, ocimpl::BitMask<T>(#Name, mask), repeatTimes, repeatParams,        \
                    [](auto a, auto b) { return EXPR; });                                                      \
  }

ASCENDC_OC_BINARY(Add, a + b)
ASCENDC_OC_BINARY(Sub, a - b)
ASCENDC_OC_BINARY(Mul, a * b)
ASCENDC_OC_BINARY(Div, a / b)
ASCENDC_OC_BINARY(Max, ocimpl::VMax(a, b))
ASCENDC_OC_BINARY(Min, ocimpl::VMin(a, b))
ASCENDC_OC_BINARY(And, a & b)
ASCENDC_OC_BINARY(Or, a | b)
ASCENDC_OC_BINARY(AddRelu, ocimpl::VMax(a + b, ocimpl::Zero<decltype(a)>()))
ASCENDC_OC_BINARY(SubRelu, ocimpl::VMax(a - b, ocimpl::Zero<decltype(a)>()))
#undef ASCENDC_OC_BINARY

/* dst = src0 * src1 + dst */
template <typename T, bool isSetMask = true>
inline void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                      const int32_t& calCount) {
  ocimpl::CheckCount("MulAddDst", dst, calCount);
  ocimpl::CheckCount("MulAddDst", src0, calCount);
  ocimpl::CheckCount("MulAddDst", src1, calCount);
  T* d = dst.GetPhyAddr();
  const T *a = src0.GetPhyAddr(), *b = src1.GetPhyAddr();
  for (int32_t i = 0; i < calCount; ++i)
    d[i] = static_cast<T>(static_cast<ocimpl::Calc<T>>(a[i]) * static_cast<ocimpl::Calc<T>>(b[i]) +
                          static_cast<ocimpl::Calc<T>>(d[i]));
}

/* ---- with a scalar: dst = f(src, scalar) ------------------------------------ */
#define ASCENDC_OC_SCALAR(Name, EXPR)                                                                         \
  template <typename T, bool isSetMask = true>                                                                \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,                \
                   const int32_t& calCount) {                                                                 \
    ocimpl::CheckCount(#Name, dst, calCount);                                                                 \
    ocimpl::CheckCount(#Name, src, calCount);                                                                 \
    const ocimpl::Calc<T> s = static_cast<ocimpl::Calc<T>>(scalarValue);                                      \
    ocimpl::Map1(dst.GetPhyAddr(), src.GetPhyAddr(), static_cast<uint32_t>(calCount), [s](auto a) {           \
      auto v = ocimpl::Splat<decltype(a)>(s);                                                                 \
      return EXPR;                                                                                            \
    });                                                                                                       \
  }                                                                                                           \
  template <typename T, bool isSetMask = true>                                                                \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, uint64_t mask, \
                   const uint8_t repeatTimes, const UnaryRepeatParams& repeatParams) {                        \
    const ocimpl::Calc<T> s = static_cast<ocimpl::Calc<T>>(scalarValue);                                      \
    ocimpl::Repeat1(#Name, dst, src, ocimpl::ContinuousMask<T>(#Name, mask), repeatTimes, repeatParams,       \
                    [s](auto a) { auto v = s; return EXPR; });                                                \
  }                                                                                                           \
  template <typename T, bool isSetMask = true>                                                                \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,                \
                   const uint64_t mask[], const uint8_t repeatTimes, const UnaryRepeatParams& repeatParams) { \
    const ocimpl::Calc<T> s = static_cast<ocimpl::Calc<T>>(scalarValue);                                      \
    ocimpl::Repeat1(#Name, dst, src, ocimpl::BitMask<T>(#Name, mask), repeatTimes, repeatParams,              \
                    [s](auto a) { auto v = s; return EXPR; });                                                \
  }

ASCENDC_OC_SCALAR(Adds, a + v)
ASCENDC_OC_SCALAR(Muls, a * v)
ASCENDC_OC_SCALAR(Maxs, ocimpl::VMax(a, v))
ASCENDC_OC_SCALAR(Mins, ocimpl::VMin(a, v))
ASCENDC_OC_SCALAR(LeakyRelu, a > ocimpl::Zero<decltype(a)>() ? a : a * v)
ASCENDC_OC_SCALAR(ShiftLeft, ocimpl::Shl(a, v))
ASCENDC_OC_SCALAR(ShiftRight, a >> v)
#undef ASCENDC_OC_SCALAR

/* dst = src * scalar + dst */
template <typename T, typename U = T, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                 const int32_t& calCount) {
  ocimpl::CheckCount("Axpy", dst, calCount);
  ocimpl::CheckCount("Axpy", src, calCount);
  T* d = dst.GetPhyAddr();
  const U* a = src.GetPhyAddr();
  float s = static_cast<float>(scalarValue);
  for (int32_t i = 0; i < calCount; ++i) d[i] = static_cast<T>(static_cast<float>(a[i]) * s + static_cast<float>(d[i]));
}

/* ---- unary: dst = f(src) ------------------------------------------------------ */
#define ASCENDC_OC_UNARY(Name, MAP, EXPR)                                                                     \
  template <typename T, bool isSetMask = true>                                                                \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& calCount) {           \
    ocimpl::CheckCount(#Name, dst, calCount);                                                                 \
    ocimpl::CheckCount(#Name, src, calCount);                                                                 \
    ocimpl::MAP(dst.GetPhyAddr(), src.GetPhyAddr(), static_cast<uint32_t>(calCount),                          \
                [](auto a) { return EXPR; });                                                                 \
  }                                                                                                           \
  template <typename T, bool isSetMask = true>                                                                \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,                       \
                   const uint8_t repeatTimes, const UnaryRepeatParams& repeatParams) {                        \
    ocimpl::Repeat1(#Name, dst, src, ocimpl::ContinuousMask<T>(#Name, mask), repeatTimes, repeatParams,       \
                    [](auto a) { return EXPR; });                                                             \
  }                                                                                                           \
  template <typename T, bool isSetMask = true>                                                                \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],               \
                   const uint8_t repeatTimes, const UnaryRepeatParams& repeatParams) {                        \
    ocimpl::Repeat1(#Name, dst, src, ocimpl::BitMask<T>(#Name, mask), repeatTimes, repeatParams,              \
                    [](auto a) { return EXPR; });                                                             \
  }

ASCENDC_OC_UNARY(Exp, Map1Scalar, std::exp(a))
ASCENDC_OC_UNARY(Ln, Map1Scalar, std::log(a))
ASCENDC_OC_UNARY(Abs, Map1Scalar, a < decltype(a)(0) ? -a : a)
ASCENDC_OC_UNARY(Sqrt, Map1Scalar, std::sqrt(a))
ASCENDC_OC_UNARY(Rsqrt, Map1Scalar, decltype(a)(1) / std::sqrt(a))
ASCENDC_OC_UNARY(Reciprocal, Map1, ocimpl::Splat<decltype(a)>(1) / a)
ASCENDC_OC_UNARY(Relu, Map1, ocimpl::VMax(a, ocimpl::Zero<decltype(a)>()))
ASCENDC_OC_UNARY(Not, Map1, ~a)
#undef ASCENDC_OC_UNARY

/* ---- Duplicate: dst = scalar ---------------------------------------------------- */
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& calCount) {
  ocimpl::CheckCount("Duplicate", dst, calCount);
  T* d = dst.GetPhyAddr();
  for (int32_t i = 0; i < calCount; ++i) d[i] = scalarValue;
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTimes,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  UnaryRepeatParams p(dstBlockStride, dstBlockStride, dstRepeatStride, dstRepeatStride);
  ocimpl::Repeat1("Duplicate", dst, dst, ocimpl::ContinuousMask<T>("Duplicate", mask), repeatTimes, p,
                  [v = static_cast<ocimpl::Calc<T>>(scalarValue)](auto) { return v; });
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                      const uint8_t repeatTimes, const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  UnaryRepeatParams p(dstBlockStride, dstBlockStride, dstRepeatStride, dstRepeatStride);
  ocimpl::Repeat1("Duplicate", dst, dst, ocimpl::BitMask<T>("Duplicate", mask), repeatTimes, p,
                  [v = static_cast<ocimpl::Calc<T>>(scalarValue)](auto) { return v; });
}

/* dst[i] = firstValue + i */
template <typename T>
inline void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, uint32_t calCount) {
  ocimpl::CheckCount("CreateVecIndex", dst, calCount);
  T* d = dst.GetPhyAddr();
  for (uint32_t i = 0; i < calCount; ++i)
    d[i] = static_cast<T>(static_cast<ocimpl::Calc<T>>(firstValue) + static_cast<ocimpl::Calc<T>>(i));
}

/* The mask registers of the counter mode are not modelled yet. */
inline void SetMaskCount() { ocimpl::Fail("SetMaskCount", "the counter mask mode is not supported yet on the CPU"); }
inline void SetMaskNorm() {}
inline void ResetMask() {}
template <typename T, int mode = 0>
inline void SetVectorMask(uint64_t, uint64_t) {
  ocimpl::Fail("SetVectorMask", "setting the vector mask register is not supported yet on the CPU; pass the "
                                "mask to the instruction instead");
}

}  // namespace AscendC

#pragma GCC diagnostic pop

#endif  // OPENCANN_ASCENDC_VECTOR_H_

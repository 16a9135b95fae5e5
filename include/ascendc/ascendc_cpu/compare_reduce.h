/* Compare / Select (bit masks, one bit per element) and the reductions. */
#ifndef OPENCANN_ASCENDC_COMPARE_REDUCE_H_
#define OPENCANN_ASCENDC_COMPARE_REDUCE_H_

#include "ascendc_cpu/vector_core.h"

namespace AscendC {
namespace ocimpl {
template <typename C>
inline bool Compare1(C a, C b, CMPMODE m) {
  switch (m) {
    case CMPMODE::LT: return a < b;
    case CMPMODE::GT: return a > b;
    case CMPMODE::EQ: return a == b;
    case CMPMODE::LE: return a <= b;
    case CMPMODE::GE: return a >= b;
    default: return a != b;
  }
}
template <typename U>
inline void CheckMaskBits(const char* api, const LocalTensor<U>& mask, uint64_t count) {
  uint64_t need = (count + 8 * sizeof(U) - 1) / (8 * sizeof(U));
  mask.Check(api, 0, need);
}
template <typename U>
inline bool Bit(const U* m, uint64_t i) {
  return (m[i / (8 * sizeof(U))] >> (i % (8 * sizeof(U)))) & 1u;
}
}  // namespace ocimpl

/* Bit i of dst (a uint8_t mask, 8 elements per byte) = src0[i] <cmp> src1[i].
 * calCount * sizeof(T) must be a multiple of 256 bytes (whole repeats). */
template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                    CMPMODE cmpMode, uint32_t calCount) {
  const char* api = "Compare";
  if ((uint64_t{calCount} * sizeof(T)) % ONE_REPEAT_BYTE_SIZE)
    ocimpl::Fail(api, ocimpl::Format("calCount %u of %s is not a whole number of 256-byte repeats", calCount,
                                     ocimpl::TypeName<T>::Get()));
  ocimpl::CheckCount(api, src0, calCount);
  ocimpl::CheckCount(api, src1, calCount);
  ocimpl::CheckMaskBits(api, dst, calCount);
  U* d = dst.GetPhyAddr();
  const T *a = src0.GetPhyAddr(), *b = src1.GetPhyAddr();
  constexpr uint32_t kBits = 8 * sizeof(U);
  for (uint32_t w = 0; w < calCount / kBits; ++w) {
    U v = 0;
    for (uint32_t k = 0; k < kBits; ++k)
      v |= static_cast<U>(ocimpl::Compare1<ocimpl::Calc<T>>(a[w * kBits + k], b[w * kBits + k], cmpMode)) << k;
    d[w] = v;
  }
}
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                          CMPMODE cmpMode, uint32_t calCount) {
  const char* api = "CompareScalar";
  ocimpl::CheckCount(api, src0, calCount);
  ocimpl::CheckMaskBits(api, dst, calCount);
  U* d = dst.GetPhyAddr();
  const T* a = src0.GetPhyAddr();
  constexpr uint32_t kBits = 8 * sizeof(U);
  for (uint32_t w = 0; w < (calCount + kBits - 1) / kBits; ++w) {
    U v = 0;
    for (uint32_t k = 0; k < kBits && w * kBits + k < calCount; ++k)
      v |= static_cast<U>(ocimpl::Compare1<ocimpl::Calc<T>>(a[w * kBits + k], src1Scalar, cmpMode)) << k;
    d[w] = v;
  }
}

/* dst[i] = bit i of selMask ? src0[i] : src1[i] (VSEL_CMPMASK_SPR reads the
 * mask from selMask too). */
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint32_t calCount) {
  const char* api = "Select";
  if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE)
    ocimpl::Fail(api, "VSEL_TENSOR_SCALAR_MODE takes a scalar as the second source");
  ocimpl::CheckCount(api, dst, calCount);
  ocimpl::CheckCount(api, src0, calCount);
  ocimpl::CheckCount(api, src1, calCount);
  ocimpl::CheckMaskBits(api, selMask, calCount);
  const U* m = selMask.GetPhyAddr();
  T* d = dst.GetPhyAddr();
  const T *a = src0.GetPhyAddr(), *b = src1.GetPhyAddr();
  for (uint32_t i = 0; i < calCount; ++i) d[i] = ocimpl::Bit(m, i) ? a[i] : b[i];
}
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   T src1, SELMODE selMode, uint32_t calCount) {
  const char* api = "Select";
  if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
    ocimpl::Fail(api, "a scalar second source needs VSEL_TENSOR_SCALAR_MODE");
  ocimpl::CheckCount(api, dst, calCount);
  ocimpl::CheckCount(api, src0, calCount);
  ocimpl::CheckMaskBits(api, selMask, calCount);
  const U* m = selMask.GetPhyAddr();
  T* d = dst.GetPhyAddr();
  const T* a = src0.GetPhyAddr();
  for (uint32_t i = 0; i < calCount; ++i) d[i] = ocimpl::Bit(m, i) ? a[i] : src1;
}

/* ---- reductions ------------------------------------------------------------------ */
namespace ocimpl {
/* One repeat's worth (n <= 256 bytes of T) reduced as a binary tree of
 * adjacent pairs, every step rounded to T; `p` is overwritten. */
template <typename T, typename F>
inline T TreeReduceRepeat(T* p, uint64_t m, F f) {
  while (m > 1) {
    uint64_t h = m / 2;
    for (uint64_t i = 0; i < h; ++i)
      p[i] = static_cast<T>(f(static_cast<Calc<T>>(p[2 * i]), static_cast<Calc<T>>(p[2 * i + 1])));
    if (m & 1) p[h] = p[m - 1];
    m = h + (m & 1);
  }
  return p[0];
}
/* The vector unit's order: each 256-byte repeat of src is reduced as a tree,
 * then the repeats' results the same way, until one is left. */
template <typename T, typename F>
inline T TreeReduce(const T* src, uint64_t n, F f) {
  constexpr uint64_t R = kPerRepeat<T>;
  constexpr uint64_t kMaxParts = 4096;  // more than any on-chip buffer holds repeats
  T parts[kMaxParts];
  T tmp[R];
  uint64_t np = 0;
  for (uint64_t b = 0; b < n; b += R) {
    uint64_t m = std::min(R, n - b);
    std::memcpy(tmp, src + b, m * sizeof(T));
    parts[np++] = TreeReduceRepeat(tmp, m, f);
  }
  while (np > 1) {
    uint64_t out = 0;
    for (uint64_t b = 0; b < np; b += R) parts[out++] = TreeReduceRepeat(parts + b, std::min(R, np - b), f);
    np = out;
  }
  return parts[0];
}
template <typename T>
inline void ReduceArgs(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                       const LocalTensor<T>& work, int32_t count, uint64_t dst_elems) {
  if (count <= 0) Fail(api, Format("count %d must be positive", count));
  CheckCount(api, src, count);
  dst.Check(api, 0, dst_elems);
  work.Check(api, 0, 1);  // the NPU keeps its partial results there
}
}  // namespace ocimpl

/* dst[0] = the sum of src[0..count), in the vector unit's pairwise order. */
template <typename T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count) {
  ocimpl::ReduceArgs("ReduceSum", dst, src, sharedTmpBuffer, count, 1);
  dst.GetPhyAddr()[0] = ocimpl::TreeReduce(src.GetPhyAddr(), static_cast<uint64_t>(count),
                                           [](auto a, auto b) { return a + b; });
}
namespace ocimpl {
template <typename T, bool kMax>
inline void ReduceExtreme(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                          const LocalTensor<T>& work, int32_t count, bool calIndex) {
  ReduceArgs(api, dst, src, work, count, calIndex ? 2 : 1);
  const T* s = src.GetPhyAddr();
  int32_t best = 0;
  for (int32_t i = 1; i < count; ++i) {
    Calc<T> a = s[i], b = s[best];
    if (kMax ? a > b : a < b) best = i;
  }
  dst.GetPhyAddr()[0] = s[best];
  if (calIndex) {  // the index's bits, in a T-sized slot
    if constexpr (sizeof(T) == 4) {
      uint32_t u = static_cast<uint32_t>(best);
      std::memcpy(dst.GetPhyAddr() + 1, &u, 4);
    } else {
      uint16_t u = static_cast<uint16_t>(best);
      std::memcpy(dst.GetPhyAddr() + 1, &u, 2);
    }
  }
}
}  // namespace ocimpl
/* dst[0] = max of src[0..count); with calIndex, dst[1] holds the index's bits
 * (the first of equal values). */
template <typename T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false) {
  ocimpl::ReduceExtreme<T, true>("ReduceMax", dst, src, sharedTmpBuffer, count, calIndex);
}
template <typename T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false) {
  ocimpl::ReduceExtreme<T, false>("ReduceMin", dst, src, sharedTmpBuffer, count, calIndex);
}

/* Per repeat r: dst[r * dstRepStride] = the sum of its first `mask` elements. */
template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride) {
  const char* api = "WholeReduceSum";
  if (repeatTimes < 0 || repeatTimes > static_cast<int32_t>(MAX_REPEAT_TIMES))
    ocimpl::Fail(api, ocimpl::Format("repeatTimes %d is outside 0..255", repeatTimes));
  auto m = ocimpl::ContinuousMask<T>(api, static_cast<uint64_t>(mask));
  auto s = ocimpl::Operand(api, src, srcBlkStride, srcRepStride, m, static_cast<uint8_t>(repeatTimes));
  if (repeatTimes > 0) dst.Check(api, 0, uint64_t(repeatTimes - 1) * dstRepStride + 1);
  T tmp[ocimpl::kPerRepeat<T>];
  for (int32_t r = 0; r < repeatTimes; ++r) {
    for (int32_t e = 0; e < mask; ++e) tmp[e] = s.base[s.At(r, e)];
    dst.GetPhyAddr()[r * dstRepStride] = ocimpl::TreeReduceRepeat(tmp, mask, [](auto a, auto b) { return a + b; });
  }
}

}  // namespace AscendC

#endif  // OPENCANN_ASCENDC_COMPARE_REDUCE_H_

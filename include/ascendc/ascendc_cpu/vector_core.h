/* The machinery of the vector instructions: operand checks, the mask of a
 * repeat, and the loops that apply an element function in the count form (on
 * 32-byte vectors) and in the mask/repeat form (block and repeat strides). */
#ifndef OPENCANN_ASCENDC_VECTOR_CORE_H_
#define OPENCANN_ASCENDC_VECTOR_CORE_H_

#include "ascendc_cpu/tensor.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

// The element functions take and return GCC vectors by value; they are always
// inlined, so the ABI note GCC gives for wide vectors does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace AscendC {

struct BinaryRepeatParams {
  BinaryRepeatParams() = default;
  BinaryRepeatParams(uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep, uint8_t src0Rep,
                     uint8_t src1Rep)
      : dstBlkStride(dstBlk), src0BlkStride(src0Blk), src1BlkStride(src1Blk), dstRepStride(dstRep),
        src0RepStride(src0Rep), src1RepStride(src1Rep) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

struct UnaryRepeatParams {
  UnaryRepeatParams() = default;
  UnaryRepeatParams(uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep)
      : dstBlkStride(dstBlk), srcBlkStride(srcBlk), dstRepStride(dstRep), srcRepStride(srcRep) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
  bool halfBlock = false;
};

namespace ocimpl {

template <typename T> constexpr uint32_t kPerBlock = ONE_BLK_SIZE / sizeof(T);
template <typename T> constexpr uint32_t kPerRepeat = ONE_REPEAT_BYTE_SIZE / sizeof(T);

/* Arithmetic on half and bfloat16 runs in float, rounded back on store (one
 * rounding per instruction, as the vector unit does). */
template <typename T>
using Calc = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>, float, T>;

/* Types the count form runs as 32-byte vectors. */
template <typename T>
constexpr bool kVectorizable = std::is_same_v<T, float> || std::is_same_v<T, half> ||
                               std::is_same_v<T, int32_t> || std::is_same_v<T, int16_t> ||
                               std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t>;

/* One 32-byte data block as a vector of its calculation type. */
template <typename T>
struct Lanes {
  static constexpr int kN = ONE_BLK_SIZE / sizeof(T);
  typedef T Raw __attribute__((vector_size(ONE_BLK_SIZE)));
  typedef Calc<T> Wide __attribute__((vector_size(kN * sizeof(Calc<T>))));
  static Wide Load(const T* p) {
    Raw r;
    std::memcpy(&r, p, sizeof r);
    return __builtin_convertvector(r, Wide);
  }
  static void Store(T* p, Wide w) {
    Raw r = __builtin_convertvector(w, Raw);
    std::memcpy(p, &r, sizeof r);
  }
};
#if defined(__F16C__)
/* half <-> float with the F16C conversions, 8 at a time (GCC converts half
 * vectors one element at a time otherwise); stores round to nearest even. */
template <>
struct Lanes<half> {
  static constexpr int kN = 8;
  typedef float Wide __attribute__((vector_size(32)));
  static Wide Load(const half* p) {
    __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    Wide w;
    std::memcpy(&w, &v, 32);
    return w;
  }
  static void Store(half* p, Wide w) {
    __m256 v;
    std::memcpy(&v, &w, 32);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
};
#endif

template <typename T>
inline void CheckCount(const char* api, const LocalTensor<T>& t, int64_t count) {
#if ASCENDC_OC_CHECK
  if (count < 0) Fail(api, Format("calCount %lld is negative", static_cast<long long>(count)));
  t.CheckAligned(api);
  t.Check(api, 0, static_cast<uint64_t>(count));
#else
  (void)api, (void)t, (void)count;
#endif
}

/* d[i] = f(a[i], b[i]) for i < n; f takes and returns Calc<T> (or its vector). */
template <typename T, typename F>
inline void Map2(T* d, const T* a, const T* b, uint32_t n, F f) {
  uint32_t i = 0;
  if constexpr (kVectorizable<T>) {
    using L = Lanes<T>;
    for (; i + L::kN <= n; i += L::kN) L::Store(d + i, f(L::Load(a + i), L::Load(b + i)));
  }
  for (; i < n; ++i) d[i] = static_cast<T>(f(static_cast<Calc<T>>(a[i]), static_cast<Calc<T>>(b[i])));
}
template <typename T, typename F>
inline void Map1(T* d, const T* a, uint32_t n, F f) {
  uint32_t i = 0;
  if constexpr (kVectorizable<T>) {
    using L = Lanes<T>;
    for (; i + L::kN <= n; i += L::kN) L::Store(d + i, f(L::Load(a + i)));
  }
  for (; i < n; ++i) d[i] = static_cast<T>(f(static_cast<Calc<T>>(a[i])));
}
/* Element-wise only (transcendental functions have no vector form here). */
template <typename T, typename F>
inline void Map1Scalar(T* d, const T* a, uint32_t n, F f) {
  for (uint32_t i = 0; i < n; ++i) d[i] = static_cast<T>(f(static_cast<Calc<T>>(a[i])));
}

/* The elements of one repeat an instruction touches. */
struct RepeatMask {
  uint64_t bits[4] = {0, 0, 0, 0};  // 256 elements at most (8-bit types)
  int last = -1;                    // highest active element
  bool Active(uint32_t e) const { return (bits[e >> 6] >> (e & 63)) & 1u; }
};
/* Continuous mode: the first `mask` elements of each repeat. */
template <typename T>
inline RepeatMask ContinuousMask(const char* api, uint64_t mask) {
  if (mask < 1 || mask > kPerRepeat<T>)
    Fail(api, Format("mask %llu is outside 1..%u, the %s elements of one 256-byte repeat",
                     static_cast<unsigned long long>(mask), kPerRepeat<T>, TypeName<T>::Get()));
  RepeatMask m;
  for (uint32_t e = 0; e < mask; ++e) m.bits[e >> 6] |= uint64_t{1} << (e & 63);
  m.last = static_cast<int>(mask) - 1;
  return m;
}
/* Bit mode: mask[0] selects elements 0..63, mask[1] elements 64..127. */
template <typename T>
inline RepeatMask BitMask(const char* api, const uint64_t mask[]) {
  RepeatMask m;
  m.bits[0] = mask[0];
  m.bits[1] = kPerRepeat<T> > 64 ? mask[1] : 0;
  if (kPerRepeat<T> <= 64 && mask[1] != 0)
    Fail(api, Format("mask[1] = 0x%llx must be 0 for %s: a repeat holds only 64 of them",
                     static_cast<unsigned long long>(mask[1]), TypeName<T>::Get()));
  if (m.bits[0] == 0 && m.bits[1] == 0) Fail(api, "the mask selects no element");
  for (int e = static_cast<int>(kPerRepeat<T>) - 1; e >= 0; --e)
    if (m.Active(static_cast<uint32_t>(e))) {
      m.last = e;
      break;
    }
  return m;
}

/* One operand of a mask/repeat instruction: element e of repeat r lives at
 * r * repStride blocks + (e / perBlock) * blkStride blocks + e % perBlock. */
template <typename T>
struct Strided {
  T* base;
  uint32_t blk, rep;  // in 32-byte blocks
  uint64_t At(uint32_t r, uint32_t e) const {
    return (uint64_t{r} * rep + uint64_t{e / kPerBlock<T>} * blk) * kPerBlock<T> + e % kPerBlock<T>;
  }
};
template <typename T>
inline Strided<T> Operand(const char* api, const LocalTensor<T>& t, uint32_t blk, uint32_t rep,
                          const RepeatMask& m, uint8_t repeat) {
  t.CheckAligned(api);
  Strided<T> s{t.GetPhyAddr(), blk, rep};
  if (repeat > 0 && m.last >= 0) {
    // The farthest element any repeat touches (the strides are not negative).
    uint64_t far = 0;
    for (uint32_t e = 0; e <= static_cast<uint32_t>(m.last); ++e)
      if (m.Active(e)) far = std::max(far, s.At(repeat - 1u, e));
    t.Check(api, 0, far + 1);
  }
  return s;
}

template <typename T, typename F>
inline void Repeat2(const char* api, const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b,
                    const RepeatMask& m, uint8_t repeat, const BinaryRepeatParams& p, F f) {
  auto sd = Operand(api, d, p.dstBlkStride, p.dstRepStride, m, repeat);
  auto sa = Operand(api, a, p.src0BlkStride, p.src0RepStride, m, repeat);
  auto sb = Operand(api, b, p.src1BlkStride, p.src1RepStride, m, repeat);
  for (uint32_t r = 0; r < repeat; ++r)
    for (uint32_t e = 0; e <= static_cast<uint32_t>(m.last); ++e)
      if (m.Active(e))
        sd.base[sd.At(r, e)] = static_cast<T>(
            f(static_cast<Calc<T>>(sa.base[sa.At(r, e)]), static_cast<Calc<T>>(sb.base[sb.At(r, e)])));
}
template <typename T, typename F>
inline void Repeat1(const char* api, const LocalTensor<T>& d, const LocalTensor<T>& a, const RepeatMask& m,
                    uint8_t repeat, const UnaryRepeatParams& p, F f) {
  auto sd = Operand(api, d, p.dstBlkStride, p.dstRepStride, m, repeat);
  auto sa = Operand(api, a, p.srcBlkStride, p.srcRepStride, m, repeat);
  for (uint32_t r = 0; r < repeat; ++r)
    for (uint32_t e = 0; e <= static_cast<uint32_t>(m.last); ++e)
      if (m.Active(e)) sd.base[sd.At(r, e)] = static_cast<T>(f(static_cast<Calc<T>>(sa.base[sa.At(r, e)])));
}

/* Max / min that work on scalars and on vectors alike. */
template <typename A, typename B> inline A VMax(A a, B b) { return a > static_cast<A>(b) ? a : static_cast<A>(b); }
template <typename A, typename B> inline A VMin(A a, B b) { return a < static_cast<A>(b) ? a : static_cast<A>(b); }

}  // namespace ocimpl
}  // namespace AscendC

#pragma GCC diagnostic pop

#endif  // OPENCANN_ASCENDC_VECTOR_CORE_H_

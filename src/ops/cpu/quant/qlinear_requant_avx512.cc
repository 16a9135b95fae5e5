// AVX-512 requantization rows for QLinearMatMul / QLinearConv: the contract of
// qlinear::RequantRow (double product, clamp, round half to even, + zero
// point), 16 outputs per step: two 8-double halves, rounding by the
// conversion's explicit nearest-even mode, narrowing by vpmovdb.
#include <immintrin.h>

#include "ops/cpu/quant/qlinear_common.h"

namespace oc::qlinear {

namespace {

template <bool kPerColumn>
inline __m512i RequantHalfPair(const int32_t* t, const double* mult, __m512i bias, __m512d m, __m512d lo,
                               __m512d hi, __m512i zp, __mmask16 k) {
  const __m512i acc = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, t), bias);
  __m512d m0 = m, m1 = m;
  if (kPerColumn) {
    m0 = _mm512_maskz_loadu_pd(static_cast<__mmask8>(k), mult);
    m1 = _mm512_maskz_loadu_pd(static_cast<__mmask8>(k >> 8), mult + 8);
  }
  __m512d v0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(acc)), m0);
  __m512d v1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(acc, 1)), m1);
  v0 = _mm512_min_pd(_mm512_max_pd(v0, lo), hi);
  v1 = _mm512_min_pd(_mm512_max_pd(v1, lo), hi);
  const __m256i r0 = _mm512_cvt_roundpd_epi32(v0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i r1 = _mm512_cvt_roundpd_epi32(v1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_add_epi32(_mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1), zp);
}

template <bool kPerColumn>
void Row(const int32_t* t, int64_t n, int32_t bias, const double* mult, double qlo, double qhi, int32_t zp,
         uint8_t* y) {
  const __m512i vb = _mm512_set1_epi32(bias), vz = _mm512_set1_epi32(zp);
  const __m512d m = _mm512_set1_pd(mult[0]), lo = _mm512_set1_pd(qlo), hi = _mm512_set1_pd(qhi);
  for (int64_t j = 0; j < n; j += 16) {
    const int64_t left = n - j;
    const __mmask16 k = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __m512i r = RequantHalfPair<kPerColumn>(t + j, kPerColumn ? mult + j : mult, vb, m, lo, hi, vz, k);
    // Values are in [-128, 255]: the low byte is the int8 or uint8 result.
    _mm_mask_storeu_epi8(y + j, k, _mm512_cvtepi32_epi8(r));
  }
}

}  // namespace

void RequantRow_avx512(const int32_t* t, int64_t n, int32_t bias, const double* mult, bool per_column, double qlo,
                       double qhi, int32_t zp, uint8_t* y) {
  if (per_column) Row<true>(t, n, bias, mult, qlo, qhi, zp, y);
  else Row<false>(t, n, bias, mult, qlo, qhi, zp, y);
}

}  // namespace oc::qlinear

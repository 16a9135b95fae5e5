// The AVX2 weight-only int8 / int4 kernels (quant.h): the scheme of
// quant_gemv_avx512.cc with 8 inputs per vector and tiles of up to 2 rows of
// x by 4 output channels (16 ymm registers).
#include "llm/model/quant.h"

#include <algorithm>

#include <immintrin.h>

namespace oc::llm::quant_detail {
namespace {

using TileFn = void (*)(const QGemvArgs& a, int64_t j0, int64_t i0);

inline float HSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256 Widen(__m128i bytes8, __m256 s) {  // the low 8 signed bytes, times s
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes8)), s);
}

template <int MB, int NB>
void Int8Tile(const QGemvArgs& a, int64_t j0, int64_t i0) {
  const QuantizedMatrix& w = *a.w;
  const int8_t* wr[NB];
  const float* sr[NB];
  for (int jj = 0; jj < NB; ++jj) {
    wr[jj] = reinterpret_cast<const int8_t*>(w.data.data()) + (j0 + jj) * w.kp;
    sr[jj] = w.scales.data() + (j0 + jj) * w.groups;
  }
  const float* xr[MB];
  for (int ii = 0; ii < MB; ++ii) xr[ii] = a.x + (i0 + ii) * a.ldx;
  __m256 acc[MB][NB];
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) acc[ii][jj] = _mm256_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    const int64_t k0 = g * w.group, k1 = std::min(w.kp, k0 + w.group);
    __m256 s[NB];
    for (int jj = 0; jj < NB; ++jj) s[jj] = _mm256_set1_ps(sr[jj][g]);
    for (int64_t k = k0; k < k1; k += 8) {
      __m256 xv[MB];
#pragma GCC unroll 2
      for (int ii = 0; ii < MB; ++ii) xv[ii] = _mm256_loadu_ps(xr[ii] + k);
#pragma GCC unroll 4
      for (int jj = 0; jj < NB; ++jj) {
        const __m256 wv = Widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wr[jj] + k)), s[jj]);
#pragma GCC unroll 2
        for (int ii = 0; ii < MB; ++ii) acc[ii][jj] = _mm256_fmadd_ps(xv[ii], wv, acc[ii][jj]);
      }
    }
  }
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) Store(a, i0 + ii, j0 + jj, HSum(acc[ii][jj]));
}

template <int MB, int NB>
void Int4Tile(const QGemvArgs& a, int64_t j0, int64_t i0) {
  const QuantizedMatrix& w = *a.w;
  const uint8_t* wr[NB];
  const float* sr[NB];
  for (int jj = 0; jj < NB; ++jj) {
    wr[jj] = w.data.data() + (j0 + jj) * (w.kp / 2);
    sr[jj] = w.scales.data() + (j0 + jj) * w.groups;
  }
  const float* xr[MB];
  for (int ii = 0; ii < MB; ++ii) xr[ii] = a.x + (i0 + ii) * a.ldx;
  const __m128i low4 = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
  __m256 acc[MB][NB];
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) acc[ii][jj] = _mm256_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    const int64_t k0 = g * w.group, k1 = std::min(w.kp, k0 + w.group);
    __m256 s[NB];
    for (int jj = 0; jj < NB; ++jj) s[jj] = _mm256_set1_ps(sr[jj][g]);
    for (int64_t k = k0; k < k1; k += 32) {
#pragma GCC unroll 4
      for (int jj = 0; jj < NB; ++jj) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wr[jj] + k / 2));
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(b, low4), eight);                      // inputs k .. k+15
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(b, 4), low4), eight);  // k+16 .. k+31
        const __m256 w0 = Widen(lo, s[jj]), w1 = Widen(_mm_srli_si128(lo, 8), s[jj]);
        const __m256 w2 = Widen(hi, s[jj]), w3 = Widen(_mm_srli_si128(hi, 8), s[jj]);
#pragma GCC unroll 2
        for (int ii = 0; ii < MB; ++ii) {
          const float* x = xr[ii] + k;
          __m256 t = _mm256_fmadd_ps(_mm256_loadu_ps(x), w0, acc[ii][jj]);
          t = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), w1, t);
          t = _mm256_fmadd_ps(_mm256_loadu_ps(x + 16), w2, t);
          acc[ii][jj] = _mm256_fmadd_ps(_mm256_loadu_ps(x + 24), w3, t);
        }
      }
    }
  }
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) Store(a, i0 + ii, j0 + jj, HSum(acc[ii][jj]));
}

// tiles[mb - 1][0]: one channel, [1]: four channels.
void Drive(const TileFn (&tiles)[2][2], const QGemvArgs& a, int64_t n0, int64_t n1) {
  for (int64_t j = n0; j < n1;) {
    const bool four = j + 4 <= n1;
    for (int64_t i = 0; i < a.m; i += 2) tiles[std::min<int64_t>(2, a.m - i) - 1][four](a, j, i);
    j += four ? 4 : 1;
  }
}

constexpr TileFn kInt8[2][2] = {{&Int8Tile<1, 1>, &Int8Tile<1, 4>}, {&Int8Tile<2, 1>, &Int8Tile<2, 4>}};
constexpr TileFn kInt4[2][2] = {{&Int4Tile<1, 1>, &Int4Tile<1, 4>}, {&Int4Tile<2, 1>, &Int4Tile<2, 4>}};

}  // namespace

void Int8Avx2(const QGemvArgs& a, int64_t n0, int64_t n1) { Drive(kInt8, a, n0, n1); }
void Int4Avx2(const QGemvArgs& a, int64_t n0, int64_t n1) { Drive(kInt4, a, n0, n1); }

}  // namespace oc::llm::quant_detail

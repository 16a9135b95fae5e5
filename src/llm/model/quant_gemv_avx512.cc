// The AVX-512 weight-only int8 / int4 kernels (quant.h): a tile of MB rows of
// x (int8 up to 2, int4 up to 4) by NB = 4 output channels keeps its float
// accumulators in registers; per 16 inputs each channel's weights are widened
// to float (int8: vpmovsxbd / vcvtdq2ps, scaled per group; int4: looked up
// as float32(q * s), see Int4Tile) and shared by the MB rows' FMAs. Output
// channels are the outer loop, so a channel's weights come from memory once
// per call and the later row blocks find them in L1/L2.
#include "llm/model/quant.h"

#include <algorithm>

#include <immintrin.h>

namespace oc::llm::quant_detail {
namespace {

using TileFn = void (*)(const QGemvArgs& a, int64_t j0, int64_t i0);

// Each channel's bytes are prefetched this far ahead (past the row's end it
// reaches the next channels', which come next anyway): the hardware
// prefetcher alone left the loads waiting on memory.
constexpr int64_t kPrefetchBytes = 512;

// int8: the products x * q of a group are summed first and scaled once at
// the group's end (one multiply per group instead of one per 16 weights);
// tiles of up to 2 rows keep both sets of accumulators in registers.
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
  __m512 acc[MB][NB];
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) acc[ii][jj] = _mm512_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    const int64_t k0 = g * w.group, k1 = std::min(w.kp, k0 + w.group);
    __m512 part[MB][NB];
    for (int ii = 0; ii < MB; ++ii)
      for (int jj = 0; jj < NB; ++jj) part[ii][jj] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; k += 16) {
      __m512 xv[MB];
#pragma GCC unroll 4
      for (int ii = 0; ii < MB; ++ii) xv[ii] = _mm512_loadu_ps(xr[ii] + k);
#pragma GCC unroll 4
      for (int jj = 0; jj < NB; ++jj) {
        _mm_prefetch(reinterpret_cast<const char*>(wr[jj] + k) + kPrefetchBytes, _MM_HINT_T0);
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wr[jj] + k));
        const __m512 wv = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
#pragma GCC unroll 4
        for (int ii = 0; ii < MB; ++ii) part[ii][jj] = _mm512_fmadd_ps(xv[ii], wv, part[ii][jj]);
      }
    }
    for (int jj = 0; jj < NB; ++jj) {
      const __m512 s = _mm512_set1_ps(sr[jj][g]);
      for (int ii = 0; ii < MB; ++ii) acc[ii][jj] = _mm512_fmadd_ps(part[ii][jj], s, acc[ii][jj]);
    }
  }
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) Store(a, i0 + ii, j0 + jj, _mm512_reduce_add_ps(acc[ii][jj]));
}

// int4: per group and channel, the 16 values a nibble can stand for,
// float32((u - 8) * s) for u = 0..15, are one register; vpermps looks the
// weights up in it by their nibble (the low 4 bits of each 32-bit lane), so a
// block of 32 weights costs one widening, one shift and two permutes.
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
  const __m512 levels = _mm512_setr_ps(-8.f, -7.f, -6.f, -5.f, -4.f, -3.f, -2.f, -1.f, 0.f, 1.f, 2.f, 3.f, 4.f, 5.f,
                                       6.f, 7.f);
  __m512 acc[MB][NB];
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) acc[ii][jj] = _mm512_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    const int64_t k0 = g * w.group, k1 = std::min(w.kp, k0 + w.group);
    __m512 table[NB];
    for (int jj = 0; jj < NB; ++jj) table[jj] = _mm512_mul_ps(levels, _mm512_set1_ps(sr[jj][g]));
    for (int64_t k = k0; k < k1; k += 32) {
      __m512 xl[MB], xh[MB];
#pragma GCC unroll 4
      for (int ii = 0; ii < MB; ++ii) {
        xl[ii] = _mm512_loadu_ps(xr[ii] + k);
        xh[ii] = _mm512_loadu_ps(xr[ii] + k + 16);
      }
#pragma GCC unroll 4
      for (int jj = 0; jj < NB; ++jj) {
        _mm_prefetch(reinterpret_cast<const char*>(wr[jj] + k / 2) + kPrefetchBytes, _MM_HINT_T0);
        const __m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wr[jj] + k / 2)));
        const __m512 wl = _mm512_permutexvar_ps(idx, table[jj]);                         // inputs k .. k+15
        const __m512 wh = _mm512_permutexvar_ps(_mm512_srli_epi32(idx, 4), table[jj]);  // k+16 .. k+31
#pragma GCC unroll 4
        for (int ii = 0; ii < MB; ++ii) {
          acc[ii][jj] = _mm512_fmadd_ps(xl[ii], wl, acc[ii][jj]);
          acc[ii][jj] = _mm512_fmadd_ps(xh[ii], wh, acc[ii][jj]);
        }
      }
    }
  }
  for (int ii = 0; ii < MB; ++ii)
    for (int jj = 0; jj < NB; ++jj) Store(a, i0 + ii, j0 + jj, _mm512_reduce_add_ps(acc[ii][jj]));
}

// tiles[mb - 1][0]: one channel, [1]: four channels; MaxRows rows of x per tile.
template <int MaxRows>
void Drive(const TileFn (&tiles)[MaxRows][2], const QGemvArgs& a, int64_t n0, int64_t n1) {
  for (int64_t j = n0; j < n1;) {
    const bool four = j + 4 <= n1;
    for (int64_t i = 0; i < a.m; i += MaxRows) tiles[std::min<int64_t>(MaxRows, a.m - i) - 1][four](a, j, i);
    j += four ? 4 : 1;
  }
}

constexpr TileFn kInt8[2][2] = {{&Int8Tile<1, 1>, &Int8Tile<1, 4>}, {&Int8Tile<2, 1>, &Int8Tile<2, 4>}};
constexpr TileFn kInt4[4][2] = {{&Int4Tile<1, 1>, &Int4Tile<1, 4>},
                                {&Int4Tile<2, 1>, &Int4Tile<2, 4>},
                                {&Int4Tile<3, 1>, &Int4Tile<3, 4>},
                                {&Int4Tile<4, 1>, &Int4Tile<4, 4>}};

}  // namespace

void Int8Avx512(const QGemvArgs& a, int64_t n0, int64_t n1) { Drive(kInt8, a, n0, n1); }
void Int4Avx512(const QGemvArgs& a, int64_t n0, int64_t n1) { Drive(kInt4, a, n0, n1); }

}  // namespace oc::llm::quant_detail

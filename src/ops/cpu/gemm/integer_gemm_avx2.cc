// AVX2 integer GEMM micro-kernel, 6x8, exact without VNNI. vpmaddubsw would
// saturate its 16-bit pair sums (255 * 127 * 2 > 32767), so both operands are
// widened to int16 and multiplied with vpmaddwd instead: per group of four k,
// the B panel's 32 bytes (8 columns x 4 k) become two vectors of 4 columns x 4
// int16, a row's four A bytes become four int16 repeated four times, and each
// vpmaddwd adds two k-pairs per column into int32 lanes. Every column thus
// keeps two partial sums ([c0 k01, c0 k23, c1 k01, ...]), folded by one
// horizontal add and a lane permute at the store. 12 accumulators, 2 B and
// 1 A register.
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/gemm/integer_gemm.h"

namespace oc::igemm {

namespace {

constexpr int kMR = 6;
constexpr int kNR = 8;

template <int M>
void Tile(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc, int64_t n,
          bool accumulate) {
  __m256i lo[M], hi[M];
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i) lo[i] = hi[i] = _mm256_setzero_si256();
  for (int64_t g = 0; g < kgroups; ++g) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb));
    const __m256i b_lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(b));
    const __m256i b_hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(b, 1));
#pragma GCC unroll 6
    for (int i = 0; i < M; ++i) {
      int32_t a4;
      std::memcpy(&a4, pa + i * 4, 4);
      const __m256i a = _mm256_cvtepu8_epi16(_mm_set1_epi32(a4));
      lo[i] = _mm256_add_epi32(lo[i], _mm256_madd_epi16(a, b_lo));
      hi[i] = _mm256_add_epi32(hi[i], _mm256_madd_epi16(a, b_hi));
    }
    pa += kMR * 4;
    pb += kNR * 4;
  }
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i) {
    // hadd gives [c0 c1 c4 c5 | c2 c3 c6 c7]; the permute puts 64-bit pairs in order.
    __m256i r = _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo[i], hi[i]), 0xD8);
    int32_t* ci = c + i * ldc;
    if (accumulate) r = _mm256_add_epi32(r, _mm256_maskload_epi32(ci, mask));
    _mm256_maskstore_epi32(ci, mask, r);
  }
}

using TileFn = void (*)(int64_t, const uint8_t*, const int8_t*, int32_t*, int64_t, int64_t, bool);
constexpr TileFn kTiles[kMR + 1] = {nullptr, Tile<1>, Tile<2>, Tile<3>, Tile<4>, Tile<5>, Tile<6>};

}  // namespace

void u8s8_igemm_6x8_avx2(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc,
                         int64_t m, int64_t n, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  kTiles[m > kMR ? kMR : m](kgroups, pa, pb, c, ldc, n, accumulate);
}

}  // namespace oc::igemm

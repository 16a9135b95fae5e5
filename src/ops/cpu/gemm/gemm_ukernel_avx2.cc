// AVX2+FMA f32 GEMM micro-kernel, 6x16: 12 ymm accumulators, two B vectors and
// one broadcast A value per FMA pair (15 of the 16 ymm registers). Columns past
// n go through a stack tile; a tile of m < 6 rows runs an m-row instance.
#include <immintrin.h>

#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {

namespace {
constexpr int kMR = 6;

template <int M>
void TileRows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n,
              float alpha, float beta) {
  __m256 c0[M], c1[M];
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i) c0[i] = c1[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    _mm_prefetch(reinterpret_cast<const char*>(a + kMR * 8), _MM_HINT_T0);
    // B 16 steps ahead: the first tile of a panel streams it from L3/memory.
    _mm_prefetch(reinterpret_cast<const char*>(b + 16 * 16), _MM_HINT_T0);
#pragma GCC unroll 6
    for (int i = 0; i < M; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      c0[i] = _mm256_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm256_fmadd_ps(ai, b1, c1[i]);
    }
    a += kMR;
    b += 16;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  if (n == 16) {
#pragma GCC unroll 6
    for (int i = 0; i < M; ++i) {
      float* ci = c + i * ldc;
      __m256 r0 = _mm256_mul_ps(c0[i], va), r1 = _mm256_mul_ps(c1[i], va);
      if (beta != 0.f) {
        r0 = _mm256_fmadd_ps(_mm256_loadu_ps(ci), vb, r0);
        r1 = _mm256_fmadd_ps(_mm256_loadu_ps(ci + 8), vb, r1);
      }
      _mm256_storeu_ps(ci, r0);
      _mm256_storeu_ps(ci + 8, r1);
    }
    return;
  }
  alignas(32) float tile[16];
  // Unrolled like the loops above: a runtime index into c0/c1 would make GCC
  // keep the accumulators in memory, storing all 12 to the stack every k step.
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i) {
    float* ci = c + i * ldc;
    _mm256_store_ps(tile, _mm256_mul_ps(c0[i], va));
    _mm256_store_ps(tile + 8, _mm256_mul_ps(c1[i], va));
    if (beta == 0.f) {
      for (int64_t j = 0; j < n; ++j) ci[j] = tile[j];
    } else {
      for (int64_t j = 0; j < n; ++j) ci[j] = tile[j] + beta * ci[j];
    }
  }
}
}  // namespace

void f32_gemm_6x16_avx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                        int64_t m, int64_t n, float alpha, float beta) {
  switch (m) {
    case 6: return TileRows<6>(kc, a, b, c, ldc, n, alpha, beta);
    case 5: return TileRows<5>(kc, a, b, c, ldc, n, alpha, beta);
    case 4: return TileRows<4>(kc, a, b, c, ldc, n, alpha, beta);
    case 3: return TileRows<3>(kc, a, b, c, ldc, n, alpha, beta);
    case 2: return TileRows<2>(kc, a, b, c, ldc, n, alpha, beta);
    case 1: return TileRows<1>(kc, a, b, c, ldc, n, alpha, beta);
    default: return;
  }
}

}  // namespace oc::gemm

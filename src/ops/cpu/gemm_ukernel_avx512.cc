// AVX-512 f32 GEMM micro-kernel, 14x32: 28 zmm accumulators, two B vectors per
// k step, A values broadcast straight from memory into the FMAs (31 of the 32
// zmm registers). Columns past n are masked; rows past m are computed on the
// zero padding of packed A and not stored.
#include <immintrin.h>

#include "ops/cpu/gemm_kernel.h"

namespace oc::gemm {

namespace {
template <bool kBeta>
inline void Store14x32(const __m512* c0, const __m512* c1, float* c, int64_t ldc, int64_t m,
                       int64_t n, float alpha, float beta) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  if (n == 32) {
#pragma GCC unroll 14
    for (int i = 0; i < 14; ++i) {
      if (i >= m) break;
      float* ci = c + i * ldc;
      __m512 r0 = _mm512_mul_ps(c0[i], va), r1 = _mm512_mul_ps(c1[i], va);
      if (kBeta) {
        r0 = _mm512_fmadd_ps(_mm512_loadu_ps(ci), vb, r0);
        r1 = _mm512_fmadd_ps(_mm512_loadu_ps(ci + 16), vb, r1);
      }
      _mm512_storeu_ps(ci, r0);
      _mm512_storeu_ps(ci + 16, r1);
    }
    return;
  }
  const __mmask16 k0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 k1 = n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
#pragma GCC unroll 14
  for (int i = 0; i < 14; ++i) {
    if (i >= m) break;
    float* ci = c + i * ldc;
    __m512 r0 = _mm512_mul_ps(c0[i], va), r1 = _mm512_mul_ps(c1[i], va);
    if (kBeta) {
      r0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, ci), vb, r0);
      r1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, ci + 16), vb, r1);
    }
    _mm512_mask_storeu_ps(ci, k0, r0);
    _mm512_mask_storeu_ps(ci + 16, k1, r1);
  }
}
}  // namespace

void f32_gemm_14x32_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           int64_t m, int64_t n, float alpha, float beta) {
  __m512 c0[14], c1[14];
#pragma GCC unroll 14
  for (int i = 0; i < 14; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    // Touch the A panel a few steps ahead; B is L1-resident by construction.
    _mm_prefetch(reinterpret_cast<const char*>(a + 14 * 8), _MM_HINT_T0);
#pragma GCC unroll 14
    for (int i = 0; i < 14; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      c0[i] = _mm512_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(ai, b1, c1[i]);
    }
    a += 14;
    b += 32;
  }
  if (beta == 0.f) Store14x32<false>(c0, c1, c, ldc, m, n, alpha, beta);
  else Store14x32<true>(c0, c1, c, ldc, m, n, alpha, beta);
}

}  // namespace oc::gemm

// AVX-512 recurrent mat-vec (rnn_matvec.h): 8 registers of 16 columns per
// block, so each k step is one broadcast and 8 FMAs; a masked block for the
// last columns.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "ops/cpu/rnn_matvec.h"

namespace oc::rnn {

void MatVecAccAvx512(const float* x, int64_t k_count, const float* w, int64_t ld, int64_t cols, float* out) {
  constexpr int64_t kRegs = 8, kBlock = 16 * kRegs;
  int64_t c0 = 0;
  for (; c0 + kBlock <= cols; c0 += kBlock) {
    __m512 acc[kRegs];
    for (int64_t j = 0; j < kRegs; ++j) acc[j] = _mm512_loadu_ps(out + c0 + 16 * j);
    for (int64_t k = 0; k < k_count; ++k) {
      const __m512 xv = _mm512_set1_ps(x[k]);
      const float* wr = w + k * ld + c0;
      for (int64_t j = 0; j < kRegs; ++j) acc[j] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(wr + 16 * j), acc[j]);
    }
    for (int64_t j = 0; j < kRegs; ++j) _mm512_storeu_ps(out + c0 + 16 * j, acc[j]);
  }
  for (; c0 < cols; c0 += 16) {
    const int64_t n = cols - c0 < 16 ? cols - c0 : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
    __m512 acc = _mm512_maskz_loadu_ps(m, out + c0);
    for (int64_t k = 0; k < k_count; ++k)
      acc = _mm512_fmadd_ps(_mm512_set1_ps(x[k]), _mm512_maskz_loadu_ps(m, w + k * ld + c0), acc);
    _mm512_mask_storeu_ps(out + c0, m, acc);
  }
}

}  // namespace oc::rnn

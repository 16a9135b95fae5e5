// AVX-512 recurrent mat-vec (rnn_matvec.h): 8 registers of 16 columns per
// block, so each k step is one broadcast and 8 FMAs; a masked block for the
// last columns.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "ops/cpu/rnn/rnn_matvec.h"
#include "ops/cpu/rnn/rnn_matvec_impl.h"

namespace oc::rnn {

void MatVecAccAvx512(const float* x, int64_t k_count, const float* w, int64_t ld, int64_t cols, float* out) {
  int64_t c0 = MatVecAccBlocks<simd::F32x16>(x, k_count, w, ld, cols, out);
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

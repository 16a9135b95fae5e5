// AVX2 recurrent mat-vec (rnn_matvec.h): 8 registers of 8 columns per block,
// the last columns one at a time.
#include <immintrin.h>

#include "ops/cpu/rnn/rnn_matvec.h"
#include "ops/cpu/rnn/rnn_matvec_impl.h"

namespace oc::rnn {

void MatVecAccAvx2(const float* x, int64_t k_count, const float* w, int64_t ld, int64_t cols, float* out) {
  int64_t c0 = MatVecAccBlocks<simd::F32x8>(x, k_count, w, ld, cols, out);
  c0 += MatVecAccBlocks<simd::F32x8, 1>(x, k_count, w + c0, ld, cols - c0, out + c0);
  for (; c0 < cols; ++c0) {
    float s = out[c0];
    for (int64_t k = 0; k < k_count; ++k) s += x[k] * w[k * ld + c0];
    out[c0] = s;
  }
}

}  // namespace oc::rnn

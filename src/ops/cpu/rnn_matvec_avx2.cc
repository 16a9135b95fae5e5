// AVX2 recurrent mat-vec (rnn_matvec.h): 8 registers of 8 columns per block,
// the last columns one at a time.
#include <immintrin.h>

#include "ops/cpu/rnn_matvec.h"

namespace oc::rnn {

void MatVecAccAvx2(const float* x, int64_t k_count, const float* w, int64_t ld, int64_t cols, float* out) {
  constexpr int64_t kRegs = 8, kBlock = 8 * kRegs;
  int64_t c0 = 0;
  for (; c0 + kBlock <= cols; c0 += kBlock) {
    __m256 acc[kRegs];
    for (int64_t j = 0; j < kRegs; ++j) acc[j] = _mm256_loadu_ps(out + c0 + 8 * j);
    for (int64_t k = 0; k < k_count; ++k) {
      const __m256 xv = _mm256_set1_ps(x[k]);
      const float* wr = w + k * ld + c0;
      for (int64_t j = 0; j < kRegs; ++j) acc[j] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wr + 8 * j), acc[j]);
    }
    for (int64_t j = 0; j < kRegs; ++j) _mm256_storeu_ps(out + c0 + 8 * j, acc[j]);
  }
  for (; c0 + 8 <= cols; c0 += 8) {
    __m256 acc = _mm256_loadu_ps(out + c0);
    for (int64_t k = 0; k < k_count; ++k)
      acc = _mm256_fmadd_ps(_mm256_set1_ps(x[k]), _mm256_loadu_ps(w + k * ld + c0), acc);
    _mm256_storeu_ps(out + c0, acc);
  }
  for (; c0 < cols; ++c0) {
    float s = out[c0];
    for (int64_t k = 0; k < k_count; ++k) s += x[k] * w[k * ld + c0];
    out[c0] = s;
  }
}

}  // namespace oc::rnn

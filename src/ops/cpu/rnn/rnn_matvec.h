// The recurrent product of RNN / GRU / LSTM per time step, float32:
// out[c] += sum_k x[k] * w[k * ld + c] for c in [0, cols), w being R packed
// transposed. Run-time ISA: the AVX-512 / AVX2 versions keep a block of output
// columns in registers over the whole k loop.
#pragma once

#include <cstdint>

namespace oc::rnn {

void MatVecAccAvx512(const float* x, int64_t k_count, const float* w, int64_t ld, int64_t cols, float* out);
void MatVecAccAvx2(const float* x, int64_t k_count, const float* w, int64_t ld, int64_t cols, float* out);

}  // namespace oc::rnn

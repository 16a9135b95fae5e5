// The block loop shared by the per-ISA recurrent mat-vecs (rnn_matvec.h):
// kRegs vectors of output columns stay in registers over the whole k loop, so
// each k step is one broadcast and kRegs FMAs. Included by rnn_matvec_avx2.cc
// and rnn_matvec_avx512.cc only; S is a vector type of common/simd_f32.h.
#pragma once

#include <cstdint>

#include "ops/cpu/common/simd_f32.h"

namespace oc::rnn {

// Accumulates the full blocks of columns; returns the first column not done.
template <class S, int64_t kRegs = 8>
inline int64_t MatVecAccBlocks(const float* x, int64_t k_count, const float* w, int64_t ld, int64_t cols,
                               float* out) {
  constexpr int64_t kBlock = S::kLanes * kRegs;
  int64_t c0 = 0;
  for (; c0 + kBlock <= cols; c0 += kBlock) {
    typename S::V acc[kRegs];
    for (int64_t j = 0; j < kRegs; ++j) acc[j] = S::Load(out + c0 + S::kLanes * j);
    for (int64_t k = 0; k < k_count; ++k) {
      const typename S::V xv = S::Set1(x[k]);
      const float* wr = w + k * ld + c0;
      for (int64_t j = 0; j < kRegs; ++j) acc[j] = S::Fma(xv, S::Load(wr + S::kLanes * j), acc[j]);
    }
    for (int64_t j = 0; j < kRegs; ++j) S::Store(out + c0 + S::kLanes * j, acc[j]);
  }
  return c0;
}

}  // namespace oc::rnn

// Op-level helpers shared by the MatMul/FusedMatMul and Gemm/FusedGemm kernels
// around their SgemmPlan calls.
//
// Deferred activation: an activation the fused micro-kernel cannot apply in
// registers (gemm::EpilogueFusable is false: GELU, sigmoid, tanh, ...) would run
// as a second epilogue pass over every MR x NR tile, which also takes the bias
// out of the registers. Measured on 128x3072x768 (BERT/GPT-2 FFN up, 1 thread):
// 4.1-4.3 ms with GELU in the tile epilogue against 3.8-3.9 ms for the GEMM with
// the bias in registers followed by one activation pass over C (identical
// results, the same float ops in the same order per element). So the kernels
// take such an activation out of the GEMM arguments and apply it afterwards.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"
#include "ops/cpu/activation.h"
#include "ops/cpu/gemm_kernel.h"

namespace oc::gemm {

// Removes from `g` an activation the micro-kernels cannot fuse and returns it
// (kNone when `g` keeps its activation or has none).
Activation DeferActivation(SgemmArgs& g);

// Applies `act` (no-op for kNone) to the m x n matrix at c with leading dim
// ldc, rows split over `pool` (may be null) in chunks big enough to pay for a
// thread.
void ApplyDeferredActivation(const Activation& act, float* c, int64_t ldc, int64_t m, int64_t n,
                             ThreadPool* pool);

}  // namespace oc::gemm

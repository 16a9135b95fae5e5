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

// Shared packing of A. SgemmPlan packs A inside every task: a product split by
// columns over T threads (what it does for M = 128 transformer shapes) packs
// all of A T times, and a C wider than the plan's column block packs it once
// per block (3 times for BERT's 128 x 3072 FFN). Measured with perf on
// BERT-base: A packing is 2.1% of the 1-thread and 3.7% of the 2-thread CPU
// time. The kernels pack A once instead, row panels split over the threads,
// and hand the GEMM `packed_a`.
//
// Scratch bytes (a multiple of 64) for A packed once: m x k for `uk`.
size_t SharedPackedABytes(const GemmUkernel& uk, int64_t m, int64_t k);
// When packing A once saves work for `g` on `threads` threads (A given
// row-major, not yet packed), packs it into `dst` (SharedPackedABytes of
// scratch) and points g.packed_a at it; otherwise leaves `g` alone.
void PackAOnce(SgemmArgs& g, const GemmUkernel& uk, float* dst, ThreadPool* pool, int64_t threads);
// Packs m rows of row-major A (leading dim lda, depth k) into full-K panels at
// dst, row panels split over `pool` (may be null).
void PackAShared(const GemmUkernel& uk, const float* a, int64_t lda, int64_t m, int64_t k, float* dst,
                 ThreadPool* pool);

}  // namespace oc::gemm

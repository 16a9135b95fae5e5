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
#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/gemm/gemm_kernel.h"

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

// Column-chunked product for a pre-packed B (full-K panels) and A already
// packed into full-K panels (g.packed_a): GEMMs over `width`-column chunks of
// C (a multiple of the micro-kernel's NR), whole chunks per thread, each
// single-threaded on slot t of `scratch` (`slot_bytes` apart), and `act`
// applied to each chunk right after it is computed, while it is in L2. For
// outputs too large for L2, where a separate activation pass would go to
// memory (BERT batch 8: GELU over 1024 x 3072 took 2.1 ns per value after the
// GEMM against 0.8 in cache), and for vocabulary-wide B (see matmul.cc).
void RunColumnChunks(const SgemmPlan& plan, const SgemmArgs& g, int64_t width, const Activation& act,
                     void* scratch, size_t slot_bytes, int64_t threads, ThreadPool* pool);

// Chunk width for an activation applied per chunk: about 1 MiB of C, whole
// NR panels.
int64_t ChunkWidthForRows(const GemmUkernel& uk, int64_t m);

// True when C (m x n floats) is large enough that a separate activation pass
// would find part of it out of L2 (2 MiB here, shared with A and B blocks):
// measured with GELU, 1024 x 3072 x 768 41.3 -> 38.7 ms, 128 x 3072 x 768
// 4.61 -> 4.54 ms at 1 thread in column chunks.
inline bool OutputBeyondL2(int64_t m, int64_t n) { return m * n * int64_t{4} > (int64_t{1} << 20); }

}  // namespace oc::gemm

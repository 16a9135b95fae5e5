#include "ops/cpu/gemm/gemm_activation.h"

#include <algorithm>

namespace oc::gemm {

Activation DeferActivation(SgemmArgs& g) {
  if (g.epilogue.act.kind == ActivationKind::kNone || EpilogueFusable(g.epilogue)) return {};
  const Activation act = g.epilogue.act;
  g.epilogue.act = {};
  return act;
}

void ApplyDeferredActivation(const Activation& act, float* c, int64_t ldc, int64_t m, int64_t n,
                             ThreadPool* pool) {
  if (act.kind == ActivationKind::kNone || m <= 0 || n <= 0) return;
  auto rows = [&](int64_t r0, int64_t r1) {
    if (ldc == n) {
      ApplyActivation(act, c + r0 * ldc, (r1 - r0) * n);
      return;
    }
    for (int64_t i = r0; i < r1; ++i) ApplyActivation(act, c + i * ldc, n);
  };
  if (!pool || pool->num_threads() == 1) {
    rows(0, m);
    return;
  }
  // Each thread takes the part of C its GEMM task wrote, still in its own L2:
  // SgemmPlan splits a wide C (n >= m, e.g. the FFN up-projections) by
  // columns into halves at 32-column panel edges, a tall one by rows.
  // ~16K values (10-20 us of GELU) per chunk: well above a pool dispatch.
  constexpr int64_t kChunk = int64_t{1} << 14;
  if (n >= m && n >= 64) {
    const int64_t units = n / 16;  // 16-column units: whole vectors and cache lines
    const int64_t grain = std::max<int64_t>(1, kChunk / (16 * m));
    pool->ParallelFor(units, grain, [&](int64_t u0, int64_t u1) {
      const int64_t c0 = u0 * 16, c1 = u1 == units ? n : u1 * 16;
      for (int64_t i = 0; i < m; ++i) ApplyActivation(act, c + i * ldc + c0, c1 - c0);
    });
    return;
  }
  pool->ParallelFor(m, std::max<int64_t>(1, kChunk / n), [&](int64_t r0, int64_t r1) { rows(r0, r1); });
}

size_t SharedPackedABytes(const GemmUkernel& uk, int64_t m, int64_t k) {
  return (static_cast<size_t>(PackedASize(uk, m, k)) * sizeof(float) + 63) / 64 * 64;
}

void PackAShared(const GemmUkernel& uk, const float* a, int64_t lda, int64_t m, int64_t k, float* dst,
                 ThreadPool* pool) {
  const int64_t panels = (m + uk.mr - 1) / uk.mr;
  auto pack = [&](int64_t p0, int64_t p1) {
    const int64_t r0 = p0 * uk.mr, r1 = std::min(m, p1 * uk.mr);
    PackA(uk, a + r0 * lda, lda, false, r1 - r0, k, dst + p0 * uk.mr * k);
  };
  // ~64 KiB of A per chunk at least: packing is a copy, cheap next to a wake-up.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, uk.mr * k));
  if (pool) pool->ParallelFor(panels, grain, [&](int64_t p0, int64_t p1) { pack(p0, p1); });
  else pack(0, panels);
}

void PackAOnce(SgemmArgs& g, const GemmUkernel& uk, float* dst, ThreadPool* pool, int64_t threads) {
  if (!dst || !g.a || g.packed_a || g.trans_a || g.m <= 0 || g.k <= 0) return;
  // Repacked per task (threads > 1, small M: column split) or per NC block.
  if (threads <= 1 && g.n <= uk.nc) return;
  PackAShared(uk, g.a, g.lda, g.m, g.k, dst, threads > 1 ? pool : nullptr);
  g.packed_a = dst;
  g.a = nullptr;
}

int64_t ChunkWidthForRows(const GemmUkernel& uk, int64_t m) {
  const int64_t cols = (int64_t{1} << 18) / std::max<int64_t>(1, m);
  return std::max<int64_t>(uk.nr, cols / uk.nr * uk.nr);
}

void RunColumnChunks(const SgemmPlan& plan, const SgemmArgs& g, int64_t width, const Activation& act,
                     void* scratch, size_t slot_bytes, int64_t threads, ThreadPool* pool) {
  const int nr = plan.ukernel().nr;
  // Equal chunks, a whole number per thread (the 128 x 3072 FFN at 2 threads:
  // two 1536-column chunks rather than 2048 + 1024).
  threads = std::max<int64_t>(1, std::min(threads, (g.n + nr - 1) / nr));
  int64_t chunks = std::max((g.n + width - 1) / width, threads);
  chunks = (chunks + threads - 1) / threads * threads;
  width = ((g.n + chunks - 1) / chunks + nr - 1) / nr * nr;
  chunks = (g.n + width - 1) / width;
  threads = std::min(threads, chunks);
  auto work = [&](int64_t t) {
    void* slot = static_cast<uint8_t*>(scratch) + static_cast<size_t>(t) * slot_bytes;
    for (int64_t c = chunks * t / threads; c < chunks * (t + 1) / threads; ++c) {
      const int64_t j = c * width, w = std::min(width, g.n - j);
      SgemmArgs gt = g;
      gt.n = w;
      gt.packed_b = g.packed_b + (j / nr) * g.k * nr;
      gt.c = g.c + j;
      if (g.epilogue.bias_kind == Epilogue::Bias::kPerCol) gt.epilogue.bias = g.epilogue.bias + j;
      if (g.epilogue.residual) gt.epilogue.residual = g.epilogue.residual + j;
      plan.Run(gt, nullptr, slot);
      if (act.kind != ActivationKind::kNone)
        for (int64_t i = 0; i < g.m; ++i) ApplyActivation(act, gt.c + i * g.ldc, w);
    }
  };
  if (threads == 1 || !pool) {
    for (int64_t t = 0; t < threads; ++t) work(t);
    return;
  }
  pool->ParallelFor(threads, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) work(t);
  });
}

}  // namespace oc::gemm

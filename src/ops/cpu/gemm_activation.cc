#include "ops/cpu/gemm_activation.h"

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

}  // namespace oc::gemm

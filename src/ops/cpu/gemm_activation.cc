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
  // ~16K values (10-20 us of GELU) per chunk: well above a pool dispatch.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / n);
  if (pool) pool->ParallelFor(m, grain, [&](int64_t r0, int64_t r1) { rows(r0, r1); });
  else rows(0, m);
}

}  // namespace oc::gemm

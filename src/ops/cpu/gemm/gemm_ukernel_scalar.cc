// Portable f32 GEMM micro-kernel (4x8). The reference path for CPUs without a
// vector micro-kernel; the fixed tile lets the compiler keep the accumulators
// in registers and vectorise with the baseline ISA.
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {

void f32_gemm_4x8_scalar(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                         int64_t m, int64_t n, float alpha, float beta) {
  constexpr int MR = 4, NR = 8;
  float acc[MR][NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const float* ak = a + k * MR;
    const float* bk = b + k * NR;
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] += ak[i] * bk[j];
  }
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (beta == 0.f) {
      for (int64_t j = 0; j < n; ++j) ci[j] = alpha * acc[i][j];
    } else {
      for (int64_t j = 0; j < n; ++j) ci[j] = alpha * acc[i][j] + beta * ci[j];
    }
  }
}

}  // namespace oc::gemm

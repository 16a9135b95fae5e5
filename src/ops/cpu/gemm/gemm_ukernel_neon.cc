// NEON f32 GEMM micro-kernel, 8x8: 16 q-register accumulators, A loaded as two
// quads per k step and used through lane-indexed FMAs. Built on Arm only.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {

void f32_gemm_8x8_neon(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                       int64_t m, int64_t n, float alpha, float beta) {
  float32x4_t acc[8][2];
  for (int i = 0; i < 8; ++i) acc[i][0] = acc[i][1] = vdupq_n_f32(0.f);
  for (int64_t k = 0; k < kc; ++k) {
    const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
    acc[0][0] = vfmaq_laneq_f32(acc[0][0], b0, a0, 0);
    acc[0][1] = vfmaq_laneq_f32(acc[0][1], b1, a0, 0);
    acc[1][0] = vfmaq_laneq_f32(acc[1][0], b0, a0, 1);
    acc[1][1] = vfmaq_laneq_f32(acc[1][1], b1, a0, 1);
    acc[2][0] = vfmaq_laneq_f32(acc[2][0], b0, a0, 2);
    acc[2][1] = vfmaq_laneq_f32(acc[2][1], b1, a0, 2);
    acc[3][0] = vfmaq_laneq_f32(acc[3][0], b0, a0, 3);
    acc[3][1] = vfmaq_laneq_f32(acc[3][1], b1, a0, 3);
    acc[4][0] = vfmaq_laneq_f32(acc[4][0], b0, a1, 0);
    acc[4][1] = vfmaq_laneq_f32(acc[4][1], b1, a1, 0);
    acc[5][0] = vfmaq_laneq_f32(acc[5][0], b0, a1, 1);
    acc[5][1] = vfmaq_laneq_f32(acc[5][1], b1, a1, 1);
    acc[6][0] = vfmaq_laneq_f32(acc[6][0], b0, a1, 2);
    acc[6][1] = vfmaq_laneq_f32(acc[6][1], b1, a1, 2);
    acc[7][0] = vfmaq_laneq_f32(acc[7][0], b0, a1, 3);
    acc[7][1] = vfmaq_laneq_f32(acc[7][1], b1, a1, 3);
    a += 8;
    b += 8;
  }
  float tile[8];
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    vst1q_f32(tile, vmulq_n_f32(acc[i][0], alpha));
    vst1q_f32(tile + 4, vmulq_n_f32(acc[i][1], alpha));
    if (beta == 0.f) {
      for (int64_t j = 0; j < n; ++j) ci[j] = tile[j];
    } else {
      for (int64_t j = 0; j < n; ++j) ci[j] = tile[j] + beta * ci[j];
    }
  }
}

}  // namespace oc::gemm
#endif  // __aarch64__

// AVX2 + FMA build of the polynomial float32 kernels; F16C for half casts.
#define OC_EW_ISA_NS avx2
#include "ops/cpu/elementwise/elementwise_math_impl.h"

#include <immintrin.h>

#include "base/cpu_features.h"
#include "ops/cpu/common/cast_util.h"

namespace oc::ew {
namespace {

// Every AVX2 CPU has F16C; the attribute enables it for these two functions only.
__attribute__((target("f16c"))) void ToHalfF16c(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) y[i] = FloatToHalf(x[i]);
}
__attribute__((target("f16c"))) void FromHalfF16c(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = HalfToFloat(x[i]);
}

}  // namespace

const F32MathKernels* Avx2MathKernels() {
  const CpuFeatures& f = GetCpuFeatures();
  if (!f.avx2 || !f.fma) return nullptr;
  return &avx2::Table("avx2", ToHalfF16c, FromHalfF16c);
}

}  // namespace oc::ew

// AVX-512 build of the polynomial float32 kernels and half casts.
#define OC_EW_ISA_NS avx512
#include "ops/cpu/elementwise/elementwise_math_impl.h"

#include <immintrin.h>

#include "base/cpu_features.h"
#include "ops/cpu/common/cast_util.h"

namespace oc::ew {
namespace {

// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized inside the half
// conversion intrinsics (a false positive in the header's own code).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

void ToHalf512(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) y[i] = FloatToHalf(x[i]);
}
void FromHalf512(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  for (; i < n; ++i) y[i] = HalfToFloat(x[i]);
}

#pragma GCC diagnostic pop

}  // namespace

const F32MathKernels* Avx512MathKernels() {
  const CpuFeatures& f = GetCpuFeatures();
  if (!f.avx512f || !f.avx512dq || !f.avx512vl || !f.avx512bw) return nullptr;
  return &avx512::Table("avx512", ToHalf512, FromHalf512);
}

}  // namespace oc::ew

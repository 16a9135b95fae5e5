// AVX2 + FMA build of the polynomial float32 kernels.
#define OC_EW_ISA_NS avx2
#include "ops/cpu/elementwise_math_impl.h"

#include "base/cpu_features.h"

namespace oc::ew {

const F32MathKernels* Avx2MathKernels() {
  const CpuFeatures& f = GetCpuFeatures();
  if (!f.avx2 || !f.fma) return nullptr;
  return &avx2::Table("avx2");
}

}  // namespace oc::ew

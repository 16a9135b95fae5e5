// AVX-512 build of the polynomial float32 kernels.
#define OC_EW_ISA_NS avx512
#include "ops/cpu/elementwise_math_impl.h"

#include "base/cpu_features.h"

namespace oc::ew {

const F32MathKernels* Avx512MathKernels() {
  const CpuFeatures& f = GetCpuFeatures();
  if (!f.avx512f || !f.avx512dq || !f.avx512vl || !f.avx512bw) return nullptr;
  return &avx512::Table("avx512");
}

}  // namespace oc::ew

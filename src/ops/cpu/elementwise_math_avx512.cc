#include "ops/cpu/elementwise_math.h"

namespace oc::ew {

const F32MathKernels* Avx512MathKernels() { return nullptr; }

}  // namespace oc::ew

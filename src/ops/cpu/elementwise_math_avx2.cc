#include "ops/cpu/elementwise_math.h"

namespace oc::ew {

const F32MathKernels* Avx2MathKernels() { return nullptr; }

}  // namespace oc::ew

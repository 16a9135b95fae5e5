#include "ops/cpu/elementwise/elementwise_math.h"

#include <limits>

#include "base/cpu_features.h"
#include "ops/cpu/common/cast_util.h"

namespace oc::ew {
namespace {

template <float (*F)(float)>
void Apply(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = F(x[i]);
}
float ExpF(float x) { return std::exp(x); }
float TanhF(float x) { return std::tanh(x); }
float ErfF(float x) { return std::erf(x); }
float SiluF(float x) { return x * SigmoidRef(x); }

float RowMaxScalar(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}
float ExpSumScalar(const float* x, float* y, int64_t n, float shift) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    float e = std::exp(x[i] - shift);
    if (y) y[i] = e;
    s += e;
  }
  return s;
}
void ToHalfScalar(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = FloatToHalf(x[i]);
}
void FromHalfScalar(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = HalfToFloat(x[i]);
}

}  // namespace

const F32MathKernels& ScalarMathKernels() {
  static const F32MathKernels k{"scalar",        Apply<ExpF>,  Apply<TanhF>,
                                Apply<SigmoidRef>, Apply<ErfF>, Apply<GeluRef>,
                                Apply<GeluTanhRef>, Apply<SiluF>, RowMaxScalar,
                                ExpSumScalar,  ToHalfScalar, FromHalfScalar};
  return k;
}

#if !(defined(__x86_64__) || defined(_M_X64))
const F32MathKernels* Avx2MathKernels() { return nullptr; }
const F32MathKernels* Avx512MathKernels() { return nullptr; }
#endif

const F32MathKernels& MathKernels() {
  static const F32MathKernels* k = [] {
    Isa isa = SelectedIsa();
    if (isa == Isa::kAvx512 && Avx512MathKernels()) return Avx512MathKernels();
    if ((isa == Isa::kAvx512 || isa == Isa::kAvx2) && Avx2MathKernels()) return Avx2MathKernels();
    return &ScalarMathKernels();
  }();
  return *k;
}

}  // namespace oc::ew

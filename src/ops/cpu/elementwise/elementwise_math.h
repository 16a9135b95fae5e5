// float32 transcendental kernels over arrays, picked once per process by ISA.
// The scalar table calls the C library; the AVX2 / AVX-512 tables use
// polynomial approximations accurate to a few ulp (see elementwise_math_impl.h).
// Every kernel allows y == x (in place) and does not allocate.
#pragma once

#include <cmath>
#include <cstdint>

namespace oc::ew {

using F32ArrayFn = void (*)(const float* x, float* y, int64_t n);

struct F32MathKernels {
  const char* isa;
  F32ArrayFn exp;
  F32ArrayFn tanh;
  F32ArrayFn sigmoid;
  F32ArrayFn erf;
  F32ArrayFn gelu;       // 0.5 x (1 + erf(x / sqrt 2))
  F32ArrayFn gelu_tanh;  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  F32ArrayFn silu;       // x * sigmoid(x)
  // Softmax building blocks: the max of x[0, n) (NaN ignored; -inf when n == 0),
  // and sum of exp(x[i] - shift), also stored to y[i] when y is not null.
  float (*row_max)(const float* x, int64_t n);
  float (*exp_sum)(const float* x, float* y, int64_t n, float shift);
  // float32 <-> float16 bits, round to nearest even (hardware F16C where present).
  void (*f32_to_f16)(const float* x, uint16_t* y, int64_t n);
  void (*f16_to_f32)(const uint16_t* x, float* y, int64_t n);
};

// The table for SelectedIsa() (decided on first use).
const F32MathKernels& MathKernels();
// The C-library table (reference for tests and the fallback).
const F32MathKernels& ScalarMathKernels();
// nullptr when this build or CPU lacks the ISA.
const F32MathKernels* Avx2MathKernels();
const F32MathKernels* Avx512MathKernels();

inline constexpr float kSqrtHalf = 0.70710678118654752440f;
inline constexpr float kSqrt2OverPi = 0.79788456080286535588f;

inline float SigmoidRef(float x) { return 1.f / (1.f + std::exp(-x)); }
inline float GeluRef(float x) { return 0.5f * x * (1.f + std::erf(x * kSqrtHalf)); }
inline float GeluTanhRef(float x) {
  return 0.5f * x * (1.f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

}  // namespace oc::ew

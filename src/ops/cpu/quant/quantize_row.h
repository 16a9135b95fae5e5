// The float32 -> 8/16-bit integer row of QuantizeLinear with one scale per
// row, shared by quantize.cc (baseline and dispatch) and the per-ISA builds.
//   y = clamp(rint(x / s), lo - zp, hi - zp) + zp, rint = round half to even.
// ONNX divides (x / s), and x * (1 / s) differs from it in the last bit for
// some x, which can move a value across a .5 tie: every variant divides.
#pragma once

#include <cstdint>

namespace oc {

// Clamping first keeps |q| small, so adding and subtracting 1.5 * 2^23 rounds
// it to the nearest integer, ties to even, in plain float arithmetic (the
// bounds are integers, so clamp and rint commute). NaN -> lo.
template <typename T>
inline void QuantizeRowF32Generic(const float* x, int64_t n, float s, float zp, float lo, float hi, T* y) {
  const float qlo = lo - zp, qhi = hi - zp;
  constexpr float kMagic = 12582912.f;  // 1.5 * 2^23
  for (int64_t e = 0; e < n; ++e) {
    float q = x[e] / s;
    q = q >= qlo ? q : qlo;
    q = q <= qhi ? q : qhi;
    q = (q + kMagic) - kMagic;
    y[e] = static_cast<T>(static_cast<int32_t>(q + zp));
  }
}

// DequantizeLinear rows into float32, y = (float(x) - zp) * s: the same two
// float operations in every variant, so the results are identical.
template <typename T>
inline void DequantizeRowF32Generic(const T* x, int64_t n, float s, float zp, float* y) {
  for (int64_t e = 0; e < n; ++e) y[e] = (static_cast<float>(x[e]) - zp) * s;
}

#if defined(__x86_64__) || defined(_M_X64)
// AVX-512 rows (quantize_avx512.cc); call only when SelectedIsa() is kAvx512.
void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, uint8_t* y);
void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, int8_t* y);
void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, uint16_t* y);
void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, int16_t* y);
void DequantizeRowF32Avx512(const uint8_t* x, int64_t n, float s, float zp, float* y);
void DequantizeRowF32Avx512(const int8_t* x, int64_t n, float s, float zp, float* y);
void DequantizeRowF32Avx512(const uint16_t* x, int64_t n, float s, float zp, float* y);
void DequantizeRowF32Avx512(const int16_t* x, int64_t n, float s, float zp, float* y);
// AVX2 rows (quantize_avx2.cc); call only when SelectedIsa() allows AVX2.
void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, uint8_t* y);
void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, int8_t* y);
void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, uint16_t* y);
void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, int16_t* y);
#endif

}  // namespace oc

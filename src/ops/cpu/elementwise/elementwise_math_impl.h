// Polynomial float32 exp / tanh / sigmoid / erf / gelu written as branch-free
// scalar code that the compiler vectorises. Included only by the ISA files
// (elementwise_math_avx2.cc, elementwise_math_avx512.cc), each of which defines
// OC_EW_ISA_NS first so that every copy lives in its own namespace (no ODR
// clash between copies compiled with different -m flags).
//
// Accuracy (checked by elementwise_math_test.cc against double references):
// exp within 2 ulp over its whole range (subnormal results included), tanh /
// sigmoid / erf within a few ulp, gelu within 1e-6 relative + 1e-7 absolute.
//  - exp: x = n ln2 + r with a Cody-Waite split of ln2, |r| <= ln2/2, degree-7
//    Taylor polynomial for e^r, and 2^n applied as two power-of-two factors so
//    results in the subnormal range round once.
//  - tanh: odd minimax-style polynomial for |x| < 0.625, else 1 - 2/(e^{2|x|}+1).
//  - erf: odd polynomial for |x| < 0.75; above, erfc(t) = e^{-t^2} Q(1/(1+t/2))
//    with t^2 split exactly by an FMA. Gelu uses erfc directly for x < 0, so its
//    negative tail has no cancellation.
#ifndef OC_EW_ISA_NS
#error "define OC_EW_ISA_NS before including elementwise_math_impl.h"
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/cpu/elementwise/elementwise_math.h"

namespace oc::ew::OC_EW_ISA_NS {

inline float Fma(float a, float b, float c) { return std::fma(a, b, c); }
inline float Abs(float x) { return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0x7fffffffu); }
inline float CopySign(float mag, float sign) {
  return std::bit_cast<float>((std::bit_cast<uint32_t>(mag) & 0x7fffffffu) |
                              (std::bit_cast<uint32_t>(sign) & 0x80000000u));
}
// Bitwise select: keeps the loops free of branches the vectoriser would
// refuse (it does not speculate FP ops that may trap under -ftrapping-math).
inline float Select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & m) | (std::bit_cast<uint32_t>(b) & ~m));
}
inline float Min(float a, float b) { return Select(a < b, a, b); }
inline float Max(float a, float b) { return Select(a > b, a, b); }
inline float Pow2(int32_t e) { return std::bit_cast<float>(static_cast<uint32_t>(e + 127) << 23); }

inline float Exp(float x) {
  const bool nan = x != x;
  float xs = Select(nan, 0.f, x);
  xs = Max(Min(xs, 88.8f), -104.f);
  const float n = (xs * 1.44269504088896341f + 12582912.f) - 12582912.f;  // round to nearest
  float r = Fma(n, -0.693145751953125f, xs);
  r = Fma(n, -1.42860682030941723212e-6f, r);
  float p = 1.f / 5040.f;
  p = Fma(p, r, 1.f / 720.f);
  p = Fma(p, r, 1.f / 120.f);
  p = Fma(p, r, 1.f / 24.f);
  p = Fma(p, r, 1.f / 6.f);
  p = Fma(p, r, 0.5f);
  p = Fma(p, r, 1.f);
  p = Fma(p, r, 1.f);
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni >> 1;
  const float y = p * Pow2(n1) * Pow2(ni - n1);
  return Select(nan, x, y);
}

inline float Tanh(float x) {
  const float a = Abs(x);
  const float x2 = x * x;
  float p = 2.142236069e-03f;
  p = Fma(p, x2, -8.176164407e-03f);
  p = Fma(p, x2, 2.169989735e-02f);
  p = Fma(p, x2, -5.394650786e-02f);
  p = Fma(p, x2, 1.333320199e-01f);
  p = Fma(p, x2, -3.333333052e-01f);
  p = Fma(p, x2, 9.999999999e-01f);
  const float small = x * p;
  const float e = Exp(2.f * Min(a, 10.f));
  const float big = CopySign(1.f - 2.f / (e + 1.f), x);
  return Select(a < 0.625f, small, Select(a != a, x, big));
}

inline float Sigmoid(float x) { return 1.f / (1.f + Exp(-x)); }

// x * P(x^2) ~ erf(x) for |x| < 0.75.
inline float ErfSmall(float x) {
  const float x2 = x * x;
  float p = 9.493053217e-05f;
  p = Fma(p, x2, -8.361032294e-04f);
  p = Fma(p, x2, 5.217074744e-03f);
  p = Fma(p, x2, -2.686486601e-02f);
  p = Fma(p, x2, 1.128378012e-01f);
  p = Fma(p, x2, -3.761263854e-01f);
  p = Fma(p, x2, 1.128379167e+00f);
  return x * p;
}

// erfc(t) for t in [0.75, 10].
inline float ErfcLarge(float t) {
  const float hi = t * t;
  const float lo = Fma(t, t, -hi);  // t^2 = hi + lo exactly
  const float e = Exp(-hi) * (1.f - lo);
  const float u = 1.f / Fma(0.5f, t, 1.f);
  float q = -3.383136392e-02f;
  q = Fma(q, u, 7.314140756e-02f);
  q = Fma(q, u, 6.879767193e-02f);
  q = Fma(q, u, -2.990056637e-01f);
  q = Fma(q, u, 1.865710314e-01f);
  q = Fma(q, u, -5.059157976e-03f);
  q = Fma(q, u, 2.029095514e-01f);
  q = Fma(q, u, 2.416284922e-01f);
  q = Fma(q, u, 2.827387036e-01f);
  q = Fma(q, u, 2.820490427e-01f);
  q = Fma(q, u, 1.421873281e-06f);
  return e * q;
}

inline float ClampErfArg(float a) {
  return Max(Min(a, 10.f), 0.75f);
}

inline float Erf(float x) {
  const float a = Abs(x);
  const float big = CopySign(1.f - ErfcLarge(ClampErfArg(a)), x);
  return Select(a < 0.75f, ErfSmall(x), Select(a != a, x, big));
}

inline float Gelu(float x) {
  const float z = x * kSqrtHalf;
  const float a = Abs(z);
  const float ec = ErfcLarge(ClampErfArg(a));
  const float big = Select(x >= 0.f, x * Fma(-0.5f, ec, 1.f), 0.5f * x * ec);
  const float small = 0.5f * x * (1.f + ErfSmall(z));
  return Select(a < 0.75f, small, Select(a != a, x, big));
}

// 0.5 x (1 + tanh(z)) == x * sigmoid(2 z): same function, no cancellation for x < 0.
inline float GeluTanh(float x) {
  const float z = kSqrt2OverPi * Fma(0.044715f * x, x * x, x);
  return x * Sigmoid(2.f * z);
}

inline float Silu(float x) { return x * Sigmoid(x); }

#define OC_EW_ARRAY(NAME, F)                                         \
  inline void NAME(const float* x, float* y, int64_t n) {           \
    for (int64_t i = 0; i < n; ++i) y[i] = F(x[i]);                  \
  }
OC_EW_ARRAY(ExpArray, Exp)
OC_EW_ARRAY(TanhArray, Tanh)
OC_EW_ARRAY(SigmoidArray, Sigmoid)
OC_EW_ARRAY(ErfArray, Erf)
OC_EW_ARRAY(GeluArray, Gelu)
OC_EW_ARRAY(GeluTanhArray, GeluTanh)
OC_EW_ARRAY(SiluArray, Silu)
#undef OC_EW_ARRAY

// Reductions use GCC vector extensions: 16 independent lanes (one AVX-512
// register, two AVX2 ones), so no reassociation is needed to vectorise them.
typedef float V16 __attribute__((vector_size(64)));
constexpr int kLanes = 16;

inline float RowMax(const float* x, int64_t n) {
  V16 m = V16{} - INFINITY;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    V16 v;
    std::memcpy(&v, x + i, sizeof v);
    m = v > m ? v : m;
  }
  float r = -INFINITY;
  for (int l = 0; l < kLanes; ++l) r = m[l] > r ? m[l] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

inline float LaneSum(const float* x, int64_t n) {
  V16 s = V16{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    V16 v;
    std::memcpy(&v, x + i, sizeof v);
    s += v;
  }
  float r = 0.f;
  for (int l = 0; l < kLanes; ++l) r += s[l];
  for (; i < n; ++i) r += x[i];
  return r;
}

inline void ExpShifted(const float* x, float* y, int64_t n, float shift) {
  for (int64_t i = 0; i < n; ++i) y[i] = Exp(x[i] - shift);
}

// Exp pass then a lane sum: keeps each loop in the shape the vectoriser handles.
inline float ExpSum(const float* x, float* y, int64_t n, float shift) {
  if (y) {
    ExpShifted(x, y, n, shift);
    return LaneSum(y, n);
  }
  constexpr int64_t kBlock = 256;
  alignas(64) float buf[kBlock];
  float r = 0.f;
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t len = n - i < kBlock ? n - i : kBlock;
    ExpShifted(x + i, buf, len, shift);
    r += LaneSum(buf, len);
  }
  return r;
}

inline const F32MathKernels& Table(const char* isa, void (*to_half)(const float*, uint16_t*, int64_t),
                                   void (*from_half)(const uint16_t*, float*, int64_t)) {
  static const F32MathKernels k{isa,       ExpArray,  TanhArray,     SigmoidArray, ErfArray,
                                GeluArray, GeluTanhArray, SiluArray, RowMax,       ExpSum,
                                to_half,   from_half};
  return k;
}

}  // namespace oc::ew::OC_EW_ISA_NS

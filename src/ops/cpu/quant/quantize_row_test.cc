// The per-ISA QuantizeLinear float32 rows (quantize_row.h) against an
// independent formula (float division as ONNX specifies, std::nearbyint ties
// to even, saturation) and bit-exactly against the generic loop, on random
// values, exact .5 ties after the division, saturating values, NaN and tails;
// and the DequantizeLinear rows likewise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/cpu_features.h"
#include "ops/cpu/quant/quantize_row.h"

namespace oc {
namespace {

template <typename T>
T Reference(float x, float s, float zp, float lo, float hi) {
  const float q = x / s;  // rounded to float, as ONNX's float32 division
  double r = std::nearbyint(static_cast<double>(q)) + zp;
  r = std::min<double>(std::max<double>(r, lo), hi);
  return static_cast<T>(r);
}

std::vector<float> Inputs(float s, std::mt19937* rng) {
  std::vector<float> v;
  std::uniform_real_distribution<float> u(-300.f * s, 300.f * s);
  for (int i = 0; i < 997; ++i) v.push_back(u(*rng));
  // x / s lands exactly on k + 0.5 (power-of-two scale or exact products).
  for (int k = -140; k <= 140; ++k) v.push_back((static_cast<float>(k) + 0.5f) * s);
  for (int k = -5; k <= 5; ++k) v.push_back(static_cast<float>(k) * s);
  v.push_back(0.f);
  v.push_back(-0.f);
  v.push_back(1e30f);
  v.push_back(-1e30f);
  v.push_back(std::numeric_limits<float>::infinity());
  v.push_back(-std::numeric_limits<float>::infinity());
  return v;
}

template <typename T>
void CheckType(float zp) {
  const float lo = static_cast<float>(std::numeric_limits<T>::min());
  const float hi = static_cast<float>(std::numeric_limits<T>::max());
  std::mt19937 rng(7);
  const bool avx512 = GetCpuFeatures().avx512f && GetCpuFeatures().avx512bw && GetCpuFeatures().avx512vl;
  const bool avx2 = GetCpuFeatures().avx2 && GetCpuFeatures().fma;
  for (float s : {0.25f, 0.0173f, 1.f, 3.1f, 0.5f}) {
    const std::vector<float> x = Inputs(s, &rng);
    // Every length up to 40 (masked tails) plus the whole vector.
    std::vector<int64_t> lens;
    for (int64_t n = 0; n <= 40; ++n) lens.push_back(n);
    lens.push_back(static_cast<int64_t>(x.size()));
    for (int64_t n : lens) {
      std::vector<T> g(n + 1, T{42}), a(n + 1, T{42}), b(n + 1, T{42});
      QuantizeRowF32Generic(x.data(), n, s, zp, lo, hi, g.data());
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(g[i], Reference<T>(x[i], s, zp, lo, hi)) << "x=" << x[i] << " s=" << s << " zp=" << zp;
#if defined(__x86_64__) || defined(_M_X64)
      if (avx512) {
        QuantizeRowF32Avx512(x.data(), n, s, zp, lo, hi, a.data());
        for (int64_t i = 0; i <= n; ++i) ASSERT_EQ(a[i], g[i]) << "avx512 n=" << n << " i=" << i << " x=" << x[i];
      }
      if (avx2) {
        QuantizeRowF32Avx2(x.data(), n, s, zp, lo, hi, b.data());
        for (int64_t i = 0; i <= n; ++i) ASSERT_EQ(b[i], g[i]) << "avx2 n=" << n << " i=" << i << " x=" << x[i];
      }
#endif
    }
  }
  // NaN (either sign) goes to the low bound in every variant: 37 values, so
  // that both vector bodies and their tails see NaNs.
  constexpr int kN = 37;
  float nan[kN];
  for (int i = 0; i < kN; ++i)
    nan[i] = i % 3 == 0 ? std::numeric_limits<float>::quiet_NaN()
             : i % 3 == 1 ? -std::numeric_limits<float>::quiet_NaN()
                          : static_cast<float>(i);
  T g[kN], a[kN], b[kN];
  QuantizeRowF32Generic(nan, kN, 0.5f, zp, lo, hi, g);
  for (int i = 0; i < kN; ++i) {
    if (i % 3 != 2) {
      EXPECT_EQ(g[i], static_cast<T>(lo)) << "generic i=" << i;
    }
  }
#if defined(__x86_64__) || defined(_M_X64)
  if (avx512) {
    QuantizeRowF32Avx512(nan, kN, 0.5f, zp, lo, hi, a);
    for (int i = 0; i < kN; ++i) EXPECT_EQ(a[i], g[i]) << "avx512 i=" << i;
  }
  if (avx2) {
    QuantizeRowF32Avx2(nan, kN, 0.5f, zp, lo, hi, b);
    for (int i = 0; i < kN; ++i) EXPECT_EQ(b[i], g[i]) << "avx2 i=" << i;
  }
#endif
}

TEST(QuantizeRowF32, Uint8MatchesReferenceInEveryIsa) {
  CheckType<uint8_t>(0.f);
  CheckType<uint8_t>(128.f);
  CheckType<uint8_t>(3.f);
}
TEST(QuantizeRowF32, Int8MatchesReferenceInEveryIsa) {
  CheckType<int8_t>(0.f);
  CheckType<int8_t>(-7.f);
}
TEST(QuantizeRowF32, SixteenBitMatchesReferenceInEveryIsa) {
  CheckType<uint16_t>(1000.f);
  CheckType<int16_t>(-3.f);
}

// DQ rows: (float(x) - zp) * s. The difference of two small integers is exact
// and a product of two floats is exact in double, so rounding the double
// product once to float is the correctly rounded float result.
template <typename T>
void CheckDequantize(float zp, float s) {
  std::vector<T> x;
  for (int64_t v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); v += sizeof(T) == 1 ? 1 : 97)
    x.push_back(static_cast<T>(v));
  x.push_back(std::numeric_limits<T>::max());
  const bool avx512 = GetCpuFeatures().avx512f && GetCpuFeatures().avx512bw && GetCpuFeatures().avx512vl;
  std::vector<int64_t> lens;
  for (int64_t n = 0; n <= 40; ++n) lens.push_back(n);
  lens.push_back(static_cast<int64_t>(x.size()));
  for (int64_t n : lens) {
    std::vector<float> g(n + 1, -1.f), a(n + 1, -1.f);
    DequantizeRowF32Generic(x.data(), n, s, zp, g.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(g[i], static_cast<float>((static_cast<double>(x[i]) - zp) * static_cast<double>(s))) << i;
#if defined(__x86_64__) || defined(_M_X64)
    if (avx512) {
      DequantizeRowF32Avx512(x.data(), n, s, zp, a.data());
      for (int64_t i = 0; i <= n; ++i) ASSERT_EQ(std::memcmp(&a[i], &g[i], sizeof(float)), 0) << "n=" << n << " i=" << i;
    }
#endif
  }
}

TEST(DequantizeRowF32, MatchesReferenceInEveryIsa) {
  CheckDequantize<uint8_t>(128.f, 0.0173f);
  CheckDequantize<uint8_t>(0.f, 3.1f);
  CheckDequantize<int8_t>(-7.f, 0.25f);
  CheckDequantize<uint16_t>(1000.f, 0.0011f);
  CheckDequantize<int16_t>(-3.f, 1.7f);
}

}  // namespace
}  // namespace oc

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "ops/cpu/common/cast_util.h"
#include "ops/cpu/elementwise/elementwise_math.h"

namespace oc {
namespace {

using ew::F32MathKernels;

std::vector<const F32MathKernels*> Tables() {
  std::vector<const F32MathKernels*> t = {&ew::ScalarMathKernels()};
  if (auto* k = ew::Avx2MathKernels()) t.push_back(k);
  if (auto* k = ew::Avx512MathKernels()) t.push_back(k);
  return t;
}

double Ulp(float want) {
  float a = std::fabs(want);
  if (a < std::numeric_limits<float>::min()) return std::numeric_limits<float>::denorm_min();
  return std::nextafter(a, std::numeric_limits<float>::infinity()) - a;
}

struct FnCase {
  const char* name;
  ew::F32ArrayFn F32MathKernels::*fn;
  double (*ref)(double);
  float lo, hi;
  double max_ulp;   // relative bound in ulps of the true result
  double abs_tol;   // absolute floor
};

double RefSigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double RefGelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double RefGeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double RefSilu(double x) { return x / (1 + std::exp(-x)); }
double RefExp(double x) { return std::exp(x); }
double RefTanh(double x) { return std::tanh(x); }
double RefErf(double x) { return std::erf(x); }

TEST(EwMath, KernelsMatchDoubleReferencesOnEveryIsa) {
  const FnCase cases[] = {
      {"exp", &F32MathKernels::exp, RefExp, -104.f, 89.f, 2.0, 0},
      {"exp_small", &F32MathKernels::exp, RefExp, -1.f, 1.f, 2.0, 0},
      {"tanh", &F32MathKernels::tanh, RefTanh, -12.f, 12.f, 3.0, 0},
      {"tanh_small", &F32MathKernels::tanh, RefTanh, -0.7f, 0.7f, 3.0, 0},
      {"sigmoid", &F32MathKernels::sigmoid, RefSigmoid, -87.f, 40.f, 4.0, 0},
      {"erf", &F32MathKernels::erf, RefErf, -6.f, 6.f, 4.0, 1e-30},
      {"erf_small", &F32MathKernels::erf, RefErf, -0.8f, 0.8f, 3.0, 0},
      {"gelu", &F32MathKernels::gelu, RefGelu, -14.f, 8.f, 4.0, 1e-7},
      {"gelu_tanh", &F32MathKernels::gelu_tanh, RefGeluTanh, -8.f, 8.f, 4.0, 1e-7},
      {"silu", &F32MathKernels::silu, RefSilu, -80.f, 40.f, 8.0, 1e-30},
  };
  const int64_t n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (const F32MathKernels* t : Tables()) {
    for (const FnCase& c : cases) {
      for (int64_t i = 0; i < n; ++i) x[i] = c.lo + (c.hi - c.lo) * (static_cast<float>(i) / (n - 1));
      (t->*c.fn)(x.data(), y.data(), n);
      double worst = 0;
      float worst_x = 0;
      for (int64_t i = 0; i < n; ++i) {
        double want = c.ref(x[i]);
        double err = std::fabs(y[i] - want);
        if (err <= c.abs_tol) continue;
        double ulps = err / Ulp(static_cast<float>(want));
        if (ulps > worst) { worst = ulps; worst_x = x[i]; }
      }
      EXPECT_LE(worst, c.max_ulp) << t->isa << " " << c.name << " worst at x=" << worst_x;
      std::printf("  %-7s %-10s max error %.2f ulp\n", t->isa, c.name, worst);
    }
  }
}

TEST(EwMath, SpecialValuesOnEveryIsa) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> x = {inf, -inf, nan, 0.f, -0.f, 1e-30f, -1e-30f, 200.f, -200.f};
  std::vector<float> y(x.size());
  for (const F32MathKernels* t : Tables()) {
    t->exp(x.data(), y.data(), x.size());
    EXPECT_EQ(y[0], inf) << t->isa;
    EXPECT_EQ(y[1], 0.f) << t->isa;
    EXPECT_TRUE(std::isnan(y[2])) << t->isa;
    EXPECT_EQ(y[3], 1.f);
    EXPECT_EQ(y[7], inf);
    EXPECT_EQ(y[8], 0.f);
    t->tanh(x.data(), y.data(), x.size());
    EXPECT_EQ(y[0], 1.f) << t->isa;
    EXPECT_EQ(y[1], -1.f) << t->isa;
    EXPECT_TRUE(std::isnan(y[2])) << t->isa;
    EXPECT_EQ(y[5], 1e-30f) << t->isa;
    t->sigmoid(x.data(), y.data(), x.size());
    EXPECT_EQ(y[0], 1.f) << t->isa;
    EXPECT_EQ(y[1], 0.f) << t->isa;
    EXPECT_TRUE(std::isnan(y[2])) << t->isa;
    EXPECT_EQ(y[3], 0.5f) << t->isa;
    t->erf(x.data(), y.data(), x.size());
    EXPECT_EQ(y[0], 1.f) << t->isa;
    EXPECT_EQ(y[1], -1.f) << t->isa;
    EXPECT_TRUE(std::isnan(y[2])) << t->isa;
    EXPECT_EQ(y[7], 1.f) << t->isa;
    t->gelu(x.data(), y.data(), x.size());
    EXPECT_EQ(y[0], inf) << t->isa;
    EXPECT_TRUE(std::isnan(y[2])) << t->isa;
    EXPECT_EQ(y[7], 200.f) << t->isa;
    EXPECT_NEAR(y[8], 0.f, 1e-30) << t->isa;
    // In place, odd length.
    std::vector<float> z = {0.5f, -0.5f, 3.f};
    t->tanh(z.data(), z.data(), 3);
    EXPECT_NEAR(z[2], std::tanh(3.0), 1e-7);
  }
}

TEST(EwMath, SoftmaxBlocksAndHalfCastsOnEveryIsa) {
  for (int64_t n : {0, 1, 15, 16, 17, 1000}) {
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * i) * 30.f;
    double m = -INFINITY, s = 0;
    for (float v : x) m = std::max<double>(m, v);
    for (float v : x) s += std::exp(v - m);
    for (const F32MathKernels* t : Tables()) {
      float got_m = t->row_max(x.data(), n);
      EXPECT_EQ(got_m, static_cast<float>(m)) << t->isa << " n=" << n;
      if (n == 0) continue;
      float got_s = t->exp_sum(x.data(), y.data(), n, got_m);
      EXPECT_NEAR(got_s, s, 1e-6 * s) << t->isa;
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], std::exp(double(x[i]) - m), 3e-7) << t->isa;
      EXPECT_NEAR(t->exp_sum(x.data(), nullptr, n, got_m), s, 1e-6 * s) << t->isa;
    }
  }
  std::vector<float> f = {0.f, -0.f, 1.f, 65504.f, 65520.f, 1e-7f, -3e-8f, std::nanf(""), 0.333333f,
                          std::numeric_limits<float>::infinity(), 2049.f, 2051.f, -1e-5f, 6.1e-5f, 7.f, 8.f, 9.f};
  for (const F32MathKernels* t : Tables()) {
    std::vector<uint16_t> h(f.size());
    std::vector<float> back(f.size());
    t->f32_to_f16(f.data(), h.data(), f.size());
    t->f16_to_f32(h.data(), back.data(), f.size());
    for (size_t i = 0; i < f.size(); ++i) {
      EXPECT_EQ(h[i], ew::FloatToHalf(f[i])) << t->isa << " " << f[i];
      float want = ew::HalfToFloat(h[i]);
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(back[i]));
      else EXPECT_EQ(back[i], want) << t->isa;
    }
  }
}

TEST(EwMath, ThroughputReport) {
  const int64_t n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -8.f + 16.f * i / n;
  for (const F32MathKernels* t : Tables()) {
    for (auto [name, fn] : {std::pair{"exp", t->exp}, std::pair{"tanh", t->tanh}, std::pair{"erf", t->erf},
                            std::pair{"gelu", t->gelu}}) {
      auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < 5; ++r) fn(x.data(), y.data(), n);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 5;
      std::printf("  %-7s %-5s %.2f ns/elem\n", t->isa, name, s * 1e9 / n);
    }
  }
}

}  // namespace
}  // namespace oc

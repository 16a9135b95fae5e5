#include <gtest/gtest.h>

#include <cmath>

#include "ops/cpu/pool/pool_test_util.h"

namespace oc {
namespace {

using testing::ExpectNear;
using testing::OpTester;
using testing::RandomFloats;

// Normalises x[begin, begin+count) with population statistics.
void RefNormalize(const std::vector<float>& x, size_t begin, size_t count, double eps, std::vector<double>* out) {
  double m = 0, v = 0;
  for (size_t i = 0; i < count; ++i) m += x[begin + i];
  m /= count;
  for (size_t i = 0; i < count; ++i) v += (x[begin + i] - m) * (x[begin + i] - m);
  v /= count;
  for (size_t i = 0; i < count; ++i) out->push_back((x[begin + i] - m) / std::sqrt(v + eps));
}

TEST(NormInstanceTest, PerSamplePerChannelStatistics) {
  const int64_t n = 2, c = 3, h = 4, w = 5;
  auto x = RandomFloats(n * c * h * w, 1, -3, 5);
  auto scale = RandomFloats(c, 2), bias = RandomFloats(c, 3);
  OpTester t("InstanceNormalization", 6);
  t.InputF({n, c, h, w}, x).InputF({c}, scale).InputF({c}, bias).Outputs(1);
  t.node().SetFloat("epsilon", 1e-4f);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<double> norm;
  for (int64_t p = 0; p < n * c; ++p) RefNormalize(x, p * h * w, h * w, 1e-4, &norm);
  std::vector<float> want;
  for (size_t i = 0; i < norm.size(); ++i) {
    int64_t ch = (i / (h * w)) % c;
    want.push_back(static_cast<float>(norm[i] * scale[ch] + bias[ch]));
  }
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{n, c, h, w}));
  ExpectNear(r->F(0), want, 1e-5f);
}

TEST(NormGroupTest, Opset21PerChannelAndOpset18PerGroupParameters) {
  const int64_t n = 2, c = 6, hw = 4, g = 3;
  auto x = RandomFloats(n * c * hw, 4, -1, 3);
  std::vector<double> norm;
  for (int64_t gi = 0; gi < n * g; ++gi) RefNormalize(x, gi * (c / g) * hw, (c / g) * hw, 1e-5, &norm);
  {
    auto scale = RandomFloats(c, 5), bias = RandomFloats(c, 6);
    OpTester t("GroupNormalization", 21);
    t.InputF({n, c, 2, 2}, x).InputF({c}, scale).InputF({c}, bias).Outputs(1);
    t.node().SetInt("num_groups", g);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<float> want;
    for (size_t i = 0; i < norm.size(); ++i) {
      int64_t ch = (i / hw) % c;
      want.push_back(static_cast<float>(norm[i] * scale[ch] + bias[ch]));
    }
    ExpectNear(r->F(0), want, 1e-5f, "opset 21");
  }
  {
    auto scale = RandomFloats(g, 7), bias = RandomFloats(g, 8);
    OpTester t("GroupNormalization", 18);
    t.InputF({n, c, 2, 2}, x).InputF({g}, scale).InputF({g}, bias).Outputs(1);
    t.node().SetInt("num_groups", g);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<float> want;
    for (size_t i = 0; i < norm.size(); ++i) {
      int64_t grp = ((i / hw) % c) / (c / g);
      want.push_back(static_cast<float>(norm[i] * scale[grp] + bias[grp]));
    }
    ExpectNear(r->F(0), want, 1e-5f, "opset 18");
  }
  OpTester bad("GroupNormalization", 21);
  bad.InputF({1, 6, 2}, std::vector<float>(12)).InputF({6}, std::vector<float>(6)).InputF({6}, std::vector<float>(6))
      .Outputs(1);
  bad.node().SetInt("num_groups", 4);
  auto rb = bad.Run();
  EXPECT_EQ(rb.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rb.status().message().find("num_groups"), std::string::npos) << rb.status().message();
}

TEST(NormLrnTest, CrossChannelWindowFromSpec) {
  const int64_t n = 2, c = 5, hw = 3;
  auto x = RandomFloats(n * c * hw, 9, -2, 2);
  for (int64_t size : {1, 2, 3, 4}) {
    OpTester t("LRN", 13);
    t.InputF({n, c, 1, hw}, x).Outputs(1);
    t.node().SetInt("size", size);
    t.node().SetFloat("alpha", 0.3f);
    t.node().SetFloat("beta", 0.6f);
    t.node().SetFloat("bias", 2.f);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<float> want;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < hw; ++i) {
          double sq = 0;
          int64_t lo = ch - (size - 1) / 2, hi = ch + (size - 1 + 1) / 2;  // floor / ceil of (size-1)/2
          for (int64_t k = std::max<int64_t>(lo, 0); k <= std::min<int64_t>(hi, c - 1); ++k) {
            double v = x[(b * c + k) * hw + i];
            sq += v * v;
          }
          want.push_back(static_cast<float>(x[(b * c + ch) * hw + i] / std::pow(2.0 + 0.3 / size * sq, 0.6)));
        }
    ExpectNear(r->F(0), want, 1e-5f, "size " + std::to_string(size));
  }
}

}  // namespace
}  // namespace oc

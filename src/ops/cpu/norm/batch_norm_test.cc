#include <gtest/gtest.h>

#include <cmath>

#include "ops/cpu/pool/pool_test_util.h"

namespace oc {
namespace {

using testing::ExpectNear;
using testing::OpTester;
using testing::RandomFloats;

TEST(NormBatchTest, InferenceFormulaPerChannel) {
  const int64_t n = 2, c = 3, hw = 5;
  auto x = RandomFloats(n * c * hw, 1, -2, 2);
  auto scale = RandomFloats(c, 2), bias = RandomFloats(c, 3), mean = RandomFloats(c, 4);
  auto var = RandomFloats(c, 5, 0.1f, 2.f);
  for (int opset : {7, 9, 15}) {
    OpTester t("BatchNormalization", opset);
    t.InputF({n, c, hw}, x).InputF({c}, scale).InputF({c}, bias).InputF({c}, mean).InputF({c}, var).Outputs(1);
    t.node().SetFloat("epsilon", 1e-3f);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<float> want;
    for (int64_t i = 0; i < n * c * hw; ++i) {
      int64_t ch = (i / hw) % c;
      want.push_back((x[i] - mean[ch]) / std::sqrt(var[ch] + 1e-3f) * scale[ch] + bias[ch]);
    }
    ExpectNear(r->F(0), want, 1e-5f, "opset " + std::to_string(opset));
  }
}

TEST(NormBatchTest, Float64AndRank2) {
  std::vector<double> x = {1, 2, 3, 4, 5, 6};
  OpTester t("BatchNormalization", 15);
  t.Input<double>({3, 2}, x)
      .Input<double>({2}, {1, 2})
      .Input<double>({2}, {0, 1})
      .Input<double>({2}, {1, 2})
      .Input<double>({2}, {4, 1})
      .Outputs(1);
  t.node().SetFloat("epsilon", 0.f);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto y = r->D(0);
  ASSERT_EQ(y.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    int ch = i % 2;
    double want = ch == 0 ? (x[i] - 1) / 2 * 1 + 0 : (x[i] - 2) / 1 * 2 + 1;
    EXPECT_DOUBLE_EQ(y[i], want);
  }
}

TEST(NormBatchTest, SpatialZeroUsesPerActivationParameters) {
  const int64_t c = 2, hw = 3;
  auto x = RandomFloats(2 * c * hw, 6);
  auto scale = RandomFloats(c * hw, 7), bias = RandomFloats(c * hw, 8), mean = RandomFloats(c * hw, 9);
  auto var = RandomFloats(c * hw, 10, 0.5f, 1.5f);
  OpTester t("BatchNormalization", 7);
  t.InputF({2, c, hw}, x).InputF({c, hw}, scale).InputF({c, hw}, bias).InputF({c, hw}, mean)
      .InputF({c, hw}, var).Outputs(1);
  t.node().SetInt("spatial", 0);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> want;
  for (int64_t i = 0; i < 2 * c * hw; ++i) {
    int64_t p = i % (c * hw);
    want.push_back((x[i] - mean[p]) / std::sqrt(var[p] + 1e-5f) * scale[p] + bias[p]);
  }
  ExpectNear(r->F(0), want, 1e-5f);
}

TEST(NormBatchTest, TrainingModeRunsAndBadShapesAreRejected) {
  auto make = [](OpTester& t, int64_t pc) {
    t.InputF({1, 2, 2}, std::vector<float>(4, 1.f));
    for (int i = 0; i < 4; ++i) t.InputF({pc}, std::vector<float>(pc, 1.f));
  };
  OpTester t("BatchNormalization", 15);
  make(t, 2);
  t.Outputs(3);
  t.node().SetInt("training_mode", 1);
  // Constant X: batch mean 1, batch variance 0, so Y = B; the running
  // statistics move by (1 - momentum) towards (1, 0).
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectNear(r->F(0), {1, 1, 1, 1}, 1e-6f, "Y");
  ExpectNear(r->F(1), {1, 1}, 1e-6f, "running_mean");
  ExpectNear(r->F(2), {0.9f, 0.9f}, 1e-6f, "running_var");

  OpTester b("BatchNormalization", 15);
  make(b, 3);
  b.Outputs(1);
  auto rb = b.Run();
  EXPECT_EQ(rb.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rb.status().message().find("scale"), std::string::npos) << rb.status().message();

  OpTester i("BatchNormalization", 15);
  i.Input<int32_t>({1, 1, 1}, {1});
  for (int k = 0; k < 4; ++k) i.Input<int32_t>({1}, {1});
  i.Outputs(1);
  EXPECT_EQ(i.Run().status().code(), StatusCode::kNotSupported);
}

}  // namespace
}  // namespace oc

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/cpu/elementwise/elementwise_test_util.h"
#include "ops/infer_util.h"

namespace oc {
namespace {

using ewtest::Make;
using ewtest::RunOp;

// Reference over [outer, n, inner] in double.
std::vector<double> RefSoftmax(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return o * n * inner + k * inner + j; };
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, double(x[at(k)]));
      for (int64_t k = 0; k < n; ++k) s += std::exp(double(x[at(k)]) - m);
      for (int64_t k = 0; k < n; ++k)
        y[at(k)] = log ? double(x[at(k)]) - m - std::log(s) : std::exp(double(x[at(k)]) - m) / s;
    }
  return y;
}

struct SmCase {
  std::vector<int64_t> shape;
  int64_t axis;  // attribute
  int opset;
  int64_t outer, n, inner;
};

TEST(EwSoftmax, AxisSemanticsOldAndNewOpsets) {
  std::vector<SmCase> cases = {
      {{3, 17}, -1, 13, 3, 17, 1},
      {{2, 5, 7}, 1, 13, 2, 5, 7},
      {{5, 130}, 0, 13, 1, 5, 130},
      {{2, 3, 4}, 1, 11, 2, 12, 1},   // coerced to 2-D
      {{2, 3, 4}, -2, 13, 2, 3, 4},
      {{2, 3, 4}, 0, 11, 1, 24, 1},
      {{4, 1}, -1, 13, 4, 1, 1},
      {{1, 1000}, 1, 1, 1, 1000, 1},
      {{33, 70, 3}, 1, 18, 33, 70, 3},
  };
  for (bool log : {false, true}) {
    for (const auto& c : cases) {
      int64_t total = c.outer * c.n * c.inner;
      auto x = ewtest::RandomFloats(total, -20.f, 20.f, static_cast<uint32_t>(total));
      auto r = RunOp(log ? "LogSoftmax" : "Softmax", {Make(c.shape, x)},
                     [&](Node& n) { n.SetInt("axis", c.axis); }, c.opset);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      auto y = (*r)[0].as<float>();
      auto ref = RefSoftmax(x, c.outer, c.n, c.inner, log);
      for (int64_t i = 0; i < total; ++i)
        ASSERT_NEAR(y[i], ref[i], 2e-6 * std::max(1.0, std::fabs(ref[i])))
            << (log ? "LogSoftmax" : "Softmax") << " case rank " << c.shape.size() << " axis " << c.axis
            << " opset " << c.opset << " at " << i;
    }
  }
}

TEST(EwSoftmax, DefaultAxisDependsOnOpset) {
  auto x = ewtest::RandomFloats(12, -3.f, 3.f, 9);
  auto r11 = RunOp("Softmax", {Make({3, 4}, x)}, nullptr, 11);  // axis 1 over [3,4]: rows of 4
  auto r13 = RunOp("Softmax", {Make({2, 3, 2}, x)}, nullptr, 13);  // axis -1: rows of 2
  ASSERT_TRUE(r11.ok() && r13.ok());
  auto a = (*r11)[0].as<float>();
  auto ra = RefSoftmax(x, 3, 4, 1, false);
  auto b = (*r13)[0].as<float>();
  auto rb = RefSoftmax(x, 6, 2, 1, false);
  for (int i = 0; i < 12; ++i) {
    EXPECT_NEAR(a[i], ra[i], 1e-6);
    EXPECT_NEAR(b[i], rb[i], 1e-6);
  }
}

TEST(EwSoftmax, LargeRowsExtremeValuesAndDouble) {
  const int64_t n = 1000003;
  auto x = ewtest::RandomFloats(n, -50.f, 50.f, 3);
  x[17] = 1000.f;  // would overflow exp without the max shift
  auto r = RunOp("Softmax", {Make({1, n}, x)});
  ASSERT_TRUE(r.ok());
  auto y = (*r)[0].as<float>();
  auto ref = RefSoftmax(x, 1, n, 1, false);
  for (int64_t i = 0; i < n; i += 13) ASSERT_NEAR(y[i], ref[i], 1e-7) << i;
  EXPECT_NEAR(y[17], 1.0, 1e-6);
  float ninf = -std::numeric_limits<float>::infinity();
  r = RunOp("Softmax", {Make<float>({2, 2}, {ninf, 0.f, ninf, ninf})});
  y = (*r)[0].as<float>();
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], 1.f);
  r = RunOp("LogSoftmax", {Make<double>({3}, {1.0, 2.0, 3.0})});
  ASSERT_TRUE(r.ok());
  auto d = (*r)[0].as<double>();
  double s = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(d[i], (i + 1) - s, 1e-14);
  EXPECT_FALSE(RunOp("Softmax", {Make<float>({2, 2}, {0, 0, 0, 0})}, [](Node& n) { n.SetInt("axis", 2); }).ok());
  EXPECT_EQ(RunOp("Softmax", {Make<int32_t>({2}, {0, 0})}).status().code(), StatusCode::kNotSupported);
}

TEST(EwLayerNorm, NormalisesTrailingDimsWithOptionalOutputs) {
  struct C {
    std::vector<int64_t> shape;
    int64_t axis;
    std::vector<int64_t> scale_shape;
  };
  for (const C& c : {C{{2, 3, 8}, -1, {8}}, C{{2, 3, 8}, 1, {3, 8}}, C{{4, 17}, -1, {17}},
                     C{{2, 3, 5}, 1, {1, 5}}, C{{3, 1000}, 1, {1000}}, C{{6}, 0, {6}}}) {
    int64_t total = ShapeProduct(c.shape);
    int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.shape.size()) : c.axis;
    int64_t rows = ShapeProduct(c.shape, 0, axis), cols = total / rows;
    int64_t sn = ShapeProduct(c.scale_shape);
    auto x = ewtest::RandomFloats(total, -4.f, 6.f, 1);
    auto s = ewtest::RandomFloats(sn, 0.5f, 2.f, 2);
    auto b = ewtest::RandomFloats(sn, -1.f, 1.f, 3);
    auto r = RunOp("LayerNormalization", {Make(c.shape, x), Make(c.scale_shape, s), Make(c.scale_shape, b)},
                   [&](Node& n) { n.SetInt("axis", c.axis); n.SetFloat("epsilon", 1e-3f); }, 17, 3);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto y = (*r)[0].as<float>();
    auto mean = (*r)[1].as<float>();
    auto inv = (*r)[2].as<float>();
    std::vector<int64_t> stat_shape = c.shape;
    for (size_t i = axis; i < stat_shape.size(); ++i) stat_shape[i] = 1;
    EXPECT_EQ((*r)[1].shape, stat_shape);
    std::vector<int64_t> norm(c.shape.begin() + axis, c.shape.end());
    for (int64_t row = 0; row < rows; ++row) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < cols; ++i) m += x[row * cols + i];
      m /= cols;
      for (int64_t i = 0; i < cols; ++i) v += (x[row * cols + i] - m) * (x[row * cols + i] - m);
      v /= cols;
      double is = 1 / std::sqrt(v + double(1e-3f));
      EXPECT_NEAR(mean[row], m, 1e-5);
      EXPECT_NEAR(inv[row], is, 1e-5 * is);
      for (int64_t i = 0; i < cols; ++i) {
        int64_t si = ewtest::BroadcastIndex(c.scale_shape, norm, i);
        double want = (x[row * cols + i] - m) * is * s[si] + b[si];
        ASSERT_NEAR(y[row * cols + i], want, 1e-5 * std::max(1.0, std::fabs(want))) << row << "," << i;
      }
    }
  }
}

TEST(EwLayerNorm, WithoutBiasAndErrors) {
  auto x = ewtest::RandomFloats(10, -1.f, 1.f, 4);
  auto r = RunOp("LayerNormalization", {Make({2, 5}, x), Make<float>({5}, {1, 1, 1, 1, 1})}, nullptr, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto y = (*r)[0].as<float>();
  double m = 0, v = 0;
  for (int i = 0; i < 5; ++i) m += x[i];
  m /= 5;
  for (int i = 0; i < 5; ++i) v += (x[i] - m) * (x[i] - m);
  v /= 5;
  EXPECT_NEAR(y[0], (x[0] - m) / std::sqrt(v + 1e-5), 1e-5);
  EXPECT_FALSE(RunOp("LayerNormalization", {Make({2, 5}, x), Make<float>({4}, {1, 1, 1, 1})}, nullptr, 17).ok());
  EXPECT_FALSE(RunOp("LayerNormalization", {Make({2, 5}, x), Make<float>({5}, {1, 1, 1, 1, 1})},
                     [](Node& n) { n.SetInt("axis", 3); }, 17).ok());
}

}  // namespace
}  // namespace oc

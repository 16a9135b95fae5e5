#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "ops/cpu/elementwise/elementwise_test_util.h"

namespace oc {
namespace {

using ewtest::Make;
using ewtest::RunOp;

// Relative error bound for float32 results against a double reference: a few
// ulp, with an absolute floor for results near zero.
void ExpectClose(float got, double want, const std::string& what, double rel = 4e-7, double abs = 1e-7) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  if (std::isinf(static_cast<float>(want))) {
    EXPECT_EQ(got, static_cast<float>(want)) << what;
    return;
  }
  EXPECT_LE(std::fabs(got - want), rel * std::fabs(want) + abs) << what << ": got " << got << " want " << want;
}

struct UnaryCase {
  std::string op;
  float lo, hi;
  std::function<double(double)> ref;
  std::function<void(Node&)> attrs = nullptr;
  int opset = 18;
};

const double kSeluAlpha = 1.67326319217681884765625, kSeluGamma = 1.05070102214813232421875;
double Softplus(double x) { return std::log1p(std::exp(x)); }

TEST(EwUnary, FloatOpsMatchDoubleReferences) {
  std::vector<UnaryCase> cases = {
      {"Relu", -5, 5, [](double x) { return x < 0 ? 0 : x; }},
      {"LeakyRelu", -5, 5, [](double x) { return x < 0 ? x * double(0.1f) : x; }, [](Node& n) { n.SetFloat("alpha", 0.1f); }},
      {"LeakyRelu", -5, 5, [](double x) { return x < 0 ? x * double(0.01f) : x; }},
      {"Sigmoid", -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Tanh", -12, 12, [](double x) { return std::tanh(x); }},
      {"Tanh", -0.7f, 0.7f, [](double x) { return std::tanh(x); }},
      {"Exp", -100, 88, [](double x) { return std::exp(x); }},
      {"Log", 1e-6f, 1e6f, [](double x) { return std::log(x); }},
      {"Sqrt", 0, 1e4f, [](double x) { return std::sqrt(x); }},
      {"Erf", -5, 5, [](double x) { return std::erf(x); }},
      {"Erf", -0.5f, 0.5f, [](double x) { return std::erf(x); }},
      {"Neg", -5, 5, [](double x) { return -x; }},
      {"Abs", -5, 5, [](double x) { return std::fabs(x); }},
      {"Reciprocal", 0.1f, 10, [](double x) { return 1 / x; }},
      {"Floor", -5, 5, [](double x) { return std::floor(x); }},
      {"Ceil", -5, 5, [](double x) { return std::ceil(x); }},
      {"Round", -5, 5, [](double x) { return std::nearbyint(x); }},
      {"Sign", -5, 5, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }},
      {"Sin", -10, 10, [](double x) { return std::sin(x); }},
      {"Cos", -10, 10, [](double x) { return std::cos(x); }},
      {"Softplus", -30, 30, Softplus},
      {"Softsign", -5, 5, [](double x) { return x / (1 + std::fabs(x)); }},
      {"Elu", -5, 5, [](double x) { return x < 0 ? 0.5 * std::expm1(x) : x; }, [](Node& n) { n.SetFloat("alpha", 0.5f); }},
      {"Selu", -5, 5, [](double x) { return kSeluGamma * (x <= 0 ? kSeluAlpha * std::expm1(x) : x); }},
      {"Celu", -5, 5, [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * std::expm1(x / 2.0)); },
       [](Node& n) { n.SetFloat("alpha", 2.f); }},
      {"ThresholdedRelu", -5, 5, [](double x) { return x > 1 ? x : 0; }},
      {"HardSigmoid", -5, 5, [](double x) { return std::clamp(double(0.2f) * x + 0.5, 0.0, 1.0); }},
      {"HardSwish", -5, 5, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }},
      {"Gelu", -6, 6, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, nullptr, 20},
      {"Gelu", -6, 6,
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); },
       [](Node& n) { n.SetString("approximate", "tanh"); }, 20},
      {"Mish", -10, 10, [](double x) { return x * std::tanh(Softplus(x)); }},
  };
  for (const auto& c : cases) {
    for (int64_t n : {1, 7, 17, 1000}) {
      auto x = ewtest::RandomFloats(n, c.lo, c.hi, static_cast<uint32_t>(n));
      if (n == 1000) {  // special values
        x[0] = 0.f;
        x[1] = -0.f;
        x[2] = c.lo;
        x[3] = c.hi;
      }
      auto r = RunOp(c.op, {Make({n}, x)}, c.attrs, c.opset);
      ASSERT_TRUE(r.ok()) << c.op << ": " << r.status().ToString();
      auto y = (*r)[0].as<float>();
      ASSERT_EQ(static_cast<int64_t>(y.size()), n);
      for (int64_t i = 0; i < n; ++i)
        ExpectClose(y[i], c.ref(x[i]), c.op + "(" + std::to_string(x[i]) + ")", 1e-6, 2e-7);
      if (HasFailure()) return;
    }
  }
}

TEST(EwUnary, LargeTensorsAndDoubleInputs) {
  const int64_t n = 1000003;
  auto x = ewtest::RandomFloats(n, -8.f, 8.f, 77);
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Erf", "Relu"}) {
    auto r = RunOp(op, {Make({n}, x)});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto y = (*r)[0].as<float>();
    for (int64_t i = 0; i < n; i += 1 + i % 7) {
      double v = x[i];
      double want = std::string(op) == "Sigmoid" ? 1 / (1 + std::exp(-v))
                    : std::string(op) == "Tanh"  ? std::tanh(v)
                    : std::string(op) == "Exp"   ? std::exp(v)
                    : std::string(op) == "Erf"   ? std::erf(v)
                                                 : std::max(v, 0.0);
      ExpectClose(y[i], want, op, 1e-6, 2e-7);
    }
    if (HasFailure()) return;
  }
  std::vector<double> d = {-1.5, 0.25, 3.0};
  auto r = RunOp("Exp", {Make({3}, d)});
  ASSERT_TRUE(r.ok());
  auto y = (*r)[0].as<double>();
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(y[i], std::exp(d[i]));
}

TEST(EwUnary, SpecialValuesPropagate) {
  float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> x = {inf, -inf, nan, 100.f, -100.f, 0.f};
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Erf"}) {
    auto r = RunOp(op, {Make({6}, x)});
    ASSERT_TRUE(r.ok());
    auto y = (*r)[0].as<float>();
    auto ref = [&](double v) {
      std::string o = op;
      if (o == "Sigmoid") return 1 / (1 + std::exp(-v));
      if (o == "Tanh") return std::tanh(v);
      if (o == "Exp") return std::exp(v);
      return std::erf(v);
    };
    for (int i = 0; i < 6; ++i) ExpectClose(y[i], ref(x[i]), std::string(op) + " special " + std::to_string(i));
  }
}

TEST(EwUnary, IntegerOps) {
  std::vector<int32_t> x = {-5, 0, 7, INT32_MIN};
  auto r = RunOp("Neg", {Make({4}, x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{5, 0, -7, INT32_MIN}));
  r = RunOp("Abs", {Make({4}, x)});
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{5, 0, 7, INT32_MIN}));
  r = RunOp("Sign", {Make<int64_t>({3}, {-9, 0, 4})});
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));
  r = RunOp("Relu", {Make<int64_t>({3}, {-9, 0, 4})});
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{0, 0, 4}));
  r = RunOp("Sqrt", {Make<int32_t>({1}, {4})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("int32"), std::string::npos);
}

TEST(EwUnary, PredicatesAndNot) {
  float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  auto x = Make<float>({4}, {inf, -inf, nan, 1.f});
  auto r = RunOp("IsNaN", {x});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dtype, DataType::kBool);
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 0}));
  r = RunOp("IsInf", {x});
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 1, 0, 0}));
  r = RunOp("IsInf", {x}, [](Node& n) { n.SetInt("detect_negative", 0); });
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 0}));
  r = RunOp("Not", {Make<uint8_t>({3}, {1, 0, 1}, DataType::kBool)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<uint8_t>(), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_FALSE(RunOp("Not", {x}).ok());
}

TEST(EwClip, AttributeFormInputFormAndIntegers) {
  std::vector<float> x = {-3.f, -0.5f, 0.f, 0.5f, 3.f};
  auto attrs = [](Node& n) { n.SetFloat("min", -1.f); n.SetFloat("max", 1.f); };
  auto r = RunOp("Clip", {Make({5}, x)}, attrs, 6);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{-1.f, -0.5f, 0.f, 0.5f, 1.f}));
  r = RunOp("Clip", {Make({5}, x), ewtest::Scalar(-1.f), ewtest::Scalar(0.25f)}, nullptr, 13);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{-1.f, -0.5f, 0.f, 0.25f, 0.25f}));
  r = RunOp("Clip", {Make({5}, x), std::nullopt, ewtest::Scalar(0.f)}, nullptr, 13);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{-3.f, -0.5f, 0.f, 0.f, 0.f}));
  r = RunOp("Clip", {Make({5}, x)}, nullptr, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<float>(), x);
  r = RunOp("Clip", {Make<int32_t>({3}, {1, 5, 9}), ewtest::Scalar<int32_t>(3), ewtest::Scalar<int32_t>(7)}, nullptr, 13);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{3, 5, 7}));
  r = RunOp("Clip", {Make({5}, x), Make<float>({2}, {0.f, 1.f})}, nullptr, 13);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace oc

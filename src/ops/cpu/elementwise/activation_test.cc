#include "ops/cpu/elementwise/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace oc {
namespace {

double Ref(const Activation& a, double x) {
  switch (a.kind) {
    case ActivationKind::kNone: return x;
    case ActivationKind::kRelu: return x < 0 ? 0 : x;
    case ActivationKind::kLeakyRelu: return x < 0 ? x * a.alpha : x;
    case ActivationKind::kClip: return std::min<double>(std::max<double>(x, a.alpha), a.beta);
    case ActivationKind::kSigmoid: return 1 / (1 + std::exp(-x));
    case ActivationKind::kHardSigmoid: return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
    case ActivationKind::kHardSwish: return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
    case ActivationKind::kTanh: return std::tanh(x);
    case ActivationKind::kGelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case ActivationKind::kSwish: return x / (1 + std::exp(-a.alpha * x));
  }
  return 0;
}

TEST(EwActivation, EveryKindMatchesItsFormula) {
  const ActivationKind kinds[] = {ActivationKind::kNone,      ActivationKind::kRelu,        ActivationKind::kLeakyRelu,
                                  ActivationKind::kClip,      ActivationKind::kSigmoid,     ActivationKind::kHardSigmoid,
                                  ActivationKind::kHardSwish, ActivationKind::kTanh,        ActivationKind::kGelu,
                                  ActivationKind::kGeluTanh,  ActivationKind::kSwish};
  for (ActivationKind k : kinds) {
    Node n;
    n.name = "fused";
    n.op_type = "FusedConv";
    n.SetString("activation", ActivationName(k));
    if (k == ActivationKind::kClip) {
      n.SetFloat("activation_alpha", -1.5f);
      n.SetFloat("activation_beta", 6.f);
    }
    if (k == ActivationKind::kSwish) n.SetFloat("activation_alpha", 1.5f);
    auto act = ActivationFromNode(n);
    ASSERT_TRUE(act.ok()) << act.status().ToString();
    ASSERT_EQ(act->kind, k);
    for (int64_t len : {1, 7, 17, 1001}) {
      std::vector<float> x(len);
      for (int64_t i = 0; i < len; ++i) x[i] = -8.f + 16.f * static_cast<float>(i) / std::max<int64_t>(len - 1, 1);
      std::vector<float> y = x;
      ApplyActivation(*act, y.data(), len);
      for (int64_t i = 0; i < len; ++i) {
        double want = Ref(*act, x[i]);
        ASSERT_NEAR(y[i], want, 1e-6 * std::max(1.0, std::fabs(want)) + 1e-7)
            << ActivationName(k) << " x=" << x[i];
      }
    }
  }
}

// The fused SiLU must equal the unfused graph (Sigmoid op, then Mul) exactly,
// with alpha 1 on its one-pass kernel and otherwise on the chunked one.
TEST(EwActivation, SwishEqualsSigmoidThenMulBitForBit) {
  std::vector<float> x(1001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -12.f + 24.f * static_cast<float>(i) / 1000.f;
  for (float alpha : {1.f, 0.75f}) {
    std::vector<float> y = x, s(x.size());
    for (size_t i = 0; i < x.size(); ++i) s[i] = alpha * x[i];
    ApplyActivation(Activation{ActivationKind::kSigmoid}, s.data(), static_cast<int64_t>(s.size()));
    ApplyActivation(Activation{ActivationKind::kSwish, alpha}, y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] * s[i]) << "alpha " << alpha << " x=" << x[i];
  }
}

TEST(EwActivation, DefaultsAndErrors) {
  Node n;
  n.name = "g";
  n.op_type = "FusedGemm";
  auto a = ActivationFromNode(n);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kind, ActivationKind::kNone);
  n.SetString("activation", "LeakyRelu");
  EXPECT_FLOAT_EQ(ActivationFromNode(n)->alpha, 0.01f);
  n.SetString("activation", "HardSigmoid");
  EXPECT_FLOAT_EQ(ActivationFromNode(n)->alpha, 0.2f);
  EXPECT_FLOAT_EQ(ActivationFromNode(n)->beta, 0.5f);
  n.SetString("activation", "Clip");
  EXPECT_EQ(ActivationFromNode(n)->beta, std::numeric_limits<float>::infinity());
  n.SetString("activation", "Swish");
  EXPECT_FLOAT_EQ(ActivationFromNode(n)->alpha, 1.f);
  n.SetString("activation", "Mish");
  auto bad = ActivationFromNode(n);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Mish"), std::string::npos);
  EXPECT_NE(bad.status().message().find("FusedGemm node 'g'"), std::string::npos);
  ActivationKind k;
  EXPECT_TRUE(ParseActivationName("GeluTanh", &k));
  EXPECT_EQ(k, ActivationKind::kGeluTanh);
  EXPECT_FALSE(ParseActivationName("gelu", &k));
}

}  // namespace
}  // namespace oc

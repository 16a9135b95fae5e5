// Edge cases and error paths of the misc op groups (loss, norm_misc,
// tensor_misc, window, image_misc, linalg, random) that the onnxruntime
// comparisons in tests/python/test_misc_ops.py cannot reach. References are
// computed here by hand from the operator definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::Make;
using tt::RunOp;

TEST(MiscOps, NllTargetOutsideClassesIsAnErrorNamingTheNode) {
  auto x = Make<float>({2, 3}, {-1, -2, -3, -1, -2, -3});
  auto t = Make<int64_t>({2}, {1, 3});
  auto r = RunOp("NegativeLogLikelihoodLoss", {x, t}, nullptr, 13);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("NegativeLogLikelihoodLoss"), std::string::npos);
  EXPECT_NE(r.status.message().find("target value 3"), std::string::npos);
}

TEST(MiscOps, NllIgnoredTargetMayBeOutsideClasses) {
  auto x = Make<float>({2, 3}, {-1, -2, -3, -4, -5, -6});
  auto t = Make<int64_t>({2}, {2, -100});
  auto r = RunOp("NegativeLogLikelihoodLoss", {x, t}, [](Node& n) { n.SetInt("ignore_index", -100); }, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_FLOAT_EQ(r[0].as<float>()[0], 3.f);  // mean over the one counted element
}

TEST(MiscOps, SoftmaxCrossEntropyMeanOfAllIgnoredIsNaN) {
  auto x = Make<float>({2, 2}, {1, 2, 3, 4});
  auto t = Make<int32_t>({2}, {0, 0});
  auto r = RunOp("SoftmaxCrossEntropyLoss", {x, t}, [](Node& n) { n.SetInt("ignore_index", 0); }, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_TRUE(std::isnan(r[0].as<float>()[0]));
}

TEST(MiscOps, SoftmaxCrossEntropyLogProbOutputRowsNormalise) {
  auto x = Make<float>({1, 3, 2}, {1, -1, 2, 0, 3, 5});
  auto t = Make<int64_t>({1, 2}, {2, 0});
  auto r = RunOp("SoftmaxCrossEntropyLoss", {x, t}, [](Node& n) { n.SetString("reduction", "none"); }, 13, 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto lp = r[1].as<float>();
  for (int d = 0; d < 2; ++d) {
    double s = 0;
    for (int c = 0; c < 3; ++c) s += std::exp(lp[c * 2 + d]);
    EXPECT_NEAR(s, 1.0, 1e-6);
  }
  auto loss = r[0].as<float>();
  EXPECT_FLOAT_EQ(loss[0], -lp[2 * 2 + 0]);
  EXPECT_FLOAT_EQ(loss[1], -lp[0 * 2 + 1]);
}

TEST(MiscOps, HardmaxPicksTheFirstOfTiedMaxima) {
  auto r = RunOp("Hardmax", {Make<float>({2, 4}, {1, 3, 3, 0, 2, 2, 2, 2})}, nullptr, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r[0].as<float>(), (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0}));
}

TEST(MiscOps, LpNormalizationOfZeroVectorIsZero) {
  auto r = RunOp("LpNormalization", {Make<float>({2, 2}, {0, 0, 3, -4})}, [](Node& n) { n.SetInt("p", 1); }, 17);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r[0].as<float>(), (std::vector<float>{0, 0, 3.f / 7, -4.f / 7}));
}

TEST(MiscOps, CumProdReverseExclusiveOnAxis0) {
  auto x = Make<int32_t>({3, 2}, {2, 3, 4, 5, 6, 7});
  auto r = RunOp("CumProd", {x, Make<int64_t>({}, {0})}, [](Node& n) {
    n.SetInt("reverse", 1);
    n.SetInt("exclusive", 1);
  }, 26);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // Row i holds the product of the rows after it.
  EXPECT_EQ(r[0].as<int32_t>(), (std::vector<int32_t>{4 * 6, 5 * 7, 6, 7, 1, 1}));
}

TEST(MiscOps, ReverseSequenceLengthAboveTimeIsAnError) {
  auto r = RunOp("ReverseSequence", {tt::Iota<float>({3, 2}), Make<int64_t>({2}, {3, 4})}, nullptr, 10);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("sequence_lens[1] = 4"), std::string::npos);
}

TEST(MiscOps, CenterCropPadPutsTheOddElementAtTheEnd) {
  // Crop 5 -> 2 keeps [1, 3); pad 2 -> 5 puts the input at [1, 3).
  auto crop = RunOp("CenterCropPad", {tt::Iota<float>({5}), tt::I64({2})});
  ASSERT_TRUE(crop.status.ok()) << crop.status.message();
  EXPECT_EQ(crop[0].as<float>(), (std::vector<float>{1, 2}));
  auto pad = RunOp("CenterCropPad", {Make<float>({2}, {7, 8}), tt::I64({5})});
  ASSERT_TRUE(pad.status.ok()) << pad.status.message();
  EXPECT_EQ(pad[0].as<float>(), (std::vector<float>{0, 7, 8, 0, 0}));
}

TEST(MiscOps, SymmetricWindowOfOneSampleIsOne) {
  auto r = RunOp("HannWindow", {Make<int64_t>({}, {1})}, [](Node& n) { n.SetInt("periodic", 0); }, 17);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r[0].as<float>(), (std::vector<float>{1.f}));
}

TEST(MiscOps, MaxUnpoolIndexOutsideTheUnpooledTensorIsAnError) {
  auto r = RunOp("MaxUnpool", {Make<float>({1, 1, 1, 1}, {5}), Make<int64_t>({1, 1, 1, 1}, {4})},
                 [](Node& n) { n.SetInts("kernel_shape", {2, 2}); }, 11);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("index 4"), std::string::npos);
}

TEST(MiscOps, Col2ImSumsOverlappingBlocks) {
  // 1-D image of 4 from blocks of 2 at stride 1: positions 1 and 2 are covered twice.
  auto x = Make<float>({1, 2, 3}, {1, 1, 1, 1, 1, 1});
  auto r = RunOp("Col2Im", {x, tt::I64({4}), tt::I64({2})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r[0].as<float>(), (std::vector<float>{1, 2, 2, 1}));
}

TEST(MiscOps, DetSignFollowsRowSwapsAndSingularIsZero) {
  auto r = RunOp("Det", {Make<double>({3, 2, 2}, {0, 1, 1, 0, 2, 4, 1, 2, 3, 0, 0, 5})}, nullptr, 11);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r[0].as<double>(), (std::vector<double>{-1, 0, 15}));
}

TEST(MiscOps, BernoulliIsNotFoldedAndSeededRunsRepeat) {
  const OpDef* def = OpRegistry::Global().Find("", "Bernoulli", 22);
  ASSERT_NE(def, nullptr);
  EXPECT_FALSE(def->foldable);
  auto p = Make<float>({64}, std::vector<float>(64, 0.5f));
  auto seeded = [](Node& n) { n.SetFloat("seed", 5.f); };
  auto a = RunOp("Bernoulli", {p}, seeded, 22), b = RunOp("Bernoulli", {p}, seeded, 22);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  EXPECT_EQ(a[0].as<float>(), b[0].as<float>());
  const auto v = a[0].as<float>();
  const float ones = std::accumulate(v.begin(), v.end(), 0.f);
  EXPECT_GT(ones, 16.f);
  EXPECT_LT(ones, 48.f);
}

}  // namespace
}  // namespace oc

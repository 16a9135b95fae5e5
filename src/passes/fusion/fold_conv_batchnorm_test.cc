#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "executor/executable.h"
#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::Floats;
using testing::OpSequence;
using testing::Pattern;
using testing::Tensor;

// Direct NCHW convolution, stride 1, symmetric padding, group 1: the reference.
std::vector<float> RefConv(const std::vector<float>& x, int c, int h, int w, const std::vector<float>& wt,
                           int m, int k, int pad, const std::vector<float>* bias) {
  const int oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
  std::vector<float> y(static_cast<size_t>(m) * oh * ow);
  for (int o = 0; o < m; ++o)
    for (int i = 0; i < oh; ++i)
      for (int j = 0; j < ow; ++j) {
        double s = bias ? (*bias)[o] : 0.0;
        for (int ci = 0; ci < c; ++ci)
          for (int ki = 0; ki < k; ++ki)
            for (int kj = 0; kj < k; ++kj) {
              int yi = i + ki - pad, xj = j + kj - pad;
              if (yi < 0 || yi >= h || xj < 0 || xj >= w) continue;
              s += double(x[(ci * h + yi) * w + xj]) * wt[((o * c + ci) * k + ki) * k + kj];
            }
        y[(o * oh + i) * ow + j] = static_cast<float>(s);
      }
  return y;
}

struct ConvBn {
  Graph g;
  Node* conv = nullptr;
  Node* bn = nullptr;
  Value* y = nullptr;
  std::vector<float> w, b, scale, beta, mean, var;
  static constexpr int kC = 2, kM = 3, kK = 3, kH = 5, kW = 5;

  explicit ConvBn(bool with_bias) {
    w = Pattern(kM * kC * kK * kK, -1, 1, 1);
    b = Pattern(kM, -0.5f, 0.5f, 2);
    scale = Pattern(kM, 0.5f, 2, 3);
    beta = Pattern(kM, -1, 1, 4);
    mean = Pattern(kM, -0.3f, 0.3f, 5);
    var = Pattern(kM, 0.1f, 1.5f, 6);
    Value* x = Tensor(g, "x", {1, kC, kH, kW});
    Value* c = Tensor(g, "conv_out", {1, kM, kH, kW});
    y = Tensor(g, "y", {1, kM, kH, kW});
    g.inputs = {x};
    std::vector<Value*> ins = {x, Const<float>(g, "W", {kM, kC, kK, kK}, w)};
    if (with_bias) ins.push_back(Const<float>(g, "B", {kM}, b));
    conv = g.AddNode("Conv", "conv", ins, {c});
    conv->SetInts("pads", {1, 1, 1, 1});
    conv->SetInts("kernel_shape", {kK, kK});
    bn = g.AddNode("BatchNormalization", "bn",
                   {c, Const<float>(g, "scale", {kM}, scale), Const<float>(g, "beta", {kM}, beta),
                    Const<float>(g, "mean", {kM}, mean), Const<float>(g, "var", {kM}, var)},
                   {y});
    bn->SetFloat("epsilon", 1e-3f);
    g.outputs = {y};
  }
};

TEST(PassFoldConvBatchNorm, FoldsIntoConvWeightsAndBias) {
  for (bool with_bias : {true, false}) {
    ConvBn t(with_bias);
    ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
    EXPECT_EQ(OpSequence(t.g), (std::vector<std::string>{"Conv"}));
    Node* conv = t.g.nodes()[0].get();
    EXPECT_EQ(conv->outputs[0], t.y);
    EXPECT_EQ(t.y->producer, conv);
    EXPECT_EQ(conv->GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    ASSERT_EQ(conv->inputs.size(), 3u);
    ASSERT_TRUE(conv->inputs[1]->IsConstant() && conv->inputs[2]->IsConstant());
    EXPECT_EQ(conv->inputs[2]->shape, (std::vector<int64_t>{ConvBn::kM}));
    t.g.Compact();
    EXPECT_EQ(t.g.FindValue("W"), nullptr);
    EXPECT_TRUE(t.g.Verify().ok()) << t.g.Verify().ToString();

    // Before: BN(conv(x, W, B)); after: conv(x, W', B'), both by the reference.
    auto x = Pattern(ConvBn::kC * ConvBn::kH * ConvBn::kW, -1, 1, 9);
    auto before = RefConv(x, ConvBn::kC, ConvBn::kH, ConvBn::kW, t.w, ConvBn::kM, ConvBn::kK, 1,
                          with_bias ? &t.b : nullptr);
    const int plane = ConvBn::kH * ConvBn::kW;
    for (int o = 0; o < ConvBn::kM; ++o)
      for (int p = 0; p < plane; ++p) {
        float& v = before[o * plane + p];
        v = t.scale[o] * (v - t.mean[o]) / std::sqrt(t.var[o] + 1e-3f) + t.beta[o];
      }
    auto new_b = Floats(conv->inputs[2]);
    auto after = RefConv(x, ConvBn::kC, ConvBn::kH, ConvBn::kW, Floats(conv->inputs[1]), ConvBn::kM,
                         ConvBn::kK, 1, &new_b);
    for (size_t i = 0; i < before.size(); ++i) EXPECT_NEAR(after[i], before[i], 1e-4f) << i;
  }
}

TEST(PassFoldConvBatchNorm, KeepsBatchNormWhenConvOutputHasAnotherReader) {
  ConvBn t(true);
  Value* other = Tensor(t.g, "other", {1, ConvBn::kM, ConvBn::kH, ConvBn::kW});
  t.g.AddNode("Relu", "second_reader", {t.conv->outputs[0]}, {other});
  t.g.outputs.push_back(other);
  ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
  EXPECT_EQ(OpSequence(t.g), (std::vector<std::string>{"Conv", "BatchNormalization", "Relu"}));
}

TEST(PassFoldConvBatchNorm, KeepsBatchNormWithNonConstantWeightsOrTraining) {
  {
    ConvBn t(true);
    Value* w_in = Tensor(t.g, "w_in", {ConvBn::kM, ConvBn::kC, ConvBn::kK, ConvBn::kK});
    t.g.inputs.push_back(w_in);
    t.conv->inputs[1] = w_in;
    ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
    EXPECT_EQ(t.g.nodes().size(), 2u);
  }
  {
    ConvBn t(true);
    t.bn->SetInt("training_mode", 1);
    ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
    EXPECT_EQ(t.g.nodes().size(), 2u);
  }
  {
    ConvBn t(true);
    CompileOptions no_fuse;
    no_fuse.fuse = false;
    ASSERT_TRUE(RunFoldConvBatchNorm(t.g, no_fuse).ok());
    EXPECT_EQ(t.g.nodes().size(), 2u);
  }
}

// Conv -> Mul(const) -> Add(const) -> Sub(const), the way frozen BatchNorm
// layers export; the constants' shape decides whether they fold.
struct ConvAffine {
  Graph g;
  Node* conv = nullptr;
  Value* out = nullptr;
  std::vector<float> w, b;
  static constexpr int kC = 2, kM = 3, kK = 3, kH = 5, kW = 5;

  // Each step: op type and the constant's shape and values.
  struct Step { const char* op; std::vector<int64_t> shape; std::vector<float> values; bool const_first = false; };

  explicit ConvAffine(const std::vector<Step>& steps) {
    w = Pattern(kM * kC * kK * kK, -1, 1, 1);
    b = Pattern(kM, -0.5f, 0.5f, 2);
    Value* x = Tensor(g, "x", {1, kC, kH, kW});
    Value* cur = Tensor(g, "conv_out", {1, kM, kH, kW});
    g.inputs = {x};
    conv = g.AddNode("Conv", "conv", {x, Const<float>(g, "W", {kM, kC, kK, kK}, w), Const<float>(g, "B", {kM}, b)},
                     {cur});
    conv->SetInts("pads", {1, 1, 1, 1});
    conv->SetInts("kernel_shape", {kK, kK});
    int i = 0;
    for (const Step& st : steps) {
      Value* next = Tensor(g, "step" + std::to_string(i), {1, kM, kH, kW});
      Value* k = Const<float>(g, "k" + std::to_string(i), st.shape, st.values);
      g.AddNode(st.op, "op" + std::to_string(i), st.const_first ? std::vector<Value*>{k, cur}
                                                                 : std::vector<Value*>{cur, k}, {next});
      cur = next;
      ++i;
    }
    out = cur;
    g.outputs = {out};
  }

  // The reference: the steps applied to RefConv's output.
  std::vector<float> Before(const std::vector<float>& x, const std::vector<Step>& steps) const {
    auto y = RefConv(x, kC, kH, kW, w, kM, kK, 1, &b);
    const int plane = kH * kW;
    for (const Step& st : steps)
      for (int o = 0; o < kM; ++o)
        for (int p = 0; p < plane; ++p) {
          const float k = st.values.size() == 1 ? st.values[0] : st.values[st.values.size() == kM ? o : o * plane + p];
          float& v = y[o * plane + p];
          v = std::string(st.op) == "Mul" ? v * k : std::string(st.op) == "Add" ? v + k : (st.const_first ? k - v : v - k);
        }
    return y;
  }

  // Checks that the folded conv (its new weights and bias, by the reference)
  // gives what Before() gives.
  void ExpectFoldedEqualsBefore(const std::vector<Step>& steps) const {
    auto x = Pattern(kC * kH * kW, -1, 1, 9);
    auto before = Before(x, steps);
    auto new_b = Floats(conv->inputs[2]);
    auto after = RefConv(x, kC, kH, kW, Floats(conv->inputs[1]), kM, kK, 1, &new_b);
    for (size_t i = 0; i < before.size(); ++i) EXPECT_NEAR(after[i], before[i], 1e-4f) << i;
  }
};

TEST(PassFoldConvBatchNorm, FoldsPerChannelMulAddSubChains) {
  const std::vector<ConvAffine::Step> steps = {
      {"Mul", {1, 3, 1, 1}, Pattern(3, 0.5f, 2, 7)},
      {"Add", {3, 1, 1}, Pattern(3, -1, 1, 8)},
      {"Mul", {1}, {1.5f}},
      {"Sub", {1, 3, 1, 1}, Pattern(3, -1, 1, 10)},
  };
  ConvAffine t(steps);
  ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
  EXPECT_EQ(OpSequence(t.g), (std::vector<std::string>{"Conv"}));
  Node* conv = t.g.nodes()[0].get();
  EXPECT_EQ(conv->outputs[0], t.out);
  EXPECT_EQ(t.out->producer, conv);
  t.g.Compact();
  EXPECT_TRUE(t.g.Verify().ok()) << t.g.Verify().ToString();
  t.ExpectFoldedEqualsBefore(steps);
}

// A conv without bias gets one; weights another node still reads stay as they were.
TEST(PassFoldConvBatchNorm, FoldsIntoAConvWithoutBiasAndLeavesSharedWeights) {
  const std::vector<ConvAffine::Step> steps = {{"Mul", {3, 1, 1}, Pattern(3, 0.5f, 2, 7)},
                                               {"Add", {1, 3, 1, 1}, Pattern(3, -1, 1, 8)}};
  ConvAffine t(steps);
  t.conv->inputs.resize(2);  // no bias
  Value* w = t.conv->inputs[1];
  Value* other = Tensor(t.g, "other", {ConvAffine::kM, ConvAffine::kC, ConvAffine::kK, ConvAffine::kK});
  t.g.AddNode("Relu", "reads_w", {w}, {other});
  t.g.outputs.push_back(other);
  ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
  EXPECT_EQ(OpSequence(t.g), (std::vector<std::string>{"Conv", "Relu"}));
  EXPECT_EQ(Floats(w), t.w);  // the shared original is untouched
  Node* conv = t.conv;
  ASSERT_EQ(conv->inputs.size(), 3u);
  EXPECT_NE(conv->inputs[1], w);
  // Before: conv without bias, then the steps; after: the folded conv.
  t.b.assign(ConvAffine::kM, 0.f);
  t.ExpectFoldedEqualsBefore(steps);
}

TEST(PassFoldConvBatchNorm, KeepsMulAddThatAreNotPerChannel) {
  const int plane = ConvAffine::kH * ConvAffine::kW;
  // Per pixel, a constant minus the conv, and a constant over the width axis: none folds.
  for (const auto& step : {ConvAffine::Step{"Mul", {1, 3, 5, 5}, Pattern(3 * plane, 0.5f, 2, 7)},
                           ConvAffine::Step{"Sub", {1, 3, 1, 1}, Pattern(3, -1, 1, 8), true},
                           ConvAffine::Step{"Add", {1, 1, 1, 5}, Pattern(5, -1, 1, 8)}}) {
    ConvAffine t({step});
    ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
    EXPECT_EQ(t.g.nodes().size(), 2u) << step.op;
  }
  // A Mul whose constant broadcasts the output to a larger shape is left alone too.
  ConvAffine t({});
  Value* big = Tensor(t.g, "big", {2, ConvAffine::kM, ConvAffine::kH, ConvAffine::kW});
  t.g.AddNode("Mul", "grow", {t.out, Const<float>(t.g, "k2", {2, 1, 1, 1}, {1.f, 2.f})}, {big});
  t.g.outputs = {big};
  ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
  EXPECT_EQ(t.g.nodes().size(), 2u);
}

// With the Conv and BatchNormalization kernels registered, the folded Conv gives
// what the two original kernels give.
TEST(PassFoldConvBatchNorm, KernelsAgreeBeforeAndAfter) {
  OC_REQUIRE_OP("Conv");
  OC_REQUIRE_OP("BatchNormalization");
  ConvBn t(true);
  t.g.opset_imports[""] = 17;
  for (auto& n : t.g.nodes()) n->opset = 17;
  auto xv = Pattern(ConvBn::kC * ConvBn::kH * ConvBn::kW, -1, 1, 9);
  Value* x = t.g.inputs[0];
  x->constant = TensorData::Copy(xv.data(), xv.size() * 4);
  auto mid = EvaluateNode(*t.conv);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  t.conv->outputs[0]->constant = (*mid)[0];
  auto before = EvaluateNode(*t.bn);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  t.conv->outputs[0]->constant.reset();
  ASSERT_TRUE(RunFoldConvBatchNorm(t.g, {}).ok());
  ASSERT_EQ(t.g.nodes().size(), 1u);
  auto after = EvaluateNode(*t.g.nodes()[0]);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  const float* a = (*after)[0].as<float>();
  const float* b = (*before)[0].as<float>();
  for (size_t i = 0; i < (*before)[0].size() / 4; ++i) EXPECT_NEAR(a[i], b[i], 1e-4f) << i;
}

}  // namespace
}  // namespace oc

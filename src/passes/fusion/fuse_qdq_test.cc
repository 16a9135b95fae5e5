// fuse-qdq on hand-built QDQ graphs: what fuses, what must not, and the fused
// node's inputs and attributes. (Numerics of fused models against onnxruntime:
// tests/python/test_quant.py.)
#include <gtest/gtest.h>

#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::OpSequence;
using testing::Tensor;

struct QdqConv {
  Graph g;
  Value* yq = nullptr;
  Value* bias_q = nullptr;
  Node* conv = nullptr;
  static constexpr int64_t kM = 4;

  // x (uint8) -> DQ -> Conv(W: DQ(int8, per channel), B: DQ(int32)) [-> Relu] -> Q(zp) -> yq
  QdqConv(bool relu, uint8_t y_zp, float bias_scale_factor = 1.f, bool extra_use = false) {
    g.opset_imports[""] = 13;
    Value* x = Tensor(g, "x", {1, 2, 5, 5}, DataType::kUInt8);
    g.inputs = {x};
    Value* sx = Const<float>(g, "sx", {}, {0.1f});
    Value* zx = Const<uint8_t>(g, "zx", {}, {128});
    Value* xf = Tensor(g, "xf", {1, 2, 5, 5});
    g.AddNode("DequantizeLinear", "dqx", {x, sx, zx}, {xf});
    Value* wq = Const<int8_t>(g, "wq", {kM, 2, 3, 3}, std::vector<int8_t>(kM * 18, 3));
    std::vector<float> sw_data = {0.01f, 0.02f, 0.03f, 0.04f};
    Value* sw = Const<float>(g, "sw", {kM}, sw_data);
    Value* wf = Tensor(g, "wf", {kM, 2, 3, 3});
    g.AddNode("DequantizeLinear", "dqw", {wq, sw}, {wf})->SetInt("axis", 0);
    bias_q = Const<int32_t>(g, "bq", {kM}, {10, -20, 30, -40});
    std::vector<float> sb;
    for (float s : sw_data) sb.push_back(0.1f * s * bias_scale_factor);
    Value* bf = Tensor(g, "bf", {kM});
    g.AddNode("DequantizeLinear", "dqb", {bias_q, Const<float>(g, "sb", {kM}, sb)}, {bf})->SetInt("axis", 0);
    Value* yf = Tensor(g, "yf", {1, kM, 5, 5});
    conv = g.AddNode("Conv", "conv", {xf, wf, bf}, {yf});
    conv->SetInts("pads", {1, 1, 1, 1});
    conv->SetInts("kernel_shape", {3, 3});
    Value* qin = yf;
    if (relu) {
      qin = Tensor(g, "yr", {1, kM, 5, 5});
      g.AddNode("Relu", "relu", {yf}, {qin});
    }
    yq = Tensor(g, "yq", {1, kM, 5, 5}, DataType::kUInt8);
    g.AddNode("QuantizeLinear", "qy", {qin, Const<float>(g, "sy", {}, {0.2f}), Const<uint8_t>(g, "zy", {}, {y_zp})},
              {yq});
    g.outputs = {yq};
    if (extra_use) g.outputs.push_back(yf);
    for (auto& n : g.nodes()) n->opset = 13;
  }
};

TEST(PassFuseQdq, ConvWithBiasBecomesQLinearConv) {
  if (!testing::Registered("QLinearConv")) GTEST_SKIP() << "QLinearConv not registered";
  QdqConv t(false, 100);
  ASSERT_TRUE(RunFuseQdq(t.g, {}).ok());
  EXPECT_TRUE(t.g.Verify().ok()) << t.g.Verify().ToString();  // before DCE too (verify_each_pass)
  ASSERT_TRUE(RunDeadCodeElimination(t.g, {}).ok());
  EXPECT_EQ(OpSequence(t.g), (std::vector<std::string>{"QLinearConv"}));
  const Node& n = *t.g.nodes()[0];
  ASSERT_EQ(n.inputs.size(), 9u);
  EXPECT_EQ(n.inputs[0]->name, "x");
  EXPECT_EQ(n.inputs[3]->name, "wq");
  EXPECT_EQ(n.inputs[4]->name, "sw");
  EXPECT_EQ(n.inputs[8], t.bias_q);
  EXPECT_EQ(n.outputs[0], t.yq);
  EXPECT_EQ(t.yq->producer, &n);
  EXPECT_EQ(n.GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_TRUE(t.g.Verify().ok()) << t.g.Verify().ToString();
}

TEST(PassFuseQdq, ReluFusesOnlyWhenTheZeroPointSaturatesIt) {
  if (!testing::Registered("QLinearConv")) GTEST_SKIP() << "QLinearConv not registered";
  QdqConv fused(true, 0);
  ASSERT_TRUE(RunFuseQdq(fused.g, {}).ok());
  ASSERT_TRUE(RunDeadCodeElimination(fused.g, {}).ok());
  EXPECT_EQ(OpSequence(fused.g), (std::vector<std::string>{"QLinearConv"}));

  QdqConv kept(true, 7);
  ASSERT_TRUE(RunFuseQdq(kept.g, {}).ok());
  EXPECT_EQ(OpSequence(kept.g), (std::vector<std::string>{"DequantizeLinear", "DequantizeLinear", "DequantizeLinear",
                                                          "Conv", "Relu", "QuantizeLinear"}));
}

TEST(PassFuseQdq, KeepsFloatPathWhenUnsafe) {
  // The bias was quantized with another scale than x_scale * w_scale.
  QdqConv bias(false, 100, 1.5f);
  ASSERT_TRUE(RunFuseQdq(bias.g, {}).ok());
  EXPECT_EQ(OpSequence(bias.g).back(), "QuantizeLinear");
  // The float conv output is also a graph output.
  QdqConv shared(false, 100, 1.f, true);
  ASSERT_TRUE(RunFuseQdq(shared.g, {}).ok());
  EXPECT_EQ(OpSequence(shared.g).back(), "QuantizeLinear");
  // Fusion switched off.
  QdqConv off(false, 100);
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  ASSERT_TRUE(RunFuseQdq(off.g, no_fuse).ok());
  EXPECT_EQ(OpSequence(off.g).back(), "QuantizeLinear");
}

TEST(PassFuseQdq, MatMulBecomesQLinearMatMulWithZeroPointsAdded) {
  if (!testing::Registered("QLinearMatMul")) GTEST_SKIP() << "QLinearMatMul not registered";
  Graph g;
  g.opset_imports[""] = 13;
  Value* a = Tensor(g, "a", {3, 8}, DataType::kInt8);
  g.inputs = {a};
  Value* af = Tensor(g, "af", {3, 8});
  g.AddNode("DequantizeLinear", "dqa", {a, Const<float>(g, "sa", {}, {0.5f})}, {af});  // no zero point
  Value* bf = Tensor(g, "bf", {8, 2});
  g.AddNode("DequantizeLinear", "dqb",
            {Const<int8_t>(g, "bq", {8, 2}, std::vector<int8_t>(16, 1)), Const<float>(g, "sb", {2}, {0.1f, 0.2f})},
            {bf});  // axis 1 by default: per column
  Value* yf = Tensor(g, "yf", {3, 2});
  g.AddNode("MatMul", "mm", {af, bf}, {yf});
  Value* yq = Tensor(g, "yq", {3, 2}, DataType::kInt8);
  g.AddNode("QuantizeLinear", "q", {yf, Const<float>(g, "sy", {}, {0.3f}), Const<int8_t>(g, "zy", {}, {1})}, {yq});
  g.outputs = {yq};
  for (auto& n : g.nodes()) n->opset = 13;
  ASSERT_TRUE(RunFuseQdq(g, {}).ok());
  ASSERT_TRUE(RunDeadCodeElimination(g, {}).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"QLinearMatMul"}));
  const Node& n = *g.nodes()[0];
  ASSERT_EQ(n.inputs.size(), 8u);
  // The absent a_zero_point became an int8 zero constant.
  ASSERT_TRUE(n.inputs[2] && n.inputs[2]->constant);
  EXPECT_EQ(n.inputs[2]->dtype, DataType::kInt8);
  EXPECT_EQ(n.inputs[2]->constant->data()[0], 0);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

}  // namespace
}  // namespace oc

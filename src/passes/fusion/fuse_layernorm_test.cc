#include <gtest/gtest.h>

#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::Floats;
using testing::OpSequence;
using testing::Pattern;
using testing::Tensor;

constexpr int64_t C = 8;
const std::vector<int64_t> kShape = {2, 3, C};

Status RunPass(Graph& g) { return RunFuseLayerNorm(g, CompileOptions{}); }

Value* Mean(Graph& g, const std::string& name, Value* x, std::vector<int64_t> axes, std::vector<int64_t> out_shape) {
  Value* y = Tensor(g, name, std::move(out_shape));
  g.AddNode("ReduceMean", name, {x}, {y})->SetInts("axes", std::move(axes));
  return y;
}

Value* Bin(Graph& g, const char* op, const std::string& name, Value* a, Value* b,
           std::vector<int64_t> shape = kShape) {
  Value* y = Tensor(g, name, std::move(shape));
  g.AddNode(op, name, {a, b}, {y});
  return y;
}

// The torch.onnx (opset < 17) spelling of nn.LayerNorm(C) over `axis`.
struct LnGraph {
  Value *x, *gamma, *beta, *y;
};
LnGraph BuildLayerNorm(Graph& g, bool square_by_mul, int64_t axis = -1, bool affine = true) {
  g.opset_imports[""] = 14;
  LnGraph r;
  r.x = Tensor(g, "x", kShape);
  g.inputs = {r.x};
  std::vector<int64_t> stat = kShape;
  stat[axis < 0 ? stat.size() - 1 : axis] = 1;
  Value* mean = Mean(g, "mean", r.x, {axis}, stat);
  Value* d = Bin(g, "Sub", "d", r.x, mean);
  Value* sq = square_by_mul ? Bin(g, "Mul", "sq", d, d)
                            : Bin(g, "Pow", "sq", d, Const<float>(g, "two", {}, {2.f}));
  Value* var = Mean(g, "var", sq, {axis}, stat);
  Value* ve = Bin(g, "Add", "ve", var, Const<float>(g, "eps", {}, {1e-12f}), stat);
  Value* sd = Tensor(g, "sd", stat);
  g.AddNode("Sqrt", "sqrt", {ve}, {sd});
  r.y = Bin(g, "Div", "n", d, sd);
  if (affine) {
    r.gamma = Const<float>(g, "gamma", {C}, Pattern(C, 0.5f, 1.5f));
    r.beta = Const<float>(g, "beta", {C}, Pattern(C, -1, 1, 2));
    r.y = Bin(g, "Add", "out", Bin(g, "Mul", "scaled", r.y, r.gamma), r.beta);
  }
  g.outputs = {r.y};
  return r;
}

TEST(PassFuseLayerNorm, PowSpellingBecomesLayerNormalization) {
  Graph g;
  LnGraph r = BuildLayerNorm(g, /*square_by_mul=*/false);
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"LayerNormalization"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->opset, 17);
  EXPECT_EQ(n->inputs, (std::vector<Value*>{r.x, r.gamma, r.beta}));
  EXPECT_EQ(n->outputs[0], r.y);
  EXPECT_FLOAT_EQ(n->GetFloat("epsilon", 0), 1e-12f);
  EXPECT_EQ(n->GetInt("axis", 0), -1);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseLayerNorm, MulSpellingWithoutAffineGetsUnitScale) {
  Graph g;
  LnGraph r = BuildLayerNorm(g, /*square_by_mul=*/true, -1, /*affine=*/false);
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"LayerNormalization"}));
  Node* n = g.nodes()[0].get();
  ASSERT_EQ(n->inputs.size(), 2u);
  EXPECT_EQ(Floats(n->inputs[1]), std::vector<float>(C, 1.f));
  EXPECT_EQ(n->outputs[0], r.y);
}

TEST(PassFuseLayerNorm, NormalisingOverAxisOneIsLeftAlone) {
  Graph g;
  BuildLayerNorm(g, false, /*axis=*/1);
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g).size(), 9u);
}

TEST(PassFuseLayerNorm, CenteredValueReadElsewhereIsLeftAlone) {
  Graph g;
  BuildLayerNorm(g, false);
  g.outputs.push_back(g.FindValue("d"));
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g).size(), 9u);
}

TEST(PassFuseLayerNorm, T5RmsNormBecomesRMSNormalization) {
  // x * Reciprocal(Sqrt(ReduceMean(Pow(x, 2)) + eps)) * gamma; x also feeds a residual.
  Graph g;
  g.opset_imports[""] = 14;
  Value* x = Tensor(g, "x", kShape);
  g.inputs = {x};
  std::vector<int64_t> stat = {2, 3, 1};
  Value* var = Mean(g, "var", Bin(g, "Pow", "sq", x, Const<float>(g, "two", {}, {2.f})), {2}, stat);
  Value* sd = Tensor(g, "sd", stat);
  g.AddNode("Sqrt", "sqrt", {Bin(g, "Add", "ve", var, Const<float>(g, "eps", {}, {1e-6f}), stat)}, {sd});
  Value* inv = Tensor(g, "inv", stat);
  g.AddNode("Reciprocal", "inv", {sd}, {inv});
  Value* gamma = Const<float>(g, "gamma", {1, 1, C}, Pattern(C, 0.5f, 1.5f));
  Value* y = Bin(g, "Mul", "y", gamma, Bin(g, "Mul", "n", x, inv));
  Value* res = Bin(g, "Add", "res", x, y);
  g.outputs = {res};
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"RMSNormalization", "Add"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->opset, 23);
  EXPECT_EQ(n->inputs[0], x);
  EXPECT_EQ(n->inputs[1]->shape, (std::vector<int64_t>{C}));
  EXPECT_EQ(Floats(n->inputs[1]), Floats(gamma));
  EXPECT_EQ(n->outputs[0], y);
  EXPECT_FLOAT_EQ(n->GetFloat("epsilon", 0), 1e-6f);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassFuseLayerNorm, T5RsqrtAsOneOverSqrtBecomesRMSNormalization) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", kShape);
  g.inputs = {x};
  std::vector<int64_t> stat = {2, 3, 1};
  Value* var = Mean(g, "var", Bin(g, "Pow", "sq", x, Const<float>(g, "two", {}, {2.f})), {-1}, stat);
  Value* sd = Tensor(g, "sd", stat);
  g.AddNode("Sqrt", "sqrt", {Bin(g, "Add", "ve", var, Const<float>(g, "eps", {}, {1e-6f}), stat)}, {sd});
  Value* inv = Bin(g, "Div", "inv", Const<float>(g, "one", {}, {1.f}), sd, stat);
  Value* y = Bin(g, "Mul", "y", Const<float>(g, "gamma", {C}, Pattern(C, 0.5f, 1.5f)), Bin(g, "Mul", "n", x, inv));
  g.outputs = {y};
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"RMSNormalization"}));
  EXPECT_EQ(g.nodes()[0]->outputs[0], y);
}

}  // namespace
}  // namespace oc

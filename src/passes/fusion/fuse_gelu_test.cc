#include <gtest/gtest.h>

#include <cmath>

#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::OpSequence;
using testing::Tensor;

const std::vector<int64_t> kShape = {2, 16};

Status RunPass(Graph& g) { return RunFuseGelu(g, CompileOptions{}); }

struct Ctx {
  Graph& g;
  int count = 0;
  Value* Bin(const char* op, Value* a, Value* b) {
    Value* y = Tensor(g, std::string(op) + std::to_string(++count), kShape);
    g.AddNode(op, y->name, {a, b}, {y});
    return y;
  }
  Value* Un(const char* op, Value* a) {
    Value* y = Tensor(g, std::string(op) + std::to_string(++count), kShape);
    g.AddNode(op, y->name, {a}, {y});
    return y;
  }
  Value* K(float v) { return Const<float>(g, "k" + std::to_string(++count), {}, {v}); }
};

// 0.5 * x * one_plus in association order `order` (0..2).
Value* HalfProduct(Ctx& c, Value* x, Value* one_plus, int order) {
  if (order == 0) return c.Bin("Mul", c.Bin("Mul", x, one_plus), c.K(0.5f));
  if (order == 1) return c.Bin("Mul", c.Bin("Mul", x, c.K(0.5f)), one_plus);
  return c.Bin("Mul", x, c.Bin("Mul", one_plus, c.K(0.5f)));
}

class PassFuseGeluOrder : public ::testing::TestWithParam<int> {};

TEST_P(PassFuseGeluOrder, ErfSpellingBecomesGelu) {
  Graph g;
  g.opset_imports[""] = 14;
  Ctx c{g};
  Value* x = Tensor(g, "x", kShape);
  g.inputs = {x};
  Value* one_plus = c.Bin("Add", c.Un("Erf", c.Bin("Div", x, c.K(std::sqrt(2.f)))), c.K(1.f));
  Value* y = HalfProduct(c, x, one_plus, GetParam());
  Value* r = c.Bin("Add", x, y);  // x has another reader
  g.outputs = {r};
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Gelu", "Add"}));
  Node* n = g.nodes()[0].get();
  EXPECT_EQ(n->opset, 20);
  EXPECT_EQ(n->GetString("approximate", ""), "none");
  EXPECT_EQ(n->inputs[0], x);
  EXPECT_EQ(n->outputs[0], y);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST_P(PassFuseGeluOrder, TanhSpellingBecomesGeluTanh) {
  Graph g;
  g.opset_imports[""] = 14;
  Ctx c{g};
  Value* x = Tensor(g, "x", kShape);
  g.inputs = {x};
  // GPT-2: Pow(x, 3) or x * (x * x) for the cube.
  Value* cube = GetParam() == 1 ? c.Bin("Mul", x, c.Bin("Mul", x, x)) : c.Bin("Pow", x, c.K(3.f));
  Value* inner = c.Bin("Add", x, c.Bin("Mul", c.K(0.044715f), cube));
  Value* one_plus = c.Bin("Add", c.K(1.f), c.Un("Tanh", c.Bin("Mul", c.K(0.7978845608f), inner)));
  Value* y = HalfProduct(c, x, one_plus, GetParam());
  g.outputs = {y};
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Gelu"}));
  EXPECT_EQ(g.nodes()[0]->GetString("approximate", ""), "tanh");
  EXPECT_EQ(g.nodes()[0]->outputs[0], y);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

INSTANTIATE_TEST_SUITE_P(Orders, PassFuseGeluOrder, ::testing::Values(0, 1, 2));

TEST(PassFuseGelu, WrongConstantIsLeftAlone) {
  Graph g;
  g.opset_imports[""] = 14;
  Ctx c{g};
  Value* x = Tensor(g, "x", kShape);
  g.inputs = {x};
  Value* one_plus = c.Bin("Add", c.Un("Erf", c.Bin("Div", x, c.K(2.f))), c.K(1.f));
  g.outputs = {HalfProduct(c, x, one_plus, 0)};
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g).size(), 5u);
}

TEST(PassFuseGelu, IntermediateReadElsewhereIsLeftAlone) {
  Graph g;
  g.opset_imports[""] = 14;
  Ctx c{g};
  Value* x = Tensor(g, "x", kShape);
  g.inputs = {x};
  Value* e = c.Un("Erf", c.Bin("Div", x, c.K(std::sqrt(2.f))));
  Value* one_plus = c.Bin("Add", e, c.K(1.f));
  g.outputs = {HalfProduct(c, x, one_plus, 0), e};
  ASSERT_TRUE(RunPass(g).ok());
  EXPECT_EQ(OpSequence(g).size(), 5u);
}

TEST(PassFuseGelu, GeluBehindReshapeOfGemmMovesBeforeIt) {
  // GPT-2 Conv1D: Gemm on [B*S, K], Reshape to [B, S, N], then GELU.
  Graph g;
  g.opset_imports[""] = 17;
  Value* a = Tensor(g, "a", {4, 8});
  Value* y = Tensor(g, "y", {4, 16});
  Value* r = Tensor(g, "r", {1, 4, 16});
  Value* out = Tensor(g, "out", {1, 4, 16});
  g.inputs = {a};
  g.AddNode("Gemm", "gemm", {a, Const<float>(g, "w", {8, 16}, testing::Pattern(128, -1, 1))}, {y});
  g.AddNode("Reshape", "reshape", {y, Const<int64_t>(g, "shape", {3}, {1, 4, 16})}, {r});
  g.AddNode("Gelu", "gelu", {r}, {out})->opset = 20;
  g.outputs = {out};
  ASSERT_TRUE(RunPass(g).ok());
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"Gemm", "Gelu", "Reshape"}));
  EXPECT_EQ(g.nodes()[1]->inputs[0], y);
  EXPECT_EQ(g.nodes()[1]->outputs[0]->shape, y->shape);
  EXPECT_EQ(g.nodes()[2]->outputs[0], out);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

}  // namespace
}  // namespace oc

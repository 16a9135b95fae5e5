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

TEST(PassConstantFolding, ReplacesConstantSubgraphByConstants) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {3});
  Value* c = Const<float>(g, "c", {3}, {7, 8, 9});
  Value* a = Tensor(g, "a", {3});
  Value* y = Tensor(g, "y", {3});
  g.inputs = {x};
  g.AddNode("Identity", "fold_me", {c}, {a});
  g.AddNode("Identity", "keep_me", {x}, {y});
  g.outputs = {y, a};
  ASSERT_TRUE(RunConstantFolding(g, {}).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Identity"}));
  EXPECT_EQ(g.nodes()[0]->name, "keep_me");
  ASSERT_TRUE(a->IsConstant());
  EXPECT_EQ(a->producer, nullptr);
  EXPECT_EQ(Floats(a), (std::vector<float>{7, 8, 9}));
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassConstantFolding, DisabledStillRemovesNodesShapeInferenceEvaluated) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* c = Const<float>(g, "c", {2}, {1, 2});
  Value* done = Tensor(g, "done", {2});
  done->constant = TensorData::Copy(c->constant->data(), 8);
  Value* pending = Tensor(g, "pending", {2});
  g.AddNode("Identity", "evaluated", {c}, {done});
  g.AddNode("Identity", "not_evaluated", {c}, {pending});
  g.outputs = {done, pending};
  CompileOptions options;
  options.fold_constants = false;
  ASSERT_TRUE(RunConstantFolding(g, options).ok());
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->name, "not_evaluated");
  EXPECT_FALSE(pending->IsConstant());
}

// Numerics against an independent formula: Add of two initializers.
TEST(PassConstantFolding, AddOfInitializersMatchesElementwiseSum) {
  OC_REQUIRE_OP("Add");
  Graph g;
  g.opset_imports[""] = 17;
  auto av = Pattern(12, -2, 2, 1), bv = Pattern(4, -1, 1, 2);
  Value* a = Const<float>(g, "a", {3, 4}, av);
  Value* b = Const<float>(g, "b", {4}, bv);
  Value* y = g.AddValue("y");
  g.AddNode("Add", "add", {a, b}, {y});
  g.outputs = {y};
  ASSERT_TRUE(RunShapeInference(g, {}).ok());
  ASSERT_TRUE(RunConstantFolding(g, {}).ok());
  EXPECT_TRUE(g.nodes().empty());
  ASSERT_TRUE(y->IsConstant());
  auto got = Floats(y);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_FLOAT_EQ(got[i * 4 + j], av[i * 4 + j] + bv[j]);
}

TEST(PassConstantFolding, TransposeOfWeightMatchesIndexFormula) {
  OC_REQUIRE_OP("Transpose");
  Graph g;
  g.opset_imports[""] = 17;
  auto wv = Pattern(6, -1, 1, 3);
  Value* w = Const<float>(g, "w", {2, 3}, wv);
  Value* x = Tensor(g, "x", {4, 3});
  Value* wt = g.AddValue("wt");
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Transpose", "t", {w}, {wt})->SetInts("perm", {1, 0});
  g.AddNode("Identity", "out", {x}, {y});
  g.outputs = {y, wt};
  ASSERT_TRUE(RunShapeInference(g, {}).ok());
  ASSERT_TRUE(RunConstantFolding(g, {}).ok());
  ASSERT_TRUE(wt->IsConstant());
  EXPECT_EQ(wt->shape, (std::vector<int64_t>{3, 2}));
  auto got = Floats(wt);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(got[i * 2 + j], wv[j * 3 + i]);
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Identity"}));
}

}  // namespace
}  // namespace oc

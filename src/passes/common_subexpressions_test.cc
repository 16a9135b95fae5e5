#include <gtest/gtest.h>

#include "passes/pass_test_util.h"
#include "passes/passes.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

using testing::OpSequence;
using testing::Tensor;

Node* Add(Graph& g, const std::string& op, std::vector<Value*> in, size_t outs = 1) {
  std::vector<Value*> o;
  for (size_t i = 0; i < outs; ++i) o.push_back(g.AddValue(g.UniqueName(op + "_out")));
  Node* n = g.AddNode(op, g.UniqueName(op), std::move(in), o);
  n->opset = 18;
  return n;
}

TEST(CommonSubexpressions, SameOpInputsAndAttributesMerge) {
  Graph g;
  g.opset_imports[""] = 18;
  Value* x = Tensor(g, "x", {2, 3});
  g.inputs = {x};
  Node* t1 = Add(g, "Transpose", {x});
  t1->SetInts("perm", {1, 0});
  Node* t2 = Add(g, "Transpose", {x});
  t2->SetInts("perm", {1, 0});
  Node* t3 = Add(g, "Transpose", {x});
  t3->SetInts("perm", {0, 1});  // other attributes: kept
  Node* sum = Add(g, "Add", {t1->outputs[0], t2->outputs[0]});
  g.outputs = {sum->outputs[0], t3->outputs[0]};
  ASSERT_TRUE(RunCommonSubexpressions(g, {}).ok());
  ASSERT_TRUE(g.Verify().ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Transpose", "Transpose", "Add"}));
  EXPECT_EQ(sum->inputs[0], sum->inputs[1]);
}

TEST(CommonSubexpressions, MaxPoolWithIndicesJoinsTheForwardPool) {
  Graph g;
  g.opset_imports[""] = 18;
  Value* x = Tensor(g, "x", {1, 1, 4, 4});
  g.inputs = {x};
  Node* fwd = Add(g, "MaxPool", {x});
  fwd->SetInts("kernel_shape", {2, 2});
  fwd->SetInts("strides", {2, 2});
  Node* again = Add(g, "MaxPool", {x}, 2);
  again->SetInts("kernel_shape", {2, 2});
  again->SetInts("strides", {2, 2});
  Value* indices = again->outputs[1];
  Node* use = Add(g, "Add", {fwd->outputs[0], again->outputs[0]});
  g.outputs = {use->outputs[0], indices};
  ASSERT_TRUE(RunCommonSubexpressions(g, {}).ok());
  ASSERT_TRUE(g.Verify().ok()) << g.Dump();
  ASSERT_EQ(OpSequence(g), (std::vector<std::string>{"MaxPool", "Add"}));
  ASSERT_EQ(fwd->outputs.size(), 2u);
  EXPECT_EQ(fwd->outputs[1], indices);
  EXPECT_EQ(indices->producer, fwd);
  // The merged graph still compiles and runs its shapes.
  ASSERT_TRUE(RunPipeline(g, {}).ok());
}

TEST(CommonSubexpressions, RandomAndDropoutNeverMerge) {
  Graph g;
  g.opset_imports[""] = 18;
  Value* x = Tensor(g, "x", {8});
  Value* ratio = testing::Const<float>(g, "ratio", {}, {0.5f});
  const uint8_t yes = 1;
  Value* on = g.AddConstant("on", DataType::kBool, {}, TensorData::Copy(&yes, 1));
  g.inputs = {x};
  Node* d1 = Add(g, "Dropout", {x, ratio, on});
  Node* d2 = Add(g, "Dropout", {x, ratio, on});
  Node* r1 = Add(g, "RandomNormalLike", {x});
  Node* r2 = Add(g, "RandomNormalLike", {x});
  g.outputs = {d1->outputs[0], d2->outputs[0], r1->outputs[0], r2->outputs[0]};
  ASSERT_TRUE(RunCommonSubexpressions(g, {}).ok());
  EXPECT_EQ(g.nodes().size(), 4u);
}

}  // namespace
}  // namespace oc

#include <gtest/gtest.h>

#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::OpSequence;
using testing::Tensor;

TEST(PassRemoveIdentity, RewiresConsumersOfAnInternalIdentity) {
  Graph g;
  Value* x = Tensor(g, "x", {4});
  Value* a = Tensor(g, "a", {4});
  Value* b = Tensor(g, "b", {4});
  Value* y = Tensor(g, "y", {4});
  g.inputs = {x};
  g.AddNode("Relu", "r1", {x}, {a});
  g.AddNode("Identity", "id", {a}, {b});
  Node* r2 = g.AddNode("Relu", "r2", {b}, {y});
  g.outputs = {y};
  ASSERT_TRUE(RunRemoveIdentity(g, {}).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Relu", "Relu"}));
  EXPECT_EQ(r2->inputs[0], a);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassRemoveIdentity, GraphOutputNameMovesOntoProducer) {
  Graph g;
  Value* x = Tensor(g, "x", {4});
  Value* a = Tensor(g, "a", {4});
  Value* y = Tensor(g, "y", {4});
  Value* z = Tensor(g, "z", {4});
  g.inputs = {x};
  Node* relu = g.AddNode("Relu", "r", {x}, {a});
  g.AddNode("Identity", "id", {a}, {y});
  Node* sig = g.AddNode("Sigmoid", "s", {a}, {z});
  g.outputs = {y, z};
  ASSERT_TRUE(RunRemoveIdentity(g, {}).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Relu", "Sigmoid"}));
  EXPECT_EQ(relu->outputs[0], y);
  EXPECT_EQ(y->producer, relu);
  EXPECT_EQ(sig->inputs[0], y);
  EXPECT_EQ(g.outputs[0]->name, "y");
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassRemoveIdentity, KeepsIdentityFromInputConstantOrOtherOutput) {
  Graph g;
  Value* x = Tensor(g, "x", {2});
  Value* c = Const<float>(g, "c", {2}, {1, 2});
  Value* a = Tensor(g, "a", {2});
  Value* y1 = Tensor(g, "y1", {2});
  Value* y2 = Tensor(g, "y2", {2});
  Value* y3 = Tensor(g, "y3", {2});
  g.inputs = {x};
  g.AddNode("Relu", "r", {x}, {a});
  g.AddNode("Identity", "from_input", {x}, {y1});
  g.AddNode("Identity", "from_const", {c}, {y2});
  g.AddNode("Identity", "from_output", {a}, {y3});
  g.outputs = {a, y1, y2, y3};
  ASSERT_TRUE(RunRemoveIdentity(g, {}).ok());
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Relu", "Identity", "Identity", "Identity"}));
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassRemoveIdentity, DropoutRemovedOnlyInInferenceWithUnusedMask) {
  Graph g;
  Value* x = Tensor(g, "x", {2});
  Value* a = Tensor(g, "a", {2});
  Value* b = Tensor(g, "b", {2});
  Value* mask_b = Tensor(g, "mask_b", {2}, DataType::kBool);
  Value* c = Tensor(g, "c", {2});
  Value* y = Tensor(g, "y", {2});
  Value* unused_mask = Tensor(g, "unused_mask", {2}, DataType::kBool);
  Value* ratio = Const<float>(g, "ratio", {}, {0.5f});
  const uint8_t yes = 1;
  Value* train = g.AddConstant("train", DataType::kBool, {}, TensorData::Copy(&yes, 1));
  g.inputs = {x};
  g.AddNode("Dropout", "plain", {x, ratio}, {a, unused_mask});
  g.AddNode("Dropout", "mask_read", {a}, {b, mask_b});
  g.AddNode("Dropout", "training", {b, ratio, train}, {c});
  g.AddNode("Relu", "r", {c}, {y});
  g.outputs = {y, mask_b};
  ASSERT_TRUE(RunRemoveIdentity(g, {}).ok());
  std::vector<std::string> names;
  for (auto& n : g.nodes()) names.push_back(n->name);
  EXPECT_EQ(names, (std::vector<std::string>{"mask_read", "training", "r"}));
  EXPECT_EQ(g.nodes()[0]->inputs[0], x);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassDeadCodeElimination, RemovesUnreadNodesAndTheirInitializers) {
  Graph g;
  Value* x = Tensor(g, "x", {2});
  Value* big = Const<float>(g, "big_weight", {1024}, std::vector<float>(1024, 1.f));
  Value* a = Tensor(g, "a", {2});
  Value* dead1 = Tensor(g, "dead1", {1024});
  Value* dead2 = Tensor(g, "dead2", {1024});
  Value* y = Tensor(g, "y", {2});
  g.inputs = {x};
  g.AddNode("Relu", "live1", {x}, {a});
  g.AddNode("Relu", "dead_a", {big}, {dead1});
  g.AddNode("Relu", "dead_b", {dead1}, {dead2});
  g.AddNode("Relu", "live2", {a}, {y});
  g.outputs = {y};
  (void)big;
  ASSERT_TRUE(RunDeadCodeElimination(g, {}).ok());
  std::vector<std::string> names;
  for (auto& n : g.nodes()) names.push_back(n->name);
  EXPECT_EQ(names, (std::vector<std::string>{"live1", "live2"}));
  EXPECT_EQ(g.FindValue("big_weight"), nullptr);
  EXPECT_EQ(g.FindValue("dead2"), nullptr);
  EXPECT_EQ(g.values().size(), 3u);
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(PassDeadCodeElimination, KeepsNodeWhoseSecondOutputIsUnread) {
  Graph g;
  Value* x = Tensor(g, "x", {2});
  Value* a = Tensor(g, "a", {2});
  Value* mask = Tensor(g, "mask", {2}, DataType::kBool);
  g.inputs = {x};
  g.AddNode("Dropout", "d", {x}, {a, mask});
  g.outputs = {a};
  ASSERT_TRUE(RunDeadCodeElimination(g, {}).ok());
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->output(1), mask);
}

}  // namespace
}  // namespace oc

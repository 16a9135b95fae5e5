#include "graph/graph_clone.h"

#include <gtest/gtest.h>

namespace oc {
namespace {

std::unique_ptr<Graph> SmallGraph() {
  auto g = std::make_unique<Graph>();
  g->name = "g";
  g->opset_imports[""] = 17;
  g->metadata["input_format"] = "NCHW";
  Value* x = g->AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {-1, 4};
  x->dim_params = {"N", ""};
  float w[4] = {1, 2, 3, 4};
  Value* b = g->AddConstant("b", DataType::kFloat32, {4}, TensorData::Copy(w, sizeof w));
  Value* y = g->AddValue("y");
  y->dtype = DataType::kFloat32;
  Value* z = g->AddValue("z");
  Node* add = g->AddNode("Add", "add", {x, b}, {y});
  add->SetInt("some_attr", 7);
  g->AddNode("Relu", "relu", {y}, {z});
  g->inputs = {x};
  g->outputs = {z};
  return g;
}

TEST(GraphClone, CopiesStructureShapesAndAttributes) {
  auto g = SmallGraph();
  auto c = CloneGraph(*g);
  ASSERT_TRUE(c->Verify().ok()) << c->Verify().ToString();
  EXPECT_EQ(c->Dump(), g->Dump());
  EXPECT_EQ(c->metadata, g->metadata);
  EXPECT_EQ(c->opset_imports, g->opset_imports);
  ASSERT_EQ(c->values().size(), g->values().size());
  for (size_t i = 0; i < g->values().size(); ++i) {
    EXPECT_EQ(c->values()[i]->id, static_cast<int>(i));
    EXPECT_NE(c->values()[i].get(), g->values()[i].get());
  }
  EXPECT_EQ(c->inputs[0]->dim_params, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(c->nodes()[0]->GetInt("some_attr", 0), 7);
  EXPECT_EQ(c->nodes()[0]->opset, g->nodes()[0]->opset);
  EXPECT_EQ(c->outputs[0]->producer, c->nodes()[1].get());
  EXPECT_EQ(c->FindValue("y"), c->nodes()[0]->outputs[0]);
}

TEST(GraphClone, SharesConstantBytesAndIsIndependent) {
  auto g = SmallGraph();
  auto c = CloneGraph(*g);
  EXPECT_EQ(c->FindValue("b")->constant->data(), g->FindValue("b")->constant->data());
  c->inputs[0]->shape = {8, 4};
  c->RemoveNode(c->nodes()[1].get());
  EXPECT_EQ(g->inputs[0]->shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(g->nodes().size(), 2u);
  EXPECT_TRUE(g->Verify().ok());
}

}  // namespace
}  // namespace oc

#include "graph/graph.h"

#include <gtest/gtest.h>

namespace oc {
namespace {

// Counts that do not fit int64 are -1 (no signed-overflow UB) and reported
// by SizeOverflows; unknown dims are not an overflow.
TEST(GraphTest, SizesOfAbsurdShapesOverflowCleanly) {
  Value v;
  v.dtype = DataType::kFloat32;
  v.has_shape = true;
  v.shape = {3, 5};
  EXPECT_EQ(v.NumElements(), 15);
  EXPECT_EQ(v.ByteSize(), 60);
  EXPECT_FALSE(v.SizeOverflows());
  v.shape = {int64_t{1} << 40, int64_t{1} << 40};  // 2^80 elements
  EXPECT_EQ(v.NumElements(), -1);
  EXPECT_EQ(v.ByteSize(), -1);
  EXPECT_TRUE(v.SizeOverflows());
  v.shape = {int64_t{1} << 62};  // the count fits, 4 bytes each do not
  EXPECT_EQ(v.NumElements(), int64_t{1} << 62);
  EXPECT_EQ(v.ByteSize(), -1);
  EXPECT_TRUE(v.SizeOverflows());
  v.shape = {0, int64_t{1} << 62, int64_t{1} << 62};  // empty
  EXPECT_EQ(v.NumElements(), 0);
  EXPECT_FALSE(v.SizeOverflows());
  v.shape = {-1, int64_t{1} << 62, int64_t{1} << 62};
  EXPECT_EQ(v.NumElements(), -1);
  EXPECT_FALSE(v.SizeOverflows());
}

TEST(GraphTest, TopologicalSortOrdersProducersFirst) {
  Graph g;
  Value* x = g.AddValue("x");
  Value* a = g.AddValue("a");
  Value* b = g.AddValue("b");
  g.inputs = {x};
  g.AddNode("Relu", "second", {a}, {b});
  g.AddNode("Relu", "first", {x}, {a});
  g.outputs = {b};
  EXPECT_FALSE(g.Verify().ok());
  ASSERT_TRUE(g.TopologicalSort().ok());
  EXPECT_EQ(g.nodes()[0]->name, "first");
  EXPECT_TRUE(g.Verify().ok()) << g.Verify().ToString();
}

TEST(GraphTest, TopologicalSortDetectsCycle) {
  Graph g;
  Value* a = g.AddValue("a");
  Value* b = g.AddValue("b");
  g.AddNode("Relu", "n1", {a}, {b});
  g.AddNode("Relu", "n2", {b}, {a});
  Status st = g.TopologicalSort();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cycle"), std::string::npos);
}

TEST(GraphTest, CompactDropsUnusedValuesAndRenumbers) {
  Graph g;
  Value* x = g.AddValue("x");
  g.AddValue("unused");
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Relu", "r", {x}, {y});
  g.outputs = {y};
  g.Compact();
  EXPECT_EQ(g.values().size(), 2u);
  EXPECT_EQ(y->id, 1);
  EXPECT_EQ(g.FindValue("unused"), nullptr);
}

TEST(GraphTest, DumpShowsOpsShapesAndAttributes) {
  Graph g;
  Value* x = g.AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {1, -1};
  x->dim_params = {"", "N"};
  Value* y = g.AddValue("y");
  g.inputs = {x};
  Node* n = g.AddNode("Softmax", "sm", {x}, {y});
  n->SetInt("axis", -1);
  g.outputs = {y};
  std::string d = g.Dump();
  EXPECT_NE(d.find("%x:float32[1,N]"), std::string::npos) << d;
  EXPECT_NE(d.find("Softmax<axis=-1>"), std::string::npos) << d;
}

}  // namespace
}  // namespace oc

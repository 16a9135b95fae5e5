#include <gtest/gtest.h>

#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::Floats;
using testing::Tensor;

TEST(PassShapeInference, FoldsIdentityChainOnConstantsDuringTheSweep) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {2, 3});
  Value* c = Const<float>(g, "c", {2, 3}, {1, 2, 3, 4, 5, 6});
  Value* a = g.AddValue("a");
  Value* b = g.AddValue("b");
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Identity", "i1", {c}, {a});
  g.AddNode("Identity", "i2", {a}, {b});
  g.AddNode("Identity", "i3", {x}, {y});
  g.outputs = {y, b};
  Status st = RunShapeInference(g, {});
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(b->IsConstant());
  EXPECT_EQ(Floats(b), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(b->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(y->IsConstant());
  EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(y->dtype, DataType::kFloat32);
}

TEST(PassShapeInference, RejectsDynamicGraphInputNamingIt) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "images", {-1, 3});
  x->dim_params = {"N", ""};
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Identity", "i", {x}, {y});
  g.outputs = {y};
  Status st = RunShapeInference(g, {});
  ASSERT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("images"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("[N,3]"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("--input_shape"), std::string::npos) << st.message();
}

// Shapes too large to count stop at the graph input (from --input_shape, say)
// or at the node whose inference makes one (from a constant shape here).
TEST(PassShapeInference, RejectsShapesTooLargeToCountNamingWhere) {
  {
    Graph g;
    g.opset_imports[""] = 17;
    Value* x = Tensor(g, "x", {int64_t{1} << 62});  // 2^64 bytes of float32
    Value* y = g.AddValue("y");
    g.inputs = {x};
    g.AddNode("Identity", "i", {x}, {y});
    g.outputs = {y};
    Status st = RunShapeInference(g, {});
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("64 bits"), std::string::npos) << st.message();
  }
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {1});
  Value* shape = Const<int64_t>(g, "shape", {3}, {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31});
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Expand", "expand", {x, shape}, {y});
  g.outputs = {y};
  Status st = RunShapeInference(g, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("expand"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("64 bits"), std::string::npos) << st.message();
}

TEST(PassShapeInference, RejectsInputWithoutElementType) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {1}, DataType::kUndefined);
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Identity", "i", {x}, {y});
  g.outputs = {y};
  Status st = RunShapeInference(g, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.message();
}

TEST(PassShapeInference, RejectsUnknownOpNamingTheNode) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {1});
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("NoSuchOp", "mystery", {x}, {y});
  g.outputs = {y};
  Status st = RunShapeInference(g, {});
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("mystery"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("NoSuchOp"), std::string::npos) << st.message();
}

// x -> Shape -> Gather(0) -> Concat(-1) -> Reshape(x): the classic flatten that
// exporters emit; the Reshape target must be a constant when Reshape is inferred.
TEST(PassShapeInference, ResolvesShapeGatherConcatReshapeInOneSweep) {
  OC_REQUIRE_OP("Shape");
  OC_REQUIRE_OP("Gather");
  OC_REQUIRE_OP("Concat");
  OC_REQUIRE_OP("Reshape");
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {2, 3, 4});
  Value* s = g.AddValue("s");
  Value* d0 = g.AddValue("d0");
  Value* target = g.AddValue("target");
  Value* y = g.AddValue("y");
  g.inputs = {x};
  g.AddNode("Shape", "shape", {x}, {s});
  g.AddNode("Gather", "gather", {s, Const<int64_t>(g, "idx", {1}, {0})}, {d0})->SetInt("axis", 0);
  g.AddNode("Concat", "concat", {d0, Const<int64_t>(g, "minus1", {1}, {-1})}, {target})
      ->SetInt("axis", 0);
  g.AddNode("Reshape", "reshape", {x, target}, {y});
  g.outputs = {y};
  Status st = RunShapeInference(g, {});
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(target->IsConstant());
  EXPECT_EQ(target->constant->as<int64_t>()[0], 2);
  EXPECT_EQ(target->constant->as<int64_t>()[1], -1);
  EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 12}));
}

TEST(PassShapeInference, RejectsValueLeftDynamicNamingProducer) {
  OC_REQUIRE_OP("Reshape");
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {2, 6});
  Value* shape = Tensor(g, "new_shape", {2}, DataType::kInt64);
  Value* y = g.AddValue("y");
  g.inputs = {x, shape};
  g.AddNode("Reshape", "reshape_by_input", {x, shape}, {y});
  g.outputs = {y};
  Status st = RunShapeInference(g, {});
  ASSERT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  EXPECT_NE(st.message().find("reshape_by_input"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace oc

#include <gtest/gtest.h>

#include "ops/cpu/common/tensor_test_util.h"
#include "ops/infer_util.h"

namespace oc {
namespace {

using tt::I64;
using tt::Iota;
using tt::RunOp;

TEST(ShapeReshape, ZeroCopiesInputDimAndMinusOneIsInferred) {
  auto r = RunOp("Reshape", {Iota<float>({2, 3, 4}), I64({0, -1})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(r[0].as<float>(), Iota<float>({24}).as<float>());
}

TEST(ShapeReshape, AllowZeroKeepsLiteralZero) {
  auto r = RunOp("Reshape", {Iota<float>({0, 3}), I64({3, 0})}, [](Node& n) { n.SetInt("allowzero", 1); });
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{3, 0}));
  // Without allowzero the 0 copies input dim 1 (3) and the count check fails.
  auto bad = RunOp("Reshape", {Iota<float>({2, 3}), I64({3, 0})}, [](Node& n) { n.SetInt("allowzero", 1); });
  EXPECT_FALSE(bad.status.ok());
  auto both = RunOp("Reshape", {Iota<float>({0, 3}), I64({0, -1})}, [](Node& n) { n.SetInt("allowzero", 1); });
  EXPECT_EQ(both.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(both.status.message().find("0 and -1"), std::string::npos) << both.status.message();
}

TEST(ShapeReshape, ElementCountMismatchNamesNodeAndShapes) {
  auto r = RunOp("Reshape", {Iota<int64_t>({2, 3}), I64({4, 2})});
  ASSERT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status.message().find("node_Reshape"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("[2,3]"), std::string::npos) << r.status.message();
  auto two = RunOp("Reshape", {Iota<int64_t>({2, 3}), I64({-1, -1})});
  EXPECT_NE(two.status.message().find("more than one -1"), std::string::npos);
}

TEST(ShapeReshape, Opset1ShapeAttributeBecomesConstantInput) {
  auto r = RunOp("Reshape", {Iota<uint8_t>({2, 6})}, [](Node& n) { n.SetInts("shape", {4, -1}); }, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(r[0].as<uint8_t>(), Iota<uint8_t>({12}).as<uint8_t>());
}

TEST(ShapeReshape, RuntimeShapeLeavesDimsUnknown) {
  Graph g;
  Value* x = g.AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {2, 3};
  Value* s = g.AddValue("s");
  s->dtype = DataType::kInt64;
  s->has_shape = true;
  s->shape = {3};
  Value* y = g.AddValue("y");
  Node* n = g.AddNode("Reshape", "r", {x, s}, {y});
  n->opset = 14;
  ASSERT_TRUE(OpRegistry::Global().Find("", "Reshape", 14)->infer(*n).ok());
  EXPECT_EQ(y->shape, (std::vector<int64_t>{-1, -1, -1}));
}

TEST(ShapeFlatten, AxisZeroAndNegativeAxis) {
  auto r0 = RunOp("Flatten", {Iota<float>({2, 3, 4})}, [](Node& n) { n.SetInt("axis", 0); });
  ASSERT_TRUE(r0.status.ok()) << r0.status.ToString();
  EXPECT_EQ(r0[0].shape, (std::vector<int64_t>{1, 24}));
  auto r1 = RunOp("Flatten", {Iota<float>({2, 3, 4})}, [](Node& n) { n.SetInt("axis", -1); });
  ASSERT_TRUE(r1.status.ok());
  EXPECT_EQ(r1[0].shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(r1[0].as<float>(), Iota<float>({24}).as<float>());
  EXPECT_FALSE(RunOp("Flatten", {Iota<float>({2, 3})}, [](Node& n) { n.SetInt("axis", 3); }).status.ok());
}

TEST(ShapeSqueeze, NegativeAxesAllOnesAndErrors) {
  auto r = RunOp("Squeeze", {Iota<int16_t>({1, 3, 1, 2}), I64({-2})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{1, 3, 2}));
  auto all = RunOp("Squeeze", {Iota<int16_t>({1, 3, 1, 2})});
  ASSERT_TRUE(all.status.ok());
  EXPECT_EQ(all[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(all[0].as<int16_t>(), Iota<int16_t>({6}).as<int16_t>());
  auto bad = RunOp("Squeeze", {Iota<int16_t>({1, 3}), I64({1})});
  ASSERT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("expected size 1, got 3"), std::string::npos) << bad.status.message();
}

TEST(ShapeSqueeze, Opset11AxesAttributeIsCanonicalised) {
  auto r = RunOp("Squeeze", {Iota<float>({1, 3, 1})}, [](Node& n) { n.SetInts("axes", {0, -1}); }, 11);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{3}));
}

TEST(ShapeUnsqueeze, NegativeAxesIndexTheOutputRank) {
  auto r = RunOp("Unsqueeze", {Iota<double>({2, 3}), I64({-1, 0})});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{1, 2, 3, 1}));
  auto old = RunOp("Unsqueeze", {Iota<double>({2, 3})}, [](Node& n) { n.SetInts("axes", {1}); }, 11);
  ASSERT_TRUE(old.status.ok()) << old.status.ToString();
  EXPECT_EQ(old[0].shape, (std::vector<int64_t>{2, 1, 3}));
  EXPECT_FALSE(RunOp("Unsqueeze", {Iota<double>({2}), I64({0, 0})}).status.ok());
}

// Canonicalisation rewrites the node itself: attribute gone, constant input added.
TEST(ShapeCanonicalize, OldFormsBecomeInputs) {
  Graph g;
  g.opset_imports[""] = 11;
  Value* x = g.AddConstant("x", DataType::kFloat32, {1, 2}, TensorData::Allocate(8));
  Value* y = g.AddValue("y");
  Node* n = g.AddNode("Squeeze", "sq", {x}, {y});
  n->SetInts("axes", {0});
  const OpDef* def = OpRegistry::Global().Find("", "Squeeze", 11);
  ASSERT_TRUE(def && def->canonicalize);
  ASSERT_TRUE(def->canonicalize(*n, g).ok());
  EXPECT_FALSE(n->HasAttr("axes"));
  ASSERT_EQ(n->inputs.size(), 2u);
  EXPECT_EQ(ConstInts(n->input(1)), (std::vector<int64_t>{0}));
  EXPECT_EQ(n->input(1)->dtype, DataType::kInt64);
  EXPECT_GE(n->opset, 13);
}

TEST(ShapeShape, StartEndAndConstantSetByInference) {
  auto r = RunOp("Shape", {Iota<float>({2, 3, 4, 5})}, [](Node& n) {
    n.SetInt("start", 1);
    n.SetInt("end", -1);
  }, 15);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r[0].as<int64_t>(), (std::vector<int64_t>{3, 4}));

  Graph g;
  Value* x = g.AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {7, 8};
  Value* s = g.AddValue("s");
  Value* n = g.AddValue("n");
  Node* sh = g.AddNode("Shape", "sh", {x}, {s});
  Node* sz = g.AddNode("Size", "sz", {x}, {n});
  sh->opset = sz->opset = 18;
  ASSERT_TRUE(OpRegistry::Global().Find("", "Shape", 18)->infer(*sh).ok());
  ASSERT_TRUE(OpRegistry::Global().Find("", "Size", 18)->infer(*sz).ok());
  EXPECT_EQ(ConstInts(s), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(ConstInts(n), (std::vector<int64_t>{56}));
  EXPECT_TRUE(n->shape.empty());
  // A dynamic dim leaves Shape unfolded (but a slice past it still folds).
  x->shape = {-1, 8};
  ASSERT_TRUE(OpRegistry::Global().Find("", "Shape", 18)->infer(*sh).ok());
  EXPECT_FALSE(s->IsConstant());
  sh->SetInt("start", 1);
  ASSERT_TRUE(OpRegistry::Global().Find("", "Shape", 18)->infer(*sh).ok());
  EXPECT_EQ(ConstInts(s), (std::vector<int64_t>{8}));
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape resolves at compile time
// when every node is inferred and then folded in order, as the pipeline does.
TEST(ShapeFolding, ShapeGatherUnsqueezeConcatReshapeChainFolds) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = g.AddValue("x");
  x->dtype = DataType::kFloat32;
  x->has_shape = true;
  x->shape = {2, 3, 4, 5};
  g.inputs = {x};
  int64_t zero = 0;
  int64_t minus_one[] = {-1};
  Value* idx = g.AddConstant("idx", DataType::kInt64, {}, TensorData::Copy(&zero, 8));
  Value* axes = g.AddConstant("axes", DataType::kInt64, {1}, TensorData::Copy(&zero, 8));
  Value* rest = g.AddConstant("rest", DataType::kInt64, {1}, TensorData::Copy(minus_one, 8));
  Value* shape = g.AddValue("shape");
  Value* batch = g.AddValue("batch");
  Value* batch1 = g.AddValue("batch1");
  Value* target = g.AddValue("target");
  Value* y = g.AddValue("y");
  g.AddNode("Shape", "shape", {x}, {shape});
  g.AddNode("Gather", "gather", {shape, idx}, {batch});
  g.AddNode("Unsqueeze", "unsq", {batch, axes}, {batch1});
  Node* concat = g.AddNode("Concat", "concat", {batch1, rest}, {target});
  concat->SetInt("axis", 0);
  g.AddNode("Reshape", "reshape", {x, target}, {y});
  g.outputs = {y};
  for (auto& up : g.nodes()) {
    Node& n = *up;
    const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, n.opset);
    ASSERT_TRUE(def) << n.op_type;
    Status st = def->infer(n);
    ASSERT_TRUE(st.ok()) << st.ToString();
    bool all_const = true;
    for (Value* v : n.inputs) all_const &= v && v->IsConstant();
    if (all_const && !n.output(0)->IsConstant()) {
      auto out = EvaluateNode(n);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      n.output(0)->constant = std::move((*out)[0]);
    }
  }
  EXPECT_EQ(ConstInts(batch), (std::vector<int64_t>{2}));
  EXPECT_TRUE(batch->shape.empty());
  EXPECT_EQ(batch1->shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(ConstInts(target), (std::vector<int64_t>{2, -1}));
  EXPECT_FALSE(y->IsConstant());
  EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 60}));
}

TEST(ShapeSize, CountsElementsOfEveryDtype) {
  for (DataType t : {DataType::kBool, DataType::kFloat16, DataType::kFloat64}) {
    tt::T x;
    x.dtype = t;
    x.shape = {3, 5};
    x.bytes.resize(15 * DataTypeSize(t));
    auto r = RunOp("Size", {x});
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_EQ(r[0].as<int64_t>(), (std::vector<int64_t>{15}));
  }
}

}  // namespace
}  // namespace oc

#include <gtest/gtest.h>

#include <cstring>

#include "executor/executable.h"
#include "passes/passes.h"

namespace oc {
namespace {

Value* Typed(Graph& g, const std::string& name, DataType dt, std::vector<int64_t> shape) {
  Value* v = g.AddValue(name);
  v->dtype = dt;
  v->has_shape = true;
  v->shape = shape;
  v->dim_params.assign(shape.size(), "");
  return v;
}

// y = If(Shape(x)[0] == 2) then x + 1 else Relu(x): the condition is known
// only once shape inference has folded Shape -> Gather -> Equal. Branch outputs
// declare no shape, so without inlining the If's output would not be static.
std::unique_ptr<Graph> ShapeIf(int64_t rows) {
  auto g = std::make_unique<Graph>();
  g->name = "shape_if";
  g->opset_imports[""] = 17;
  Value* x = Typed(*g, "x", DataType::kFloat32, {rows, 3});
  g->inputs = {x};
  int64_t zero = 0, two = 2;
  Value* idx = g->AddConstant("idx", DataType::kInt64, {}, TensorData::Copy(&zero, 8));
  Value* k = g->AddConstant("two", DataType::kInt64, {}, TensorData::Copy(&two, 8));
  Value* shape = g->AddValue("shape");
  Value* d0 = g->AddValue("d0");
  Value* cond = g->AddValue("cond");
  g->AddNode("Shape", "shape", {x}, {shape})->opset = 17;
  Node* gather = g->AddNode("Gather", "gather", {shape, idx}, {d0});
  gather->opset = 17;
  g->AddNode("Equal", "eq", {d0, k}, {cond})->opset = 17;
  auto branch = [&](const std::string& name, bool add) {
    auto b = std::make_shared<Graph>();
    b->name = name;
    b->opset_imports = g->opset_imports;
    Value* cap = b->AddValue("x");
    b->captures = {cap};
    Value* out = b->AddValue(name + "_y");
    if (add) {
      float one = 1.f;
      Value* c = b->AddConstant("one", DataType::kFloat32, {}, TensorData::Copy(&one, 4));
      b->AddNode("Add", name + "_add", {cap, c}, {out})->opset = 17;
    } else {
      b->AddNode("Relu", name + "_relu", {cap}, {out})->opset = 17;
    }
    b->outputs = {out};
    return b;
  };
  Value* y = g->AddValue("y");
  Node* n = g->AddNode("If", "if0", {cond, x, x}, {y});
  n->opset = 17;
  Attribute t, e;
  t.kind = e.kind = Attribute::Kind::kGraph;
  t.graph = branch("then", true);
  e.graph = branch("else", false);
  n->attrs["then_branch"] = t;
  n->attrs["else_branch"] = e;
  g->outputs = {y};
  return g;
}

TEST(InlineConstantIf, TakenBranchReplacesTheIfAndTheGraphBecomesStatic) {
  for (int64_t rows : {2, 4}) {
    auto g = ShapeIf(rows);
    ASSERT_TRUE(g->Verify().ok());
    CompileOptions opts;
    Status st = RunPipeline(*g, opts);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (const auto& n : g->nodes()) EXPECT_NE(n->op_type, "If");
    ASSERT_EQ(g->nodes().size(), 1u) << g->Dump();
    EXPECT_EQ(g->nodes()[0]->op_type, rows == 2 ? "Add" : "Relu");
    EXPECT_TRUE(g->outputs[0]->IsStatic());

    auto exe = Executable::Create(std::shared_ptr<const Graph>(std::move(g)));
    ASSERT_TRUE(exe.ok()) << exe.status().ToString();
    auto ctx = (*exe)->NewContext();
    std::vector<float> x(rows * 3), y(rows * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 3.f;
    const void* ins[1] = {x.data()};
    void* outs[1] = {y.data()};
    ASSERT_TRUE((*exe)->Run(**ctx, ins, outs, ThreadPool::Global()).ok());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], rows == 2 ? x[i] + 1.f : std::max(x[i], 0.f));
  }
}

TEST(InlineConstantIf, LeavesAnIfOnRunTimeDataAlone) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* c = Typed(g, "c", DataType::kBool, {});
  Value* x = Typed(g, "x", DataType::kFloat32, {2});
  g.inputs = {c, x};
  auto b = std::make_shared<Graph>();
  Value* cap = b->AddValue("x");
  b->captures = {cap};
  b->outputs = {cap};
  Value* y = g.AddValue("y");
  Node* n = g.AddNode("If", "if0", {c, x, x}, {y});
  Attribute a;
  a.kind = Attribute::Kind::kGraph;
  a.graph = b;
  n->attrs["then_branch"] = a;
  n->attrs["else_branch"] = a;
  g.outputs = {y};
  ASSERT_TRUE(RunInlineConstantIf(g, CompileOptions{}).ok());
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->op_type, "If");
}

}  // namespace
}  // namespace oc

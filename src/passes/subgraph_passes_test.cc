// The passes see a subgraph's reads of outer values as the owning node's
// implicit inputs (graph.h): dead-code elimination keeps their producers,
// memory planning keeps their buffers alive up to the node, fusion does not
// swallow them.
#include <gtest/gtest.h>

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

// h = Relu(x) is read only by the then-branch; z = Neg(x), w = z + z are
// computed between h and the If, so a plan that let h die early would hand
// its bytes to z or w. y = If(c) then h * 3 else w.
std::unique_ptr<Graph> CapturedActivation() {
  auto g = std::make_unique<Graph>();
  g->opset_imports[""] = 17;
  Value* c = Typed(*g, "c", DataType::kBool, {});
  Value* x = Typed(*g, "x", DataType::kFloat32, {64});
  g->inputs = {c, x};
  Value* h = g->AddValue("h");
  Value* z = g->AddValue("z");
  Value* w = g->AddValue("w");
  g->AddNode("Relu", "relu", {x}, {h})->opset = 17;
  g->AddNode("Neg", "neg", {x}, {z})->opset = 17;
  g->AddNode("Add", "add", {z, z}, {w})->opset = 17;
  auto then_g = std::make_shared<Graph>();
  then_g->opset_imports = g->opset_imports;
  Value* h_cap = Typed(*then_g, "h", DataType::kFloat32, {64});
  then_g->captures = {h_cap};
  float three = 3.f;
  Value* k = then_g->AddConstant("three", DataType::kFloat32, {}, TensorData::Copy(&three, 4));
  Value* t_out = Typed(*then_g, "t_out", DataType::kFloat32, {64});
  then_g->AddNode("Mul", "mul", {h_cap, k}, {t_out})->opset = 17;
  then_g->outputs = {t_out};
  auto else_g = std::make_shared<Graph>();
  Value* w_cap = Typed(*else_g, "w", DataType::kFloat32, {64});
  else_g->captures = {w_cap};
  else_g->outputs = {w_cap};
  Value* y = g->AddValue("y");
  // else_branch's captures first (attribute-name order), then then_branch's.
  Node* n = g->AddNode("If", "if0", {c, w, h}, {y});
  n->opset = 17;
  Attribute a, b;
  a.kind = b.kind = Attribute::Kind::kGraph;
  a.graph = then_g;
  b.graph = else_g;
  n->attrs["then_branch"] = a;
  n->attrs["else_branch"] = b;
  g->outputs = {y};
  return g;
}

TEST(SubgraphPasses, CapturedValuesStayAliveThroughThePipeline) {
  auto g = CapturedActivation();
  ASSERT_TRUE(g->Verify().ok()) << g->Verify().ToString();
  CompileOptions opts;
  opts.verify_each_pass = true;
  Status st = RunPipeline(*g, opts);
  ASSERT_TRUE(st.ok()) << st.ToString();
  // Relu survives dead-code elimination although no outer node reads h.
  bool relu = false;
  for (const auto& n : g->nodes()) relu |= n->op_type == "Relu";
  EXPECT_TRUE(relu) << g->Dump();

  auto exe = Executable::Create(std::shared_ptr<const Graph>(std::move(g)));
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  auto ctx = (*exe)->NewContext();
  ASSERT_TRUE(ctx.ok());
  std::vector<float> x(64), y(64);
  for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i % 7) - 3.f;
  for (uint8_t c : {1, 0}) {
    const void* ins[2] = {&c, x.data()};
    void* outs[1] = {y.data()};
    ASSERT_TRUE((*exe)->Run(**ctx, ins, outs, ThreadPool::Global()).ok());
    for (int i = 0; i < 64; ++i) EXPECT_EQ(y[i], c ? 3.f * std::max(x[i], 0.f) : -2.f * x[i]) << i;
  }
}

// Branches that declare nothing about their outputs (no dtype, no shape):
// the If's output is still static, from shape inference over the branches,
// so a run-time condition does not make the model dynamic.
TEST(SubgraphPasses, IfOutputsAreInferredThroughUndeclaredBranches) {
  auto g = CapturedActivation();
  Node* n = g->nodes().back().get();
  ASSERT_EQ(n->op_type, "If");
  for (const char* attr : {"then_branch", "else_branch"}) {
    Graph& b = *n->attrs[attr].graph;
    for (const auto& v : b.values()) {
      if (v->constant) continue;
      v->dtype = DataType::kUndefined;
      v->has_shape = false;
      v->shape.clear();
      v->dim_params.clear();
    }
  }
  CompileOptions opts;
  Status st = RunPipeline(*g, opts);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(g->outputs[0]->IsStatic()) << g->outputs[0]->ShapeString();
  EXPECT_EQ(g->outputs[0]->dtype, DataType::kFloat32);
  EXPECT_GE(g->arena_size, 0);
}

}  // namespace
}  // namespace oc

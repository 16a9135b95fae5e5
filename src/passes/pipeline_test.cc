#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "executor/executable.h"
#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Const;
using testing::OpSequence;
using testing::Pattern;
using testing::Tensor;

TEST(PassPipeline, PassesAreListedInOrderWithUniqueNames) {
  std::vector<std::string> names;
  for (const PassInfo& p : Passes()) {
    names.push_back(p.name);
    EXPECT_NE(std::string(p.summary), "");
    EXPECT_NE(p.run, nullptr);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"inline-constant-if", "shape-inference", "legalize-types",
                                             "fuse-qdq", "constant-folding", "common-subexpressions",
                                             "remove-identity", "fold-conv-batchnorm", "fuse-layernorm", "fuse-gelu",
                                             "fuse-attention", "fuse-bias-activation", "nchwc-layout", "mark-bf16",
                                             "dead-code-elimination", "memory-planning"}));
}

TEST(PassPipeline, RejectsUnsupportedPrecisionModeByName) {
  Graph g;
  CompileOptions options;
  options.precision_mode = "allow_mix_precision";
  Status st = RunPipeline(g, options);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("allow_mix_precision"), std::string::npos) << st.message();
}

// Identity-only graph: folding, identity removal, dead-code and planning in one go.
TEST(PassPipeline, LogsEachPassAndLeavesAPlannedVerifiedGraph) {
  Graph g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {8});
  Value* big = Const<float>(g, "unused_big", {1 << 16}, std::vector<float>(1 << 16, 0.5f));
  Value* c = Const<float>(g, "c", {8}, Pattern(8, -1, 1));
  Value* a = g.AddValue("a");
  Value* b = g.AddValue("b");
  Value* folded = g.AddValue("folded");
  Value* dead = g.AddValue("dead");
  Value* y = g.AddValue("y");
  g.inputs = {x};
  // Deliberately out of order: the pipeline sorts first.
  g.AddNode("Identity", "i2", {a}, {b});
  g.AddNode("Identity", "i1", {x}, {a});
  g.AddNode("Identity", "i3", {b}, {y});
  g.AddNode("Identity", "fold", {c}, {folded});
  g.AddNode("Identity", "dead", {big}, {dead});
  g.outputs = {y, folded};
  std::vector<std::string> lines;
  CompileOptions options;
  options.verify_each_pass = true;
  options.log = [&](const std::string& l) { lines.push_back(l); };
  Status st = RunPipeline(g, options);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::regex line_re(R"(pass ([a-z0-9-]+): .+ \([0-9.]+ ms, nodes [0-9]+ -> [0-9]+\))");
  std::vector<std::string> seen;
  for (auto& l : lines) {
    std::smatch m;
    if (std::regex_match(l, m, line_re)) seen.push_back(m[1]);
  }
  ASSERT_EQ(seen.size(), Passes().size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], Passes()[i].name);
  // x -> y keeps one Identity (a graph input cannot be renamed); the rest folds away.
  EXPECT_EQ(OpSequence(g), (std::vector<std::string>{"Identity"}));
  EXPECT_EQ(g.nodes()[0]->inputs[0], x);
  EXPECT_EQ(g.outputs[0]->name, "y");
  EXPECT_TRUE(g.outputs[1]->IsConstant());
  EXPECT_EQ(g.FindValue("unused_big"), nullptr);
  EXPECT_EQ(g.arena_size, 0);
  EXPECT_TRUE(g.Verify().ok());
}

// Runs `g` on `input` through the executor.
std::vector<float> RunGraph(std::shared_ptr<Graph> g, const std::vector<float>& input) {
  auto exe = Executable::Create(g);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (!exe.ok()) return {};
  auto ctx = (*exe)->NewContext();
  EXPECT_TRUE(ctx.ok());
  std::vector<float> out(static_cast<size_t>((*exe)->output(0).NumElements()));
  const void* in[] = {input.data()};
  void* outs[] = {out.data()};
  Status st = (*exe)->Run(**ctx, in, outs, ThreadPool::Global());
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// Compiles two copies of a graph, with and without the optimising passes, runs
// both on the same input and requires the same result.
void ExpectFusionPreservesResults(std::shared_ptr<Graph> (*build)(), size_t input_elems,
                                  size_t max_fused_nodes) {
  auto plain = build();
  auto fused = build();
  CompileOptions off;
  off.fuse = false;
  off.verify_each_pass = true;
  Status st = RunPipeline(*plain, off);
  ASSERT_TRUE(st.ok()) << st.ToString();
  CompileOptions on;
  on.verify_each_pass = true;
  st = RunPipeline(*fused, on);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_LE(fused->nodes().size(), max_fused_nodes) << fused->Dump();
  EXPECT_LT(fused->nodes().size(), plain->nodes().size());
  auto input = Pattern(input_elems, -1, 1, 7);
  auto a = RunGraph(plain, input);
  auto b = RunGraph(fused, input);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4f) << i;
}

// Conv + BN + residual Add (+ Relu): one FusedConv after the pipeline.
template <bool kRelu>
std::shared_ptr<Graph> ResidualBlock() {
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 17;
  Value* x = Tensor(*g, "x", {1, 4, 6, 6});
  Value* c = g->AddValue("c");
  Value* n = g->AddValue("n");
  Value* s = g->AddValue("s");
  g->inputs = {x};
  Node* conv = g->AddNode("Conv", "conv",
                          {x, Const<float>(*g, "W", {4, 4, 3, 3}, Pattern(144, -0.5f, 0.5f, 1)),
                           Const<float>(*g, "B", {4}, Pattern(4, -0.5f, 0.5f, 2))},
                          {c});
  conv->SetInts("pads", {1, 1, 1, 1});
  g->AddNode("BatchNormalization", "bn",
             {c, Const<float>(*g, "scale", {4}, Pattern(4, 0.5f, 1.5f, 3)),
              Const<float>(*g, "beta", {4}, Pattern(4, -1, 1, 4)),
              Const<float>(*g, "mean", {4}, Pattern(4, -0.2f, 0.2f, 5)),
              Const<float>(*g, "var", {4}, Pattern(4, 0.5f, 1.5f, 6))},
             {n});
  g->AddNode("Add", "add", {n, x}, {s});
  if (kRelu) {
    Value* y = g->AddValue("y");
    g->AddNode("Relu", "relu", {s}, {y});
    g->outputs = {y};
  } else {
    g->outputs = {s};
  }
  return g;
}

// MatMul + bias Add (+ Gelu): one FusedMatMul after the pipeline.
template <bool kGelu>
std::shared_ptr<Graph> DenseLayer() {
  auto g = std::make_shared<Graph>();
  g->opset_imports[""] = 20;
  Value* x = Tensor(*g, "x", {2, 3, 8});
  Value* m = g->AddValue("m");
  Value* s = g->AddValue("s");
  g->inputs = {x};
  g->AddNode("MatMul", "mm", {x, Const<float>(*g, "W", {8, 5}, Pattern(40, -0.5f, 0.5f, 1))}, {m});
  g->AddNode("Add", "bias", {m, Const<float>(*g, "b", {5}, Pattern(5, -0.5f, 0.5f, 2))}, {s});
  if (kGelu) {
    Value* y = g->AddValue("y");
    g->AddNode("Gelu", "gelu", {s}, {y});
    g->outputs = {y};
  } else {
    g->outputs = {s};
  }
  return g;
}

#define OC_REQUIRE_OPS(...)                                                          \
  for (const char* op : {__VA_ARGS__})                                               \
    if (!testing::Registered(op)) GTEST_SKIP() << "op " << op << " is not registered yet";

TEST(PassPipeline, ConvBnResidualFusionKeepsResults) {
  OC_REQUIRE_OPS("Conv", "BatchNormalization", "Add");
  OC_REQUIRE_OP("FusedConv", kOpenCannDomain);
  ExpectFusionPreservesResults(&ResidualBlock<false>, 144, 1);
}

TEST(PassPipeline, ConvBnResidualReluFusionKeepsResults) {
  OC_REQUIRE_OPS("Conv", "BatchNormalization", "Add", "Relu");
  OC_REQUIRE_OP("FusedConv", kOpenCannDomain);
  ExpectFusionPreservesResults(&ResidualBlock<true>, 144, 1);
}

TEST(PassPipeline, MatMulBiasFusionKeepsResults) {
  OC_REQUIRE_OPS("MatMul", "Add");
  OC_REQUIRE_OP("FusedMatMul", kOpenCannDomain);
  ExpectFusionPreservesResults(&DenseLayer<false>, 48, 1);
}

TEST(PassPipeline, MatMulBiasGeluFusionKeepsResults) {
  OC_REQUIRE_OPS("MatMul", "Add", "Gelu");
  OC_REQUIRE_OP("FusedMatMul", kOpenCannDomain);
  ExpectFusionPreservesResults(&DenseLayer<true>, 48, 1);
}

// The passes atc --fusion_switch_file may name; atc --help and
// tools/atc/README.md list them, so a change here is a documented change.
TEST(PassPipeline, SwitchablePassesAreTheOptimisationPasses) {
  EXPECT_EQ(SwitchablePasses(),
            (std::vector<std::string>{"fuse-qdq", "common-subexpressions", "fold-conv-batchnorm", "fuse-layernorm",
                                      "fuse-gelu", "fuse-attention", "fuse-bias-activation", "nchwc-layout"}));
  EXPECT_TRUE(IsSwitchablePass("nchwc-layout"));
  EXPECT_FALSE(IsSwitchablePass("memory-planning"));
  EXPECT_FALSE(IsSwitchablePass("shape-inference"));
}

// A switched-off pass does not run (its ops stay unfused) and the compiled graph
// still computes the same result as the fused one.
TEST(PassPipeline, DisabledPassIsSkippedAndResultsStay) {
  OC_REQUIRE_OPS("MatMul", "Add", "Gelu");
  auto plain = DenseLayer<true>();
  auto fused = DenseLayer<true>();
  CompileOptions off;
  off.disabled_passes = {"fuse-bias-activation"};
  off.verify_each_pass = true;
  std::vector<std::string> log;
  off.log = [&](const std::string& line) { log.push_back(line); };
  Status st = RunPipeline(*plain, off);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(std::find(log.begin(), log.end(), "pass fuse-bias-activation: switched off"), log.end());
  std::multiset<std::string> ops;
  for (auto& n : plain->nodes()) ops.insert(n->op_type);
  EXPECT_EQ(ops, (std::multiset<std::string>{"MatMul", "Add", "Gelu"})) << plain->Dump();
  ASSERT_TRUE(RunPipeline(*fused, CompileOptions{}).ok());
  EXPECT_EQ(fused->nodes().size(), 1u) << fused->Dump();
  auto input = Pattern(48, -1, 1, 7);
  auto a = RunGraph(plain, input);
  auto b = RunGraph(fused, input);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4f) << i;
}

TEST(PassPipeline, RefusesToSwitchOffRequiredOrUnknownPasses) {
  for (const char* name : {"memory-planning", "no-such-pass"}) {
    auto g = DenseLayer<false>();
    CompileOptions options;
    options.disabled_passes = {name};
    Status st = RunPipeline(*g, options);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << name;
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("nchwc-layout"), std::string::npos) << "lists the switchable passes: " << st.message();
  }
}

}  // namespace
}  // namespace oc

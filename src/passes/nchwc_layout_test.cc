// nchwc-layout: a small network with the ResNet / MobileNetV2 ingredients
// (NCHW stem conv, pools, 1x1, depthwise and 3x3 convs, Clip, residual Add,
// channel Concat, GlobalAveragePool into Flatten) rewritten at both block
// sizes: which nodes become blocked, where reorders go, and that the compiled
// graph computes what the NCHW graph computes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>

#include "base/scoped_env.h"
#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "executor/executable.h"
#include "ops/cpu/nchwc/nchwc.h"
#include "passes/nchwc_layout.h"
#include "passes/pass_test_util.h"
#include "passes/pipeline.h"

namespace oc {
namespace {

using testing::Const;
using testing::Pattern;
using testing::Tensor;

struct Builder {
  std::shared_ptr<Graph> g = std::make_shared<Graph>();
  uint32_t seed = 1;

  // The graph's one input "x" (opset 17).
  Value* Input(std::vector<int64_t> shape) {
    g->opset_imports[""] = 17;
    Value* x = Tensor(*g, "x", std::move(shape));
    g->inputs = {x};
    return x;
  }

  Value* Conv(Value* x, int64_t m, int64_t k, int64_t stride, int64_t pad, int64_t group,
              std::vector<int64_t> out) {
    const int64_t c = x->shape[1] / group;
    Value* w = Const<float>(*g, g->UniqueName("w"), {m, c, k, k}, Pattern(m * c * k * k, -0.3f, 0.3f, seed++));
    Value* b = Const<float>(*g, g->UniqueName("b"), {m}, Pattern(m, -0.2f, 0.2f, seed++));
    Value* y = Tensor(*g, g->UniqueName("conv"), std::move(out));
    Node* n = g->AddNode("Conv", g->UniqueName("conv"), {x, w, b}, {y});
    n->SetInts("kernel_shape", {k, k});
    n->SetInts("strides", {stride, stride});
    n->SetInts("pads", {pad, pad, pad, pad});
    n->SetInt("group", group);
    return y;
  }
  Value* Op(const char* op, std::vector<Value*> in, std::vector<int64_t> out) {
    Value* y = Tensor(*g, g->UniqueName(op), std::move(out));
    g->AddNode(op, g->UniqueName(op), std::move(in), {y});
    return y;
  }
  // Inference BatchNormalization of v with scales in [scale_lo, 1.5] (negative ones too when scale_lo < 0).
  Value* BatchNorm(Value* v, float scale_lo) {
    const int64_t c = v->shape[1];
    Value* scale = Const<float>(*g, g->UniqueName("scale"), {c}, Pattern(c, scale_lo, 1.5f, seed++));
    Value* beta = Const<float>(*g, g->UniqueName("beta"), {c}, Pattern(c, -0.3f, 0.3f, seed++));
    Value* mean = Const<float>(*g, g->UniqueName("mean"), {c}, Pattern(c, -0.2f, 0.2f, seed++));
    Value* var = Const<float>(*g, g->UniqueName("var"), {c}, Pattern(c, 0.1f, 2.0f, seed++));
    Value* y = Op("BatchNormalization", {v, scale, beta, mean, var}, v->shape);
    y->producer->SetFloat("epsilon", 1e-3f);
    return y;
  }
};

std::shared_ptr<Graph> MiniNet() {
  Builder b;
  Graph& g = *b.g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {2, 3, 32, 30});
  g.inputs = {x};
  Value* c1 = b.Op("Relu", {b.Conv(x, 16, 3, 2, 1, 1, {2, 16, 16, 15})}, {2, 16, 16, 15});
  Value* mp = b.Op("MaxPool", {c1}, {2, 16, 8, 8});
  mp->producer->SetInts("kernel_shape", {3, 3});
  mp->producer->SetInts("strides", {2, 2});
  mp->producer->SetInts("pads", {1, 1, 1, 1});
  Value* lo = Const<float>(g, "lo", {}, std::vector<float>{0.f});
  Value* hi = Const<float>(g, "hi", {}, std::vector<float>{6.f});
  Value* c2 = b.Op("Clip", {b.Conv(mp, 24, 1, 1, 0, 1, {2, 24, 8, 8}), lo, hi}, {2, 24, 8, 8});
  Value* dw = b.Conv(c2, 24, 3, 1, 1, 24, {2, 24, 8, 8});
  Value* c4 = b.Conv(dw, 24, 3, 1, 1, 1, {2, 24, 8, 8});
  Value* r2 = b.Op("Relu", {b.Op("Add", {c4, c2}, {2, 24, 8, 8})}, {2, 24, 8, 8});
  Value* cat = b.Op("Concat", {b.Conv(r2, 32, 1, 1, 0, 1, {2, 32, 8, 8}), b.Conv(r2, 32, 1, 1, 0, 1, {2, 32, 8, 8})},
                    {2, 64, 8, 8});
  cat->producer->SetInt("axis", 1);
  Value* ap = b.Op("AveragePool", {cat}, {2, 64, 4, 4});
  ap->producer->SetInts("kernel_shape", {2, 2});
  ap->producer->SetInts("strides", {2, 2});
  Value* gap = b.Op("GlobalAveragePool", {ap}, {2, 64, 1, 1});
  Value* flat = b.Op("Flatten", {gap}, {2, 64});
  g.outputs = {flat, r2};
  return b.g;
}

std::map<std::string, int> CountOps(const Graph& g) {
  std::map<std::string, int> n;
  for (const auto& op : testing::OpSequence(g)) ++n[op];
  return n;
}

std::vector<std::vector<float>> RunAll(std::shared_ptr<Graph> g, const std::vector<float>& input, int threads) {
  auto exe = Executable::Create(g);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  if (!exe.ok()) return {};
  auto ctx = (*exe)->NewContext();
  EXPECT_TRUE(ctx.ok());
  std::vector<std::vector<float>> outs;
  std::vector<void*> ptrs;
  for (size_t i = 0; i < (*exe)->num_outputs(); ++i) outs.emplace_back((*exe)->output(i).NumElements());
  for (auto& o : outs) ptrs.push_back(o.data());
  const void* in[] = {input.data()};
  ThreadPool pool(threads);
  Status st = (*exe)->Run(**ctx, in, ptrs, pool);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return outs;
}

// The rewritten graph g (pipeline already run) gives `want` at 1 and 2 threads.
void ExpectSameOutputs(std::shared_ptr<Graph> g, const std::vector<float>& input,
                       const std::vector<std::vector<float>>& want, int block) {
  for (int threads : {1, 2}) {
    const auto got = RunAll(g, input, threads);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o)
      for (size_t i = 0; i < got[o].size(); ++i)
        ASSERT_NEAR(got[o][i], want[o][i], 1e-4f * (1 + std::fabs(want[o][i])))
            << "block " << block << " threads " << threads << " output " << o << " at " << i;
  }
}

// The graph `build` makes, compiled NCHW (the reference) and, per block size,
// rewritten to NCHWc, checked by `check` (given the rewritten graph and its op
// counts), compiled and run at 1 and 2 threads against the reference.
template <typename Build, typename Check>
void ExpectRewriteKeepsResults(Build build, const std::vector<float>& input, Check check) {
  auto plain = build();
  ASSERT_TRUE(RunPipeline(*plain, CompileOptions{}).ok());
  const auto want = RunAll(plain, input, 1);
  for (int block : {8, 16}) {
    auto g = build();
    ASSERT_TRUE(RewriteToNchwc(*g, block).ok());
    check(*g, CountOps(*g));
    ASSERT_TRUE(RunPipeline(*g, CompileOptions{}).ok());
    ExpectSameOutputs(g, input, want, block);
  }
}

TEST(NchwcLayout, RewritesRegionWithReordersOnlyAtBorders) {
  ScopedEnv off("OPENCANN_NCHWC", "0");  // the pipeline must not rewrite again
  auto plain = MiniNet();
  CompileOptions options;
  options.verify_each_pass = true;
  ASSERT_TRUE(RunPipeline(*plain, options).ok());
  EXPECT_EQ(CountOps(*plain).count("com.opencann::NchwcConv"), 0u);
  const auto input = Pattern(2 * 3 * 32 * 30, -1, 1, 5);
  const auto want = RunAll(plain, input, 1);
  for (int block : {8, 16}) {
    auto g = MiniNet();
    ASSERT_TRUE(RewriteToNchwc(*g, block).ok());
    ASSERT_TRUE(g->Verify().ok()) << g->Verify().ToString();
    auto ops = CountOps(*g);
    // Every conv is blocked (the 3x3 ones Winograd prefers run it inside
    // NchwcConv); the stem conv reads NCHW, so no ReorderToNchwc.
    EXPECT_EQ(ops["Conv"], 0) << g->Dump();
    EXPECT_EQ(ops["com.opencann::NchwcConv"], 6) << g->Dump();
    EXPECT_EQ(ops["com.opencann::NchwcMaxPool"], 1);
    EXPECT_EQ(ops["com.opencann::NchwcAveragePool"], 1);
    EXPECT_EQ(ops["com.opencann::NchwcGlobalAveragePool"], 1);
    EXPECT_EQ(ops["com.opencann::ReorderToNchwc"], 0) << "the stem conv reads NCHW";
    // Flatten's input and the graph output r2.
    EXPECT_EQ(ops["com.opencann::ReorderFromNchwc"], 2) << g->Dump();
    EXPECT_EQ(ops["Concat"], 1);
    ASSERT_TRUE(RunPipeline(*g, options).ok());
    for (int threads : {1, 2}) {
      const auto got = RunAll(g, input, threads);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < got.size(); ++o) {
        ASSERT_EQ(got[o].size(), want[o].size());
        for (size_t i = 0; i < got[o].size(); ++i)
          ASSERT_NEAR(got[o][i], want[o][i], 1e-4f * (1 + std::fabs(want[o][i])))
              << "block " << block << " threads " << threads << " output " << o << " element " << i;
      }
    }
  }
}

TEST(NchwcLayout, PipelineUsesIsaBlockAndHonoursOffSwitch) {
  const int block = nchwc::BlockForIsa(SelectedIsa());
  if (block == 0) GTEST_SKIP() << "no blocked layout on this ISA";
  {
    ScopedEnv on("OPENCANN_NCHWC", "1");
    auto g = MiniNet();
    ASSERT_TRUE(RunPipeline(*g, CompileOptions{}).ok());
    auto ops = CountOps(*g);
    EXPECT_GT(ops["com.opencann::NchwcConv"], 0);
    for (auto& n : g->nodes()) {
      if (n->op_type == "NchwcConv") {
        EXPECT_EQ(n->GetInt("block", 0), block);
      }
    }
  }
  {
    ScopedEnv off("OPENCANN_NCHWC", "0");
    auto g = MiniNet();
    ASSERT_TRUE(RunPipeline(*g, CompileOptions{}).ok());
    EXPECT_EQ(CountOps(*g).count("com.opencann::NchwcConv"), 0u);
  }
}

// A squeeze-and-excitation gate (GlobalAveragePool -> 1x1 convs -> HardSigmoid
// -> Mul by a [N, C, 1, 1] gate) stays inside the region, channel count 24 not
// a whole number of 16-blocks included.
TEST(NchwcLayout, SqueezeExcitationGateStaysBlocked) {
  ScopedEnv off("OPENCANN_NCHWC", "0");
  auto build = [] {
    Builder b;
    Graph& g = *b.g;
    Value* x = b.Input({2, 3, 12, 10});
    Value* c1 = b.Op("Relu", {b.Conv(x, 24, 3, 1, 1, 1, {2, 24, 12, 10})}, {2, 24, 12, 10});
    Value* gap = b.Op("GlobalAveragePool", {c1}, {2, 24, 1, 1});
    Value* s1 = b.Op("Relu", {b.Conv(gap, 8, 1, 1, 0, 1, {2, 8, 1, 1})}, {2, 8, 1, 1});
    Value* gate = b.Op("HardSigmoid", {b.Conv(s1, 24, 1, 1, 0, 1, {2, 24, 1, 1})}, {2, 24, 1, 1});
    Value* y = b.Op("Mul", {c1, gate}, {2, 24, 12, 10});
    g.outputs = {b.Conv(y, 16, 1, 1, 0, 1, {2, 16, 12, 10})};
    return b.g;
  };
  ExpectRewriteKeepsResults(build, Pattern(2 * 3 * 12 * 10, -1, 1, 9), [](const Graph& g, auto ops) {
    EXPECT_EQ(ops["com.opencann::NchwcConv"], 4) << g.Dump();
    EXPECT_EQ(ops["com.opencann::ReorderToNchwc"], 0) << g.Dump();
    EXPECT_EQ(ops["com.opencann::ReorderFromNchwc"], 1) << g.Dump();  // the graph output
  });
}

// A DenseNet layer: Concat -> BatchNormalization -> Relu -> 1x1 conv -> 3x3
// conv -> Concat. The BatchNormalization on a blocked value becomes a
// depthwise 1x1 NchwcConv with the Relu fused (a second one, read also by the
// graph output, keeps its Relu separate): no reorders inside, and the result
// is the NCHW graph's at 1 and 2 threads.
TEST(NchwcLayout, DenseNetBatchNormStaysBlocked) {
  ScopedEnv off("OPENCANN_NCHWC", "0");
  auto build = [] {
    Builder b;
    Graph& g = *b.g;
    Value* x = b.Input({2, 3, 12, 10});
    Value* c0 = b.Op("Relu", {b.Conv(x, 16, 3, 1, 1, 1, {2, 16, 12, 10})}, {2, 16, 12, 10});
    Value* l1 = b.Conv(b.Op("Relu", {b.BatchNorm(c0, 0.5f)}, {2, 16, 12, 10}), 24, 1, 1, 0, 1, {2, 24, 12, 10});
    Value* l2 = b.Conv(l1, 16, 3, 1, 1, 1, {2, 16, 12, 10});
    Value* cat = b.Op("Concat", {c0, l2}, {2, 32, 12, 10});
    cat->producer->SetInt("axis", 1);
    Value* bn2 = b.BatchNorm(cat, 0.5f);
    Value* r2 = b.Op("Relu", {bn2}, {2, 32, 12, 10});
    g.outputs = {b.Conv(r2, 8, 1, 1, 0, 1, {2, 8, 12, 10}), bn2};
    return b.g;
  };
  ExpectRewriteKeepsResults(build, Pattern(2 * 3 * 12 * 10, -1, 1, 9), [](const Graph& g, auto ops) {
    EXPECT_EQ(ops["com.opencann::NchwcConv"], 6) << g.Dump();  // 4 convs + 2 BatchNormalizations
    EXPECT_EQ(ops["BatchNormalization"], 0) << g.Dump();
    // The stem conv's (fuse-bias-activation's job, not run here) and the one
    // after the BN whose output is also a graph output.
    EXPECT_EQ(ops["Relu"], 2) << g.Dump();
    EXPECT_EQ(ops["com.opencann::ReorderToNchwc"], 0) << g.Dump();
    EXPECT_EQ(ops["com.opencann::ReorderFromNchwc"], 2) << g.Dump();  // the two graph outputs
  });
}

// The BatchNormalization rewrite's edges, batch 1: a BN of an NCHW value (the
// graph input) stays BatchNormalization; a BN of a 24-channel blocked value
// (padding lanes at block 16) fuses its Relu; a BN read by a Relu and a conv
// keeps the Relu separate (blocked). Results as the NCHW graph's.
TEST(NchwcLayout, BatchNormEdgesStayCorrect) {
  ScopedEnv off("OPENCANN_NCHWC", "0");
  auto build = [] {
    Builder b;
    Graph& g = *b.g;
    Value* x = b.Input({1, 3, 9, 11});
    Value* a = b.Conv(b.BatchNorm(x, -1.5f), 24, 3, 1, 1, 1, {1, 24, 9, 11});
    Value* r1 = b.Op("Relu", {b.BatchNorm(a, -1.5f)}, {1, 24, 9, 11});
    Value* t = b.BatchNorm(b.Conv(r1, 16, 1, 1, 0, 1, {1, 16, 9, 11}), -1.5f);
    Value* r2 = b.Op("Relu", {t}, {1, 16, 9, 11});
    g.outputs = {b.Conv(t, 16, 1, 1, 0, 1, {1, 16, 9, 11}), b.Conv(r2, 8, 1, 1, 0, 1, {1, 8, 9, 11})};
    return b.g;
  };
  ExpectRewriteKeepsResults(build, Pattern(3 * 9 * 11, -1, 1, 5), [](const Graph& g, auto ops) {
    EXPECT_EQ(ops["com.opencann::NchwcConv"], 6) << g.Dump();  // 4 convs + 2 BatchNormalizations
    EXPECT_EQ(ops["BatchNormalization"], 1) << g.Dump();       // the graph input's
    EXPECT_EQ(ops["Relu"], 1) << g.Dump();                     // beside a conv reading the same BN
    EXPECT_EQ(ops["com.opencann::ReorderToNchwc"], 0) << g.Dump();
  });
}

TEST(NchwcLayout, LeavesLoneConvAndGroupedConvAlone) {
  Builder b;
  Graph& g = *b.g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {1, 8, 6, 6});
  g.inputs = {x};
  Value* y = b.Conv(b.Conv(x, 8, 3, 1, 1, 2, {1, 8, 6, 6}), 8, 3, 1, 1, 4, {1, 8, 6, 6});
  g.outputs = {b.Conv(y, 4, 1, 1, 0, 1, {1, 4, 6, 6})};
  // Two grouped convs (not depthwise) and one plain conv: under the pipeline's minimum.
  ScopedEnv on("OPENCANN_NCHWC", "1");
  Status st = RunPipeline(g, CompileOptions{});
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(CountOps(g).count("com.opencann::NchwcConv"), 0u);
}

}  // namespace
}  // namespace oc

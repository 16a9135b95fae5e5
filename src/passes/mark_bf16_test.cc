// mark-bf16: which nodes a bf16 precision mode marks, and that the fp32
// modes mark none; a whole pipeline run leaves the mark on the fused node.
#include <gtest/gtest.h>

#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/op_registry.h"
#include "passes/pass_test_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using testing::Pattern;
using testing::Const;
using testing::Tensor;

struct Net {
  Graph g;
  Node *conv, *dw, *matmul, *gemm, *add, *int_matmul;
};

// x -> Conv -> depthwise Conv -> Add; f -> MatMul; f -> Gemm; int32 MatMul.
void Build(Net& n) {
  Graph& g = n.g;
  g.opset_imports[""] = 17;
  Value* x = Tensor(g, "x", {1, 4, 8, 8});
  Value* w = Const<float>(g, "w", {8, 4, 3, 3}, Pattern(8 * 4 * 9, -1, 1));
  Value* wd = Const<float>(g, "wd", {8, 1, 3, 3}, Pattern(8 * 9, -1, 1, 2));
  Value* f = Tensor(g, "f", {3, 16});
  Value* wm = Const<float>(g, "wm", {16, 5}, Pattern(80, -1, 1, 3));
  Value* wg = Const<float>(g, "wg", {5, 16}, Pattern(80, -1, 1, 4));
  Value* xi = Tensor(g, "xi", {2, 3}, DataType::kInt32);
  Value* wi = Const<int32_t>(g, "wi", {3, 2}, {1, 2, 3, 4, 5, 6});
  Value* c = g.AddValue("c");
  Value* d = g.AddValue("d");
  Value* y = g.AddValue("y");
  Value* m = g.AddValue("m");
  Value* gm = g.AddValue("gm");
  Value* mi = g.AddValue("mi");
  g.inputs = {x, f, xi};
  n.conv = g.AddNode("Conv", "conv", {x, w}, {c});
  n.conv->SetInts("pads", {1, 1, 1, 1});
  n.dw = g.AddNode("Conv", "dw", {c, wd}, {d});
  n.dw->SetInts("pads", {1, 1, 1, 1});
  n.dw->SetInt("group", 8);
  n.add = g.AddNode("Add", "add", {c, d}, {y});
  n.matmul = g.AddNode("MatMul", "mm", {f, wm}, {m});
  n.gemm = g.AddNode("Gemm", "gemm", {f, wg}, {gm});
  n.gemm->SetInt("transB", 1);
  n.int_matmul = g.AddNode("MatMul", "imm", {xi, wi}, {mi});
  g.outputs = {y, m, gm, mi};
}

TEST(PassMarkBf16, MarksFloatMatrixOpsOnlyInBf16Modes) {
  for (const char* mode : {"allow_fp32_to_bf16", "allow_mix_precision_bf16", "mixed_bfloat16"}) {
    Net n;
    Build(n);
    CompileOptions o;
    o.precision_mode = mode;
    ASSERT_TRUE(RunShapeInference(n.g, o).ok());
    ASSERT_TRUE(RunMarkBf16(n.g, o).ok());
    EXPECT_TRUE(gemm::NodeWantsBf16(*n.conv)) << mode;
    // The depthwise kernel ignores the mark; the pass marks by op type.
    EXPECT_TRUE(gemm::NodeWantsBf16(*n.dw)) << mode;
    EXPECT_TRUE(gemm::NodeWantsBf16(*n.matmul)) << mode;
    EXPECT_TRUE(gemm::NodeWantsBf16(*n.gemm)) << mode;
    EXPECT_FALSE(gemm::NodeWantsBf16(*n.add)) << mode;
    EXPECT_FALSE(gemm::NodeWantsBf16(*n.int_matmul)) << mode;
  }
  for (const char* mode : {"force_fp32", "must_keep_origin_dtype"}) {
    Net n;
    Build(n);
    CompileOptions o;
    o.precision_mode = mode;
    ASSERT_TRUE(RunShapeInference(n.g, o).ok());
    ASSERT_TRUE(RunMarkBf16(n.g, o).ok());
    for (auto& node : n.g.nodes()) EXPECT_FALSE(gemm::NodeWantsBf16(*node)) << mode << " " << node->Describe();
  }
}

TEST(PassMarkBf16, WholePipelineKeepsTheMarkOnFusedNodes) {
  Net n;
  Build(n);
  CompileOptions o;
  o.precision_mode = "allow_fp32_to_bf16";
  ASSERT_TRUE(RunPipeline(n.g, o).ok());
  int marked = 0;
  for (auto& node : n.g.nodes()) {
    const bool matrix = node->op_type.find("Conv") != std::string::npos ||
                        node->op_type.find("MatMul") != std::string::npos ||
                        node->op_type.find("Gemm") != std::string::npos;
    const bool is_float = node->input(0)->dtype == DataType::kFloat32;
    EXPECT_EQ(gemm::NodeWantsBf16(*node), matrix && is_float) << node->Describe();
    marked += gemm::NodeWantsBf16(*node);
  }
  EXPECT_EQ(marked, 4);
}

}  // namespace
}  // namespace oc

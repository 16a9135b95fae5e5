// Which kernel a node gets: the fast paths of Einsum (batched sgemm over
// strided views) and Resize (planes with a ring of interpolated rows) give the
// same results as the general loops they replace, so correctness tests cannot
// tell whether they ran. Both ask for per-run scratch and the general kernels
// do not: that is the observable difference checked here (the results
// themselves are compared with onnxruntime in tests/python/test_einsum.py and
// test_resize.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "passes/pass_test_util.h"

namespace oc {
namespace {

using testing::Const;
using testing::Tensor;

// Scratch bytes of the kernel made for `n` (inferred first), or -1 on error.
int64_t KernelScratch(Node& n) {
  const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, n.opset);
  if (!def || !def->infer(n).ok()) return -1;
  auto k = CpuKernelOf(*def)(KernelInit{n, {}, 2});
  if (!k.ok()) return -1;
  return static_cast<int64_t>((*k)->ScratchBytes());
}

int64_t EinsumScratch(const std::string& eq, std::vector<int64_t> a, std::vector<int64_t> b) {
  Graph g;
  Node* n = g.AddNode("Einsum", "e", {Tensor(g, "a", std::move(a)), Tensor(g, "b", std::move(b))},
                      {g.AddValue("y")});
  n->opset = 12;
  n->SetString("equation", eq);
  return KernelScratch(*n);
}

TEST(FastPaths, EinsumContractionsRunAsGemm) {
  OC_REQUIRE_OP("Einsum");
  EXPECT_GT(EinsumScratch("BGHID,BGHJD->BGHIJ", {1, 4, 2, 49, 32}, {1, 4, 2, 49, 32}), 0);
  EXPECT_GT(EinsumScratch("bqhd,bkhd->bhqk", {2, 33, 3, 16}, {2, 40, 3, 16}), 0);
  EXPECT_GT(EinsumScratch("ij,jk->ki", {37, 50}, {50, 41}), 0);
  EXPECT_GT(EinsumScratch("...ij,...jk->...ik", {3, 1, 24, 20}, {1, 2, 20, 26}), 0);
  EXPECT_GT(EinsumScratch("bii,bij->bj", {2, 64, 64}, {2, 64, 80}), 0);
  // A label summed within one operand, and products too small to pay for a GEMM call.
  EXPECT_EQ(EinsumScratch("ij,jk->k", {5, 6}, {6, 7}), 0);
  EXPECT_EQ(EinsumScratch("ij,ij->i", {40, 16}, {40, 16}), 0);
}

int64_t ResizeScratch(std::vector<int64_t> in, std::vector<float> scales, const std::string& mode) {
  Graph g;
  Value* x = Tensor(g, "x", std::move(in));
  Value* roi = Const<float>(g, "roi", {0}, {});
  const int64_t rank = static_cast<int64_t>(scales.size());
  Value* sc = Const<float>(g, "scales", {rank}, std::move(scales));
  Node* n = g.AddNode("Resize", "r", {x, roi, sc}, {g.AddValue("y")});
  n->opset = 13;
  n->SetString("mode", mode);
  return KernelScratch(*n);
}

TEST(FastPaths, ResizeEnlargingTheLastTwoAxesRunsPerPlane) {
  OC_REQUIRE_OP("Resize");
  EXPECT_GT(ResizeScratch({1, 21, 28, 28}, {1, 1, 8, 8}, "linear"), 0);
  EXPECT_GT(ResizeScratch({1, 64, 20, 20}, {1, 1, 2, 2}, "nearest"), 0);
  EXPECT_GT(ResizeScratch({1, 4, 6, 6}, {1, 2, 2, 2}, "nearest"), 0);  // outer axis single-tap
  EXPECT_GT(ResizeScratch({2, 10, 15}, {1, 2.5f, 1.6f}, "linear"), 0);
  // Shrinking rows, an interpolated outer axis: the general kernel.
  EXPECT_EQ(ResizeScratch({1, 3, 40, 30}, {1, 1, 0.5f, 0.5f}, "linear"), 0);
  EXPECT_EQ(ResizeScratch({4, 6, 6}, {2, 2, 2}, "linear"), 0);
  EXPECT_EQ(ResizeScratch({1, 2, 4, 6, 6}, {1, 1, 2, 2, 2}, "linear"), 0);
}

}  // namespace
}  // namespace oc

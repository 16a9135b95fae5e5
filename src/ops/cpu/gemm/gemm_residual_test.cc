// FusedMatMul / FusedGemm with a residual input Z (added in the GEMM epilogue)
// and activations the micro-kernels cannot fuse (applied after the GEMM by
// gemm_activation.h), against naive double loops written here: folded and
// per-matrix (attention-shaped) MatMuls, 1 and 3 threads, Z of another shape
// with the output's element count, every activation kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/thread_pool.h"
#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/gemm/gemm_activation.h"
#include "ops/cpu/gemm/gemm_op_test_util.h"

namespace oc {
namespace {

using gemm_testing::ExpectClose;
using gemm_testing::OpCase;
using gemm_testing::Rand;

double Act(const std::string& act, double v) {
  if (act.empty()) return v;
  if (act == "Relu") return v > 0 ? v : 0;
  if (act == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (act == "Tanh") return std::tanh(v);
  if (act == "Gelu") return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  if (act == "GeluTanh") return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  ADD_FAILURE() << "no reference for " << act;
  return 0;
}

// Y[t] = act(A[t] x B[t or shared] + bias + Z[t]) for `mats` matrices of m x n.
struct MatMulCase {
  int64_t mats, m, n, k;
  bool batched_b;  // B per matrix (attention-shaped) instead of one shared weight
  bool bias;
  std::string act;
};

void CheckFusedMatMul(const MatMulCase& c, int threads) {
  const std::string what = "mats " + std::to_string(c.mats) + " m " + std::to_string(c.m) + " n " +
                           std::to_string(c.n) + " k " + std::to_string(c.k) + (c.batched_b ? " batched B" : "") +
                           (c.bias ? " bias" : "") + " act '" + c.act + "' threads " + std::to_string(threads);
  const int64_t bmats = c.batched_b ? c.mats : 1;
  auto a = Rand(c.mats * c.m * c.k, 11), b = Rand(bmats * c.k * c.n, 12), bias = Rand(c.n, 13);
  auto z = Rand(c.mats * c.m * c.n, 14);
  std::vector<float> want(c.mats * c.m * c.n);
  for (int64_t t = 0; t < c.mats; ++t)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = 0;
        const float* bt = b.data() + (c.batched_b ? t : 0) * c.k * c.n;
        for (int64_t p = 0; p < c.k; ++p) acc += double(a[(t * c.m + i) * c.k + p]) * bt[p * c.n + j];
        if (c.bias) acc += bias[j];
        const int64_t o = (t * c.m + i) * c.n + j;
        want[o] = static_cast<float>(Act(c.act, acc + z[o]));
      }
  ThreadPool pool(threads);
  for (bool const_b : {true, false}) {
    if (c.batched_b && const_b) continue;
    OpCase op("FusedMatMul", 1, kOpenCannDomain);
    op.In({c.mats, c.m, c.k}, a, false);
    if (c.batched_b) op.In({c.mats, c.k, c.n}, b, const_b);
    else op.In({c.k, c.n}, b, const_b);
    if (c.bias) op.In({c.n}, bias, true);
    else op.Missing();
    // Z flattened differently from Y: only the element count and order matter.
    op.In({c.mats * c.m, c.n}, z, false);
    if (!c.act.empty()) op.node().SetString("activation", c.act);
    auto y = op.Run(&pool);
    ASSERT_TRUE(y.ok()) << what << ": " << y.status().ToString();
    EXPECT_EQ(op.OutShape(), (std::vector<int64_t>{c.mats, c.m, c.n})) << what;
    ExpectClose(*y, want, what + (const_b ? " const B" : " runtime B"), 1e-3f);
  }
}

TEST(GemmResidual, FusedMatMulAddsZInTheEpilogue) {
  for (int threads : {1, 3}) {
    CheckFusedMatMul({1, 33, 70, 48, false, true, ""}, threads);        // BERT out-projection + residual
    CheckFusedMatMul({2, 15, 33, 17, false, false, ""}, threads);       // no bias, tile edges
    CheckFusedMatMul({1, 128, 96, 64, false, true, "Relu"}, threads);   // act after the residual, in registers
    CheckFusedMatMul({1, 29, 45, 20, false, true, "GeluTanh"}, threads);  // deferred act after the residual
    CheckFusedMatMul({7, 17, 19, 8, true, false, "Sigmoid"}, threads);  // per-matrix products, split by thread
    CheckFusedMatMul({1, 30, 1100, 50, false, true, "Gelu"}, threads);  // N past one NC block: A packed once
  }
}

TEST(GemmResidual, VocabularyWideBRunsInColumnChunks) {
  // N >= 8192 with a constant B: the language-model-head path (A packed once,
  // 256-column chunks over threads); a partial last chunk and a folded batch.
  for (int threads : {1, 2, 3}) {
    CheckFusedMatMul({2, 9, 8195, 40, false, true, "Gelu"}, threads);
    CheckFusedMatMul({1, 15, 8224, 33, false, false, ""}, threads);
  }
}

TEST(GemmResidual, ActivationPerChunkForOutputsBeyondL2) {
  // C over 2 MiB with a deferred activation: column chunks, GELU on each.
  for (int threads : {1, 2, 3}) {
    CheckFusedMatMul({2, 150, 2000, 24, false, true, "Gelu"}, threads);
    CheckFusedMatMul({1, 301, 1999, 17, false, false, "GeluTanh"}, threads);
  }
  // Gemm: a per-row C (bias along M) and a per-column one.
  const int64_t m = 290, n = 1990, k = 19;
  auto a = Rand(m * k, 41), b = Rand(k * n, 42), crow = Rand(m, 43), ccol = Rand(n, 44);
  for (bool per_row : {true, false})
    for (int threads : {1, 2}) {
      std::vector<float> want(m * n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < k; ++p) acc += double(a[i * k + p]) * b[p * n + j];
          acc += per_row ? crow[i] : ccol[j];
          want[i * n + j] = static_cast<float>(Act("Sigmoid", acc));
        }
      ThreadPool pool(threads);
      OpCase op("FusedGemm", 1, kOpenCannDomain);
      op.In({m, k}, a, false).In({k, n}, b, true);
      if (per_row) op.In({m, 1}, crow, true);
      else op.In({n}, ccol, true);
      op.node().SetString("activation", "Sigmoid");
      auto y = op.Run(&pool);
      const std::string what = std::string(per_row ? "row" : "column") + " C, threads " + std::to_string(threads);
      ASSERT_TRUE(y.ok()) << what << ": " << y.status().ToString();
      ExpectClose(*y, want, what, 1e-3f);
    }
}

TEST(GemmResidual, DeferredActivationsMatchTheReference) {
  for (const char* act : {"Gelu", "GeluTanh", "Sigmoid", "Tanh", "Relu"})
    for (int threads : {1, 2}) {
      CheckFusedMatMul({1, 70, 130, 40, false, true, act}, threads);
      CheckFusedMatMul({4, 9, 31, 16, true, false, act}, threads);
    }
}

TEST(GemmResidual, FusedGemmTakesZAfterAbsentC) {
  const int64_t m = 37, n = 45, k = 23;
  auto a = Rand(m * k, 21), bt = Rand(n * k, 22), c = Rand(n, 23), z = Rand(m * n, 24);
  for (bool with_c : {true, false})
    for (const char* act : {"", "Gelu"})
      for (int threads : {1, 2}) {
        std::vector<float> want(m * n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < k; ++p) acc += double(a[i * k + p]) * bt[j * k + p];
            acc = 0.5 * acc + (with_c ? 2.0 * c[j] : 0.0) + z[i * n + j];
            want[i * n + j] = static_cast<float>(Act(act, acc));
          }
        ThreadPool pool(threads);
        OpCase op("FusedGemm", 1, kOpenCannDomain);
        op.In({m, k}, a, false).In({n, k}, bt, true);
        if (with_c) op.In({n}, c, true);
        else op.Missing();
        op.In({1, m, n}, z, false);  // GPT-2's residual stream is 3-D around a 2-D Gemm
        op.node().SetInt("transB", 1);
        op.node().SetFloat("alpha", 0.5f);
        op.node().SetFloat("beta", 2.f);
        if (*act) op.node().SetString("activation", act);
        auto y = op.Run(&pool);
        const std::string what = std::string("C ") + (with_c ? "yes" : "no") + " act '" + act + "' threads " +
                                 std::to_string(threads);
        ASSERT_TRUE(y.ok()) << what << ": " << y.status().ToString();
        ExpectClose(*y, want, what, 1e-3f);
      }
}

TEST(GemmResidual, ZWithAnotherElementCountIsRejected) {
  OpCase mm("FusedMatMul", 1, kOpenCannDomain);
  mm.In({4, 8}, Rand(32, 1), false).In({8, 6}, Rand(48, 2), true).Missing().In({4, 5}, Rand(20, 3), false);
  Status s = mm.Infer();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("residual Z"), std::string::npos) << s.message();
  OpCase gm("FusedGemm", 1, kOpenCannDomain);
  gm.In({4, 8}, Rand(32, 1), false).In({8, 6}, Rand(48, 2), true).Missing().In({25}, Rand(25, 3), false);
  s = gm.Infer();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("residual Z"), std::string::npos) << s.message();
}

TEST(GemmResidual, DeferActivationKeepsFusableOnes) {
  gemm::SgemmArgs g;
  g.epilogue.act.kind = ActivationKind::kRelu;
  EXPECT_EQ(gemm::DeferActivation(g).kind, ActivationKind::kNone);
  EXPECT_EQ(g.epilogue.act.kind, ActivationKind::kRelu);
  g.epilogue.act.kind = ActivationKind::kGelu;
  EXPECT_EQ(gemm::DeferActivation(g).kind, ActivationKind::kGelu);
  EXPECT_EQ(g.epilogue.act.kind, ActivationKind::kNone);
  // Rows with a leading dim wider than the row: the gap is left alone.
  std::vector<float> c = {-1.f, 2.f, 99.f, -3.f, 4.f, 99.f};
  Activation relu;
  relu.kind = ActivationKind::kRelu;
  gemm::ApplyDeferredActivation(relu, c.data(), 3, 2, 2, nullptr);
  EXPECT_EQ(c, (std::vector<float>{0.f, 2.f, 99.f, 0.f, 4.f, 99.f}));
  // Column and row splits over threads, widths not a multiple of 16, ldc > n.
  for (auto [m, n] : {std::pair<int64_t, int64_t>{3, 1000}, {1000, 3}, {70, 70}, {5, 64}, {2, 4099}})
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      const int64_t ldc = n + 5;
      std::vector<float> x = Rand(m * ldc, 31), want = x;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) want[i * ldc + j] = std::max(want[i * ldc + j], 0.f);
      gemm::ApplyDeferredActivation(relu, x.data(), ldc, m, n, &pool);
      EXPECT_EQ(x, want) << m << "x" << n << " threads " << threads;
    }
}

}  // namespace
}  // namespace oc

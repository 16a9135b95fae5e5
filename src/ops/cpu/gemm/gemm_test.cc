// sgemm against a naive triple loop, for every micro-kernel this CPU can run,
// at and around tile edges, with transposes, alpha/beta, epilogues, threads and
// pre-packed operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// C = alpha*op(A)*op(B) + beta*C, in double.
void NaiveGemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool ta,
               const float* b, int64_t ldb, bool tb, float* c, int64_t ldc, float alpha,
               float beta) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a[p * lda + i] : a[i * lda + p];
        double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        s += av * bv;
      }
      double prev = beta == 0.f ? 0.0 : beta * static_cast<double>(c[i * ldc + j]);
      c[i * ldc + j] = static_cast<float>(alpha * s + prev);
    }
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, int64_t k,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  const float tol = 1e-5f * static_cast<float>(k + 4);
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      if (++bad <= 3) ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

std::vector<const GemmUkernel*> RunnableUkernels() {
  std::vector<const GemmUkernel*> out;
  for (const GemmUkernel& uk : AllUkernels())
    if (IsaSupported(uk.isa)) out.push_back(&uk);
  return out;
}

struct Case {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
};

void RunCase(const GemmUkernel& uk, const Case& cs, ThreadPool* pool, bool prepack_a,
             bool prepack_b) {
  const int64_t lda = (cs.ta ? cs.m : cs.k) + 3, ldb = (cs.tb ? cs.k : cs.n) + 1, ldc = cs.n + 2;
  auto a = Random((cs.ta ? cs.k : cs.m) * lda, 1);
  auto b = Random((cs.tb ? cs.n : cs.k) * ldb, 2);
  auto c = Random(cs.m * ldc, 3);
  auto want = c;
  NaiveGemm(cs.m, cs.n, cs.k, a.data(), lda, cs.ta, b.data(), ldb, cs.tb, want.data(), ldc,
            cs.alpha, cs.beta);
  SgemmArgs g;
  g.m = cs.m, g.n = cs.n, g.k = cs.k;
  g.a = a.data(), g.lda = lda, g.trans_a = cs.ta;
  g.b = b.data(), g.ldb = ldb, g.trans_b = cs.tb;
  g.c = c.data(), g.ldc = ldc, g.alpha = cs.alpha, g.beta = cs.beta;
  PackedOperand pa, pb;
  if (prepack_a) {
    pa = PackedOperand::Make(uk, PackedSide::kA, a.data(), lda, cs.ta, cs.m, cs.k, {});
    g.packed_a = pa.data();
    g.a = nullptr;
  }
  if (prepack_b) {
    pb = PackedOperand::Make(uk, PackedSide::kB, b.data(), ldb, cs.tb, cs.n, cs.k, {});
    g.packed_b = pb.data();
    g.b = nullptr;
  }
  Sgemm(uk, g, pool);
  ExpectNear(c, want, cs.k,
             std::string(uk.name) + " m=" + std::to_string(cs.m) + " n=" + std::to_string(cs.n) +
                 " k=" + std::to_string(cs.k) + " ta=" + std::to_string(cs.ta) +
                 " tb=" + std::to_string(cs.tb) + " pa=" + std::to_string(prepack_a) +
                 " pb=" + std::to_string(prepack_b));
}

TEST(GemmUkernel, EveryIsaAtTileEdges) {
  auto uks = RunnableUkernels();
  ASSERT_FALSE(uks.empty());
  for (const GemmUkernel* uk : uks) {
    std::set<int64_t> ms = {1, uk->mr - 1, uk->mr, uk->mr + 1, 2 * uk->mr + 3};
    std::set<int64_t> ns = {1, uk->nr - 1, uk->nr, uk->nr + 1, 2 * uk->nr + 3};
    std::set<int64_t> ks = {1, 2, 7, 63, 64, 65};
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (int64_t k : ks) {
          if (m < 1 || n < 1) continue;
          RunCase(*uk, {m, n, k, false, false, 1.f, 0.f}, nullptr, false, false);
        }
  }
}

TEST(GemmUkernel, DirectCallMatchesContract) {
  // Calls each micro-kernel directly on packed panels, below/at its tile, with beta.
  for (const GemmUkernel* uk : RunnableUkernels()) {
    const int64_t kc = 37;
    for (int64_t m = 1; m <= uk->mr; ++m)
      for (int64_t n : {int64_t{1}, int64_t{uk->nr - 1}, int64_t{uk->nr}}) {
        auto a = Random(kc * uk->mr, 4), b = Random(kc * uk->nr, 5);
        const int64_t ldc = uk->nr + 5;
        auto c = Random(uk->mr * ldc, 6), want = c;
        for (int64_t i = 0; i < uk->mr; ++i)
          for (int64_t j = 0; j < ldc; ++j) {
            if (i >= m || j >= n) continue;
            double s = 0;
            for (int64_t p = 0; p < kc; ++p) s += double(a[p * uk->mr + i]) * b[p * uk->nr + j];
            want[i * ldc + j] = static_cast<float>(0.5 * s + 2.0 * c[i * ldc + j]);
          }
        uk->fn(kc, a.data(), b.data(), c.data(), ldc, m, n, 0.5f, 2.f);
        ExpectNear(c, want, kc, std::string(uk->name) + " direct m=" + std::to_string(m) +
                                    " n=" + std::to_string(n));
      }
  }
}

TEST(GemmUkernel, IsaPackersMatchReferenceLayout) {
  for (const GemmUkernel* uk : RunnableUkernels()) {
    if (!uk->pack_a) continue;
    for (int64_t rows = 1; rows <= uk->mr; ++rows)
      for (int64_t k : {1, 15, 16, 17, 40}) {
        const int64_t lda = k + 3;
        auto a = Random(rows * lda, 16);
        std::vector<float> got(uk->mr * k, -7.f), want(uk->mr * k, 0.f);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t p = 0; p < k; ++p) want[p * uk->mr + i] = a[i * lda + p];
        uk->pack_a(a.data(), lda, rows, k, got.data());
        EXPECT_EQ(got, want) << uk->name << " rows=" << rows << " k=" << k;
      }
  }
}

TEST(GemmDriver, TransposesAlphaBetaLargeSizes) {
  ThreadPool pool(3);
  for (const GemmUkernel* uk : RunnableUkernels()) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        RunCase(*uk, {65, 63, 64, ta, tb, 1.5f, -0.5f}, nullptr, false, false);
        RunCase(*uk, {257, 131, 300, ta, tb, 1.f, 1.f}, &pool, false, false);
      }
    // Bigger than one MC/NC/KC block in every dimension, threaded; and on one
    // thread past 2 * MC rows (up to that the rows run as one block).
    RunCase(*uk, {uk->mc * 2 + 5, uk->nc + 33, uk->kc * 2 + 7, false, false, 1.f, 0.f}, &pool,
            false, false);
    RunCase(*uk, {uk->mc * 2 + 5, uk->nr * 2 + 3, uk->kc + 7, false, false, 1.f, 0.5f}, nullptr,
            false, false);
  }
}

TEST(GemmDriver, BetaZeroIgnoresNaNInC) {
  const GemmUkernel& uk = DefaultUkernel();
  const int64_t m = 17, n = 40, k = 9;
  auto a = Random(m * k, 7), b = Random(k * n, 8);
  std::vector<float> c(m * n, std::nanf("")), want(m * n, 0.f);
  NaiveGemm(m, n, k, a.data(), k, false, b.data(), n, false, want.data(), n, 1.f, 0.f);
  SgemmArgs g;
  g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n;
  g.c = c.data(), g.ldc = n;
  Sgemm(uk, g, nullptr);
  ExpectNear(c, want, k, "beta=0 with NaN C");
}

TEST(GemmDriver, KZeroScalesC) {
  const GemmUkernel& uk = DefaultUkernel();
  std::vector<float> c = {1, 2, 3, 4};
  SgemmArgs g;
  g.m = 2, g.n = 2, g.k = 0, g.c = c.data(), g.ldc = 2, g.beta = 0.5f;
  Sgemm(uk, g, nullptr);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1.f, 1.5f, 2.f}));
}

TEST(GemmDriver, PrepackedOperandsEveryIsa) {
  ThreadPool pool(2);
  for (const GemmUkernel* uk : RunnableUkernels())
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        RunCase(*uk, {uk->mr * 3 + 1, uk->nr * 2 + 5, uk->kc + 9, ta, tb, 1.f, 0.f}, &pool, true, false);
        RunCase(*uk, {uk->mr * 3 + 1, uk->nr * 2 + 5, uk->kc + 9, ta, tb, 1.f, 0.f}, &pool, false, true);
        RunCase(*uk, {5, 7, 3, ta, tb, 2.f, 1.f}, nullptr, true, true);
      }
}

TEST(GemmDriver, PrepackRoundTripAndMismatchRepacks) {
  const GemmUkernel& uk = DefaultUkernel();
  const int64_t n = 45, k = 70;
  auto b = Random(k * n, 9);
  auto first = PackedOperand::Make(uk, PackedSide::kB, b.data(), n, false, n, k, {});
  auto blob = first.Export();
  // Accepted back without repacking: the data points into the blob.
  auto again = PackedOperand::Make(uk, PackedSide::kB, nullptr, n, false, n, k, blob);
  ASSERT_FALSE(again.empty());
  EXPECT_TRUE(again.borrowed());
  EXPECT_EQ(again.Export(), blob);
  // Wrong shape, truncated, corrupted, or for the other side: repacked from source.
  auto truncated = std::vector<uint8_t>(blob.begin(), blob.end() - 4);
  auto corrupt = blob;
  corrupt[0] ^= 0xFF;
  for (const auto& bad : {truncated, corrupt}) {
    auto p = PackedOperand::Make(uk, PackedSide::kB, b.data(), n, false, n, k, bad);
    ASSERT_FALSE(p.empty());
    EXPECT_FALSE(p.borrowed());
    EXPECT_EQ(p.Export(), blob);
  }
  EXPECT_EQ(ParsePacked(blob, uk, PackedSide::kB, n + 1, k), nullptr);
  EXPECT_EQ(ParsePacked(blob, uk, PackedSide::kA, n, k), nullptr);
  // Packed for another micro-kernel geometry: rejected.
  for (const GemmUkernel& other : AllUkernels())
    if (&other != &uk) EXPECT_EQ(ParsePacked(blob, other, PackedSide::kB, n, k), nullptr);
  // Without a source and with a bad blob there is nothing to use.
  EXPECT_TRUE(PackedOperand::Make(uk, PackedSide::kB, nullptr, n, false, n, k, truncated).empty());
}

TEST(GemmEpilogue, BiasResidualActivationEveryIsa) {
  ThreadPool pool(2);
  for (const GemmUkernel* uk : RunnableUkernels())
    for (auto bias_kind : {Epilogue::Bias::kPerRow, Epilogue::Bias::kPerCol})
      for (bool residual_is_c : {false, true}) {
        const int64_t m = uk->mr * 2 + 3, n = uk->nr + 7, k = uk->kc + 5;
        auto a = Random(m * k, 10), b = Random(k * n, 11);
        auto bias = Random(bias_kind == Epilogue::Bias::kPerRow ? m : n, 12);
        auto res = Random(m * n, 13);
        std::vector<float> c(m * n, 0.f);
        NaiveGemm(m, n, k, a.data(), k, false, b.data(), n, false, c.data(), n, 1.f, 0.f);
        std::vector<float> want(m * n);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            float v = c[i * n + j] + (bias_kind == Epilogue::Bias::kPerRow ? bias[i] : bias[j]) +
                      res[i * n + j];
            want[i * n + j] = std::max(v, 0.f);
          }
        std::vector<float> out = residual_is_c ? res : std::vector<float>(m * n, 7.f);
        SgemmArgs g;
        g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n;
        g.c = out.data(), g.ldc = n;
        g.epilogue.bias_kind = bias_kind;
        g.epilogue.bias = bias.data();
        g.epilogue.residual = residual_is_c ? out.data() : res.data();
        g.epilogue.ldr = n;
        g.epilogue.act.kind = ActivationKind::kRelu;
        Sgemm(*uk, g, &pool);
        ExpectNear(out, want, k, std::string(uk->name) + " epilogue");
      }
}

TEST(GemmDriver, PlanReusedAcrossShapesAndThreads) {
  // One plan sized for the largest call serves smaller ones, with fewer
  // threads than the pool has.
  ThreadPool pool(4);
  const GemmUkernel& uk = DefaultUkernel();
  SgemmPlan plan(uk, 200, 300, 400, 2);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{200, 300, 400}, {1, 1, 1}, {33, 17, 5}, {5, 300, 400}}) {
    auto a = Random(m * k, 14), b = Random(k * n, 15);
    std::vector<float> c(m * n), want(m * n);
    NaiveGemm(m, n, k, a.data(), k, false, b.data(), n, false, want.data(), n, 1.f, 0.f);
    SgemmArgs g;
    g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n;
    g.c = c.data(), g.ldc = n;
    plan.Run(g, &pool);
    ExpectNear(c, want, k, "plan reuse");
  }
}

// A few rows with pre-packed B on a plan sized for many rows: all K runs as
// one block only where that A panel fits the plan's A buffer (K = 400), and in
// KC blocks where it does not (K = 4000 > the buffer's MC x KC floats / MR).
TEST(GemmDriver, FewRowsOnALargePlanWithPrepackedB) {
  for (const GemmUkernel* uk : RunnableUkernels())
    for (const int64_t k : {int64_t{400}, int64_t{4000}}) {
      const int64_t m = 5, n = 70;
      SgemmPlan plan(*uk, 200, n, k, 1);
      auto a = Random(m * k, 31), b = Random(k * n, 32);
      PackedOperand pb = PackedOperand::Make(*uk, PackedSide::kB, b.data(), n, false, n, k, {});
      std::vector<float> c(m * n), want(m * n);
      NaiveGemm(m, n, k, a.data(), k, false, b.data(), n, false, want.data(), n, 1.f, 0.f);
      SgemmArgs g;
      g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.packed_b = pb.data();
      g.c = c.data(), g.ldc = n;
      plan.Run(g, nullptr);
      ExpectNear(c, want, k, std::string(uk->name) + " few rows, prepacked B, K " + std::to_string(k));
    }
}

TEST(GemmDriver, ConcurrentRunsOnOnePlan) {
  // A model's kernels are shared by concurrent executions; their plan's
  // packing buffers must not be used by two runs at once.
  const GemmUkernel& uk = DefaultUkernel();
  const int64_t m = 70, n = 90, k = 300;
  SgemmPlan plan(uk, m, n, k, 1);
  auto a = Random(m * k, 17), b1 = Random(k * n, 18), b2 = Random(k * n, 19);
  std::vector<float> want1(m * n), want2(m * n);
  NaiveGemm(m, n, k, a.data(), k, false, b1.data(), n, false, want1.data(), n, 1.f, 0.f);
  NaiveGemm(m, n, k, a.data(), k, false, b2.data(), n, false, want2.data(), n, 1.f, 0.f);
  std::vector<float> c1(m * n), c2(m * n);
  auto worker = [&](const std::vector<float>& b, std::vector<float>& c) {
    ThreadPool pool(1);
    for (int rep = 0; rep < 20; ++rep) {
      SgemmArgs g;
      g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n;
      g.c = c.data(), g.ldc = n;
      plan.Run(g, &pool);
    }
  };
  std::thread t1(worker, std::cref(b1), std::ref(c1)), t2(worker, std::cref(b2), std::ref(c2));
  t1.join();
  t2.join();
  ExpectNear(c1, want1, k, "concurrent run 1");
  ExpectNear(c2, want2, k, "concurrent run 2");
}

TEST(GemmDriver, ConcurrentRunsWithOwnScratch) {
  // The kernels' path: one const plan, each run with its own scratch, no lock.
  const GemmUkernel& uk = DefaultUkernel();
  const int64_t m = 70, n = 90, k = 300;
  const SgemmPlan plan(uk, m, n, k, 2);
  auto a = Random(m * k, 20), b1 = Random(k * n, 21), b2 = Random(k * n, 22);
  std::vector<float> want1(m * n), want2(m * n);
  NaiveGemm(m, n, k, a.data(), k, false, b1.data(), n, false, want1.data(), n, 1.f, 0.f);
  NaiveGemm(m, n, k, a.data(), k, false, b2.data(), n, false, want2.data(), n, 1.f, 0.f);
  std::vector<float> c1(m * n), c2(m * n);
  ASSERT_EQ(plan.ScratchBytes() % 64, 0u);
  auto worker = [&](const std::vector<float>& b, std::vector<float>& c) {
    ThreadPool pool(2);
    std::vector<float> scratch(plan.ScratchBytes() / sizeof(float) + 16);
    float* s = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64 / sizeof(float);
    for (int rep = 0; rep < 20; ++rep) {
      SgemmArgs g;
      g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n;
      g.c = c.data(), g.ldc = n;
      plan.Run(g, &pool, s);
    }
  };
  std::thread t1(worker, std::cref(b1), std::ref(c1)), t2(worker, std::cref(b2), std::ref(c2));
  t1.join();
  t2.join();
  ExpectNear(c1, want1, k, "scratch run 1");
  ExpectNear(c2, want2, k, "scratch run 2");
}

TEST(GemmEpilogue, FusedClampActivationsMatchReference) {
  // Micro-kernels with a fused epilogue (FusedUkernelFor) against the
  // reference formula, for every fusable activation, bias kind, residual and
  // beta, at tile edges; a NaN in A must reach C through every activation.
  ThreadPool pool(2);
  struct Act { ActivationKind kind; float alpha, beta; };
  const Act acts[] = {{ActivationKind::kNone, 0, 0}, {ActivationKind::kRelu, 0, 0},
                      {ActivationKind::kLeakyRelu, 0.1f, 0}, {ActivationKind::kClip, -0.5f, 0.7f}};
  for (const GemmUkernel* uk : RunnableUkernels()) {
    for (const Act& act : acts)
      for (auto bias_kind : {Epilogue::Bias::kNone, Epilogue::Bias::kPerRow, Epilogue::Bias::kPerCol})
        for (bool residual : {false, true})
          for (float beta : {0.f, 0.5f}) {
            const int64_t m = uk->mr + 5, n = uk->nr + 3, k = 37;
            auto a = Random(m * k, 30), b = Random(k * n, 31);
            a[2 * k + 1] = std::nanf("");  // row 2 of C is NaN
            auto bias = Random(bias_kind == Epilogue::Bias::kPerRow ? m : n, 32);
            auto res = Random(m * n, 33);
            auto c0 = Random(m * n, 34);
            std::vector<float> want = c0;
            NaiveGemm(m, n, k, a.data(), k, false, b.data(), n, false, want.data(), n, 1.f, beta);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                float v = want[i * n + j];
                if (bias_kind == Epilogue::Bias::kPerRow) v += bias[i];
                if (bias_kind == Epilogue::Bias::kPerCol) v += bias[j];
                if (residual) v += res[i * n + j];
                if (act.kind == ActivationKind::kRelu) v = v < 0.f ? 0.f : v;
                if (act.kind == ActivationKind::kLeakyRelu) v = v < 0.f ? v * act.alpha : v;
                if (act.kind == ActivationKind::kClip) v = std::min(std::max(v, act.alpha), act.beta);
                want[i * n + j] = v;
              }
            std::vector<float> out = c0;
            SgemmArgs g;
            g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n;
            g.c = out.data(), g.ldc = n, g.beta = beta;
            g.epilogue.bias_kind = bias_kind;
            g.epilogue.bias = bias_kind == Epilogue::Bias::kNone ? nullptr : bias.data();
            g.epilogue.residual = residual ? res.data() : nullptr;
            g.epilogue.ldr = n;
            g.epilogue.act = {act.kind, act.alpha, act.beta};
            Sgemm(*uk, g, &pool);
            const std::string what = std::string(uk->name) + " act=" + ActivationName(act.kind) +
                                     " bias=" + std::to_string(static_cast<int>(bias_kind)) +
                                     " residual=" + std::to_string(residual) + " beta=" + std::to_string(beta);
            for (int64_t j = 0; j < n; ++j) {
              EXPECT_TRUE(std::isnan(out[2 * n + j])) << what << " column " << j;
              out[2 * n + j] = want[2 * n + j] = 0.f;
            }
            ExpectNear(out, want, k, what);
          }
  }
}

TEST(GemmDriver, RowSplitThreadsPackImplicitBOnce) {
  // B given only through a pack_b hook (as conv's im2col): with the rows split
  // between threads, each column of B is packed exactly once per call, over
  // the full K, and every ISA's result matches the reference.
  struct Source {
    const float* b;
    int64_t ldb;
    std::atomic<int64_t> packed_cols{0};
    std::atomic<int64_t> calls{0};
  };
  ThreadPool pool(2);
  for (const GemmUkernel* uk : RunnableUkernels()) {
    const int64_t m = uk->mr * 9 + 5, n = 49, k = uk->kc + 31;  // > 1 MFLOP: two threads
    auto a = Random(m * k, 60), b = Random(k * n, 61);
    std::vector<float> want(m * n), c(m * n);
    NaiveGemm(m, n, k, a.data(), k, false, b.data(), n, false, want.data(), n, 1.f, 0.f);
    Source src{b.data(), n};
    SgemmArgs g;
    g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k;
    g.pack_b = [](const void* ctx, const GemmUkernel& u, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float* dst) {
      auto* s = static_cast<Source*>(const_cast<void*>(ctx));
      s->packed_cols += nc;
      ++s->calls;
      PackB(u, s->b + k0 * s->ldb + n0, s->ldb, false, nc, kc, dst);
    };
    g.pack_b_ctx = &src;
    g.c = c.data(), g.ldc = n;
    SgemmPlan plan(*uk, m, n, k, 2);
    plan.Run(g, &pool);
    ExpectNear(c, want, k, std::string(uk->name) + " implicit B, rows split");
    // Never a column packed twice for one K block (two threads packing the
    // same B would give 2x); with the rows split (14x32: 10 row blocks vs 2
    // column panels) the shared full-K packing packs each column once. K
    // blocks are KC deep, or KC / 2 where the rows fit in two row blocks.
    const bool half = int64_t{uk->kc} * uk->nr * 4 > (int64_t{32} << 10);
    const int64_t kstep = half ? std::max(1, uk->kc / 2) : uk->kc, kblocks = (k + kstep - 1) / kstep;
    EXPECT_LE(src.packed_cols.load(), n * kblocks) << uk->name << " (" << src.calls.load() << " calls)";
    if (uk->mr == 14 && uk->nr == 32) EXPECT_EQ(src.packed_cols.load(), n) << uk->name;
  }
}

TEST(GemmUkernel, DirectBVariantMatchesContract) {
  // The in-place-B micro-kernels called directly: B rows ldb apart, only n
  // columns valid (the last row ends the allocation), beta, fused epilogue.
  for (const GemmUkernel* uk : RunnableUkernels()) {
    const GemmUkernelLdbFn fn = DirectBUkernelFor(*uk);
    if (!fn) continue;
    for (int64_t kc : {1, 16, 37})
      for (int64_t m = 1; m <= uk->mr; m += (m < 3 ? 1 : 5))
        for (int64_t n : {1, 15, 16, 17, 31, 32}) {
          const int64_t ldb = n + 9, ldc = uk->nr + 3;
          auto a = Random(kc * uk->mr, 70);
          auto b = Random((kc - 1) * ldb + n, 71);
          auto bias = Random(uk->mr, 72);
          auto c = Random(uk->mr * ldc, 73), want = c;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double s = 0;
              for (int64_t p = 0; p < kc; ++p) s += double(a[p * uk->mr + i]) * b[p * ldb + j];
              want[i * ldc + j] = std::max(0.f, static_cast<float>(0.5 * s + 2.0 * c[i * ldc + j] + bias[i]));
            }
          TileEpilogue ep;
          ep.row_bias = bias.data();
          ep.act = ActivationKind::kRelu;
          fn(kc, a.data(), b.data(), ldb, c.data(), ldc, m, n, 0.5f, 2.f, ep);
          ExpectNear(c, want, kc, std::string(uk->name) + " in-place B m=" + std::to_string(m) +
                                      " n=" + std::to_string(n) + " kc=" + std::to_string(kc));
        }
  }
}

TEST(GemmDriver, FewRowsShortKEveryEpilogue) {
  // Few rows and K <= 64 (the shapes where the driver reads B in place):
  // tails in n, beta 0 with NaN C and beta != 0, fused and unfused epilogues.
  ThreadPool pool(2);
  const Activation acts[] = {{ActivationKind::kNone, 0, 0}, {ActivationKind::kRelu, 0, 0},
                             {ActivationKind::kSigmoid, 0, 0}};
  for (const GemmUkernel* uk : RunnableUkernels())
    for (int64_t m : {1, 7, 16, 32})
      for (int64_t n : {1, 17, 33, 300})
        for (int64_t k : {1, 16, 64})
          for (float beta : {0.f, 0.7f})
            for (const Activation& act : acts) {
              const int64_t ldb = n + 5, ldc = n + 2;
              auto a = Random(m * k, 80), b = Random(k * ldb, 81), bias = Random(m, 82);
              auto res = Random(m * ldc, 83);
              std::vector<float> c = Random(m * ldc, 84);
              if (beta == 0.f) std::fill(c.begin(), c.end(), std::nanf(""));
              std::vector<float> want = c;
              if (beta == 0.f) std::fill(want.begin(), want.end(), 0.f);
              NaiveGemm(m, n, k, a.data(), k, false, b.data(), ldb, false, want.data(), ldc, 1.f, beta);
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  float v = want[i * ldc + j] + bias[i] + res[i * ldc + j];
                  ApplyActivation(act, &v, 1);
                  want[i * ldc + j] = v;
                }
              SgemmArgs g;
              g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = ldb;
              g.c = c.data(), g.ldc = ldc, g.beta = beta;
              g.epilogue.bias_kind = Epilogue::Bias::kPerRow;
              g.epilogue.bias = bias.data();
              g.epilogue.residual = res.data();
              g.epilogue.ldr = ldc;
              g.epilogue.act = act;
              Sgemm(*uk, g, &pool);
              std::vector<float> got_part, want_part;
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) got_part.push_back(c[i * ldc + j]), want_part.push_back(want[i * ldc + j]);
              ExpectNear(got_part, want_part, k,
                         std::string(uk->name) + " few rows m=" + std::to_string(m) + " n=" + std::to_string(n) +
                             " k=" + std::to_string(k) + " beta=" + std::to_string(beta) + " act=" +
                             ActivationName(act.kind));
            }
}

TEST(GemmDriver, EveryRowRemainderAcrossPanels) {
  // M = q*MR + r for every r: a few rows past the last full panel are re-split
  // with that panel into two tiles of nearly equal rows (copied panels).
  ThreadPool pool(2);
  for (const GemmUkernel* uk : RunnableUkernels())
    for (int64_t q : {1, 3})
      for (int64_t r = 0; r < uk->mr; ++r)
        for (bool prepack : {false, true}) {
          const int64_t m = q * uk->mr + r;
          RunCase(*uk, {m, uk->nr + 3, uk->kc + 5, false, false, 1.f, 0.5f}, prepack ? &pool : nullptr, prepack,
                  prepack);
          RunCase(*uk, {m, 2 * uk->nr + 1, 19, true, true, 0.5f, 0.f}, &pool, false, false);
        }
}

TEST(GemmDriver, PrepackedBEveryBlockBoundaryWithEpilogues) {
  // Pre-packed B over more than one K block (KC) and column block (NC), with
  // M within one row block (MC: the first row block hands each tile the next
  // B panel to prefetch, also across the K and column boundaries) and past it.
  // K blocks before the last go through the fused kernel with an empty
  // epilogue. Fused (clamp) and unfused (sigmoid) epilogues, beta 0 (C holds
  // NaN, which must not be read) and beta != 0, 1 and 2 threads.
  // M up to one row tile (1, 3, 8, MR) runs all K as one block and prefetches
  // the next panel; up to 2 * MC rows run as one row block (at KC / 2 where a
  // KC-deep B micro-panel outgrows L1), more as several.
  ThreadPool pool(2);
  for (const GemmUkernel* uk : RunnableUkernels())
    for (const int64_t m : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{uk->mr}, int64_t{uk->mr} + 3,
                            int64_t{uk->mc} - 3, int64_t{uk->mc} + uk->mr + 3, 2 * int64_t{uk->mc} + uk->mr + 3}) {
      const int64_t n = uk->nc + uk->nr + 5, k = 2 * uk->kc + 7;
      auto a = Random(m * k, 90), b = Random(k * n, 91), bias = Random(n, 92), res = Random(m * n, 93);
      PackedOperand pb = PackedOperand::Make(*uk, PackedSide::kB, b.data(), n, false, n, k, {});
      for (const float beta : {0.f, 0.5f}) {
        auto base = beta == 0.f ? std::vector<float>(m * n, std::nanf("")) : Random(m * n, 94);
        std::vector<float> prod = beta == 0.f ? std::vector<float>(m * n, 0.f) : base;
        NaiveGemm(m, n, k, a.data(), k, false, b.data(), n, false, prod.data(), n, 1.f, beta);
        for (ActivationKind act : {ActivationKind::kRelu, ActivationKind::kSigmoid})
          for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
            std::vector<float> want(m * n), c = base;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                float v = prod[i * n + j] + bias[j] + res[i * n + j];
                ApplyActivation({act, 0, 0}, &v, 1);
                want[i * n + j] = v;
              }
            SgemmArgs g;
            g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.packed_b = pb.data();
            g.c = c.data(), g.ldc = n, g.beta = beta;
            g.epilogue.bias_kind = Epilogue::Bias::kPerCol;
            g.epilogue.bias = bias.data();
            g.epilogue.residual = res.data();
            g.epilogue.ldr = n;
            g.epilogue.act.kind = act;
            Sgemm(*uk, g, p);
            ExpectNear(c, want, k, std::string(uk->name) + " block boundaries m=" + std::to_string(m) +
                                       " beta=" + std::to_string(beta) + " act=" + ActivationName(act) +
                                       (p ? " 2 threads" : " 1 thread"));
          }
      }
    }
}

}  // namespace
}  // namespace oc::gemm

// Integer GEMM against naive int32 loops, for every micro-kernel this CPU can
// run: the micro-kernel alone below, at and above its tile (with accumulate and
// untouched neighbours), then the driver over sign combinations, per-tensor and
// per-row/column zero points, pre-packed operands, K blocking and threads.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops/cpu/gemm/integer_gemm.h"

namespace oc::igemm {
namespace {

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(d(rng));
  return v;
}

std::vector<const Ukernel*> RunnableUkernels() {
  std::vector<const Ukernel*> out;
  for (const Ukernel& uk : AllUkernels())
    if (Supported(uk)) out.push_back(&uk);
  return out;
}

TEST(IntegerGemmUkernel, MatchesNaiveAtTileEdges) {
  for (const Ukernel* uk : RunnableUkernels()) {
    const int64_t unit = uk->k_align / 4;  // kgroups must be a multiple of this
    for (int64_t kg : {unit, 2 * unit, 7 * unit, 130 * unit}) {
      auto pa = RandomBytes(static_cast<size_t>(kg * uk->mr * 4), 11);
      auto pbu = RandomBytes(static_cast<size_t>(kg * uk->nr * 4), 12);
      // Extremes in the first k values: 255 * -128 (the widest sums).
      for (int64_t i = 0; i < uk->mr; ++i)
        for (int t = 0; t < 4; ++t) pa[PackedAOffset(*uk, i, t)] = 255;
      for (int j = 0; j < uk->nr * 4; ++j) pbu[j] = 0x80;
      const int8_t* pb = reinterpret_cast<const int8_t*>(pbu.data());
      for (int64_t m = 1; m <= uk->mr; ++m)
        for (int64_t n = 1; n <= uk->nr; ++n)
          for (bool accumulate : {false, true}) {
            const int64_t ldc = uk->nr + 3;
            std::vector<int32_t> c(static_cast<size_t>((uk->mr + 1) * ldc));
            for (size_t e = 0; e < c.size(); ++e) c[e] = static_cast<int32_t>(e * 7919 % 1000) - 500;
            std::vector<int32_t> want = c;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                int32_t s = 0;
                for (int64_t g = 0; g < kg; ++g)
                  for (int t = 0; t < 4; ++t)
                    s += static_cast<int32_t>(pa[PackedAOffset(*uk, i, g * 4 + t)]) * pb[(g * uk->nr + j) * 4 + t];
                want[i * ldc + j] = accumulate ? want[i * ldc + j] + s : s;
              }
            uk->fn(kg, pa.data(), pb, c.data(), ldc, m, n, accumulate);
            ASSERT_EQ(c, want) << uk->name << " kgroups=" << kg << " m=" << m << " n=" << n
                               << " accumulate=" << accumulate;
          }
    }
  }
}

struct Case {
  int64_t m, n, k;
  bool a_signed, b_signed;
  bool zp_vectors;
};

void RunCase(const Ukernel& uk, const Case& cs, ThreadPool* pool, bool prepack_a, bool prepack_b) {
  const int64_t lda = cs.k + 3, ldb = cs.n + 5, ldc = cs.n + 2;
  auto a = RandomBytes(static_cast<size_t>(cs.m * lda), 1);
  auto b = RandomBytes(static_cast<size_t>(cs.k * ldb), 2);
  std::mt19937 rng(3);
  auto zp = [&](bool is_signed) {
    return static_cast<int32_t>(is_signed ? std::uniform_int_distribution<int>(-128, 127)(rng)
                                          : std::uniform_int_distribution<int>(0, 255)(rng));
  };
  std::vector<int32_t> za(static_cast<size_t>(cs.m)), zb(static_cast<size_t>(cs.n));
  for (auto& v : za) v = zp(cs.a_signed);
  for (auto& v : zb) v = zp(cs.b_signed);

  Args g;
  g.m = cs.m, g.n = cs.n, g.k = cs.k;
  g.a.raw = {a.data(), lda, cs.a_signed};
  g.a.is_signed = cs.a_signed;
  g.b.raw = {b.data(), ldb, cs.b_signed};
  g.b.is_signed = cs.b_signed;
  if (cs.zp_vectors) {
    g.a.zp.values = za.data();
    g.b.zp.values = zb.data();
  } else {
    g.a.zp.scalar = za[0];
    g.b.zp.scalar = zb[0];
  }
  std::vector<int32_t> want(static_cast<size_t>(cs.m * ldc), -1), got = want;
  g.c = want.data();
  g.ldc = ldc;
  ReferenceGemm(g);

  PackedOperand pa, pb;
  if (prepack_a) {
    pa = PackConstA(uk, g.a.raw, cs.m, cs.k);
    g.a.packed = pa.group(0);
    g.a.sums = pa.group_sum(0);
  }
  if (prepack_b) {
    pb = PackConstB(uk, g.b.raw, cs.k, cs.n);
    g.b.packed = pb.group(0);
    g.b.sums = pb.group_sum(0);
  }
  g.c = got.data();
  Plan plan(uk, cs.m, cs.n, cs.k, !prepack_a, !prepack_b, pool ? pool->num_threads() : 1);
  std::vector<uint8_t> scratch(plan.ScratchBytes() + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  plan.Run(g, pool, aligned);
  ASSERT_EQ(got, want) << uk.name << " m=" << cs.m << " n=" << cs.n << " k=" << cs.k << " a_signed=" << cs.a_signed
                       << " b_signed=" << cs.b_signed << " zp_vectors=" << cs.zp_vectors
                       << " prepack_a=" << prepack_a << " prepack_b=" << prepack_b;
}

TEST(IntegerGemm, DriverMatchesReferenceAroundTileEdges) {
  for (const Ukernel* uk : RunnableUkernels()) {
    const int64_t mr = uk->mr, nr = uk->nr;
    for (int64_t m : {int64_t{1}, mr - 1, mr, mr + 1, 2 * mr + 3})
      for (int64_t n : {int64_t{1}, nr - 1, nr, nr + 1, 3 * nr + 5})
        for (int64_t k : {1, 3, 4, 5, 17})
          for (int signs = 0; signs < 4; ++signs)
            RunCase(*uk, {m, n, k, (signs & 1) != 0, (signs & 2) != 0, signs == 1 || signs == 2}, nullptr, false,
                    false);
  }
}

TEST(IntegerGemm, KBlockingCacheBlocksAndPrepacked) {
  for (const Ukernel* uk : RunnableUkernels()) {
    for (const Case& cs : {Case{uk->mc + 5, uk->nc + uk->nr + 1, uk->kc + 9, false, true, true},
                           Case{37, 70, 2 * uk->kc + 4, true, false, false},
                           Case{3, 300, 600, false, false, true}})
      for (int pre = 0; pre < 4; ++pre) RunCase(*uk, cs, nullptr, pre & 1, pre & 2);
  }
}

TEST(IntegerGemm, ThreadedMatchesReference) {
  ThreadPool pool(3);
  for (const Ukernel* uk : RunnableUkernels()) {
    RunCase(*uk, {200, 150, 300, false, true, false}, &pool, false, false);
    RunCase(*uk, {64, 513, 96, true, true, true}, &pool, true, false);
    RunCase(*uk, {131, 45, 1000, false, false, true}, &pool, false, true);
  }
}

TEST(IntegerGemm, ZeroDepthGivesZeros) {
  const Ukernel& uk = DefaultUkernel();
  RunCase(uk, {5, 9, 0, false, true, true}, nullptr, false, false);
}

TEST(IntegerGemm, PackedAMatchesLayoutFormula) {
  for (const Ukernel* uk : RunnableUkernels()) {
    const int64_t m = uk->mr + 3, k = 70;
    auto a = RandomBytes(static_cast<size_t>(m * k), 5);
    PackedOperand p = PackConstA(*uk, {a.data(), k, true}, m, k);
    const int64_t kp = PaddedK(*uk, k);
    for (int64_t i = 0; i < m; ++i) {
      int32_t sum = 0;
      for (int64_t kk = 0; kk < kp; ++kk) {
        const uint8_t want = kk < k ? static_cast<uint8_t>(a[i * k + kk] ^ 0x80) : 0;
        sum += want;
        ASSERT_EQ(p.panels[(i / uk->mr) * uk->mr * kp + PackedAOffset(*uk, i % uk->mr, kk)], want)
            << uk->name << " row " << i << " k " << kk;
      }
      EXPECT_EQ(p.sums[i], sum) << uk->name << " row " << i;
    }
  }
}

TEST(IntegerGemm, DefaultUkernelIsRunnable) {
  EXPECT_TRUE(Supported(DefaultUkernel())) << DefaultUkernel().name;
  // Thin and shallow products avoid AMX's fixed 32-row, 64-deep steps.
  for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 768}, {64, 9}}) {
    const Ukernel& uk = UkernelFor(m, 256, k);
    EXPECT_TRUE(Supported(uk)) << uk.name;
    EXPECT_FALSE(uk.amx) << uk.name << " for m=" << m << " k=" << k;
  }
  EXPECT_EQ(&UkernelFor(256, 256, 256), &DefaultUkernel());
}

}  // namespace
}  // namespace oc::igemm

// bf16 GEMM against an fp32/double reference computed on bf16-rounded inputs
// (so only the summation order differs), for every bf16 micro-kernel this CPU
// can run, at and around the 32x32 tile and 32-deep k block edges, across the
// kc block, with transposes, alpha/beta, epilogues, an implicit B, pre-packed
// operands and threads.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/cpu/gemm/gemm_bf16.h"

namespace oc::gemm {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

float RoundBf16(float x) { return Bf16ToFloat(FloatToBf16(x)); }

struct Case {
  int64_t m, n, k;
  bool ta = false, tb = false;
  float alpha = 1.f, beta = 0.f;
  bool packed_a = false, packed_b = false, implicit_b = false;
  Epilogue::Bias bias = Epilogue::Bias::kNone;
  bool residual = false;
  ActivationKind act = ActivationKind::kNone;
  int threads = 1;
};

std::string Name(const Case& c) {
  return "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " ta=" + std::to_string(c.ta) + " tb=" + std::to_string(c.tb) + " pa=" + std::to_string(c.packed_a) +
         " pb=" + std::to_string(c.packed_b) + " ib=" + std::to_string(c.implicit_b) +
         " bias=" + std::to_string(static_cast<int>(c.bias)) + " res=" + std::to_string(c.residual) +
         " act=" + std::to_string(static_cast<int>(c.act)) + " threads=" + std::to_string(c.threads);
}

struct ImplicitB {
  const float* b;  // k x n row-major
  int64_t n;
};

// An implicit B that is plain row-major B, written into float panels the way
// the conv im2col packer writes them.
void PackImplicit(const void* ctx, const GemmUkernel& uk, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                  float* dst) {
  const auto* s = static_cast<const ImplicitB*>(ctx);
  const int nr = uk.nr;
  for (int64_t j0 = 0; j0 < nc; j0 += nr)
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t j = 0; j < nr; ++j)
        dst[(j0 / nr) * kc * nr + p * nr + j] = j0 + j < nc ? s->b[(k0 + p) * s->n + n0 + j0 + j] : 0.f;
}

void RunCase(const Bf16Ukernel& uk, const Case& c) {
  const int64_t lda = c.ta ? c.m : c.k, ldb = c.tb ? c.k : c.n, ldc = c.n;
  auto a = Random(static_cast<size_t>(c.m * c.k), 1 + static_cast<uint32_t>(c.m * 7 + c.k));
  auto b = Random(static_cast<size_t>(c.k * c.n), 2 + static_cast<uint32_t>(c.n * 5 + c.k));
  auto c0 = Random(static_cast<size_t>(c.m * c.n), 3);
  auto bias = Random(static_cast<size_t>(std::max(c.m, c.n)), 4);
  auto res = Random(static_cast<size_t>(c.m * c.n), 5);
  // Reference on the rounded inputs, in double; also the magnitude sum for
  // the tolerance (float accumulation in some order).
  std::vector<float> want(c0.size());
  std::vector<double> mag(c0.size());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double s = 0, s_abs = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double av = RoundBf16(c.ta ? a[p * lda + i] : a[i * lda + p]);
        const double bv = RoundBf16(c.tb ? b[j * ldb + p] : b[p * ldb + j]);
        s += av * bv;
        s_abs += std::fabs(av * bv);
      }
      double v = c.alpha * s + (c.beta == 0.f ? 0.0 : c.beta * static_cast<double>(c0[i * ldc + j]));
      if (c.bias == Epilogue::Bias::kPerRow) v += bias[i];
      if (c.bias == Epilogue::Bias::kPerCol) v += bias[j];
      if (c.residual) v += res[i * ldc + j];
      if (c.act == ActivationKind::kRelu) v = std::max(v, 0.0);
      if (c.act == ActivationKind::kLeakyRelu && v < 0) v *= 0.1;
      if (c.act == ActivationKind::kSigmoid) v = 1.0 / (1.0 + std::exp(-v));
      want[i * ldc + j] = static_cast<float>(v);
      mag[i * ldc + j] = std::fabs(c.alpha) * s_abs;
    }

  std::vector<float> got = c0;
  SgemmArgs g;
  g.m = c.m, g.n = c.n, g.k = c.k;
  g.c = got.data(), g.ldc = ldc, g.alpha = c.alpha, g.beta = c.beta;
  g.epilogue.bias_kind = c.bias;
  g.epilogue.bias = bias.data();
  if (c.residual) g.epilogue.residual = res.data(), g.epilogue.ldr = ldc;
  g.epilogue.act.kind = c.act;
  g.epilogue.act.alpha = 0.1f;
  Bf16PackedOperand pa, pb;
  if (c.packed_a) pa = Bf16PackedOperand::Make(PackedSide::kA, a.data(), lda, c.ta, c.m, c.k, {});
  else g.a = a.data(), g.lda = lda, g.trans_a = c.ta;
  ImplicitB implicit{b.data(), c.n};
  if (c.packed_b) pb = Bf16PackedOperand::Make(PackedSide::kB, b.data(), ldb, c.tb, c.n, c.k, {});
  else if (c.implicit_b) g.pack_b = PackImplicit, g.pack_b_ctx = &implicit;
  else g.b = b.data(), g.ldb = ldb, g.trans_b = c.tb;
  ThreadPool pool(c.threads);
  Bf16GemmPlan plan(uk, c.m, c.n, c.k, c.threads);
  // Pre-packed bytes must round-trip through Export (as through an .om).
  Bf16PackedOperand pa2, pb2;
  std::vector<uint8_t> ea = pa.Export(), eb = pb.Export();
  if (c.packed_a) pa2 = Bf16PackedOperand::Make(PackedSide::kA, nullptr, 0, false, c.m, c.k, ea);
  if (c.packed_b) pb2 = Bf16PackedOperand::Make(PackedSide::kB, nullptr, 0, false, c.n, c.k, eb);
  ASSERT_EQ(pa2.empty(), !c.packed_a);
  ASSERT_EQ(pb2.empty(), !c.packed_b);
  plan.Run(g, c.packed_a ? pa2.data() : nullptr, c.packed_b ? pb2.data() : nullptr, &pool);

  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = 2e-6 * (mag[i] + std::fabs(want[i]) + 1.0);
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      if (++bad <= 3)
        ADD_FAILURE() << uk.name << " " << Name(c) << ": element " << i << " got " << got[i] << " want "
                      << want[i];
    }
  }
  EXPECT_EQ(bad, 0) << uk.name << " " << Name(c);
}

TEST(GemmBf16, RoundingIsNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(FloatToBf16(1.0f + 1.0f / 256), 0x3f80);
  EXPECT_EQ(FloatToBf16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(Bf16ToFloat(FloatToBf16(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(Bf16ToFloat(FloatToBf16(INFINITY))));
}

TEST(GemmBf16, PrecisionModes) {
  EXPECT_TRUE(IsBf16PrecisionMode("allow_fp32_to_bf16"));
  EXPECT_TRUE(IsBf16PrecisionMode("allow_mix_precision_bf16"));
  EXPECT_TRUE(IsBf16PrecisionMode("mixed_bfloat16"));
  EXPECT_FALSE(IsBf16PrecisionMode("force_fp32"));
  EXPECT_FALSE(IsBf16PrecisionMode("allow_fp32_to_fp16"));
}

TEST(GemmBf16, TileEdges) {
  auto uks = SupportedBf16Ukernels();
  if (uks.empty()) GTEST_SKIP() << "no AMX-BF16 / AVX512_BF16 on this CPU";
  for (const Bf16Ukernel* uk : uks) {
    for (int64_t m : {1, 7, 16, 31, 32, 33, 65})
      for (int64_t n : {1, 15, 32, 33, 70})
        for (int64_t k : {1, 2, 31, 32, 33, 95}) RunCase(*uk, {m, n, k});
  }
}

TEST(GemmBf16, TransposesScalesAndBlocks) {
  auto uks = SupportedBf16Ukernels();
  if (uks.empty()) GTEST_SKIP() << "no AMX-BF16 / AVX512_BF16 on this CPU";
  for (const Bf16Ukernel* uk : uks) {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Case c{45, 37, 70, ta, tb, 0.5f, 0.f};
        RunCase(*uk, c);
        c.beta = 1.5f;
        RunCase(*uk, c);
      }
    // K across the kc block (beta carried between k blocks), M across mc,
    // N across nc.
    RunCase(*uk, {40, 50, 2 * uk->kc + 33, false, false, 1.f, 0.7f});
    RunCase(*uk, {uk->mc + 40, 30, 64});
    RunCase(*uk, {20, uk->nc + 45, 64});
  }
}

TEST(GemmBf16, PackedImplicitEpiloguesThreads) {
  auto uks = SupportedBf16Ukernels();
  if (uks.empty()) GTEST_SKIP() << "no AMX-BF16 / AVX512_BF16 on this CPU";
  for (const Bf16Ukernel* uk : uks) {
    for (int threads : {1, 3}) {
      Case c{97, 133, 150};
      c.threads = threads;
      c.packed_a = true;
      c.implicit_b = true;
      c.bias = Epilogue::Bias::kPerRow;
      c.residual = true;
      c.act = ActivationKind::kRelu;
      RunCase(*uk, c);
      c = Case{70, 90, 1100};
      c.threads = threads;
      c.packed_b = true;
      c.bias = Epilogue::Bias::kPerCol;
      c.act = ActivationKind::kLeakyRelu;
      RunCase(*uk, c);
      c.tb = true;
      c.act = ActivationKind::kSigmoid;  // not fusable: the second pass
      RunCase(*uk, c);
      c = Case{33, 64, 40, true};
      c.threads = threads;
      c.packed_a = true;
      c.packed_b = true;
      c.beta = 1.f;
      RunCase(*uk, c);
    }
  }
}

TEST(GemmBf16, PrepackedBytesOfAnotherShapeAreRepacked) {
  auto a = Random(40 * 70, 9);
  Bf16PackedOperand p = Bf16PackedOperand::Make(PackedSide::kA, a.data(), 70, false, 40, 70, {});
  auto bytes = p.Export();
  EXPECT_TRUE(Bf16PackedOperand::Make(PackedSide::kA, nullptr, 0, false, 40, 70, bytes).borrowed());
  EXPECT_TRUE(Bf16PackedOperand::Make(PackedSide::kA, nullptr, 0, false, 41, 70, bytes).empty());
  EXPECT_TRUE(Bf16PackedOperand::Make(PackedSide::kB, nullptr, 0, false, 40, 70, bytes).empty());
  Bf16PackedOperand q = Bf16PackedOperand::Make(PackedSide::kA, a.data(), 70, false, 40, 70, bytes);
  EXPECT_TRUE(q.borrowed());
}

}  // namespace
}  // namespace oc::gemm

// Weight-only int8 / int4 (quant.h): quantization against the scheme written
// out independently here, and every kernel this CPU runs (scalar, AVX2,
// AVX-512) and the QuantGemm dispatch (kernel for few rows, dequantize +
// sgemm for many) against a double-precision product of the dequantized
// weights, at odd shapes: m 1, 3, 17; n not a multiple of 4; k not a
// multiple of 32 or of the group (the last group of a row is shorter).
#include "llm/model/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <random>
#include <tuple>

#include "llm/model/weight_dtype.h"

namespace oc::llm {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

struct Case {
  int bits;
  int64_t n, k, group;
};

TEST(QuantTest, QuantizeFollowsTheScheme) {
  for (const Case c : {Case{8, 5, 100, 0}, Case{8, 7, 96, 32}, Case{4, 5, 100, 64}, Case{4, 3, 64, 128},
                       Case{4, 9, 300, 32}, Case{8, 2, 33, 96}}) {
    SCOPED_TRACE("bits " + std::to_string(c.bits) + " n " + std::to_string(c.n) + " k " + std::to_string(c.k) +
                 " group " + std::to_string(c.group));
    std::vector<float> w = Random(c.n * c.k, 11);
    w[3] = 0.f;
    auto q = Quantize(w.data(), c.n, c.k, c.bits, c.group);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    const int64_t g = c.group ? c.group : (c.k + 31) / 32 * 32;
    const int64_t groups = (c.k + g - 1) / g;
    EXPECT_EQ(q->groups, groups);
    EXPECT_EQ(q->kp % 32, 0);
    const float qmax = c.bits == 8 ? 127.f : 7.f;
    std::vector<float> deq(static_cast<size_t>(c.n * c.k));
    DequantizeRows(*q, 0, c.n, deq.data());
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t gi = 0; gi < groups; ++gi) {
        double amax = 0;
        for (int64_t i = gi * g; i < std::min(c.k, (gi + 1) * g); ++i)
          amax = std::max(amax, std::fabs(static_cast<double>(w[static_cast<size_t>(j * c.k + i)])));
        const float s = q->scales[static_cast<size_t>(j * groups + gi)];
        EXPECT_FLOAT_EQ(s, static_cast<float>(amax / qmax));
        for (int64_t i = gi * g; i < std::min(c.k, (gi + 1) * g); ++i) {
          const double x = w[static_cast<size_t>(j * c.k + i)];
          const int v = QuantizedValue(*q, j, i);
          EXPECT_LE(std::abs(v), static_cast<int>(qmax));
          EXPECT_EQ(v, static_cast<int>(std::nearbyint(static_cast<float>(x) / s))) << j << "," << i;
          EXPECT_LE(std::fabs(v * static_cast<double>(s) - x), 0.5 * s * (1 + 1e-6));
          EXPECT_EQ(deq[static_cast<size_t>(j * c.k + i)], static_cast<float>(v) * s);
        }
        // The largest weight of the group maps to +-Q.
        if (amax > 0) {
          int seen = 0;
          for (int64_t i = gi * g; i < std::min(c.k, (gi + 1) * g); ++i)
            seen = std::max(seen, std::abs(QuantizedValue(*q, j, i)));
          EXPECT_EQ(seen, static_cast<int>(qmax));
        }
      }
    // The padding past k holds zero weights.
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t i = c.k; i < q->kp; ++i) EXPECT_EQ(QuantizedValue(*q, j, i), 0);
  }
}

TEST(QuantTest, BadArgumentsAreRefused) {
  std::vector<float> w = Random(64, 1);
  auto bad_group = Quantize(w.data(), 1, 64, 4, 48);
  ASSERT_FALSE(bad_group.ok());
  EXPECT_NE(bad_group.status().message().find("group size 48"), std::string::npos) << bad_group.status().ToString();
  EXPECT_NE(bad_group.status().message().find("multiple of 32"), std::string::npos);
  auto bad_bits = Quantize(w.data(), 1, 64, 3, 0);
  ASSERT_FALSE(bad_bits.ok());
  EXPECT_NE(bad_bits.status().message().find("3 bits"), std::string::npos);
  w[10] = std::nanf("");
  auto nan = Quantize(w.data(), 2, 32, 8, 0);
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.status().message().find("row 0 has a non-finite weight"), std::string::npos)
      << nan.status().ToString();

  auto d = ParseWeightDtype("fp8");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("auto, float32, bfloat16, int8, int4"), std::string::npos);
  EXPECT_EQ(*ParseWeightDtype("auto"), WeightDtype::kFloat32);
  EXPECT_EQ(*ResolveGroupSize(WeightDtype::kInt4, 0), 128);
  EXPECT_EQ(*ResolveGroupSize(WeightDtype::kInt8, 0), 0);
  EXPECT_EQ(*ResolveGroupSize(WeightDtype::kInt8, 64), 64);
  EXPECT_FALSE(ResolveGroupSize(WeightDtype::kInt4, 100).ok());
  EXPECT_FALSE(ResolveGroupSize(WeightDtype::kInt4, -32).ok());
  EXPECT_FALSE(ResolveGroupSize(WeightDtype::kBfloat16, 64).ok());
}

// y = x deq(W)^T + bias + residual in double.
std::vector<double> Reference(const QuantizedMatrix& q, const std::vector<float>& x, int64_t m,
                              const std::vector<float>& bias, const std::vector<float>& residual) {
  std::vector<float> deq(static_cast<size_t>(q.n * q.k));
  DequantizeRows(q, 0, q.n, deq.data());
  std::vector<double> y(static_cast<size_t>(m * q.n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < q.n; ++j) {
      double acc = bias[static_cast<size_t>(j)] + residual[static_cast<size_t>(i * q.n + j)];
      for (int64_t t = 0; t < q.k; ++t)
        acc += static_cast<double>(x[static_cast<size_t>(i * q.k + t)]) * deq[static_cast<size_t>(j * q.k + t)];
      y[static_cast<size_t>(i * q.n + j)] = acc;
    }
  return y;
}

void ExpectClose(const std::vector<float>& got, const std::vector<double>& ref) {
  double scale = 0, err = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, std::fabs(ref[i]));
    err = std::max(err, std::fabs(got[i] - ref[i]));
  }
  EXPECT_LT(err, 1e-5 * scale) << "max error " << err << " of scale " << scale;
}

TEST(QuantTest, KernelsMatchTheReference) {
  int tested = 0;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    const QGemvKernel* kern = QGemvKernelForIsa(isa);
    if (!kern) continue;  // not this CPU
    ++tested;
    for (int bits : {8, 4})
      for (int64_t m : {1, 3, 17})
        for (const auto& [n, k, group] : {std::tuple<int64_t, int64_t, int64_t>{5, 100, 0}, {37, 96, 32},
                                         {9, 288, 128}, {4, 64, 96}, {13, 130, 64}}) {
          SCOPED_TRACE(std::string(kern->name) + " bits " + std::to_string(bits) + " m " + std::to_string(m) +
                       " n " + std::to_string(n) + " k " + std::to_string(k) + " group " + std::to_string(group));
          auto q = Quantize(Random(n * k, 3).data(), n, k, bits, group);
          ASSERT_TRUE(q.ok());
          const std::vector<float> x = Random(m * k, 5), bias = Random(n, 6), res = Random(m * n, 7);
          // The kernel contract: rows readable up to kp, zeros past k (ld kp + 3 to test ldx).
          const int64_t ldx = q->kp + 3;
          std::vector<float> xp(static_cast<size_t>(m * ldx), 0.f);
          for (int64_t i = 0; i < m; ++i)
            std::copy_n(&x[static_cast<size_t>(i * k)], k, &xp[static_cast<size_t>(i * ldx)]);
          std::vector<float> y = res;  // residual == y, as the model uses it
          QGemvArgs a;
          a.w = &*q;
          a.x = xp.data();
          a.ldx = ldx;
          a.m = m;
          a.y = y.data();
          a.ldy = n;
          a.bias = bias.data();
          a.residual = y.data();
          a.ldr = n;
          // Two calls over a split of the outputs, as threads would make them.
          (bits == 8 ? kern->int8 : kern->int4)(a, 0, n / 2);
          (bits == 8 ? kern->int8 : kern->int4)(a, n / 2, n);
          ExpectClose(y, Reference(*q, x, m, bias, res));
        }
  }
  EXPECT_GE(tested, 1);
}

TEST(QuantTest, QuantGemmDispatchMatchesTheReference) {
  ThreadPool pool(2);
  const QGemvKernel& kern = DefaultQGemvKernel();
  for (int bits : {8, 4})
    for (int64_t m : {1, 3, 16, 17, 40})  // <= 16: the kernel; more: dequantized chunks + sgemm
      for (const auto& [n, k, group] : {std::tuple<int64_t, int64_t, int64_t>{70, 100, 0}, {130, 256, 64},
                                       {2000, 96, 32}}) {
        SCOPED_TRACE(std::string(kern.name) + " bits " + std::to_string(bits) + " m " + std::to_string(m) + " n " +
                     std::to_string(n) + " k " + std::to_string(k));
        auto q = Quantize(Random(n * k, 8).data(), n, k, bits, group);
        ASSERT_TRUE(q.ok());
        const std::vector<float> x = Random(m * k, 9), bias = Random(n, 10), res = Random(m * n, 12);
        const gemm::GemmUkernel& uk = gemm::DefaultUkernel();
        gemm::SgemmPlan plan(uk, m, std::min(n, QuantGemm::ChunkRows(k)), k, pool.num_threads());
        std::vector<uint8_t> scratch(plan.ScratchBytes() + 64);
        void* s = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
        std::vector<float> y = res, pad, deq;
        QGemvArgs a;
        a.w = &*q;
        a.x = x.data();
        a.ldx = k;
        a.m = m;
        a.y = y.data();
        a.ldy = n;
        a.bias = bias.data();
        a.residual = y.data();
        a.ldr = n;
        QuantGemm::Run(kern, a, &pool, plan, s, pad, deq);
        ExpectClose(y, Reference(*q, x, m, bias, res));
      }
}

}  // namespace
}  // namespace oc::llm

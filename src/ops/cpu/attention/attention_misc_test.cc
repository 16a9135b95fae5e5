// The small attention-block ops beyond the ONNX node tests: shapes those tests
// do not use (long rows, broadcast scale, in-range checks at run time), each
// against a formula written out here.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/cpu/common/tensor_test_util.h"

namespace oc {
namespace {

using tt::Make;
using tt::RunOp;

std::vector<float> Rand(size_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(RmsNorm, LongRowsAndBroadcastScale) {
  const int64_t rows = 5, a = 3, b = 70;  // normalise over [a, b], scale [1, b]
  auto x = Rand(rows * a * b, 1);
  auto scale = Rand(b, 2);
  auto r = RunOp("RMSNormalization", {Make<float>({rows, a, b}, x), Make<float>({1, b}, scale)},
                 [](Node& n) { n.SetInt("axis", 1); n.SetFloat("epsilon", 1e-3f); }, 23);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  auto y = r[0].as<float>();
  for (int64_t i = 0; i < rows; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < a * b; ++j) ss += double(x[i * a * b + j]) * x[i * a * b + j];
    const double inv = 1.0 / std::sqrt(ss / (a * b) + 1e-3);
    for (int64_t j = 0; j < a * b; ++j)
      ASSERT_NEAR(y[i * a * b + j], x[i * a * b + j] * inv * scale[j % b], 1e-5) << i << " " << j;
  }
}

TEST(RotaryEmbedding, PositionIdOutOfRangeFailsAtRunTime) {
  auto x = Rand(1 * 1 * 2 * 4, 3);
  auto cache = Rand(3 * 2, 4);
  auto r = RunOp("RotaryEmbedding",
                 {Make<float>({1, 1, 2, 4}, x), Make<float>({3, 2}, cache), Make<float>({3, 2}, cache),
                  Make<int64_t>({1, 2}, {0, 3})},
                 nullptr, 23);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.ToString().find("position_ids"), std::string::npos) << r.status.ToString();
}

TEST(SwiGlu, MatchesFormulaAcrossChunks) {
  const int64_t n = 1000;  // past the 256-element sigmoid chunk
  auto a = Rand(n, 5, -8.f, 8.f), b = Rand(n, 6);
  auto r = RunOp("SwiGLU", {Make<float>({10, 100}, a), Make<float>({10, 100}, b)},
                 [](Node& node) { node.SetFloat("alpha", 1.702f); }, 28);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  auto y = r[0].as<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double want = a[i] / (1.0 + std::exp(-1.702 * a[i])) * b[i];
    ASSERT_NEAR(y[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << i;
  }
}

TEST(TensorScatter, LinearWritePastTheEndFailsAndCircularWraps) {
  const std::vector<float> cache(2 * 4 * 3, 0.f);
  const std::vector<float> upd = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // [2, 2, 3]
  auto lin = RunOp("TensorScatter", {Make<float>({2, 4, 3}, cache), Make<float>({2, 2, 3}, upd),
                                     Make<int64_t>({2}, {1, 3})}, nullptr, 24);
  ASSERT_FALSE(lin.status.ok());
  EXPECT_NE(lin.status.ToString().find("write_indices[1] = 3"), std::string::npos) << lin.status.ToString();
  auto circ = RunOp("TensorScatter", {Make<float>({2, 4, 3}, cache), Make<float>({2, 2, 3}, upd),
                                      Make<int64_t>({2}, {1, 3})},
                    [](Node& n) { n.SetString("mode", "circular"); }, 24);
  ASSERT_TRUE(circ.status.ok()) << circ.status.ToString();
  auto y = circ[0].as<float>();
  // Batch 0 rows 1, 2 <- update rows 0, 1; batch 1 rows 3, 0 <- update rows 0, 1.
  std::vector<float> want(24, 0.f);
  for (int c = 0; c < 3; ++c) {
    want[(0 * 4 + 1) * 3 + c] = upd[0 * 3 + c];
    want[(0 * 4 + 2) * 3 + c] = upd[1 * 3 + c];
    want[(1 * 4 + 3) * 3 + c] = upd[2 * 3 + c];
    want[(1 * 4 + 0) * 3 + c] = upd[3 * 3 + c];
  }
  EXPECT_EQ(y, want);
}

TEST(CausalConvWithState, StreamingEqualsOneShot) {
  // Running the sequence in two pieces, passing present_state on, must give
  // the outputs of one run over the whole sequence.
  const int64_t b = 2, c = 3, len = 9, k = 4, split = 5;
  auto x = Rand(b * c * len, 7), w = Rand(c * k, 8), bias = Rand(c, 9);
  auto silu = [](Node& n) { n.SetString("activation", "silu"); };
  auto whole = RunOp("CausalConvWithState", {Make<float>({b, c, len}, x), Make<float>({c, 1, k}, w),
                                             Make<float>({c}, bias)}, silu, 27, 2);
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  std::vector<float> x1, x2;
  for (int64_t r = 0; r < b * c; ++r)
    for (int64_t t = 0; t < len; ++t) (t < split ? x1 : x2).push_back(x[r * len + t]);
  auto first = RunOp("CausalConvWithState", {Make<float>({b, c, split}, x1), Make<float>({c, 1, k}, w),
                                             Make<float>({c}, bias)}, silu, 27, 2);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  auto second = RunOp("CausalConvWithState",
                      {Make<float>({b, c, len - split}, x2), Make<float>({c, 1, k}, w), Make<float>({c}, bias),
                       first[1]},
                      silu, 27, 2);
  ASSERT_TRUE(second.status.ok()) << second.status.ToString();
  auto yw = whole[0].as<float>(), y1 = first[0].as<float>(), y2 = second[0].as<float>();
  for (int64_t r = 0; r < b * c; ++r)
    for (int64_t t = 0; t < len; ++t) {
      const float got = t < split ? y1[r * split + t] : y2[r * (len - split) + t - split];
      ASSERT_NEAR(got, yw[r * len + t], 1e-6) << r << " " << t;
    }
  EXPECT_EQ(second[1].as<float>(), whole[1].as<float>());
}

TEST(LinearAttention, StreamingEqualsOneShot) {
  // The recurrent state carried across calls gives the one-shot result.
  const int64_t b = 1, t = 6, hq = 4, hkv = 2, dk = 3, dv = 5, split = 2;
  auto q = Rand(b * t * hq * dk, 10), k = Rand(b * t * hkv * dk, 11), v = Rand(b * t * hkv * dv, 12);
  auto decay = Rand(b * t * hkv * dk, 13, -0.5f, 0.f), beta = Rand(b * t * hkv, 14, 0.f, 1.f);
  auto attrs = [](Node& n) { n.SetInt("q_num_heads", 4); n.SetInt("kv_num_heads", 2); };
  auto slice = [&](const std::vector<float>& x, int64_t width, int64_t t0, int64_t t1) {
    return std::vector<float>(x.begin() + t0 * width, x.begin() + t1 * width);
  };
  auto run = [&](int64_t t0, int64_t t1, std::optional<tt::T> past) {
    const int64_t n = t1 - t0;
    return RunOp("LinearAttention",
                 {Make<float>({b, n, hq * dk}, slice(q, hq * dk, t0, t1)),
                  Make<float>({b, n, hkv * dk}, slice(k, hkv * dk, t0, t1)),
                  Make<float>({b, n, hkv * dv}, slice(v, hkv * dv, t0, t1)), past,
                  Make<float>({b, n, hkv * dk}, slice(decay, hkv * dk, t0, t1)),
                  Make<float>({b, n, hkv}, slice(beta, hkv, t0, t1))},
                 attrs, 27, 2);
  };
  auto whole = run(0, t, std::nullopt);
  ASSERT_TRUE(whole.status.ok()) << whole.status.ToString();
  auto first = run(0, split, std::nullopt);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  auto second = run(split, t, first[1]);
  ASSERT_TRUE(second.status.ok()) << second.status.ToString();
  auto yw = whole[0].as<float>(), y1 = first[0].as<float>(), y2 = second[0].as<float>();
  y1.insert(y1.end(), y2.begin(), y2.end());
  ASSERT_EQ(y1.size(), yw.size());
  for (size_t i = 0; i < yw.size(); ++i) ASSERT_NEAR(y1[i], yw[i], 1e-5) << i;
  auto sw = whole[1].as<float>(), s2 = second[1].as<float>();
  for (size_t i = 0; i < sw.size(); ++i) ASSERT_NEAR(s2[i], sw[i], 1e-5) << i;
}

}  // namespace
}  // namespace oc

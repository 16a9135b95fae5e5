// Gemm/FusedGemm and MatMul/FusedMatMul against naive loops written here:
// transposes, alpha/beta, every C broadcast form, constant (pre-packed) and
// runtime operands, 1-D and broadcast-batched MatMul, fused bias/activation.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/thread_pool.h"
#include "ops/cpu/gemm/gemm_op_test_util.h"

namespace oc {
namespace {

using gemm_testing::ExpectClose;
using gemm_testing::OpCase;
using gemm_testing::Rand;

int64_t Numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

struct GemmSpec {
  int64_t m, n, k;
  bool ta = false, tb = false;
  float alpha = 1.f, beta = 1.f;
  std::vector<int64_t> c_shape;  // empty with has_c=false: no C
  bool has_c = false;
  bool const_b = true, const_c = true;
  bool relu = false;
};

void CheckGemm(const GemmSpec& s, const std::string& what) {
  std::vector<int64_t> as = s.ta ? std::vector<int64_t>{s.k, s.m} : std::vector<int64_t>{s.m, s.k};
  std::vector<int64_t> bs = s.tb ? std::vector<int64_t>{s.n, s.k} : std::vector<int64_t>{s.k, s.n};
  auto a = Rand(s.m * s.k, 1), b = Rand(s.k * s.n, 2);
  auto c = s.has_c ? Rand(Numel(s.c_shape), 3) : std::vector<float>{};
  // C broadcast: right-aligned dims against [m, n].
  std::vector<int64_t> cs = s.c_shape;
  while (cs.size() < 2) cs.insert(cs.begin(), 1);
  std::vector<float> want(s.m * s.n);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < s.k; ++p)
        acc += double(s.ta ? a[p * s.m + i] : a[i * s.k + p]) * (s.tb ? b[j * s.k + p] : b[p * s.n + j]);
      acc *= s.alpha;
      if (s.has_c) acc += s.beta * c[(cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)];
      if (s.relu) acc = std::max(acc, 0.0);
      want[i * s.n + j] = static_cast<float>(acc);
    }
  ThreadPool pool(2);
  OpCase op(s.relu ? "FusedGemm" : "Gemm", s.relu ? 1 : 13, s.relu ? kOpenCannDomain : "");
  op.In(as, a, false).In(bs, b, s.const_b);
  if (s.has_c) op.In(s.c_shape, c, s.const_c);
  Node& n = op.node();
  if (s.ta) n.SetInt("transA", 1);
  if (s.tb) n.SetInt("transB", 1);
  n.SetFloat("alpha", s.alpha);
  n.SetFloat("beta", s.beta);
  if (s.relu) n.SetString("activation", "Relu");
  auto y = op.Run(&pool);
  ASSERT_TRUE(y.ok()) << what << ": " << y.status().ToString();
  EXPECT_EQ(op.OutShape(), (std::vector<int64_t>{s.m, s.n})) << what;
  ExpectClose(*y, want, what);
}

TEST(GemmOp, TransposesAlphaBeta) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool cb : {false, true}) {
        std::string w = "ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " constB=" + std::to_string(cb);
        CheckGemm({.m = 19, .n = 37, .k = 23, .ta = ta, .tb = tb, .alpha = 0.5f, .beta = 2.f, .c_shape = {19, 37},
                   .has_c = true, .const_b = cb},
                  w);
      }
}

TEST(GemmOp, EveryCBroadcastForm) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {31}, {1, 31}, {17, 1}, {17, 31}, {1, 1}};
  for (const auto& cs : shapes)
    for (bool const_c : {true, false})
      for (float beta : {1.f, -0.75f}) {
        std::string w = "C rank " + std::to_string(cs.size()) + " numel " + std::to_string(Numel(cs)) +
                        " const=" + std::to_string(const_c) + " beta=" + std::to_string(beta);
        CheckGemm({.m = 17, .n = 31, .k = 9, .beta = beta, .c_shape = cs, .has_c = true, .const_c = const_c}, w);
      }
  CheckGemm({.m = 5, .n = 6, .k = 7}, "no C");
  CheckGemm({.m = 5, .n = 6, .k = 7, .beta = 0.f, .c_shape = {5, 6}, .has_c = true}, "beta 0");
}

TEST(GemmOp, FusedGemmReluAndLargeShape) {
  CheckGemm({.m = 33, .n = 70, .k = 40, .tb = true, .c_shape = {70}, .has_c = true, .relu = true}, "fused relu");
  CheckGemm({.m = 300, .n = 520, .k = 270, .tb = true, .c_shape = {520}, .has_c = true}, "large");
}

TEST(GemmOp, PrepackedRoundTripAndErrors) {
  auto a = Rand(4 * 8, 1), b = Rand(6 * 8, 2);
  ThreadPool pool(1);
  auto setup = [&](OpCase& op) {
    op.In({4, 8}, a, false).In({6, 8}, b, true);
    op.node().SetInt("transB", 1);
  };
  std::vector<uint8_t> blob, blob2;
  OpCase o1("Gemm", 11), o2("Gemm", 11);
  setup(o1), setup(o2);
  auto y0 = o1.Run(&pool, {}, &blob);
  auto y1 = o2.Run(&pool, blob, &blob2);
  ASSERT_TRUE(y0.ok() && y1.ok());
  EXPECT_FALSE(blob.empty());
  EXPECT_EQ(blob, blob2);
  EXPECT_EQ(*y0, *y1);
  OpCase bad("Gemm", 11);
  bad.In({4, 8}, {}, false).In({7, 6}, {}, false);
  Status s = bad.Infer();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("inner dims"), std::string::npos) << s.message();
  OpCase badc("Gemm", 11);
  badc.In({4, 8}, {}, false).In({8, 6}, {}, false).In({3, 6}, {}, false);
  s = badc.Infer();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("broadcast"), std::string::npos) << s.message();
}

// ---- MatMul ---------------------------------------------------------------------

// numpy.matmul for float vectors, written out: 1-D promotion and batch broadcast.
std::vector<float> NaiveMatMul(std::vector<int64_t> as, const std::vector<float>& a, std::vector<int64_t> bs,
                               const std::vector<float>& b, std::vector<int64_t>* out) {
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const size_t r = std::max(as.size(), bs.size()) - 2;
  std::vector<int64_t> ab(r, 1), bb(r, 1), batch(r);
  std::copy(as.begin(), as.end() - 2, ab.begin() + (r - (as.size() - 2)));
  std::copy(bs.begin(), bs.end() - 2, bb.begin() + (r - (bs.size() - 2)));
  for (size_t i = 0; i < r; ++i) batch[i] = std::max(ab[i], bb[i]);
  *out = batch;
  if (!a1) out->push_back(M);
  if (!b1) out->push_back(N);
  const int64_t nb = Numel(batch);
  std::vector<float> y(nb * M * N);
  for (int64_t t = 0; t < nb; ++t) {
    int64_t rem = t, ai = 0, bi = 0, astr = 1, bstr = 1;
    for (size_t i = r; i-- > 0;) {
      int64_t idx = rem % batch[i];
      rem /= batch[i];
      ai += (ab[i] == 1 ? 0 : idx) * astr;
      bi += (bb[i] == 1 ? 0 : idx) * bstr;
      astr *= ab[i];
      bstr *= bb[i];
    }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < K; ++p) acc += double(a[(ai * M + i) * K + p]) * b[(bi * K + p) * N + j];
        y[(t * M + i) * N + j] = static_cast<float>(acc);
      }
  }
  return y;
}

void CheckMatMul(const std::vector<int64_t>& as, const std::vector<int64_t>& bs, const std::string& what) {
  auto a = Rand(Numel(as), 4), b = Rand(Numel(bs), 5);
  std::vector<int64_t> out;
  auto want = NaiveMatMul(as, a, bs, b, &out);
  ThreadPool pool(3);
  for (bool const_b : {true, false}) {
    OpCase op("MatMul", 13);
    op.In(as, a, false).In(bs, b, const_b);
    auto y = op.Run(&pool);
    ASSERT_TRUE(y.ok()) << what << ": " << y.status().ToString();
    EXPECT_EQ(op.OutShape(), out) << what;
    ExpectClose(*y, want, what + (const_b ? " const B" : " runtime B"));
  }
}

TEST(MatMulOp, OneDAndTwoD) {
  CheckMatMul({7}, {7, 5}, "1-D x 2-D");
  CheckMatMul({6, 7}, {7}, "2-D x 1-D");
  CheckMatMul({9}, {9}, "1-D x 1-D");
  CheckMatMul({65, 33}, {33, 70}, "2-D");
}

TEST(MatMulOp, BatchedWithBroadcast) {
  CheckMatMul({2, 3, 16, 24}, {24, 40}, "batched A, 2-D B (folded)");
  CheckMatMul({2, 1, 5, 4}, {3, 4, 6}, "broadcast both");
  CheckMatMul({4, 5}, {2, 3, 5, 7}, "2-D A, batched B");
  CheckMatMul({3, 8}, {2, 8, 4}, "broadcast A over B batch");
  CheckMatMul({2, 4, 8}, {8}, "batched A x 1-D B");
  CheckMatMul({5}, {3, 5, 2}, "1-D A x batched B");
  // Attention-shaped: more matrices than threads, split whole across them.
  CheckMatMul({2, 4, 33, 16}, {2, 4, 16, 29}, "per-head products, 8 matrices");
  CheckMatMul({1, 7, 17, 8}, {1, 7, 8, 19}, "per-head products, 7 matrices over 3 threads");
}

TEST(MatMulOp, FusedBiasGelu) {
  const std::vector<int64_t> as = {2, 10, 12}, bs = {12, 20};
  auto a = Rand(Numel(as), 6), b = Rand(Numel(bs), 7), bias = Rand(20, 8);
  std::vector<int64_t> out;
  auto want = NaiveMatMul(as, a, bs, b, &out);
  for (size_t i = 0; i < want.size(); ++i) {
    double v = want[i] + bias[i % 20];
    want[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  }
  ThreadPool pool(2);
  OpCase op("FusedMatMul", 1, kOpenCannDomain);
  op.In(as, a, false).In(bs, b, true).In({20}, bias, true);
  op.node().SetString("activation", "Gelu");
  auto y = op.Run(&pool);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectClose(*y, want, "fused matmul gelu", 1e-3f);
}

TEST(MatMulOp, ShapeErrors) {
  OpCase op("MatMul", 13);
  op.In({3, 4}, {}, false).In({5, 6}, {}, false);
  Status s = op.Infer();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("inner dims"), std::string::npos) << s.message();
  OpCase op2("MatMul", 13);
  op2.In({2, 3, 4}, {}, false).In({3, 4, 5}, {}, false);
  s = op2.Infer();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("broadcast"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace oc

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "ops/cpu/elementwise/elementwise_test_util.h"
#include "ops/infer_util.h"

namespace oc {
namespace {

using ewtest::Make;
using ewtest::RunOp;

// Brute-force reduction in double: groups input elements by output index.
std::vector<double> RefReduce(const std::string& op, const std::vector<float>& x, const std::vector<int64_t>& shape,
                              std::vector<int64_t> axes) {
  int64_t rank = shape.size();
  std::vector<bool> red(rank, axes.empty());
  for (auto a : axes) red[a < 0 ? a + rank : a] = true;
  std::vector<int64_t> out_shape;
  for (int64_t i = 0; i < rank; ++i) out_shape.push_back(red[i] ? 1 : shape[i]);
  int64_t nout = ShapeProduct(out_shape);
  std::vector<std::vector<double>> groups(nout);
  for (int64_t f = 0; f < static_cast<int64_t>(x.size()); ++f) {
    int64_t rem = f, o = 0, stride = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      int64_t c = rem % shape[i];
      rem /= shape[i];
      if (!red[i]) o += c * stride;
      stride *= out_shape[i];
    }
    groups[o].push_back(x[f]);
  }
  std::vector<double> y;
  for (auto& g : groups) {
    double s = 0, p = 1, mx = -INFINITY, mn = INFINITY, l1 = 0, sq = 0;
    for (double v : g) {
      s += v; p *= v; mx = std::max(mx, v); mn = std::min(mn, v); l1 += std::fabs(v); sq += v * v;
    }
    double lse = 0;
    for (double v : g) lse += std::exp(v - mx);
    lse = std::log(lse) + mx;
    if (op == "ReduceSum") y.push_back(s);
    else if (op == "ReduceMean") y.push_back(s / g.size());
    else if (op == "ReduceMax") y.push_back(mx);
    else if (op == "ReduceMin") y.push_back(mn);
    else if (op == "ReduceProd") y.push_back(p);
    else if (op == "ReduceL1") y.push_back(l1);
    else if (op == "ReduceL2") y.push_back(std::sqrt(sq));
    else if (op == "ReduceLogSum") y.push_back(std::log(s));
    else if (op == "ReduceLogSumExp") y.push_back(lse);
    else y.push_back(sq);
  }
  return y;
}

const char* kOps[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

struct RCase {
  std::vector<int64_t> shape;
  std::vector<int64_t> axes;
};

TEST(EwReduce, AllOpsAllAxisPatternsMatchReference) {
  std::vector<RCase> cases = {
      {{3, 17}, {1}},         {{3, 17}, {-1}},       {{3, 17}, {0}},          {{2, 3, 4}, {1}},
      {{2, 3, 4}, {0, 2}},    {{2, 3, 4}, {}},       {{2, 3, 4, 5}, {1, 3}},  {{2, 3, 4, 5}, {0, 1}},
      {{2, 1, 4}, {1}},       {{7}, {0}},            {{2, 3, 70, 2}, {2}},    {{1, 5, 1, 3}, {-3, -1}},
      {{4, 130}, {0}},
  };
  for (const char* op : kOps) {
    for (const auto& c : cases) {
      for (int keep : {0, 1}) {
        int64_t total = ShapeProduct(c.shape);
        bool positive = std::string(op) == "ReduceLogSum" || std::string(op) == "ReduceProd";
        auto x = ewtest::RandomFloats(total, positive ? 0.5f : -2.f, positive ? 1.5f : 2.f, total + keep);
        auto r = RunOp(op, {Make(c.shape, x), Make<int64_t>({static_cast<int64_t>(c.axes.size())}, c.axes)},
                       [&](Node& n) { n.SetInt("keepdims", keep); }, 18);
        ASSERT_TRUE(r.ok()) << op << ": " << r.status().ToString();
        auto ref = RefReduce(op, x, c.shape, c.axes);
        auto y = (*r)[0].as<float>();
        ASSERT_EQ(y.size(), ref.size()) << op;
        std::vector<int64_t> want_shape;
        int64_t rank = c.shape.size();
        for (int64_t i = 0; i < rank; ++i) {
          bool red = c.axes.empty();
          for (auto a : c.axes) red |= (a < 0 ? a + rank : a) == i;
          if (!red) want_shape.push_back(c.shape[i]);
          else if (keep) want_shape.push_back(1);
        }
        EXPECT_EQ((*r)[0].shape, want_shape) << op;
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_NEAR(y[i], ref[i], 2e-5 * std::max(1.0, std::fabs(ref[i]))) << op << " output " << i;
      }
    }
  }
}

TEST(EwReduce, AttributeAxesOfOlderOpsetsAreCanonicalised) {
  auto x = ewtest::RandomFloats(24, -1.f, 1.f, 3);
  auto axes = [](Node& n) { n.SetInts("axes", {0, -1}); n.SetInt("keepdims", 0); };
  for (auto [op, opset] : {std::pair{"ReduceSum", 11}, std::pair{"ReduceMean", 13}, std::pair{"ReduceMax", 1}}) {
    auto r = RunOp(op, {Make({2, 3, 4}, x)}, axes, opset);
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().ToString();
    EXPECT_EQ((*r)[0].shape, (std::vector<int64_t>{3}));
    auto ref = RefReduce(op, x, {2, 3, 4}, {0, 2});
    auto y = (*r)[0].as<float>();
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[i], ref[i], 1e-5);
  }
}

TEST(EwReduce, NoopEmptyAxesAndEmptyReductions) {
  std::vector<float> x = {-2.f, 3.f};
  auto noop = [](Node& n) { n.SetInt("noop_with_empty_axes", 1); };
  auto r = RunOp("ReduceL2", {Make({1, 2}, x), Make<int64_t>({0}, {})}, noop);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{2.f, 3.f}));
  r = RunOp("ReduceSumSquare", {Make({1, 2}, x)}, noop);
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{4.f, 9.f}));
  r = RunOp("ReduceSum", {Make({1, 2}, x)});
  EXPECT_EQ((*r)[0].shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{1.f}));
  // Reducing an empty dim gives the identity of the op (onnxruntime's results).
  auto empty = Make<float>({2, 0}, {});
  auto ax1 = Make<int64_t>({1}, {1});
  float inf = std::numeric_limits<float>::infinity();
  for (auto [op, want] : {std::pair{"ReduceMax", -inf}, std::pair{"ReduceMin", inf}, std::pair{"ReduceSum", 0.f},
                          std::pair{"ReduceProd", 1.f}, std::pair{"ReduceLogSumExp", -inf},
                          std::pair{"ReduceMean", 0.f}}) {
    r = RunOp(op, {empty, ax1});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().ToString();
    EXPECT_EQ((*r)[0].as<float>(), (std::vector<float>{want, want})) << op;
  }
}

TEST(EwReduce, IntegerTypesLargeInputsAndErrors) {
  auto r = RunOp("ReduceMean", {Make<int32_t>({1, 3}, {1, 2, 2})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{1}));
  r = RunOp("ReduceMax", {Make<int64_t>({2, 2}, {5, -3, 7, 1}), Make<int64_t>({1}, {1})});
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{5, 7}));
  r = RunOp("ReduceProd", {Make<int64_t>({2, 2}, {5, -3, 7, 1}), Make<int64_t>({1}, {0})});
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{35, -3}));
  r = RunOp("ReduceSum", {Make<int32_t>({3}, {1, 2, 3})}, nullptr, 11);
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{6}));
  // ReduceL2 takes integers (opset 13+): sqrt(14) = 3.74 truncates to 3 as the reference's cast does.
  r = RunOp("ReduceL2", {Make<int32_t>({3}, {1, 2, 3})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].as<int32_t>(), (std::vector<int32_t>{3}));
  EXPECT_EQ(RunOp("ReduceLogSumExp", {Make<int32_t>({3}, {1, 2, 3})}).status().code(), StatusCode::kNotSupported);
  EXPECT_FALSE(RunOp("ReduceSum", {Make<float>({3}, {1, 2, 3}), Make<int64_t>({1}, {1})}).ok());
  EXPECT_FALSE(RunOp("ReduceSum", {Make<float>({3, 1}, {1, 2, 3}), Make<int64_t>({2}, {0, -2})}).ok());

  const int64_t n = 1000003;
  auto x = ewtest::RandomFloats(n, 0.f, 1.f, 8);
  x[12345] = 3.f;  // a unique maximum inside one of the parallel parts
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceL2"}) {
    r = RunOp(op, {Make({n}, x)});
    ASSERT_TRUE(r.ok()) << op;
    double want = RefReduce(op, x, {n}, {})[0];
    EXPECT_NEAR((*r)[0].as<float>()[0], want, 1e-5 * std::fabs(want)) << op;
  }
  // Many small rows: parallel over outputs.
  r = RunOp("ReduceMax", {Make({n / 7, 7}, std::vector<float>(x.begin(), x.begin() + n / 7 * 7)), Make<int64_t>({1}, {1})});
  ASSERT_TRUE(r.ok());
  auto y = (*r)[0].as<float>();
  for (int64_t i = 0; i < n / 7; i += 101) EXPECT_EQ(y[i], *std::max_element(x.begin() + i * 7, x.begin() + i * 7 + 7));
}

TEST(EwArgMax, AxesKeepdimsAndSelectLastIndex) {
  std::vector<float> x = {1, 3, 3, 0, 2, 2, 5, 1, 5, 4, 4, 0};  // shape [2, 3, 2]
  auto arg = [&](const char* op, int64_t axis, int keep, int last) {
    auto r = RunOp(op, {Make({2, 3, 2}, x)}, [&](Node& n) {
      n.SetInt("axis", axis);
      n.SetInt("keepdims", keep);
      n.SetInt("select_last_index", last);
    }, 13);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  };
  auto ref = [&](bool mx, int64_t axis, bool last) {
    std::vector<int64_t> s = {2, 3, 2}, out;
    int64_t outer = ShapeProduct(s, 0, axis), len = s[axis], inner = ShapeProduct(s, axis + 1, 3);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        int64_t bi = 0;
        for (int64_t k = 1; k < len; ++k) {
          float v = x[(o * len + k) * inner + j], b = x[(o * len + bi) * inner + j];
          bool better = mx ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
          if (better) bi = k;
        }
        out.push_back(bi);
      }
    return out;
  };
  for (int64_t axis : {0, 1, 2, -1}) {
    for (int last : {0, 1}) {
      int64_t a = axis < 0 ? axis + 3 : axis;
      auto r = arg("ArgMax", axis, 1, last);
      EXPECT_EQ(r[0].dtype, DataType::kInt64);
      EXPECT_EQ(r[0].as<int64_t>(), ref(true, a, last)) << "axis " << axis << " last " << last;
      r = arg("ArgMin", axis, 0, last);
      EXPECT_EQ(r[0].as<int64_t>(), ref(false, a, last)) << "axis " << axis << " last " << last;
      EXPECT_EQ(r[0].shape.size(), 2u);
    }
  }
  auto r = RunOp("ArgMax", {Make<int32_t>({4}, {3, 9, 9, 1})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].as<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ((*r)[0].shape, (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace oc

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ops/cpu/pool/pool_test_util.h"

namespace oc {
namespace {

using testing::ExpectNear;
using testing::OpTester;
using testing::RandomFloats;

// Naive pooling straight from the ONNX operator text: every output position
// visits every kernel tap; taps outside the input are skipped (and counted
// towards the average only with count_include_pad when they lie in the pads).
struct RefParams {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end, out;
  std::string kind = "max";  // max, avg, lp
  bool count_include_pad = false;
  double p = 2;
  bool column_major = false;
};

std::vector<float> RefPool(const std::vector<float>& x, const std::vector<int64_t>& shape, const RefParams& r,
                           std::vector<int64_t>* indices) {
  size_t rank = shape.size() - 2;
  int64_t planes = shape[0] * shape[1];
  int64_t in_size = 1, out_size = 1;
  for (size_t i = 0; i < rank; ++i) { in_size *= shape[2 + i]; out_size *= r.out[i]; }
  std::vector<float> y;
  for (int64_t pl = 0; pl < planes; ++pl) {
    std::vector<int64_t> o(rank, 0);
    for (int64_t oi = 0; oi < out_size; ++oi) {
      // decode oi into o (row-major)
      int64_t t = oi;
      for (size_t i = rank; i-- > 0;) { o[i] = t % r.out[i]; t /= r.out[i]; }
      int64_t taps = 1;
      for (auto k : r.kernel) taps *= k;
      double acc = r.kind == "max" ? -INFINITY : 0;
      int64_t best = -1, valid = 0, padded = 0;
      for (int64_t ti = 0; ti < taps; ++ti) {
        int64_t tt = ti;
        bool inside = true, in_pad = true;
        std::vector<int64_t> c(rank);
        for (size_t i = rank; i-- > 0;) {
          int64_t k = tt % r.kernel[i];
          tt /= r.kernel[i];
          c[i] = o[i] * r.strides[i] - r.pads_begin[i] + k * r.dilations[i];
          if (c[i] < 0 || c[i] >= shape[2 + i]) inside = false;
          if (c[i] >= shape[2 + i] + r.pads_end[i]) in_pad = false;
        }
        padded += in_pad;
        if (!inside) continue;
        ++valid;
        int64_t flat = 0, flat_cm = 0, m = 1;
        for (size_t i = 0; i < rank; ++i) flat = flat * shape[2 + i] + c[i];
        for (size_t i = 0; i < rank; ++i) { flat_cm += c[i] * m; m *= shape[2 + i]; }
        double v = x[pl * in_size + flat];
        if (r.kind == "max") {
          if (v > acc) { acc = v; best = pl * in_size + (r.column_major ? flat_cm : flat); }
        } else if (r.kind == "avg") {
          acc += v;
        } else {
          acc += std::pow(std::fabs(v), r.p);
        }
      }
      if (r.kind == "avg") acc /= r.count_include_pad ? padded : valid;
      if (r.kind == "lp") acc = std::pow(acc, 1.0 / r.p);
      y.push_back(static_cast<float>(acc));
      if (indices) indices->push_back(best);
    }
  }
  return y;
}

RefParams Params2D(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> pads,
                   std::vector<int64_t> out, std::vector<int64_t> d = {1, 1}) {
  RefParams r;
  r.kernel = k;
  r.strides = s;
  r.dilations = d;
  r.pads_begin = {pads[0], pads[1]};
  r.pads_end = {pads[2], pads[3]};
  r.out = out;
  return r;
}

TEST(PoolTest, MaxPool2DWithPadsAndIndicesMatchesReference) {
  std::vector<int64_t> shape = {2, 3, 7, 6};
  auto x = RandomFloats(2 * 3 * 7 * 6, 1);
  for (int order = 0; order < 2; ++order) {
    OpTester t("MaxPool", 12);
    t.InputF(shape, x).Outputs(2);
    t.node().SetInts("kernel_shape", {3, 2});
    t.node().SetInts("strides", {2, 1});
    t.node().SetInts("pads", {1, 0, 1, 1});
    t.node().SetInt("storage_order", order);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // out = floor((7+2-3)/2)+1 = 4, floor((6+1-2)/1)+1 = 6
    RefParams p = Params2D({3, 2}, {2, 1}, {1, 0, 1, 1}, {4, 6});
    p.column_major = order == 1;
    std::vector<int64_t> idx;
    auto want = RefPool(x, shape, p, &idx);
    EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{2, 3, 4, 6}));
    ExpectNear(r->F(0), want, 1e-6f);
    EXPECT_EQ(r->I64(1), idx) << "storage_order " << order;
  }
}

// Stride 2 through the row path: odd and even widths, pads 0-2 (taps that
// start left of the row), kernels 2-4, max and average (with and without
// count_include_pad), rows of 1100.
TEST(PoolTest, Stride2RowsMatchReference) {
  uint32_t seed = 40;
  for (int64_t w : {5, 8, 9, 16, 17, 33, 1100})
    for (int64_t k : {2, 3, 4})
      for (int64_t pad : {0, 1, 2}) {
        if (pad >= k) continue;
        const std::vector<int64_t> shape = {1, 2, 5, w};
        auto x = RandomFloats(2 * 5 * w, seed++);
        const int64_t oh = (5 + 2 * pad - k) / 2 + 1, ow = (w + 2 * pad - k) / 2 + 1;
        for (const char* kind : {"max", "avg", "avg_pad"}) {
          const bool max = kind[0] == 'm', include = kind[3] == '_';
          OpTester t(max ? "MaxPool" : "AveragePool", 19);
          t.InputF(shape, x).Outputs(1);
          t.node().SetInts("kernel_shape", {k, k});
          t.node().SetInts("strides", {2, 2});
          t.node().SetInts("pads", {pad, pad, pad, pad});
          if (include) t.node().SetInt("count_include_pad", 1);
          auto r = t.Run();
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          RefParams p = Params2D({k, k}, {2, 2}, {pad, pad, pad, pad}, {oh, ow});
          p.kind = max ? "max" : "avg";
          p.count_include_pad = include;
          ExpectNear(r->F(0), RefPool(x, shape, p, nullptr), 1e-5f);
          if (HasFailure()) {
            ADD_FAILURE() << kind << " width " << w << " kernel " << k << " pad " << pad;
            return;
          }
        }
      }
}

TEST(PoolTest, MaxPoolCeilModeDropsWindowsStartingInPadding) {
  // Shapes checked against onnxruntime: 5x5 k2 s2 ceil -> 3x3; 6x6 k3 s2 p1 ceil -> 4x4.
  auto x = RandomFloats(25, 2);
  OpTester t("MaxPool", 12);
  t.InputF({1, 1, 5, 5}, x).Outputs(1);
  t.node().SetInts("kernel_shape", {2, 2});
  t.node().SetInts("strides", {2, 2});
  t.node().SetInt("ceil_mode", 1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 1, 3, 3}));
  ExpectNear(r->F(0), RefPool(x, {1, 1, 5, 5}, Params2D({2, 2}, {2, 2}, {0, 0, 0, 0}, {3, 3}), nullptr), 1e-6f);

  OpTester t2("MaxPool", 12);
  t2.InputF({1, 1, 6, 6}, RandomFloats(36, 3)).Outputs(1);
  t2.node().SetInts("kernel_shape", {3, 3});
  t2.node().SetInts("strides", {2, 2});
  t2.node().SetInts("pads", {1, 1, 1, 1});
  t2.node().SetInt("ceil_mode", 1);
  auto r2 = t2.Run();
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->shapes[0], (std::vector<int64_t>{1, 1, 4, 4}));

  // 4 + 1 pad, k2 s2, ceil: ceil(3/2)+1 = 3, but window 2 would start at 4 -> it
  // starts inside input (4 < 4+1=5)? (3-1)*2 = 4 >= 4 + 0 -> dropped: 2.
  OpTester t3("MaxPool", 12);
  t3.InputF({1, 1, 4, 4}, RandomFloats(16, 4)).Outputs(1);
  t3.node().SetInts("kernel_shape", {2, 2});
  t3.node().SetInts("strides", {2, 2});
  t3.node().SetInts("pads", {0, 0, 1, 1});
  t3.node().SetInt("ceil_mode", 1);
  auto r3 = t3.Run();
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  EXPECT_EQ(r3->shapes[0], (std::vector<int64_t>{1, 1, 2, 2}));
}

TEST(PoolTest, AveragePoolCountIncludePadWithCeilModeMatchesOnnxruntime) {
  // All-ones 6x6, k3 s2 p1 ceil_mode count_include_pad: values from onnxruntime 1.x.
  OpTester t("AveragePool", 19);
  t.InputF({1, 1, 6, 6}, std::vector<float>(36, 1.f)).Outputs(1);
  t.node().SetInts("kernel_shape", {3, 3});
  t.node().SetInts("strides", {2, 2});
  t.node().SetInts("pads", {1, 1, 1, 1});
  t.node().SetInt("ceil_mode", 1);
  t.node().SetInt("count_include_pad", 1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const float a = 4.f / 9, b = 6.f / 9, c = 1.f / 3;
  std::vector<float> want = {a, b, b, c, b, 1, 1, .5f, b, 1, 1, .5f, c, .5f, .5f, .25f};
  ExpectNear(r->F(0), want, 1e-6f);
}

TEST(PoolTest, AveragePoolPadsWithAndWithoutCountIncludePad) {
  std::vector<int64_t> shape = {1, 2, 5, 7};
  auto x = RandomFloats(70, 5);
  for (int cip = 0; cip < 2; ++cip) {
    OpTester t("AveragePool", 11);
    t.InputF(shape, x).Outputs(1);
    t.node().SetInts("kernel_shape", {3, 3});
    t.node().SetInts("strides", {2, 2});
    t.node().SetInts("pads", {1, 2, 1, 0});
    t.node().SetInt("count_include_pad", cip);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    RefParams p = Params2D({3, 3}, {2, 2}, {1, 2, 1, 0}, {3, 4});
    p.kind = "avg";
    p.count_include_pad = cip;
    EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 2, 3, 4}));
    ExpectNear(r->F(0), RefPool(x, shape, p, nullptr), 1e-5f, "cip=" + std::to_string(cip));
  }
}

TEST(PoolTest, AutoPadSameUpperLowerAndValid) {
  std::vector<int64_t> shape = {1, 1, 5, 6};
  auto x = RandomFloats(30, 6);
  struct Case { const char* mode; std::vector<int64_t> pads, out; };
  // k=(3,4) s=2: SAME out = ceil(in/2) = (3,3); total pad = (2*2+3-5, 2*2+4-6) = (2, 2)
  for (const Case& c : {Case{"SAME_UPPER", {1, 1, 1, 1}, {3, 3}}, Case{"SAME_LOWER", {1, 1, 1, 1}, {3, 3}},
                        Case{"VALID", {0, 0, 0, 0}, {2, 2}}}) {
    for (const char* kind : {"MaxPool", "AveragePool"}) {
      OpTester t(kind, 11);
      t.InputF(shape, x).Outputs(1);
      t.node().SetInts("kernel_shape", {3, 4});
      t.node().SetInts("strides", {2, 2});
      t.node().SetString("auto_pad", c.mode);
      auto r = t.Run();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      RefParams p = Params2D({3, 4}, {2, 2}, c.pads, c.out);
      p.kind = std::string(kind) == "MaxPool" ? "max" : "avg";
      ExpectNear(r->F(0), RefPool(x, shape, p, nullptr), 1e-5f, std::string(c.mode) + " " + kind);
    }
  }
  // Odd total padding: SAME_UPPER puts the extra at the end, SAME_LOWER at the start.
  auto y = RandomFloats(6, 7);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    OpTester t("AveragePool", 11);
    t.InputF({1, 1, 6}, y).Outputs(1);
    t.node().SetInts("kernel_shape", {2});
    t.node().SetString("auto_pad", mode);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    RefParams p;
    p.kind = "avg";
    p.kernel = {2};
    p.strides = p.dilations = {1};
    p.pads_begin = {std::string(mode) == "SAME_UPPER" ? 0 : 1};
    p.pads_end = {std::string(mode) == "SAME_UPPER" ? 1 : 0};
    p.out = {6};
    ExpectNear(r->F(0), RefPool(y, {1, 1, 6}, p, nullptr), 1e-6f, mode);
  }
}

TEST(PoolTest, DilatedMaxPoolAndAveragePool) {
  std::vector<int64_t> shape = {1, 2, 8, 9};
  auto x = RandomFloats(144, 8);
  for (const char* kind : {"MaxPool", "AveragePool"}) {
    OpTester t(kind, 19);
    t.InputF(shape, x).Outputs(1);
    t.node().SetInts("kernel_shape", {2, 3});
    t.node().SetInts("dilations", {2, 2});
    t.node().SetInts("pads", {1, 1, 0, 1});
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // out = (8+1-3)/1+1 = 7, (9+2-5)+1 = 7
    RefParams p = Params2D({2, 3}, {1, 1}, {1, 1, 0, 1}, {7, 7}, {2, 2});
    p.kind = std::string(kind) == "MaxPool" ? "max" : "avg";
    EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 2, 7, 7}));
    ExpectNear(r->F(0), RefPool(x, shape, p, nullptr), 1e-5f, kind);
  }
}

TEST(PoolTest, OneAndThreeDimensionalPooling) {
  auto x1 = RandomFloats(2 * 10, 9);
  OpTester t1("MaxPool", 12);
  t1.InputF({1, 2, 10}, x1).Outputs(1);
  t1.node().SetInts("kernel_shape", {3});
  t1.node().SetInts("strides", {3});
  t1.node().SetInts("pads", {1, 1});
  auto r1 = t1.Run();
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  RefParams p1;
  p1.kernel = {3}; p1.strides = {3}; p1.dilations = {1}; p1.pads_begin = {1}; p1.pads_end = {1}; p1.out = {4};
  ExpectNear(r1->F(0), RefPool(x1, {1, 2, 10}, p1, nullptr), 1e-6f);

  std::vector<int64_t> s3 = {2, 1, 4, 5, 6};
  auto x3 = RandomFloats(240, 10);
  OpTester t3("AveragePool", 19);
  t3.InputF(s3, x3).Outputs(1);
  t3.node().SetInts("kernel_shape", {2, 3, 2});
  t3.node().SetInts("strides", {2, 2, 2});
  t3.node().SetInts("pads", {0, 1, 1, 1, 1, 0});
  t3.node().SetInt("count_include_pad", 1);
  auto r3 = t3.Run();
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  RefParams p3;
  p3.kind = "avg";
  p3.count_include_pad = true;
  p3.kernel = {2, 3, 2}; p3.strides = {2, 2, 2}; p3.dilations = {1, 1, 1};
  p3.pads_begin = {0, 1, 1}; p3.pads_end = {1, 1, 0}; p3.out = {2, 3, 3};
  EXPECT_EQ(r3->shapes[0], (std::vector<int64_t>{2, 1, 2, 3, 3}));
  ExpectNear(r3->F(0), RefPool(x3, s3, p3, nullptr), 1e-5f);
}

TEST(PoolTest, LpPoolAndGlobalLpPool) {
  std::vector<int64_t> shape = {1, 2, 5, 5};
  auto x = RandomFloats(50, 11);
  for (int64_t pv : {1, 2, 3}) {
    OpTester t("LpPool", 18);
    t.InputF(shape, x).Outputs(1);
    t.node().SetInts("kernel_shape", {2, 2});
    t.node().SetInts("pads", {1, 1, 0, 0});
    t.node().SetInt("p", pv);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    RefParams p = Params2D({2, 2}, {1, 1}, {1, 1, 0, 0}, {5, 5});
    p.kind = "lp";
    p.p = static_cast<double>(pv);
    ExpectNear(r->F(0), RefPool(x, shape, p, nullptr), 1e-5f, "p=" + std::to_string(pv));
  }
  OpTester g("GlobalLpPool", 2);
  g.InputF(shape, x).Outputs(1);
  g.node().SetInt("p", 3);
  auto r = g.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 2, 1, 1}));
  for (int c = 0; c < 2; ++c) {
    double s = 0;
    for (int i = 0; i < 25; ++i) s += std::pow(std::fabs(x[c * 25 + i]), 3.0);
    EXPECT_NEAR(r->F(0)[c], std::pow(s, 1.0 / 3), 1e-5);
  }
}

TEST(PoolTest, GlobalAverageAndMaxPool) {
  std::vector<int64_t> shape = {2, 3, 4, 5};
  auto x = RandomFloats(120, 12);
  OpTester a("GlobalAveragePool", 1);
  a.InputF(shape, x).Outputs(1);
  auto ra = a.Run();
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  OpTester m("GlobalMaxPool", 22);
  m.InputF(shape, x).Outputs(1);
  auto rm = m.Run();
  ASSERT_TRUE(rm.ok()) << rm.status().ToString();
  EXPECT_EQ(ra->shapes[0], (std::vector<int64_t>{2, 3, 1, 1}));
  for (int pl = 0; pl < 6; ++pl) {
    double s = 0, mx = -INFINITY;
    for (int i = 0; i < 20; ++i) { s += x[pl * 20 + i]; mx = std::max<double>(mx, x[pl * 20 + i]); }
    EXPECT_NEAR(ra->F(0)[pl], s / 20, 1e-6);
    EXPECT_EQ(rm->F(0)[pl], static_cast<float>(mx));
  }
}

TEST(PoolTest, Float64AveragePool) {
  std::vector<double> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i * 0.5;
  OpTester t("AveragePool", 11);
  t.Input<double>({1, 1, 4, 4}, x).Outputs(1);
  t.node().SetInts("kernel_shape", {2, 2});
  t.node().SetInts("strides", {2, 2});
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto y = r->D(0);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_DOUBLE_EQ(y[0], (0 + 0.5 + 2 + 2.5) / 4);
  EXPECT_DOUBLE_EQ(y[3], (5 + 5.5 + 7 + 7.5) / 4);
}

TEST(PoolTest, Int8AndUint8MaxPool) {
  std::vector<int8_t> x = {-5, 3, -128, 7, 1, -2, 0, 127, -1};
  OpTester t("MaxPool", 12);
  t.Input<int8_t>({1, 1, 3, 3}, x).Outputs(1);
  t.node().SetInts("kernel_shape", {2, 2});
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<int8_t> got(r->data[0].as<int8_t>(), r->data[0].as<int8_t>() + 4);
  EXPECT_EQ(got, (std::vector<int8_t>{7, 3, 127, 127}));
  std::vector<uint8_t> u = {200, 3, 255, 7};
  OpTester tu("MaxPool", 12);
  tu.Input<uint8_t>({1, 1, 4}, u).Outputs(1);
  tu.node().SetInts("kernel_shape", {2});
  auto ru = tu.Run();
  ASSERT_TRUE(ru.ok()) << ru.status().ToString();
  std::vector<uint8_t> gu(ru->data[0].as<uint8_t>(), ru->data[0].as<uint8_t>() + 3);
  EXPECT_EQ(gu, (std::vector<uint8_t>{200, 255, 255}));
}

TEST(PoolTest, ErrorsNameTheProblem) {
  OpTester t("MaxPool", 12);
  t.InputF({1, 1, 4, 4}, std::vector<float>(16)).Outputs(1);
  t.node().SetInts("kernel_shape", {2});
  Status st = t.Prepare();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("kernel_shape"), std::string::npos) << st.message();

  OpTester t4("MaxPool", 12);
  t4.InputF({1, 1, 2, 2, 2, 2}, std::vector<float>(16)).Outputs(1);
  t4.node().SetInts("kernel_shape", {1, 1, 1, 1});
  auto r4 = t4.Run();
  EXPECT_EQ(r4.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r4.status().message().find("4-D"), std::string::npos) << r4.status().message();

  OpTester ti("AveragePool", 11);
  ti.Input<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}).Outputs(1);
  ti.node().SetInts("kernel_shape", {2, 2});
  auto ri = ti.Run();
  EXPECT_EQ(ri.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(ri.status().message().find("int32"), std::string::npos) << ri.status().message();

  OpTester tk("MaxPool", 12);
  tk.InputF({1, 1, 2, 2}, std::vector<float>(4)).Outputs(1);
  tk.node().SetInts("kernel_shape", {3, 3});
  EXPECT_EQ(tk.Prepare().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace oc


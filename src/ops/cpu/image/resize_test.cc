#include <gtest/gtest.h>

#include <cmath>

#include "ops/cpu/pool/pool_test_util.h"

namespace oc {
namespace {

using testing::ExpectNear;
using testing::OpTester;
using testing::RandomFloats;

// Reference in the style of the ONNX reference implementation: resize one axis
// at a time, each output sample interpolated from its 1-D input line with the
// formulas of the operator text (edge-padded neighbours, cubic kernel with A).
struct RefResize {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
  std::vector<double> roi;  // start..., end... (tf_crop_and_resize)
};

double RefCoord(const RefResize& r, double x, double scale, int64_t in, int64_t out, int axis, size_t rank,
                bool* extrapolate) {
  *extrapolate = false;
  if (r.coord == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (r.coord == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  // The resized length is in * scale, unrounded, as in the ONNX reference
  // (equal to the output length when sizes are given).
  if (r.coord == "align_corners") {
    double len = scale * static_cast<double>(in);
    return out == 1 ? 0 : x * (in - 1) / (len - 1);
  }
  if (r.coord == "asymmetric") return x / scale;
  // tf_crop_and_resize
  double s = r.roi[axis], e = r.roi[axis + rank];
  double v = out > 1 ? s * (in - 1) + x * (e - s) * (in - 1) / double(out - 1) : 0.5 * (s + e) * (in - 1);
  *extrapolate = v < 0 || v > in - 1;
  return v;
}

double Cubic(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

std::vector<float> RefResizeNd(std::vector<float> x, std::vector<int64_t> shape, const std::vector<double>& scales,
                               const std::vector<int64_t>& out_shape, const RefResize& r) {
  size_t rank = shape.size();
  for (size_t ax = 0; ax < rank; ++ax) {
    int64_t in = shape[ax], out = out_shape[ax];
    if (in == out && scales[ax] == 1 && r.coord != "tf_crop_and_resize") continue;
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < ax; ++i) outer *= shape[i];
    for (size_t i = ax + 1; i < rank; ++i) inner *= shape[i];
    std::vector<float> y(outer * out * inner);
    for (int64_t o1 = 0; o1 < outer; ++o1)
      for (int64_t i1 = 0; i1 < inner; ++i1) {
        auto at = [&](int64_t i) { return x[(o1 * in + std::clamp<int64_t>(i, 0, in - 1)) * inner + i1]; };
        for (int64_t o = 0; o < out; ++o) {
          bool extra;
          double c = RefCoord(r, o, scales[ax], in, out, static_cast<int>(ax), rank, &extra);
          double v;
          if (r.mode == "nearest") {
            double f = std::floor(c);
            int64_t idx;
            if (r.nearest == "floor") idx = int64_t(f);
            else if (r.nearest == "ceil") idx = int64_t(std::ceil(c));
            else if (c - f == 0.5) idx = r.nearest == "round_prefer_floor" ? int64_t(f) : int64_t(f) + 1;
            else idx = int64_t(std::lround(c));
            v = at(idx);
          } else if (r.mode == "linear") {
            double f = std::floor(c), t = c - f;
            v = at(int64_t(f)) * (1 - t) + at(int64_t(f) + 1) * t;
          } else {
            double f = std::floor(c), t = c - f, sum = 0, acc = 0;
            for (int k = -1; k <= 2; ++k) {
              int64_t idx = int64_t(f) + k;
              double w = Cubic(t - k, r.a);
              if (r.exclude_outside && (idx < 0 || idx >= in)) w = 0;
              sum += w;
              acc += w * at(idx);
            }
            v = r.exclude_outside ? acc / sum : acc;
          }
          if (extra) v = r.extrapolation;
          y[(o1 * out + o) * inner + i1] = static_cast<float>(v);
        }
      }
    x = std::move(y);
    shape[ax] = out;
  }
  return x;
}

TEST(ResizeTest, ModesAndCoordinateTransformsMatchReference) {
  std::vector<int64_t> shape = {1, 2, 4, 5};
  auto x = RandomFloats(40, 1);
  struct Case { const char* mode; const char* coord; const char* nearest; std::vector<float> scales; };
  std::vector<Case> cases;
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      cases.push_back({"nearest", coord, nm, {1, 1, 2.f, 1.5f}});
    cases.push_back({"linear", coord, "", {1, 1, 2.f, 0.75f}});
    cases.push_back({"linear", coord, "", {1, 1, 0.5f, 2.5f}});
    cases.push_back({"cubic", coord, "", {1, 1, 1.5f, 0.75f}});
    cases.push_back({"cubic", coord, "", {1, 1, 0.75f, 2.f}});
  }
  for (const Case& c : cases) {
    OpTester t("Resize", 13);
    t.InputF(shape, x).NoInput().InputF({4}, c.scales).Outputs(1);
    t.node().SetString("mode", c.mode);
    t.node().SetString("coordinate_transformation_mode", c.coord);
    if (*c.nearest) t.node().SetString("nearest_mode", c.nearest);
    auto r = t.Run();
    std::string what = std::string(c.mode) + " " + c.coord + " " + c.nearest + " " + std::to_string(c.scales[2]);
    ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
    std::vector<int64_t> out;
    std::vector<double> sc;
    for (size_t i = 0; i < 4; ++i) {
      out.push_back(static_cast<int64_t>(std::floor(shape[i] * c.scales[i])));
      sc.push_back(c.scales[i]);
    }
    EXPECT_EQ(r->shapes[0], out) << what;
    RefResize ref;
    ref.mode = c.mode;
    ref.coord = c.coord;
    if (*c.nearest) ref.nearest = c.nearest;
    ExpectNear(r->F(0), RefResizeNd(x, shape, sc, out, ref), 1e-5f, what);
  }
}

TEST(ResizeTest, CubicCoefficientAndExcludeOutside) {
  std::vector<int64_t> shape = {1, 1, 5, 6};
  auto x = RandomFloats(30, 2);
  OpTester t("Resize", 19);
  t.InputF(shape, x).NoInput().InputF({4}, {1, 1, 1.5f, 0.5f}).Outputs(1);
  t.node().SetString("mode", "cubic");
  t.node().SetFloat("cubic_coeff_a", -0.5f);
  t.node().SetInt("exclude_outside", 1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  RefResize ref;
  ref.mode = "cubic";
  ref.a = -0.5;
  ref.exclude_outside = true;
  ExpectNear(r->F(0), RefResizeNd(x, shape, {1, 1, 1.5, 0.5}, {1, 1, 7, 3}, ref), 1e-5f);
}

TEST(ResizeTest, SizesInputWithAxesAndKeepAspectRatio) {
  std::vector<int64_t> shape = {1, 2, 4, 6};
  auto x = RandomFloats(48, 3);
  // sizes (stretch): scale = out / in per axis.
  OpTester s("Resize", 13);
  s.InputF(shape, x).NoInput().NoInput().InputI64({4}, {1, 2, 7, 3}).Outputs(1);
  s.node().SetString("mode", "linear");
  auto rs = s.Run();
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  RefResize lin;
  lin.mode = "linear";
  ExpectNear(rs->F(0), RefResizeNd(x, shape, {1, 1, 7 / 4.0, 3 / 6.0}, {1, 2, 7, 3}, lin), 1e-5f, "stretch");

  // axes [3, 2] with sizes [9, 8]: not_larger takes min(9/6, 8/4) = 1.5 -> (6, 9).
  for (const char* policy : {"not_larger", "not_smaller"}) {
    OpTester k("Resize", 18);
    k.InputF(shape, x).NoInput().NoInput().InputI64({2}, {9, 8}).Outputs(1);
    k.node().SetString("mode", "nearest");
    k.node().SetInts("axes", {3, 2});
    k.node().SetString("keep_aspect_ratio_policy", policy);
    auto rk = k.Run();
    ASSERT_TRUE(rk.ok()) << rk.status().ToString();
    double sc = std::string(policy) == "not_larger" ? 1.5 : 2.0;
    std::vector<int64_t> out = {1, 2, int64_t(std::floor(4 * sc + 0.5)), int64_t(std::floor(6 * sc + 0.5))};
    EXPECT_EQ(rk->shapes[0], out) << policy;
    ExpectNear(rk->F(0), RefResizeNd(x, shape, {1, 1, sc, sc}, out, RefResize{}), 1e-6f, policy);
  }

  // scales with negative axes.
  OpTester a("Resize", 18);
  a.InputF(shape, x).NoInput().InputF({2}, {0.5f, 2.f}).Outputs(1);
  a.node().SetString("mode", "linear");
  a.node().SetInts("axes", {-1, 2});
  auto ra = a.Run();
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_EQ(ra->shapes[0], (std::vector<int64_t>{1, 2, 8, 3}));
  ExpectNear(ra->F(0), RefResizeNd(x, shape, {1, 1, 2, 0.5}, {1, 2, 8, 3}, lin), 1e-5f, "axes");
}

TEST(ResizeTest, TfCropAndResizeExtrapolates) {
  std::vector<int64_t> shape = {1, 1, 4, 5};
  auto x = RandomFloats(20, 4);
  std::vector<float> roi = {0, 0, 0.25f, -0.25f, 1, 1, 0.75f, 1.25f};
  for (const char* mode : {"nearest", "linear"}) {
    OpTester t("Resize", 13);
    t.InputF(shape, x).InputF({8}, roi).InputF({4}, {1, 1, 1.5f, 1.2f}).Outputs(1);
    t.node().SetString("mode", mode);
    t.node().SetString("coordinate_transformation_mode", "tf_crop_and_resize");
    t.node().SetFloat("extrapolation_value", -7.f);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    RefResize ref;
    ref.mode = mode;
    ref.coord = "tf_crop_and_resize";
    ref.extrapolation = -7;
    ref.roi.assign(roi.begin(), roi.end());
    EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 1, 6, 6}));
    ExpectNear(r->F(0), RefResizeNd(x, shape, {1, 1, 1.5, 1.2}, {1, 1, 6, 6}, ref), 1e-5f, mode);
  }
}

TEST(ResizeTest, UpsampleIsCanonicalisedToResize10) {
  // Upsample-7 (scales attribute), integer scales: numpy.repeat along each axis.
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  OpTester t("Upsample", 7);
  t.InputF({1, 1, 2, 3}, x).Outputs(1);
  t.node().SetFloats("scales", {1, 1, 2, 2});
  t.node().SetString("mode", "nearest");
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(t.node().op_type, "Resize");
  EXPECT_EQ(t.node().opset, 10);
  EXPECT_EQ(r->F(0), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 4, 4, 5, 5, 6, 6}));

  // Upsample-9 linear (asymmetric, clamped): values from onnxruntime for
  // [[0, 1], [2, 3]] with scales (1, 1, 1.5, 2.5).
  OpTester u("Upsample", 9);
  u.InputF({1, 1, 2, 2}, {0, 1, 2, 3}).InputF({4}, {1, 1, 1.5f, 2.5f}).Outputs(1);
  u.node().SetString("mode", "linear");
  auto ru = u.Run();
  ASSERT_TRUE(ru.ok()) << ru.status().ToString();
  const float a = 4.f / 3;
  ExpectNear(ru->F(0), {0, 0.4f, 0.8f, 1, 1, a, a + 0.4f, a + 0.8f, a + 1, a + 1, 2, 2.4f, 2.8f, 3, 3}, 1e-5f);
}

TEST(ResizeTest, Resize10NearestFloorsWhenEnlargingAndCeilsWhenShrinking) {
  // onnxruntime: 4x4 arange with scales 0.6 -> [[0, 2], [8, 10]];
  // 2x2 arange with (1.5, 2.5) -> rows 0,0,1 and columns 0,0,0,1,1.
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  OpTester d("Resize", 10);
  d.InputF({1, 1, 4, 4}, x).InputF({4}, {1, 1, 0.6f, 0.6f}).Outputs(1);
  auto rd = d.Run();
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_EQ(rd->F(0), (std::vector<float>{0, 2, 8, 10}));
  OpTester u("Resize", 10);
  u.InputF({1, 1, 2, 2}, {0, 1, 2, 3}).InputF({4}, {1, 1, 1.5f, 2.5f}).Outputs(1);
  auto ru = u.Run();
  ASSERT_TRUE(ru.ok()) << ru.status().ToString();
  EXPECT_EQ(ru->F(0), (std::vector<float>{0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 2, 2, 2, 3, 3}));
}

TEST(ResizeTest, DynamicBatchKeepsShapeInference) {
  OpTester s("Resize", 13);
  s.DynamicInput(DataType::kFloat32, {-1, 3, 4, 4}).NoInput().NoInput().InputI64({4}, {1, 3, 8, 2}).Outputs(1);
  ASSERT_TRUE(s.Prepare().ok());
  EXPECT_EQ(s.node().output(0)->shape, (std::vector<int64_t>{1, 3, 8, 2}));
  OpTester c("Resize", 13);
  c.DynamicInput(DataType::kFloat32, {-1, 3, 4, 4}).NoInput().InputF({4}, {1, 1, 2, 0.5f}).Outputs(1);
  ASSERT_TRUE(c.Prepare().ok());
  EXPECT_EQ(c.node().output(0)->shape, (std::vector<int64_t>{-1, 3, 8, 2}));
}

TEST(ResizeTest, ErrorsNameTheProblem) {
  OpTester d("Resize", 13);
  d.InputF({1, 1, 2, 2}, std::vector<float>(4)).NoInput().DynamicInput(DataType::kFloat32, {4}).Outputs(1);
  Status st = d.Prepare();
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("scales"), std::string::npos) << st.message();

  OpTester both("Resize", 13);
  both.InputF({1, 1, 2, 2}, std::vector<float>(4)).NoInput().InputF({4}, {1, 1, 2, 2})
      .InputI64({4}, {1, 1, 4, 4}).Outputs(1);
  EXPECT_EQ(both.Prepare().code(), StatusCode::kInvalidArgument);

  OpTester it("Resize", 13);
  it.Input<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}).NoInput().InputF({4}, {1, 1, 2, 2}).Outputs(1);
  auto ri = it.Run();
  EXPECT_EQ(ri.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(ri.status().message().find("int32"), std::string::npos) << ri.status().message();

  OpTester bad("Resize", 13);
  bad.InputF({1, 1, 2, 2}, std::vector<float>(4)).NoInput().InputF({3}, {1, 2, 2}).Outputs(1);
  EXPECT_EQ(bad.Prepare().code(), StatusCode::kInvalidArgument);
}

// Linear antialias at scale 1/2 (half_pixel): output o is centred on input
// 2o + 0.5 and the triangle kernel widens to 2 input pixels each side, so it
// weighs inputs 2o-1 .. 2o+2 by 1/8, 3/8, 3/8, 1/8 (edge-clamped indices).
TEST(ResizeTest, LinearAntialiasHalvesWithWidenedTriangle) {
  const int64_t in = 10;
  auto x = RandomFloats(in, 8);
  OpTester t("Resize", 18);
  t.InputF({1, in}, x).NoInput().InputF({2}, {1, 0.5f}).Outputs(1);
  t.node().SetString("mode", "linear");
  t.node().SetInt("antialias", 1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> want;
  auto at = [&](int64_t i) { return x[std::clamp<int64_t>(i, 0, in - 1)]; };
  for (int64_t o = 0; o < in / 2; ++o)
    want.push_back((at(2 * o - 1) + 3 * at(2 * o) + 3 * at(2 * o + 1) + at(2 * o + 2)) / 8);
  ExpectNear(r->F(0), want, 1e-5f);
}

}  // namespace
}  // namespace oc

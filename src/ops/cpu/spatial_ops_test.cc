// GridSample, AffineGrid, DFT, STFT, RoiAlign and BatchNormalization training
// mode against direct formulas of the operator definitions (a naive O(n^2) DFT,
// bilinear sampling written out per corner, batch statistics by hand).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <string>

#include "ops/cpu/pool/pool_test_util.h"

namespace oc {
namespace {

using testing::ExpectNear;
using testing::OpTester;
using testing::RandomFloats;

// Bilinear sample of a [h, w] plane at pixel coordinates, zero outside.
float Bilinear(const std::vector<float>& img, int64_t h, int64_t w, double y, double x) {
  const double fy = std::floor(y), fx = std::floor(x);
  double v = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      int64_t yy = static_cast<int64_t>(fy) + dy, xx = static_cast<int64_t>(fx) + dx;
      double wy = dy ? y - fy : 1 - (y - fy), wx = dx ? x - fx : 1 - (x - fx);
      if (yy >= 0 && yy < h && xx >= 0 && xx < w) v += wy * wx * img[yy * w + xx];
    }
  return static_cast<float>(v);
}

TEST(GridSampleOp, BilinearZerosMatchesFormula) {
  const int64_t c = 3, h = 5, w = 7, oh = 4, ow = 6;
  for (int align = 0; align < 2; ++align) {
    std::vector<float> x = RandomFloats(c * h * w, 1);
    std::vector<float> g = RandomFloats(oh * ow * 2, 2, -1.3f, 1.3f);
    OpTester t("GridSample", 20);
    t.InputF({1, c, h, w}, x).InputF({1, oh, ow, 2}, g).Outputs(1);
    t.node().SetInt("align_corners", align);
    auto r = t.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<float> want;
    for (int64_t ch = 0; ch < c; ++ch) {
      std::vector<float> plane(x.begin() + ch * h * w, x.begin() + (ch + 1) * h * w);
      for (int64_t i = 0; i < oh * ow; ++i) {
        double gx = g[2 * i], gy = g[2 * i + 1];
        double px = align ? (gx + 1) / 2 * (w - 1) : ((gx + 1) * w - 1) / 2;
        double py = align ? (gy + 1) / 2 * (h - 1) : ((gy + 1) * h - 1) / 2;
        want.push_back(Bilinear(plane, h, w, py, px));
      }
    }
    EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, c, oh, ow}));
    ExpectNear(r->F(0), want, 1e-5f, "align_corners=" + std::to_string(align));
  }
}

TEST(GridSampleOp, NearestBorderClampsAndRoundsHalfToEven) {
  // 1x4 row; x = -1..1 maps (align_corners=1) to 0..3; 0.5 steps hit ties.
  std::vector<float> x = {10, 20, 30, 40};
  std::vector<float> g = {-1.f, 0.f, -2.f / 3, 0.f, 2.f / 3, 0.f, 5.f, 0.f};
  OpTester t("GridSample", 20);
  t.InputF({1, 1, 1, 4}, x).InputF({1, 1, 4, 2}, g).Outputs(1);
  t.node().SetString("mode", "nearest");
  t.node().SetString("padding_mode", "border");
  t.node().SetInt("align_corners", 1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // positions 0, 0.5 -> 0 (even), 2.5 -> 2 (even), 9 -> clamped to 3.
  ExpectNear(r->F(0), {10, 10, 30, 40}, 0);
}

TEST(GridSampleOp, NonFiniteAndHugeGridValuesStayDefined) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> g = {nan, 0.f, inf, 0.f, -inf, 0.5f, 1e30f, -1e30f};
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      OpTester t("GridSample", 20);
      t.InputF({1, 1, 3, 4}, RandomFloats(12, 3)).InputF({1, 1, 4, 2}, g).Outputs(1);
      t.node().SetString("mode", mode);
      t.node().SetString("padding_mode", pad);
      auto r = t.Run();
      ASSERT_TRUE(r.ok()) << mode << " " << pad << ": " << r.status().ToString();
      std::vector<float> y = r->F(0);
      ASSERT_EQ(y.size(), 4u);
      if (std::string(pad) == "zeros") {
        EXPECT_EQ(y[0], 0.f) << mode;  // NaN samples outside: zero
      }
    }
}

TEST(AffineGridOp, IdentityThetaGivesBaseGrid) {
  OpTester t("AffineGrid", 20);
  t.InputF({1, 2, 3}, {1, 0, 0, 0, 1, 0}).InputI64({4}, {1, 1, 2, 3}).Outputs(1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, 2, 3, 2}));
  // Centres of 3 columns and 2 rows over [-1, 1] (align_corners=0), x first.
  std::vector<float> want;
  for (float y : {-0.5f, 0.5f})
    for (float x : {-2.f / 3, 0.f, 2.f / 3}) { want.push_back(x); want.push_back(y); }
  ExpectNear(r->F(0), want, 1e-6f);
}

std::vector<std::complex<double>> NaiveDft(const std::vector<std::complex<double>>& a, int64_t n, bool inverse) {
  std::vector<std::complex<double>> out(n);
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> acc = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(a.size()); ++j) {
      double ang = (inverse ? 2 : -2) * std::numbers::pi * static_cast<double>(j * k) / static_cast<double>(n);
      acc += a[j] * std::complex<double>(std::cos(ang), std::sin(ang));
    }
    out[k] = inverse ? acc / static_cast<double>(n) : acc;
  }
  return out;
}

TEST(DftOp, ComplexForwardAndInverseMatchNaiveSum) {
  // Radix 4, 2, 3, 5, a prime radix (7), a length past the largest radix
  // (37: direct sum), and 400 = 4 * 4 * 5 * 5 (audio frames).
  for (int64_t len : {7, 16, 12, 8, 37, 400}) {
    for (int inverse = 0; inverse < 2; ++inverse) {
      const int64_t batch = 3;
      std::vector<float> x = RandomFloats(batch * len * 2, static_cast<uint32_t>(len + inverse));
      OpTester t("DFT", 17);
      t.InputF({batch, len, 2}, x).Outputs(1);
      t.node().SetInt("axis", 1);
      t.node().SetInt("inverse", inverse);
      auto r = t.Run();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      std::vector<float> want;
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<std::complex<double>> a;
        for (int64_t j = 0; j < len; ++j) a.emplace_back(x[(b * len + j) * 2], x[(b * len + j) * 2 + 1]);
        for (auto v : NaiveDft(a, len, inverse)) { want.push_back(static_cast<float>(v.real()));
                                                   want.push_back(static_cast<float>(v.imag())); }
      }
      ExpectNear(r->F(0), want, 1e-4f, "len " + std::to_string(len) + " inverse " + std::to_string(inverse));
    }
  }
}

TEST(DftOp, OnesidedThenIrfftRoundTrips) {
  const int64_t n = 10;
  std::vector<float> x = RandomFloats(n, 5);
  OpTester fwd("DFT", 20);
  fwd.InputF({1, n, 1}, x).NoInput().InputI64({}, {1}).Outputs(1);
  fwd.node().SetInt("onesided", 1);
  auto f = fwd.Run();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->shapes[0], (std::vector<int64_t>{1, n / 2 + 1, 2}));
  OpTester inv("DFT", 20);
  inv.InputF({1, n / 2 + 1, 2}, f->F(0)).InputI64({}, {n}).InputI64({}, {1}).Outputs(1);
  inv.node().SetInt("onesided", 1);
  inv.node().SetInt("inverse", 1);
  auto r = inv.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, n, 1}));
  ExpectNear(r->F(0), x, 1e-5f);
}

TEST(StftOp, FramesAreWindowedDfts) {
  const int64_t len = 40, frame = 8, step = 5;
  std::vector<float> x = RandomFloats(len, 9);
  std::vector<float> win(frame);
  for (int64_t i = 0; i < frame; ++i) win[i] = 0.5f - 0.5f * std::cos(2 * std::numbers::pi * i / frame);
  OpTester t("STFT", 17);
  t.InputF({1, len, 1}, x).InputI64({}, {step}).InputF({frame}, win).Outputs(1);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const int64_t frames = 1 + (len - frame) / step, bins = frame / 2 + 1;
  EXPECT_EQ(r->shapes[0], (std::vector<int64_t>{1, frames, bins, 2}));
  std::vector<float> want;
  for (int64_t f = 0; f < frames; ++f) {
    std::vector<std::complex<double>> a;
    for (int64_t j = 0; j < frame; ++j) a.emplace_back(x[f * step + j] * win[j], 0);
    auto d = NaiveDft(a, frame, false);
    for (int64_t k = 0; k < bins; ++k) { want.push_back(static_cast<float>(d[k].real()));
                                         want.push_back(static_cast<float>(d[k].imag())); }
  }
  ExpectNear(r->F(0), want, 1e-4f);
}

TEST(RoiAlignOp, AverageOfBilinearSamples) {
  const int64_t h = 6, w = 8;
  std::vector<float> x = RandomFloats(h * w, 4);
  OpTester t("RoiAlign", 16);
  t.InputF({1, 1, h, w}, x).InputF({1, 4}, {1.f, 0.5f, 6.f, 4.5f}).InputI64({1}, {0}).Outputs(1);
  t.node().SetInt("output_height", 2);
  t.node().SetInt("output_width", 2);
  t.node().SetInt("sampling_ratio", 2);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // half_pixel: the ROI is shifted by -0.5; 2x2 bins, 2x2 samples each.
  const double x0 = 0.5, y0 = 0.0, bw = 5.0 / 2, bh = 4.0 / 2;
  std::vector<float> want;
  for (int py = 0; py < 2; ++py)
    for (int px = 0; px < 2; ++px) {
      double acc = 0;
      for (int iy = 0; iy < 2; ++iy)
        for (int ix = 0; ix < 2; ++ix)
          acc += Bilinear(x, h, w, y0 + py * bh + (iy + 0.5) * bh / 2, x0 + px * bw + (ix + 0.5) * bw / 2);
      want.push_back(static_cast<float>(acc / 4));
    }
  ExpectNear(r->F(0), want, 1e-5f);
}

TEST(RoiAlignOp, BatchIndexOutOfRangeIsAnError) {
  OpTester t("RoiAlign", 16);
  t.InputF({2, 1, 4, 4}, RandomFloats(32, 1)).InputF({1, 4}, {0, 0, 2, 2}).InputI64({1}, {2}).Outputs(1);
  auto r = t.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("batch_indices[0] = 2"), std::string::npos) << r.status().message();
}

TEST(BatchNormOp, TrainingModeUsesBatchStatistics) {
  const int64_t n = 2, c = 3, inner = 4;
  std::vector<float> x = RandomFloats(n * c * inner, 6);
  std::vector<float> scale = {1.f, 2.f, 0.5f}, bias = {0.f, 1.f, -1.f}, mean = {0.1f, 0.2f, 0.3f},
                     var = {1.f, 2.f, 3.f};
  OpTester t("BatchNormalization", 15);
  t.InputF({n, c, inner}, x).InputF({c}, scale).InputF({c}, bias).InputF({c}, mean).InputF({c}, var).Outputs(3);
  t.node().SetInt("training_mode", 1);
  t.node().SetFloat("momentum", 0.7f);
  auto r = t.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> want_y(x.size()), want_m, want_v;
  for (int64_t ch = 0; ch < c; ++ch) {
    double s = 0, sq = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) s += x[(b * c + ch) * inner + i];
    double m = s / (n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) sq += std::pow(x[(b * c + ch) * inner + i] - m, 2);
    double v = sq / (n * inner);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t k = (b * c + ch) * inner + i;
        want_y[k] = static_cast<float>((x[k] - m) / std::sqrt(v + 1e-5) * scale[ch] + bias[ch]);
      }
    want_m.push_back(static_cast<float>(mean[ch] * 0.7 + m * 0.3));
    want_v.push_back(static_cast<float>(var[ch] * 0.7 + v * 0.3));
  }
  ExpectNear(r->F(0), want_y, 1e-5f, "Y");
  ExpectNear(r->F(1), want_m, 1e-5f, "running_mean");
  ExpectNear(r->F(2), want_v, 1e-5f, "running_var");
}

}  // namespace
}  // namespace oc

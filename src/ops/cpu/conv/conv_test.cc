// Conv, FusedConv and ConvTranspose against naive direct convolutions written
// here (3-D loops; 1-D/2-D are the same with unit dims), over the depthwise,
// 1x1 and im2col paths, groups, dilations, strides, pads and auto_pad.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/thread_pool.h"
#include "ops/cpu/gemm/gemm_op_test_util.h"

namespace oc {
namespace {

using gemm_testing::ExpectClose;
using gemm_testing::OpCase;
using gemm_testing::Rand;

struct ConvSpec {
  std::vector<int64_t> x;  // [N, C, spatial...]
  int64_t m = 1;           // output channels
  std::vector<int64_t> k;
  int64_t group = 1;
  std::vector<int64_t> stride, dilation, pads;  // pads: begins then ends (explicit)
  std::string auto_pad;                         // when set, the node gets this and no pads
  std::vector<int64_t> want_pads;               // pads the reference uses when auto_pad is set
  bool bias = false, residual = false, relu = false;
  bool relu6 = false;  // FusedConv activation Clip(0, 6), MobileNetV2's ReLU6
  float leaky = 0.f;   // > 0: FusedConv activation LeakyRelu with this slope
};

std::vector<int64_t> Pad3(const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> r(3 - v.size(), fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

// Y[n, m, o] = B[m] + sum_{c, k} X[n, g*C/G + c, o*s - p + k*d] W[m, c, k] (+Z, relu).
std::vector<float> NaiveConv(const ConvSpec& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, const std::vector<float>& z,
                             std::vector<int64_t>* out_shape) {
  const size_t nd = s.x.size() - 2;
  std::vector<int64_t> pads = s.auto_pad.empty() ? s.pads : s.want_pads;
  if (pads.empty()) pads.assign(2 * nd, 0);
  std::vector<int64_t> st = s.stride.empty() ? std::vector<int64_t>(nd, 1) : s.stride;
  std::vector<int64_t> dl = s.dilation.empty() ? std::vector<int64_t>(nd, 1) : s.dilation;
  auto in = Pad3({s.x.begin() + 2, s.x.end()}, 1), k = Pad3(s.k, 1), S = Pad3(st, 1), D = Pad3(dl, 1);
  auto pb = Pad3({pads.begin(), pads.begin() + nd}, 0), pe = Pad3({pads.begin() + nd, pads.end()}, 0);
  std::vector<int64_t> out(3);
  for (int i = 0; i < 3; ++i) out[i] = (in[i] + pb[i] + pe[i] - ((k[i] - 1) * D[i] + 1)) / S[i] + 1;
  const int64_t N = s.x[0], C = s.x[1], cg = C / s.group, mg = s.m / s.group;
  *out_shape = {N, s.m};
  for (size_t i = 3 - nd; i < 3; ++i) out_shape->push_back(out[i]);
  std::vector<float> y(N * s.m * out[0] * out[1] * out[2]);
  size_t yi = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oz = 0; oz < out[0]; ++oz)
        for (int64_t oy = 0; oy < out[1]; ++oy)
          for (int64_t ox = 0; ox < out[2]; ++ox, ++yi) {
            double acc = b.empty() ? 0.0 : b[m];
            const int64_t g = m / mg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t ky = 0; ky < k[1]; ++ky)
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    int64_t iz = oz * S[0] - pb[0] + kz * D[0], iy = oy * S[1] - pb[1] + ky * D[1],
                            ix = ox * S[2] - pb[2] + kx * D[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2]) continue;
                    double xv = x[(((n * C + g * cg + c) * in[0] + iz) * in[1] + iy) * in[2] + ix];
                    double wv = w[(((m * cg + c) * k[0] + kz) * k[1] + ky) * k[2] + kx];
                    acc += xv * wv;
                  }
            if (!z.empty()) acc += z[yi];
            if (s.relu) acc = std::max(acc, 0.0);
            if (s.relu6) acc = std::min(std::max(acc, 0.0), 6.0);
            if (s.leaky > 0.f && acc < 0.0) acc *= s.leaky;
            y[yi] = static_cast<float>(acc);
          }
  return y;
}

void CheckConv(const ConvSpec& s, const std::string& what, int threads = 3) {
  const size_t nd = s.x.size() - 2;
  std::vector<int64_t> wshape = {s.m, s.x[1] / s.group};
  wshape.insert(wshape.end(), s.k.begin(), s.k.end());
  int64_t xn = 1, wn = 1;
  for (auto d : s.x) xn *= d;
  for (auto d : wshape) wn *= d;
  auto x = Rand(xn, 1), w = Rand(wn, 2), b = s.bias ? Rand(s.m, 3) : std::vector<float>{};
  std::vector<int64_t> out_shape;
  auto probe = NaiveConv(s, x, w, b, {}, &out_shape);
  std::vector<float> z = s.residual ? Rand(probe.size(), 4) : std::vector<float>{};
  auto want = NaiveConv(s, x, w, b, z, &out_shape);
  ThreadPool pool(threads);
  for (bool const_w : {true, false}) {
    const bool fused = s.residual || s.relu || s.relu6 || s.leaky > 0.f;
    OpCase c(fused ? "FusedConv" : "Conv", fused ? 1 : 22, fused ? kOpenCannDomain : "");
    c.In(s.x, x, false).In(wshape, w, const_w);
    if (s.bias) c.In({s.m}, b, true);
    else if (s.residual) c.Missing();
    if (s.residual) c.In(out_shape, z, false);
    Node& n = c.node();
    if (s.group != 1) n.SetInt("group", s.group);
    if (!s.stride.empty()) n.SetInts("strides", s.stride);
    if (!s.dilation.empty()) n.SetInts("dilations", s.dilation);
    if (!s.pads.empty()) n.SetInts("pads", s.pads);
    if (!s.auto_pad.empty()) n.SetString("auto_pad", s.auto_pad);
    if (s.relu) n.SetString("activation", "Relu");
    if (s.relu6) {
      n.SetString("activation", "Clip");
      n.SetFloat("activation_alpha", 0.f);
      n.SetFloat("activation_beta", 6.f);
    }
    if (s.leaky > 0.f) {
      n.SetString("activation", "LeakyRelu");
      n.SetFloat("activation_alpha", s.leaky);
    }
    if (nd == 2 && const_w) n.SetInts("kernel_shape", s.k);  // sometimes given, sometimes inferred
    auto y = c.Run(&pool);
    ASSERT_TRUE(y.ok()) << what << ": " << y.status().ToString();
    EXPECT_EQ(c.OutShape(), out_shape) << what;
    ExpectClose(*y, want, what + (const_w ? " const W" : " runtime W"));
  }
}

TEST(ConvOp, Im2ColPathPadsStridesBatch) {
  CheckConv({.x = {2, 3, 9, 8}, .m = 5, .k = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true}, "3x3 pad1");
  CheckConv({.x = {1, 4, 11, 10}, .m = 7, .k = {3, 2}, .stride = {2, 3}, .pads = {0, 1, 2, 1}}, "asym");
  CheckConv({.x = {1, 2, 12, 12}, .m = 3, .k = {3, 3}, .dilation = {2, 3}, .pads = {2, 1, 0, 3}}, "dilated");
}

TEST(ConvOp, Im2ColUnitStrideAcrossGemmBlocks) {
  // More than one K block (> 256 im2col rows, so a block starts inside a
  // channel's taps) and more than one N block (> 1024 positions, so a block
  // starts inside an output row), for the contiguous-row packer; with a
  // vertical stride, dilations, asymmetric pads and narrow rows as well.
  CheckConv({.x = {1, 30, 70, 45}, .m = 5, .k = {3, 3}, .stride = {2, 1}, .pads = {1, 2, 0, 1}, .bias = true},
            "3x3 stride (2,1), K 270, N 1610");
  CheckConv({.x = {1, 29, 40, 37}, .m = 17, .k = {3, 3}, .dilation = {2, 2}, .pads = {2, 2, 2, 2}},
            "dilated, K 261, N 1480");
  CheckConv({.x = {1, 40, 9, 7}, .m = 3, .k = {3, 3}, .pads = {1, 1, 1, 1}}, "rows of 7, K 360");
  CheckConv({.x = {1, 3, 1100}, .m = 4, .k = {5}, .pads = {2, 1}}, "1-D, N 1100");
}

TEST(ConvOp, OneByOneDirectGemm) {
  CheckConv({.x = {2, 16, 7, 5}, .m = 33, .k = {1, 1}, .bias = true}, "1x1");
  CheckConv({.x = {1, 8, 6, 6}, .m = 4, .k = {1, 1}, .stride = {2, 2}}, "1x1 stride 2 (im2col)");
  // Stride 2 over rows long enough for the 16-wide even-element copies of the
  // im2col packer, row ends and pads included.
  for (int64_t w : {33, 64, 75})
    CheckConv({.x = {1, 3, 5, w}, .m = 4, .k = {3, 3}, .stride = {2, 2}, .pads = {1, 1, 1, 0}, .bias = true},
              "3x3 stride 2, width " + std::to_string(w));
  CheckConv({.x = {1, 2, 4, 70}, .m = 3, .k = {2, 3}, .stride = {1, 2}, .dilation = {1, 2}}, "stride 2 dilated");
}

TEST(ConvOp, GroupsAndDepthwise) {
  CheckConv({.x = {1, 6, 9, 9}, .m = 4, .k = {3, 3}, .group = 2, .stride = {2, 1}, .pads = {1, 1, 1, 1}, .bias = true},
            "group 2");
  CheckConv({.x = {2, 8, 10, 9}, .m = 8, .k = {3, 3}, .group = 8, .pads = {1, 1, 1, 1}, .bias = true},
            "depthwise");
  CheckConv({.x = {1, 4, 13, 11}, .m = 8, .k = {5, 3}, .group = 4, .stride = {2, 2}, .dilation = {1, 2},
             .pads = {2, 0, 1, 2}},
            "depthwise multiplier 2, stride, dilation");
  CheckConv({.x = {1, 3, 17}, .m = 3, .k = {4}, .group = 3, .stride = {3}, .pads = {2, 1}}, "depthwise 1-D");
  // 3x3 and 5x5 take the register-blocked interior loop; edges and padding rows around it.
  CheckConv({.x = {2, 5, 23, 37}, .m = 5, .k = {5, 5}, .group = 5, .stride = {2, 2}, .pads = {2, 2, 2, 2},
             .bias = true},
            "depthwise 5x5 stride 2");
  CheckConv({.x = {1, 3, 9, 40}, .m = 6, .k = {3, 3}, .group = 3, .dilation = {2, 2}, .pads = {2, 1, 2, 3}},
            "depthwise 3x3 dilated, multiplier 2");
  CheckConv({.x = {1, 2, 3, 3}, .m = 2, .k = {3, 3}, .group = 2, .pads = {1, 1, 1, 1}}, "depthwise tiny");
  // Rows wide enough for the vector blocks and the stride-2 even/odd split,
  // with the fused bias + residual + relu epilogue, odd widths and pads.
  for (int64_t w : {31, 32, 33, 70, 97})
    CheckConv({.x = {2, 3, 9, w}, .m = 3, .k = {3, 3}, .group = 3, .stride = {2, 2}, .pads = {1, 1, 1, 1},
               .bias = true, .residual = true, .relu = true},
              "depthwise 3x3 stride 2 fused, width " + std::to_string(w));
  // Small planes (stride 1, rows under 16): the flat whole-plane path.
  CheckConv({.x = {2, 6, 7, 7}, .m = 6, .k = {3, 3}, .group = 6, .pads = {1, 1, 1, 1}, .bias = true,
             .residual = true, .relu = true},
            "depthwise 7x7 plane, fused");
  // Small planes without a residual: the activation fused into the vectors,
  // rows copied 16 floats at a time (widths below, at and near 16).
  for (int64_t w : {1, 3, 4, 7, 8, 14, 15})
    CheckConv({.x = {2, 5, 6, w}, .m = 5, .k = {3, 3}, .group = 5, .pads = {1, 1, 1, 1}, .bias = true,
               .relu6 = true},
              "depthwise small plane ReLU6, width " + std::to_string(w));
  CheckConv({.x = {1, 4, 7, 7}, .m = 4, .k = {3, 3}, .group = 4, .pads = {1, 1, 1, 1}, .relu = true},
            "depthwise 7x7 plane Relu, no bias");
  // LeakyRelu on the vectors of each depthwise loop (small plane, padded rows
  // of a 5x5, then with a residual first).
  CheckConv({.x = {1, 4, 7, 7}, .m = 4, .k = {3, 3}, .group = 4, .pads = {1, 1, 1, 1}, .bias = true,
             .leaky = 0.1f},
            "depthwise 7x7 plane LeakyRelu");
  CheckConv({.x = {1, 3, 11, 45}, .m = 3, .k = {5, 5}, .group = 3, .pads = {2, 2, 2, 2}, .bias = true,
             .leaky = 0.2f},
            "depthwise 5x5 LeakyRelu");
  CheckConv({.x = {1, 3, 11, 45}, .m = 3, .k = {5, 5}, .group = 3, .pads = {2, 2, 2, 2}, .residual = true,
             .leaky = 0.2f},
            "depthwise 5x5 residual then LeakyRelu");
  CheckConv({.x = {1, 3, 9, 12}, .m = 6, .k = {5, 3}, .group = 3, .dilation = {2, 1}, .pads = {3, 0, 1, 2}},
            "depthwise small plane, 5x3 dilated, multiplier 2, asymmetric pads");
  CheckConv({.x = {1, 2, 6, 5}, .m = 2, .k = {3, 3}, .group = 2}, "depthwise small plane, no pads");
  CheckConv({.x = {1, 4, 7, 45}, .m = 8, .k = {3, 3}, .group = 4, .stride = {1, 2}, .pads = {0, 2, 1, 1}},
            "depthwise multiplier 2, stride 2 in x only, asymmetric pads");
}

TEST(ConvOp, OneAndThreeSpatialDims) {
  CheckConv({.x = {2, 3, 20}, .m = 4, .k = {5}, .stride = {2}, .dilation = {2}, .pads = {3, 1}, .bias = true},
            "1-D");
  CheckConv({.x = {1, 2, 5, 6, 7}, .m = 3, .k = {2, 3, 3}, .stride = {1, 2, 1}, .pads = {1, 0, 1, 0, 1, 1}},
            "3-D");
  CheckConv({.x = {1, 4, 4, 5, 6}, .m = 4, .k = {3, 3, 3}, .group = 4, .pads = {1, 1, 1, 1, 1, 1}},
            "3-D depthwise via im2col");
}

TEST(ConvOp, AutoPad) {
  // in 7, k 4, stride 2: out ceil(7/2)=4, total pad (4-1)*2+4-7 = 3.
  CheckConv({.x = {1, 2, 7, 7}, .m = 3, .k = {4, 4}, .stride = {2, 2}, .auto_pad = "SAME_UPPER",
             .want_pads = {1, 1, 2, 2}},
            "SAME_UPPER");
  CheckConv({.x = {1, 2, 7, 7}, .m = 3, .k = {4, 4}, .stride = {2, 2}, .auto_pad = "SAME_LOWER",
             .want_pads = {2, 2, 1, 1}},
            "SAME_LOWER");
  CheckConv({.x = {1, 2, 7, 8}, .m = 3, .k = {3, 2}, .stride = {2, 3}, .auto_pad = "VALID",
             .want_pads = {0, 0, 0, 0}},
            "VALID");
  CheckConv({.x = {1, 4, 8, 8}, .m = 4, .k = {3, 3}, .group = 4, .auto_pad = "SAME_UPPER",
             .want_pads = {1, 1, 1, 1}},
            "depthwise SAME_UPPER");
}

TEST(ConvOp, FusedBiasResidualRelu) {
  CheckConv({.x = {2, 5, 6, 7}, .m = 6, .k = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true, .residual = true,
             .relu = true},
            "fused im2col");
  CheckConv({.x = {1, 8, 5, 5}, .m = 16, .k = {1, 1}, .bias = true, .residual = true, .relu = true}, "fused 1x1");
  CheckConv({.x = {1, 6, 9, 8}, .m = 6, .k = {3, 3}, .group = 6, .pads = {1, 1, 1, 1}, .residual = true,
             .relu = true},
            "fused depthwise, no bias");
}

// 3x3 stride 1 with 16+ channels takes Winograd: Clip (ReLU6) and Relu
// applied in registers on whole tiles, residual or not.
TEST(ConvOp, WinogradFusedClipAndRelu) {
  CheckConv({.x = {1, 16, 9, 10}, .m = 32, .k = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true, .relu6 = true},
            "winograd relu6");
  CheckConv({.x = {2, 32, 12, 8}, .m = 16, .k = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true, .residual = true,
             .relu6 = true},
            "winograd residual relu6");
  CheckConv({.x = {1, 16, 8, 8}, .m = 16, .k = {3, 3}, .pads = {0, 1, 0, 1}, .residual = true, .relu = true},
            "winograd residual relu, no bias");
}

TEST(ConvOp, LargeInputSpansManyGemmBlocks) {
  // K = 64*9 = 576 > KC and 4096 positions > NC: several K and N blocks of packed im2col.
  CheckConv({.x = {1, 64, 64, 64}, .m = 20, .k = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true}, "tiled");
}

// Shapes large enough (> 1 MFLOP per thread) for Conv's own thread partition:
// whole GEMMs per thread (batch, groups) plus a remainder split over a grid,
// M not a multiple of MR, N under two panels, residual and ReLU, 1-3 threads.
TEST(ConvOp, ThreadPartitionsMatchNaive) {
  for (int threads : {1, 2, 3}) {
    const std::string t = " threads " + std::to_string(threads);
    CheckConv({.x = {1, 64, 28, 27}, .m = 100, .k = {1, 1}, .bias = true, .residual = true, .relu = true},
              "1x1 fused" + t, threads);
    CheckConv({.x = {1, 48, 27, 27}, .m = 60, .k = {1, 1}, .stride = {2, 2}, .bias = true}, "1x1 stride 2" + t,
              threads);
    CheckConv({.x = {3, 16, 30, 29}, .m = 40, .k = {3, 3}, .stride = {2, 2}, .pads = {1, 1, 1, 1}, .bias = true,
               .residual = true, .relu = true},
              "3x3 stride 2 batch 3 fused" + t, threads);
    CheckConv({.x = {1, 200, 7, 7}, .m = 300, .k = {1, 1}, .bias = true}, "1x1 7x7" + t, threads);
    CheckConv({.x = {2, 32, 20, 21}, .m = 64, .k = {3, 3}, .group = 2, .stride = {2, 2}, .pads = {1, 0, 1, 1}},
              "group 2 batch 2" + t, threads);
    CheckConv({.x = {5, 24, 16, 16}, .m = 50, .k = {1, 1}, .bias = true, .relu = true}, "1x1 batch 5" + t, threads);
    CheckConv({.x = {1, 3, 64, 64}, .m = 32, .k = {7, 7}, .stride = {2, 2}, .pads = {3, 3, 3, 3}, .bias = true},
              "7x7 stride 2 stem" + t, threads);
  }
}

TEST(ConvOp, PrepackedWeightsRoundTrip) {
  const std::vector<int64_t> xs = {1, 6, 8, 8}, ws = {10, 3, 3, 3};
  auto x = Rand(6 * 64, 5), w = Rand(10 * 27, 6);
  ThreadPool pool(2);
  auto setup = [&](OpCase& c) {
    c.In(xs, x, false).In(ws, w, true);
    c.node().SetInt("group", 2);
    c.node().SetInts("pads", {1, 1, 1, 1});
  };
  std::vector<uint8_t> blob;
  OpCase first("Conv", 11), again("Conv", 11), third("Conv", 11);
  setup(first), setup(again), setup(third);
  auto y0 = first.Run(&pool, {}, &blob);
  ASSERT_TRUE(y0.ok()) << y0.status().ToString();
  ASSERT_FALSE(blob.empty());
  std::vector<uint8_t> blob2;
  auto y1 = again.Run(&pool, blob, &blob2);
  ASSERT_TRUE(y1.ok());
  EXPECT_EQ(*y0, *y1);
  EXPECT_EQ(blob, blob2);
  // A blob from elsewhere (wrong size) is ignored: the weights are repacked.
  std::vector<uint8_t> junk(blob.begin(), blob.begin() + blob.size() / 2);
  auto y2 = third.Run(&pool, junk);
  ASSERT_TRUE(y2.ok());
  EXPECT_EQ(*y0, *y2);
}

TEST(ConvOp, ShapeErrorsNameTheProblem) {
  {
    OpCase c("Conv", 11);
    c.In({1, 3, 8, 8}, {}, false).In({4, 2, 3, 3}, {}, false);
    Status s = c.Infer();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("channels"), std::string::npos) << s.message();
  }
  {
    OpCase c("Conv", 11);
    c.In({1, 4, 8, 8}, {}, false).In({4, 2, 3, 3}, {}, false);
    c.node().SetInt("group", 2);
    c.node().SetInts("kernel_shape", {3, 5});
    Status s = c.Infer();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("kernel_shape"), std::string::npos) << s.message();
  }
  {
    OpCase c("Conv", 11);
    c.In({1, 2, 2, 2}, {}, false).In({1, 2, 3, 3}, {}, false);
    Status s = c.Infer();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("smaller than the dilated kernel"), std::string::npos) << s.message();
  }
  {
    OpCase c("Conv", 11);
    c.In({1, 2, 5, 5}, {}, false).In({3, 2, 3, 3}, {}, false).In({4}, {}, false);
    Status s = c.Infer();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("bias"), std::string::npos) << s.message();
  }
  {
    // Unknown batch and spatial dims stay unknown; channels still flow.
    OpCase c("Conv", 11);
    c.In({-1, 3, -1, 10}, {}, false).In({8, 3, 3, 3}, {}, false);
    c.node().SetInts("strides", {1, 2});
    ASSERT_TRUE(c.Infer().ok());
    EXPECT_EQ(c.OutShape(), (std::vector<int64_t>{-1, 8, -1, 4}));
  }
}

// ---- ConvTranspose ------------------------------------------------------------

struct ConvTSpec {
  std::vector<int64_t> x;
  int64_t m = 1;  // output channels
  std::vector<int64_t> k;
  int64_t group = 1;
  std::vector<int64_t> stride, dilation, pads, output_padding, output_shape;
  std::string auto_pad;
  std::vector<int64_t> want_pads;  // begins then ends, used by the reference
  std::vector<int64_t> want_out;   // expected spatial output
  bool bias = false;
};

// Y[n, m, i*s - p + k*d] += X[n, c, i] * W[c, m - g*M/G, k] for c in group g.
std::vector<float> NaiveConvT(const ConvTSpec& s, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& b) {
  const size_t nd = s.x.size() - 2;
  std::vector<int64_t> st = s.stride.empty() ? std::vector<int64_t>(nd, 1) : s.stride;
  std::vector<int64_t> dl = s.dilation.empty() ? std::vector<int64_t>(nd, 1) : s.dilation;
  auto in = Pad3({s.x.begin() + 2, s.x.end()}, 1), k = Pad3(s.k, 1), S = Pad3(st, 1), D = Pad3(dl, 1);
  auto pb = Pad3({s.want_pads.begin(), s.want_pads.begin() + nd}, 0);
  auto out = Pad3(s.want_out, 1);
  const int64_t N = s.x[0], C = s.x[1], cg = C / s.group, mg = s.m / s.group;
  std::vector<double> y(N * s.m * out[0] * out[1] * out[2], 0.0);
  const int64_t osz = out[0] * out[1] * out[2];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t i = 0; i < osz; ++i) y[(n * s.m + m) * osz + i] = b.empty() ? 0.0 : b[m];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t iz = 0; iz < in[0]; ++iz)
        for (int64_t iy = 0; iy < in[1]; ++iy)
          for (int64_t ix = 0; ix < in[2]; ++ix) {
            double xv = x[(((n * C + c) * in[0] + iz) * in[1] + iy) * in[2] + ix];
            const int64_t g = c / cg;
            for (int64_t mm = 0; mm < mg; ++mm)
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t ky = 0; ky < k[1]; ++ky)
                  for (int64_t kx = 0; kx < k[2]; ++kx) {
                    int64_t oz = iz * S[0] - pb[0] + kz * D[0], oy = iy * S[1] - pb[1] + ky * D[1],
                            ox = ix * S[2] - pb[2] + kx * D[2];
                    if (oz < 0 || oz >= out[0] || oy < 0 || oy >= out[1] || ox < 0 || ox >= out[2]) continue;
                    double wv = w[(((c * mg + mm) * k[0] + kz) * k[1] + ky) * k[2] + kx];
                    y[(((n * s.m + g * mg + mm) * out[0] + oz) * out[1] + oy) * out[2] + ox] += xv * wv;
                  }
          }
  return std::vector<float>(y.begin(), y.end());
}

void CheckConvT(const ConvTSpec& s, const std::string& what) {
  std::vector<int64_t> wshape = {s.x[1], s.m / s.group};
  wshape.insert(wshape.end(), s.k.begin(), s.k.end());
  int64_t xn = 1, wn = 1;
  for (auto d : s.x) xn *= d;
  for (auto d : wshape) wn *= d;
  auto x = Rand(xn, 7), w = Rand(wn, 8), b = s.bias ? Rand(s.m, 9) : std::vector<float>{};
  auto want = NaiveConvT(s, x, w, b);
  std::vector<int64_t> want_shape = {s.x[0], s.m};
  want_shape.insert(want_shape.end(), s.want_out.begin(), s.want_out.end());
  ThreadPool pool(2);
  for (bool const_w : {true, false}) {
    OpCase c("ConvTranspose", 11);
    c.In(s.x, x, false).In(wshape, w, const_w);
    if (s.bias) c.In({s.m}, b, true);
    Node& n = c.node();
    if (s.group != 1) n.SetInt("group", s.group);
    if (!s.stride.empty()) n.SetInts("strides", s.stride);
    if (!s.dilation.empty()) n.SetInts("dilations", s.dilation);
    if (!s.pads.empty()) n.SetInts("pads", s.pads);
    if (!s.output_padding.empty()) n.SetInts("output_padding", s.output_padding);
    if (!s.output_shape.empty()) n.SetInts("output_shape", s.output_shape);
    if (!s.auto_pad.empty()) n.SetString("auto_pad", s.auto_pad);
    auto y = c.Run(&pool);
    ASSERT_TRUE(y.ok()) << what << ": " << y.status().ToString();
    EXPECT_EQ(c.OutShape(), want_shape) << what;
    ExpectClose(*y, want, what + (const_w ? " const W" : " runtime W"));
  }
}

TEST(ConvTransposeOp, StridesPadsOutputPadding) {
  // out = s*(in-1) + output_padding + (k-1)*d + 1 - pads.
  CheckConvT({.x = {1, 3, 4, 5}, .m = 2, .k = {3, 3}, .want_pads = {0, 0, 0, 0}, .want_out = {6, 7}, .bias = true},
             "basic");
  CheckConvT({.x = {2, 4, 3, 4}, .m = 5, .k = {3, 2}, .stride = {2, 3}, .pads = {1, 0, 0, 1},
              .output_padding = {1, 2}, .want_pads = {1, 0, 0, 1}, .want_out = {7, 12}},
             "stride pads output_padding");
  CheckConvT({.x = {1, 4, 5, 5}, .m = 6, .k = {3, 3}, .group = 2, .stride = {2, 2}, .dilation = {2, 1},
              .pads = {1, 1, 1, 1}, .want_pads = {1, 1, 1, 1}, .want_out = {11, 9}, .bias = true},
             "groups dilation");
  CheckConvT({.x = {1, 3, 6}, .m = 3, .k = {4}, .group = 3, .stride = {2}, .pads = {1, 2},
              .want_pads = {1}, .want_out = {11}},
             "1-D depthwise");
  CheckConvT({.x = {1, 2, 3, 3, 2}, .m = 2, .k = {2, 2, 3}, .stride = {2, 1, 2},
              .want_pads = {0, 0, 0}, .want_out = {6, 4, 5}},
             "3-D");
}

TEST(ConvTransposeOp, OutputShapeAndAutoPad) {
  // in 3, s 2, k 3: full extent 7. output_shape 6 -> total pad 1, on the begin (NOTSET).
  CheckConvT({.x = {1, 2, 3, 3}, .m = 2, .k = {3, 3}, .stride = {2, 2}, .output_shape = {6, 5},
              .want_pads = {1, 1}, .want_out = {6, 5}},
             "output_shape");
  // SAME_UPPER: out = in * s = 6, total 1: the extra pad goes to the end.
  CheckConvT({.x = {1, 2, 3, 3}, .m = 2, .k = {3, 3}, .stride = {2, 2}, .auto_pad = "SAME_UPPER",
              .want_pads = {0, 0}, .want_out = {6, 6}},
             "SAME_UPPER");
  CheckConvT({.x = {1, 2, 3, 3}, .m = 2, .k = {3, 3}, .stride = {2, 2}, .auto_pad = "SAME_LOWER",
              .want_pads = {1, 1}, .want_out = {6, 6}},
             "SAME_LOWER");
}

TEST(ConvTransposeOp, ChannelMismatchIsAnError) {
  OpCase c("ConvTranspose", 11);
  c.In({1, 3, 4, 4}, {}, false).In({4, 2, 3, 3}, {}, false);
  Status s = c.Infer();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("channels"), std::string::npos) << s.message();
}

// Depthwise 3x3 (the direct AVX-512 kernel where the CPU and OPENCANN_ISA allow
// it, the padded-row loops otherwise) at every width 1..40 and height 1..9:
// stride 1 and 2, pad 1 (and asymmetric / zero pads), with and without bias,
// residual and the Relu / ReLU6 / LeakyRelu epilogue, against the naive loops
// above.
TEST(ConvOp, Depthwise3x3EdgesAllWidthsAndHeights) {
  for (int64_t stride : {1, 2})
    for (int64_t h = 1; h <= 9; ++h)
      for (int64_t w = 1; w <= 40; ++w) {
        const int64_t v = (w + h + stride) % 5;
        ConvSpec s{.x = {1, 3, h, w}, .m = 3, .k = {3, 3}, .group = 3, .stride = {stride, stride},
                   .pads = {1, 1, 1, 1}};
        s.bias = v != 0;
        s.relu = v == 2;
        s.relu6 = v == 3;
        s.residual = v == 3 && w % 2 == 0;
        s.leaky = v == 4 ? 0.1f : 0.f;
        CheckConv(s, "dw3x3 s" + std::to_string(stride) + " " + std::to_string(h) + "x" + std::to_string(w) +
                         " variant " + std::to_string(v));
        if (HasFailure()) return;
      }
  for (int64_t w : {5, 16, 17, 18, 31, 33, 34, 35, 64, 67})
    for (int64_t stride : {1, 2}) {
      CheckConv({.x = {2, 4, 7, w}, .m = 8, .k = {3, 3}, .group = 4, .stride = {stride, stride},
                 .pads = {0, 1, 1, 0}, .bias = true, .relu6 = true},
                "dw3x3 multiplier 2, asym pads, width " + std::to_string(w));
      CheckConv({.x = {1, 2, 6, w}, .m = 2, .k = {3, 3}, .group = 2, .stride = {stride, stride}},
                "dw3x3 no pad, width " + std::to_string(w));
      CheckConv({.x = {1, 2, 6, w}, .m = 2, .k = {3, 3}, .group = 2, .stride = {stride, stride},
                 .pads = {2, 2, 2, 2}, .relu = true},
                "dw3x3 pad 2, width " + std::to_string(w));
    }
}

}  // namespace
}  // namespace oc

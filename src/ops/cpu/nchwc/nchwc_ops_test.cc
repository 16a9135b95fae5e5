// NCHWc kernels and ops against naive double-precision references written
// here: every conv build (baseline, AVX2, AVX-512 where the CPU has them) at
// both block sizes over odd channel counts, strides, pads, dilations,
// depthwise, NCHW input, bias, residual and activations; the ops through their
// infer functions and kernels at 1 and 2 threads, with the prepacked weights
// round trip; reorders and pools.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "ops/cpu/gemm/gemm_op_test_util.h"
#include "ops/cpu/nchwc/nchwc.h"
#include "runtime/trace.h"

namespace oc {
namespace {

using gemm_testing::ExpectClose;
using gemm_testing::OpCase;
using gemm_testing::Rand;

struct Case {
  int64_t n = 1, c = 3, h = 5, w = 5, m = 4, kh = 3, kw = 3;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  bool depthwise = false, nchw_input = false, bias = false, residual = false;
  ActivationKind act = ActivationKind::kNone;
  int64_t OutH() const { return (h + pt + pb - ((kh - 1) * dh + 1)) / sh + 1; }
  int64_t OutW() const { return (w + pl + pr - ((kw - 1) * dw + 1)) / sw + 1; }
  std::string Name() const {
    return "n" + std::to_string(n) + " c" + std::to_string(c) + " " + std::to_string(h) + "x" + std::to_string(w) +
           " m" + std::to_string(m) + " k" + std::to_string(kh) + "x" + std::to_string(kw) + " s" +
           std::to_string(sh) + std::to_string(sw) + " d" + std::to_string(dh) + std::to_string(dw) + " p" +
           std::to_string(pt) + std::to_string(pl) + std::to_string(pb) + std::to_string(pr) +
           (depthwise ? " dw" : "") + (nchw_input ? " nchw" : "") + (bias ? " bias" : "") +
           (residual ? " z" : "") + " act" + std::to_string(static_cast<int>(act));
  }
};

double Act(ActivationKind k, double v) {
  switch (k) {
    case ActivationKind::kRelu: return std::max(v, 0.0);
    case ActivationKind::kClip: return std::min(std::max(v, 0.0), 6.0);
    case ActivationKind::kSigmoid: return 1.0 / (1.0 + std::exp(-v));
    case ActivationKind::kHardSigmoid: return std::min(std::max(0.3 * v + 0.4, 0.0), 1.0);
    case ActivationKind::kHardSwish: return v * std::min(std::max(v / 6 + 0.5, 0.0), 1.0);
    default: return v;
  }
}

// The fused activation of a case: Clip to [0, 6]; HardSigmoid with alpha 0.3,
// beta 0.4 (not the defaults, so that the op test sees them read).
Activation TestActivation(ActivationKind k) {
  return k == ActivationKind::kHardSigmoid ? Activation{k, 0.3f, 0.4f} : Activation{k, 0.f, 6.f};
}

// NCHW output of the conv in double precision.
std::vector<float> NaiveConv(const Case& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, const std::vector<float>& z) {
  const int64_t oh = s.OutH(), ow = s.OutW(), cg = s.depthwise ? 1 : s.c;
  std::vector<float> y(s.n * s.m * oh * ow);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t yi = ((n * s.m + m) * oh + i) * ow + j;
          double acc = b.empty() ? 0.0 : b[m];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t a = 0; a < s.kh; ++a)
              for (int64_t e = 0; e < s.kw; ++e) {
                const int64_t ih = i * s.sh - s.pt + a * s.dh, iw = j * s.sw - s.pl + e * s.dw;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                const int64_t ci = s.depthwise ? m : c;
                acc += double(x[((n * s.c + ci) * s.h + ih) * s.w + iw]) * w[((m * cg + c) * s.kh + a) * s.kw + e];
              }
          if (!z.empty()) acc += z[yi];
          y[yi] = static_cast<float>(Act(s.act, acc));
        }
  return y;
}

// Independent blocking for the tests: [N, C, H, W] -> [N, ceil(C/c), H, W, c], zero padded.
std::vector<float> Block(const std::vector<float>& x, int64_t n, int64_t ch, int64_t h, int64_t w, int c) {
  const int64_t cb = (ch + c - 1) / c;
  std::vector<float> y(n * cb * h * w * c, 0.f);
  for (int64_t a = 0; a < n; ++a)
    for (int64_t k = 0; k < ch; ++k)
      for (int64_t p = 0; p < h * w; ++p) y[((a * cb + k / c) * h * w + p) * c + k % c] = x[(a * ch + k) * h * w + p];
  return y;
}
std::vector<float> Unblock(const std::vector<float>& y, int64_t n, int64_t ch, int64_t h, int64_t w, int c) {
  const int64_t cb = (ch + c - 1) / c;
  std::vector<float> x(n * ch * h * w);
  for (int64_t a = 0; a < n; ++a)
    for (int64_t k = 0; k < ch; ++k)
      for (int64_t p = 0; p < h * w; ++p) x[(a * ch + k) * h * w + p] = y[((a * cb + k / c) * h * w + p) * c + k % c];
  return x;
}

std::vector<Case> Cases() {
  std::vector<Case> cs;
  auto add = [&](Case c) { cs.push_back(c); };
  add({});
  add({.c = 17, .h = 9, .w = 13, .m = 19, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true});
  add({.n = 2, .c = 16, .h = 7, .w = 7, .m = 32, .kh = 1, .kw = 1, .bias = true, .act = ActivationKind::kRelu});
  add({.c = 24, .h = 11, .w = 12, .m = 40, .kh = 1, .kw = 1, .sh = 2, .sw = 2, .residual = true});
  add({.c = 20, .h = 15, .w = 16, .m = 9, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true,
       .act = ActivationKind::kClip});
  add({.c = 8, .h = 10, .w = 23, .m = 64, .dh = 2, .dw = 2, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .bias = true,
       .residual = true, .act = ActivationKind::kSigmoid});
  add({.c = 5, .h = 6, .w = 9, .m = 7, .kh = 2, .kw = 4, .pt = 0, .pl = 3, .pb = 1, .pr = 0});
  add({.n = 2, .c = 3, .h = 17, .w = 19, .m = 20, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .pt = 3, .pl = 3, .pb = 3,
       .pr = 3, .nchw_input = true, .bias = true, .act = ActivationKind::kRelu});
  add({.c = 3, .h = 9, .w = 9, .m = 16, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .nchw_input = true, .residual = true});
  // NCHW input with 1 and 4 channels: the stem's loop, not its unrolled 3-channel case.
  add({.c = 1, .h = 9, .w = 11, .m = 16, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .nchw_input = true, .bias = true});
  add({.c = 4, .h = 10, .w = 13, .m = 20, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .nchw_input = true,
       .residual = true, .act = ActivationKind::kRelu});
  add({.c = 72, .h = 5, .w = 30, .m = 72, .kh = 1, .kw = 1, .bias = true});
  add({.c = 2, .h = 4, .w = 3, .m = 5, .kh = 5, .kw = 5, .pt = 2, .pl = 2, .pb = 2, .pr = 2});
  // Many input blocks, residual and a row activation.
  add({.c = 50, .h = 7, .w = 9, .m = 40, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true, .residual = true,
       .act = ActivationKind::kSigmoid});
  add({.n = 2, .c = 100, .h = 5, .w = 6, .m = 20, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true, .residual = true,
       .act = ActivationKind::kRelu});
  for (int64_t ch : {16, 24, 37}) {
    add({.c = ch, .h = 14, .w = 14, .m = ch, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .depthwise = true, .bias = true,
         .act = ActivationKind::kClip});
    add({.n = 2, .c = ch, .h = 15, .w = 13, .m = ch, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1,
         .depthwise = true, .residual = true});
  }
  add({.c = 9, .h = 8, .w = 20, .m = 9, .kh = 5, .kw = 5, .dh = 2, .dw = 1, .pt = 4, .pl = 2, .pb = 4, .pr = 2,
       .depthwise = true, .bias = true, .act = ActivationKind::kSigmoid});
  // Depthwise 3x3 at stride 2 with two full 6-pixel tiles per row (the
  // load-once 3-tap tile), residual and Relu.
  add({.c = 20, .h = 9, .w = 31, .m = 20, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .depthwise = true,
       .bias = true, .residual = true, .act = ActivationKind::kRelu});
  // Hard-swish and hard-sigmoid in the tile epilogue (MobileNetV3): dense 1x1
  // and 3x3 with a residual, NCHW input, depthwise.
  add({.c = 40, .h = 7, .w = 14, .m = 72, .kh = 1, .kw = 1, .bias = true, .act = ActivationKind::kHardSwish});
  add({.c = 36, .h = 8, .w = 9, .m = 24, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true, .residual = true,
       .act = ActivationKind::kHardSwish});
  add({.c = 3, .h = 13, .w = 13, .m = 16, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .nchw_input = true,
       .bias = true, .act = ActivationKind::kHardSwish});
  add({.c = 48, .h = 10, .w = 20, .m = 48, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .depthwise = true, .bias = true,
       .act = ActivationKind::kHardSwish});
  add({.c = 24, .h = 1, .w = 1, .m = 40, .kh = 1, .kw = 1, .bias = true, .act = ActivationKind::kHardSigmoid});
  add({.c = 40, .h = 9, .w = 13, .m = 24, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true, .residual = true,
       .act = ActivationKind::kHardSigmoid});
  return cs;
}

struct Data {
  std::vector<float> x, w, b, z, want;
};

Data MakeData(const Case& s, uint32_t seed) {
  Data d;
  d.x = Rand(s.n * s.c * s.h * s.w, seed);
  d.w = Rand(s.m * (s.depthwise ? 1 : s.c) * s.kh * s.kw, seed + 1);
  if (s.bias) d.b = Rand(s.m, seed + 2);
  if (s.residual) d.z = Rand(s.n * s.m * s.OutH() * s.OutW(), seed + 3);
  d.want = NaiveConv(s, d.x, d.w, d.b, d.z);
  return d;
}

nchwc::ConvShape ShapeOf(const Case& s, int block) {
  nchwc::ConvShape cs;
  cs.block = block, cs.nchw_input = s.nchw_input, cs.depthwise = s.depthwise;
  cs.batch = s.n, cs.c_in = s.c, cs.c_out = s.m, cs.in_h = s.h, cs.in_w = s.w;
  cs.out_h = s.OutH(), cs.out_w = s.OutW(), cs.k_h = s.kh, cs.k_w = s.kw;
  cs.stride_h = s.sh, cs.stride_w = s.sw, cs.dil_h = s.dh, cs.dil_w = s.dw, cs.pad_t = s.pt, cs.pad_l = s.pl;
  return cs;
}

void CheckBuild(const nchwc::ConvKernelChoice& k, const Case& s, int block, int64_t ow_chunk, int64_t ib_chunk = 0,
                int64_t oh_band = 0, nchwc::ConvShape::Order order = nchwc::ConvShape::Order::kImageFirst) {
  const Data d = MakeData(s, 7);
  nchwc::ConvShape cs = ShapeOf(s, block);
  cs.ow_chunk = ow_chunk;
  cs.ib_chunk = ib_chunk;
  cs.oh_band = oh_band;
  cs.order = order;
  std::vector<float> packed(cs.PackedWeightFloats());
  nchwc::PackConvWeights(cs, d.w.data(), packed.data());
  std::vector<float> unpacked(d.w.size());
  nchwc::UnpackConvWeights(cs, packed.data(), unpacked.data());
  EXPECT_EQ(unpacked, d.w) << "unpack(pack(W)) for " << s.Name();
  std::vector<float> bias(cs.OutBlocks() * block, 0.f);
  std::copy(d.b.begin(), d.b.end(), bias.begin());
  const std::vector<float> xb = s.nchw_input ? d.x : Block(d.x, s.n, s.c, s.h, s.w, block);
  std::vector<float> zb;
  if (s.residual) zb = Block(d.z, s.n, s.m, s.OutH(), s.OutW(), block);
  std::vector<float> yb(s.n * cs.OutBlocks() * s.OutH() * s.OutW() * block, std::nanf(""));
  const Activation act = TestActivation(s.act);
  nchwc::ConvArgs a{&cs, xb.data(), packed.data(), bias.data(), s.residual ? zb.data() : nullptr, yb.data(), act};
  // Two uneven halves, as two threads would run them.
  const int64_t units = nchwc::ConvWorkUnits(cs, k.fb);
  k.run(a, 0, units / 3);
  k.run(a, units / 3, units);
  ExpectClose(Unblock(yb, s.n, s.m, s.OutH(), s.OutW(), block), d.want,
              std::string(k.isa) + " c=" + std::to_string(block) + " chunk " + std::to_string(ow_chunk) +
                  " ib_chunk " + std::to_string(ib_chunk) + " band " + std::to_string(oh_band) +
                  " order " + std::to_string(static_cast<int>(order)) + " " + s.Name(),
              1e-4f);
}

TEST(NchwcConvKernel, EveryBuildMatchesNaiveConv) {
  for (int block : {8, 16}) {
    std::vector<nchwc::ConvKernelChoice> builds = {nchwc::ConvKernelBaseline(block)};
#if defined(__x86_64__) || defined(_M_X64)
    const Isa isa = SelectedIsa();
    if (isa == Isa::kAvx2 || isa == Isa::kAvx512) builds.push_back(nchwc::ConvKernelAvx2(block));
    if (isa == Isa::kAvx512) builds.push_back(nchwc::ConvKernelAvx512(block));
#endif
    for (const auto& k : builds) {
      ASSERT_NE(k.run, nullptr);
      for (const Case& s : Cases()) {
        for (int64_t chunk : {0, 5}) CheckBuild(k, s, block, chunk);
        // Passes over chunks of input blocks (partial sums in the output)
        // over bands of rows; a band taller than the output; one row per band
        // (dense convs only: depthwise units ignore these settings).
        if (s.depthwise) continue;
        CheckBuild(k, s, block, 0, 1, 3);
        CheckBuild(k, s, block, 5, 2, 100);
        CheckBuild(k, s, block, 0, 3, 1);
        CheckBuild(k, s, block, 5, 2, 2, nchwc::ConvShape::Order::kGroupsFirst);
        CheckBuild(k, s, block, 5, 2, 2, nchwc::ConvShape::Order::kGroupsInner);
        CheckBuild(k, s, block, 0, 0, 0, nchwc::ConvShape::Order::kGroupsInner);
      }
    }
  }
}

// Every unit order covers each (image, group, output pixel) exactly once.
TEST(NchwcConvUnits, EveryOrderCoversTheOutputOnce) {
  using Order = nchwc::ConvShape::Order;
  nchwc::ConvShape s;
  s.block = 16, s.batch = 3, s.c_in = 16, s.c_out = 16 * 7, s.in_h = s.out_h = 5, s.in_w = s.out_w = 13;
  s.ow_chunk = 6, s.oh_band = 2;
  // Image-first with 1-9 spatial parts (9 pieces per image: part sizes 1-9,
  // uneven ones included); the other orders take no parts.
  std::vector<std::pair<Order, int64_t>> plans = {{Order::kGroupsFirst, 1}, {Order::kGroupsInner, 1}};
  for (int64_t parts = 1; parts <= 10; ++parts) plans.emplace_back(Order::kImageFirst, parts);
  for (const auto& [order, parts] : plans) {
    s.order = order;
    s.parts = parts;
    const nchwc::ConvUnitGrid grid = nchwc::ConvUnitsOf(s, 4);
    ASSERT_EQ(grid.count(), 3 * 2 * 3 * 3);
    std::vector<int> seen(3 * 2 * 5 * 13, 0);
    for (int64_t u = 0; u < grid.count(); ++u) {
      const nchwc::ConvUnit w = grid.At(u);
      ASSERT_TRUE(w.n >= 0 && w.n < 3 && w.g >= 0 && w.g < 2 && w.oh_begin >= 0 && w.oh_begin < w.oh_end &&
                  w.oh_end <= 5 && w.ow_begin >= 0 && w.ow_begin < w.ow_end && w.ow_end <= 13)
          << "unit " << u;
      for (int64_t y = w.oh_begin; y < w.oh_end; ++y)
        for (int64_t x = w.ow_begin; x < w.ow_end; ++x) ++seen[((w.n * 2 + w.g) * 5 + y) * 13 + x];
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(seen.size()))
        << "order " << static_cast<int>(order) << " parts " << parts;
  }
}

// Spatial parts (ConvShape::parts): a dense conv whose input outweighs its
// weights (ResNet-50's 56x56 layers, the stem) is cut by pixels, so that each
// of 2 threads' equal unit ranges covers one half of the image for every
// output block; convs with weights over 1 MB or over their input (layer 4)
// (512->1024 at 56x56: 2 MB against 6.4 MB of input; 512->512 is exactly 1 MB)
// and depthwise convs keep the split between groups, and so does a batch that
// the threads divide.
TEST(NchwcConvUnits, TwoThreadPartsCutTheImage) {
  struct P { int64_t c_in, c_out, h, k, n; bool dw, nchw, parts; };
  for (const P p : {P{64, 256, 56, 1, 1, false, false, true}, P{256, 64, 56, 1, 1, false, false, true},
                    P{128, 128, 56, 3, 1, false, false, true}, P{3, 64, 112, 7, 1, false, true, true},
                    P{512, 128, 28, 1, 3, false, false, true}, P{2048, 512, 7, 1, 1, false, false, false},
                    P{512, 2048, 7, 1, 1, false, false, false}, P{96, 96, 56, 3, 1, true, false, false},
                    P{64, 256, 56, 1, 2, false, false, false}, P{512, 512, 56, 1, 1, false, false, true},
                    P{512, 1024, 56, 1, 1, false, false, false}}) {
    nchwc::ConvShape s;
    s.block = 16, s.batch = p.n, s.c_in = p.c_in, s.c_out = p.c_out, s.in_h = s.in_w = p.h, s.k_h = s.k_w = p.k;
    s.pad_t = s.pad_l = p.k / 2, s.out_h = s.out_w = p.h, s.depthwise = p.dw, s.nchw_input = p.nchw;
    if (p.k == 1) s.in_w = s.out_w = p.h * p.h, s.in_h = s.out_h = 1;  // flattened, as the op plans it
    const std::string what = std::to_string(p.c_in) + "->" + std::to_string(p.c_out) + " @" + std::to_string(p.h) +
                             " k" + std::to_string(p.k) + " n" + std::to_string(p.n);
    nchwc::PlanConvUnits(s, 4, 2);
    const nchwc::ConvUnitGrid grid = nchwc::ConvUnitsOf(s, 4);
    EXPECT_EQ(grid.parts, p.parts ? 2 : 1) << what;
    if (!p.parts) continue;
    // Pixels (flattened row-major over each image) of thread 0's range that lie
    // in the second half of the image, and the converse: none, but for the
    // rounding to whole tiles or rows.
    const int64_t units = grid.count(), pixels = s.out_h * s.out_w;
    int64_t crossing = 0, total = 0;
    for (int t = 0; t < 2; ++t)
      for (int64_t u = units * t / 2; u < units * (t + 1) / 2; ++u) {
        const nchwc::ConvUnit w = grid.At(u);
        for (int64_t y = w.oh_begin; y < w.oh_end; ++y)
          for (int64_t x = w.ow_begin; x < w.ow_end; ++x) {
            const int64_t at = (w.n * pixels + y * s.out_w + x) * 2 / (s.batch * pixels);  // 0: first half
            crossing += at != t, ++total;
          }
      }
    EXPECT_LT(crossing, total / 20) << what;
  }
}

// Output blocks x pixels each of 2 threads gets for a conv after
// PlanConvUnits, counted from the units themselves: MobileNetV2's pointwise
// convs with 6, 9 and 10 output blocks (last group smaller than 4 blocks) and
// ResNet/MobileNetV2 ones with whole groups.
TEST(NchwcConvUnits, TwoThreadsGetEqualWork) {
  struct P { int64_t c_in, c_out, hw; };
  for (const P p : {P{16, 96, 112}, P{24, 144, 56}, P{384, 96, 14}, P{576, 160, 7}, P{960, 160, 7},
                    P{64, 256, 56}, P{96, 576, 14}, P{32, 16, 112}}) {
    nchwc::ConvShape s;
    s.block = 16, s.c_in = p.c_in, s.c_out = p.c_out, s.in_h = s.out_h = 1, s.in_w = s.out_w = p.hw * p.hw;
    nchwc::PlanConvUnits(s, 4, 2);
    const nchwc::ConvUnitGrid grid = nchwc::ConvUnitsOf(s, 4);
    const int64_t units = grid.count();
    int64_t work[2] = {0, 0};
    for (int t = 0; t < 2; ++t)
      for (int64_t u = units * t / 2; u < units * (t + 1) / 2; ++u) {
        const nchwc::ConvUnit w = grid.At(u);
        work[t] += std::min<int64_t>(4, s.OutBlocks() - 4 * w.g) * (w.ow_end - w.ow_begin) * (w.oh_end - w.oh_begin);
      }
    EXPECT_EQ(work[0] + work[1], s.OutBlocks() * p.hw * p.hw);
    const double ratio = double(std::max(work[0], work[1])) / std::min(work[0], work[1]);
    // Whole 6-pixel chunks: 196 pixels split as 102 + 94 at best.
    EXPECT_LT(ratio, 1.09) << p.c_in << "->" << p.c_out << " @" << p.hw << ": " << work[0] << " vs " << work[1];
  }
}

// One thread plans no row chunks (they would only re-read the weights); an
// empty output row plans no units rather than dividing by zero.
TEST(NchwcConvUnits, OneThreadAndEmptyRowsPlanNoChunks) {
  nchwc::ConvShape s;
  s.block = 16, s.c_in = 16, s.c_out = 96, s.in_h = s.out_h = 112, s.in_w = s.out_w = 112;
  nchwc::PlanConvUnits(s, 4, 1);
  EXPECT_EQ(s.ow_chunk, 0);
  nchwc::ConvShape e = s;
  e.in_w = e.out_w = 0;
  nchwc::PlanConvUnits(e, 4, 2);
  EXPECT_EQ(nchwc::ConvUnitsOf(e, 4).count(), 0);
}

// The op: infer + kernel through the registry, 1 and 2 threads, prepacked round trip.
TEST(NchwcConvOp, MatchesNaiveConvAtOneAndTwoThreads) {
  ThreadPool one(1), two(2);
  for (int block : {8, 16}) {
    for (const Case& s : Cases()) {
      const Data d = MakeData(s, 11);
      OpCase op("NchwcConv", 1, kOpenCannDomain);
      op.node().SetInt("block", block);
      op.node().SetInts("kernel_shape", {s.kh, s.kw});
      op.node().SetInts("strides", {s.sh, s.sw});
      op.node().SetInts("dilations", {s.dh, s.dw});
      op.node().SetInts("pads", {s.pt, s.pl, s.pb, s.pr});
      if (s.depthwise) op.node().SetInt("group", s.c);
      if (s.nchw_input) op.node().SetInt("nchw_input", 1);
      if (s.act == ActivationKind::kRelu) op.node().SetString("activation", "Relu");
      if (s.act == ActivationKind::kSigmoid) op.node().SetString("activation", "Sigmoid");
      if (s.act == ActivationKind::kHardSwish) op.node().SetString("activation", "HardSwish");
      if (s.act == ActivationKind::kHardSigmoid) {
        op.node().SetString("activation", "HardSigmoid");
        op.node().SetFloat("activation_alpha", 0.3f);
        op.node().SetFloat("activation_beta", 0.4f);
      }
      if (s.act == ActivationKind::kClip) {
        op.node().SetString("activation", "Clip");
        op.node().SetFloat("activation_alpha", 0.f);
        op.node().SetFloat("activation_beta", 6.f);
      }
      const int64_t cb = (s.c + block - 1) / block, mb = (s.m + block - 1) / block;
      if (s.nchw_input) op.In({s.n, s.c, s.h, s.w}, d.x, false);
      else op.In({s.n, cb, s.h, s.w, block}, Block(d.x, s.n, s.c, s.h, s.w, block), false);
      op.In({s.m, s.depthwise ? 1 : s.c, s.kh, s.kw}, d.w, true);
      if (s.bias) op.In({s.m}, d.b, true);
      else if (s.residual) op.Missing();
      if (s.residual) op.In({s.n, mb, s.OutH(), s.OutW(), block}, Block(d.z, s.n, s.m, s.OutH(), s.OutW(), block), false);
      std::vector<uint8_t> exported;
      auto y1 = op.Run(&one, {}, &exported);
      ASSERT_TRUE(y1.ok()) << y1.status().ToString();
      EXPECT_EQ(op.OutShape(), (std::vector<int64_t>{s.n, mb, s.OutH(), s.OutW(), block}));
      const std::string what = "c=" + std::to_string(block) + " " + s.Name();
      ExpectClose(Unblock(*y1, s.n, s.m, s.OutH(), s.OutW(), block), d.want, what + " 1 thread", 1e-4f);
      auto y2 = op.Run(&two, exported);
      ASSERT_TRUE(y2.ok()) << y2.status().ToString();
      EXPECT_EQ(*y1, *y2) << what << ": 2 threads from prepacked weights differ";
    }
  }
}

// The .om may store W only inside the prepacked bytes (PrepackedInputs): the
// kernel then runs from them, and refuses bytes of the wrong size.
TEST(NchwcConvOp, RunsFromPrepackedOnlyWeights) {
  ThreadPool one(1);
  const Case s{.c = 19, .h = 6, .w = 9, .m = 21, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true};
  const Data d = MakeData(s, 5);
  for (int block : {8, 16}) {
    OpCase op("NchwcConv", 1, kOpenCannDomain);
    op.node().SetInt("block", block);
    op.node().SetInts("pads", {1, 1, 1, 1});
    op.In({1, (s.c + block - 1) / block, s.h, s.w, block}, Block(d.x, 1, s.c, s.h, s.w, block), false);
    op.In({s.m, s.c, 3, 3}, d.w, true).In({s.m}, d.b, true);
    std::vector<uint8_t> exported;
    ASSERT_TRUE(op.Run(&one, {}, &exported).ok());
    op.node().inputs[1]->constant = TensorData::View(nullptr, nullptr, d.w.size() * sizeof(float));
    auto y = op.Run(&one, exported);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    ExpectClose(Unblock(*y, 1, s.m, s.OutH(), s.OutW(), block), d.want, "prepacked only", 1e-4f);
    exported.resize(exported.size() - 4);
    auto bad = op.Run(&one, exported);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().ToString().find("prepacked"), std::string::npos) << bad.status().ToString();
  }
}

// A NaN input stays NaN through the fused Relu and Clip, as ApplyActivation
// (the NCHW path) keeps it: the blocked epilogue must not clamp it to a bound.
TEST(NchwcConvOp, FusedReluAndClipPassNaN) {
  ThreadPool one(1);
  const int64_t c = 16, h = 3, w = 4;
  for (const char* act : {"Relu", "Clip"}) {
    std::vector<float> x(c * h * w, 0.5f);
    x[5 * c + 3] = std::numeric_limits<float>::quiet_NaN();  // pixel 5, channel 3 (blocked layout)
    OpCase op("NchwcConv", 1, kOpenCannDomain);
    op.node().SetInt("block", 16);
    op.node().SetString("activation", act);
    if (std::string(act) == "Clip") {
      op.node().SetFloat("activation_alpha", 0.f);
      op.node().SetFloat("activation_beta", 6.f);
    }
    op.In({1, 1, h, w, c}, x, false).In({c, c, 1, 1}, std::vector<float>(c * c, 0.25f), true);
    auto y = op.Run(&one, {});
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    for (int64_t k = 0; k < c; ++k) {
      EXPECT_TRUE(std::isnan((*y)[5 * c + k])) << act << " channel " << k;
      EXPECT_FLOAT_EQ((*y)[0 * c + k], std::min(6.f, 0.5f * 0.25f * c)) << act << " channel " << k;
    }
  }
}

// HardSigmoid and HardSwish in the tile give ApplyActivation's results for a
// NaN pre-activation (HardSigmoid: std::max(0, NaN) = 0; HardSwish: NaN * 0),
// and +-Inf, as the row form and the Winograd path of the same op do.
TEST(NchwcConvOp, FusedHardActivationsMatchApplyActivationOnNaNAndInf) {
  ThreadPool one(1);
  const int64_t c = 16, h = 3, w = 4;
  const float inf = std::numeric_limits<float>::infinity();
  for (const char* act : {"HardSigmoid", "HardSwish"}) {
    std::vector<float> x(c * h * w, 0.5f);
    x[5 * c + 3] = std::numeric_limits<float>::quiet_NaN();  // pixel 5: NaN in every output channel
    x[6 * c + 2] = inf;                                        // pixel 6: +Inf
    x[7 * c + 2] = -inf;                                       // pixel 7: -Inf
    OpCase op("NchwcConv", 1, kOpenCannDomain);
    op.node().SetInt("block", 16);
    op.node().SetString("activation", act);
    Activation a{ActivationKind::kHardSwish, 0.f, 0.f};
    if (std::string(act) == "HardSigmoid") {
      op.node().SetFloat("activation_alpha", 0.3f);
      op.node().SetFloat("activation_beta", 0.4f);
      a = Activation{ActivationKind::kHardSigmoid, 0.3f, 0.4f};
    }
    op.In({1, 1, h, w, c}, x, false).In({c, c, 1, 1}, std::vector<float>(c * c, 0.25f), true);
    auto y = op.Run(&one, {});
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    for (int64_t p : {0, 5, 6, 7}) {
      // The pre-activation of pixel p in every channel, through ApplyActivation.
      float pre = p == 5 ? std::numeric_limits<float>::quiet_NaN() : p == 6 ? inf : p == 7 ? -inf : 0.5f * 0.25f * c;
      ApplyActivation(a, &pre, 1);
      for (int64_t k = 0; k < c; ++k) {
        const float got = (*y)[p * c + k];
        if (std::isnan(pre)) EXPECT_TRUE(std::isnan(got)) << act << " pixel " << p << " channel " << k;
        else EXPECT_FLOAT_EQ(got, pre) << act << " pixel " << p << " channel " << k;
      }
    }
  }
}

// The profiler counts the real output channels of a blocked conv, not the padding lanes.
TEST(NchwcConvOp, FlopsCountRealChannels) {
  OpCase op("NchwcConv", 1, kOpenCannDomain);
  op.node().SetInt("block", 16);
  op.node().SetInts("pads", {1, 1, 1, 1});
  op.In({2, 2, 5, 6, 16}, Rand(2 * 2 * 5 * 6 * 16, 1), false).In({20, 19, 3, 3}, Rand(20 * 19 * 9, 2), true);
  ASSERT_TRUE(op.Infer().ok());
  EXPECT_EQ(trace::NodeFlops(op.node()), 2LL * (2 * 20 * 5 * 6) * (19 * 9));
}

TEST(NchwcConvOp, RejectsGroupedAndBadBlock) {
  OpCase op("NchwcConv", 1, kOpenCannDomain);
  op.node().SetInt("block", 12);
  op.In({1, 1, 4, 4, 12}, Rand(16 * 12, 1), false).In({4, 4, 1, 1}, Rand(16, 2), true);
  EXPECT_FALSE(op.Infer().ok());
  OpCase g("NchwcConv", 1, kOpenCannDomain);
  g.node().SetInt("block", 8);
  g.node().SetInt("group", 2);
  g.In({1, 1, 4, 4, 8}, Rand(128, 1), false).In({4, 4, 1, 1}, Rand(16, 2), true);
  auto st = g.Infer();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("group"), std::string::npos) << st.ToString();
}

TEST(NchwcReorder, RoundTripPadsWithZeros) {
  ThreadPool two(2);
  for (int block : {8, 16})
    for (int64_t ch : {1, 8, 13, 16, 35})
      for (int64_t w : {5, 16, 37}) {
      const int64_t n = 2, h = 3;
      const auto x = Rand(n * ch * h * w, 3);
      OpCase to("ReorderToNchwc", 1, kOpenCannDomain);
      to.node().SetInt("block", block);
      to.In({n, ch, h, w}, x, false);
      auto yb = to.Run(&two);
      ASSERT_TRUE(yb.ok()) << yb.status().ToString();
      EXPECT_EQ(*yb, Block(x, n, ch, h, w, block));
      OpCase from("ReorderFromNchwc", 1, kOpenCannDomain);
      from.node().SetInt("block", block);
      from.node().SetInt("channels", ch);
      from.In({n, (ch + block - 1) / block, h, w, block}, *yb, false);
      auto back = from.Run(&two);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(*back, x);
    }
}

struct PoolCase {
  bool max;
  int64_t h, w, kh, kw, s, pt, pl, pb, pr;
  bool ceil = false, include_pad = false;
};

// Every pool build the CPU runs.
std::vector<nchwc::PoolKernels> PoolBuilds() {
  std::vector<nchwc::PoolKernels> builds = {nchwc::PoolKernelsBaseline()};
#if defined(__x86_64__) || defined(_M_X64)
  if (SelectedIsa() == Isa::kAvx2 || SelectedIsa() == Isa::kAvx512) builds.push_back(nchwc::PoolKernelsAvx2());
  if (SelectedIsa() == Isa::kAvx512) builds.push_back(nchwc::PoolKernelsAvx512());
#endif
  return builds;
}

TEST(NchwcPool, MatchesNaivePools) {
  ThreadPool two(2);
  const PoolCase cases[] = {
      {true, 112, 112, 3, 3, 2, 1, 1, 1, 1},  {true, 7, 9, 2, 2, 2, 0, 0, 0, 0, true},
      {false, 9, 8, 3, 3, 2, 1, 1, 1, 1},     {false, 9, 8, 3, 3, 2, 1, 1, 1, 1, false, true},
      {false, 6, 7, 3, 2, 1, 0, 1, 2, 0, true, true},
  };
  for (int block : {8, 16})
    for (const PoolCase& p : cases) {
      const int64_t n = 2, ch = 21;
      const auto x = Rand(n * ch * p.h * p.w, 5);
      auto out_dim = [&](int64_t in, int64_t k, int64_t b, int64_t e) {
        const int64_t span = in + b + e - k;
        int64_t o = (p.ceil ? (span + p.s - 1) / p.s : span / p.s) + 1;
        if (p.ceil && (o - 1) * p.s >= in + b) --o;
        return o;
      };
      const int64_t oh = out_dim(p.h, p.kh, p.pt, p.pb), ow = out_dim(p.w, p.kw, p.pl, p.pr);
      std::vector<float> want(n * ch * oh * ow);
      for (int64_t a = 0; a < n * ch; ++a)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            double acc = p.max ? -INFINITY : 0.0;
            int64_t cnt = 0;
            const int64_t h0 = i * p.s - p.pt, w0 = j * p.s - p.pl;
            const int64_t h1 = std::min(h0 + p.kh, p.h + p.pb), w1 = std::min(w0 + p.kw, p.w + p.pr);
            for (int64_t y = h0; y < h0 + p.kh; ++y)
              for (int64_t xw = w0; xw < w0 + p.kw; ++xw) {
                if (y < 0 || y >= p.h || xw < 0 || xw >= p.w) continue;
                const double v = x[(a * p.h + y) * p.w + xw];
                acc = p.max ? std::max(acc, v) : acc + v;
                ++cnt;
              }
            if (!p.max) acc /= p.include_pad ? double((h1 - h0) * (w1 - w0)) : double(cnt);
            want[(a * oh + i) * ow + j] = static_cast<float>(acc);
          }
      OpCase op(p.max ? "NchwcMaxPool" : "NchwcAveragePool", 1, kOpenCannDomain);
      op.node().SetInt("block", block);
      op.node().SetInts("kernel_shape", {p.kh, p.kw});
      op.node().SetInts("strides", {p.s, p.s});
      op.node().SetInts("pads", {p.pt, p.pl, p.pb, p.pr});
      if (p.ceil) op.node().SetInt("ceil_mode", 1);
      if (p.include_pad) op.node().SetInt("count_include_pad", 1);
      op.In({n, (ch + block - 1) / block, p.h, p.w, block}, Block(x, n, ch, p.h, p.w, block), false);
      auto y = op.Run(&two);
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      ExpectClose(Unblock(*y, n, ch, oh, ow, block), want, std::string(p.max ? "max" : "avg") + " c=" +
                  std::to_string(block), 1e-5f);
      // Every ISA build the CPU runs, on two uneven halves of the rows.
      nchwc::PoolShape ps;
      ps.block = block, ps.max = p.max, ps.count_include_pad = p.include_pad;
      ps.batch = n, ps.blocks = (ch + block - 1) / block, ps.in_h = p.h, ps.in_w = p.w, ps.out_h = oh, ps.out_w = ow;
      ps.k_h = p.kh, ps.k_w = p.kw, ps.stride_h = ps.stride_w = p.s;
      ps.pad_t = p.pt, ps.pad_l = p.pl, ps.pad_b = p.pb, ps.pad_r = p.pr;
      const std::vector<float> xb = Block(x, n, ch, p.h, p.w, block);
      const int64_t units = n * ps.blocks * oh;
      for (const nchwc::PoolKernels& k : PoolBuilds()) {
        std::vector<float> yb(units * ow * block, std::nanf(""));
        k.pool(ps, xb.data(), yb.data(), 0, units / 3);
        k.pool(ps, xb.data(), yb.data(), units / 3, units);
        ExpectClose(Unblock(yb, n, ch, oh, ow, block), want,
                    std::string(k.isa) + (p.max ? " max" : " avg") + " c=" + std::to_string(block), 1e-5f);
      }
    }
}

TEST(NchwcPool, GlobalAverage) {
  ThreadPool two(2);
  for (int block : {8, 16}) {
    const int64_t n = 3, ch = 19, h = 7, w = 5;
    const auto x = Rand(n * ch * h * w, 9);
    std::vector<float> want(n * ch);
    for (int64_t a = 0; a < n * ch; ++a) {
      double acc = 0;
      for (int64_t p = 0; p < h * w; ++p) acc += x[a * h * w + p];
      want[a] = static_cast<float>(acc / (h * w));
    }
    OpCase op("NchwcGlobalAveragePool", 1, kOpenCannDomain);
    op.node().SetInt("block", block);
    op.In({n, (ch + block - 1) / block, h, w, block}, Block(x, n, ch, h, w, block), false);
    auto y = op.Run(&two);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    ExpectClose(Unblock(*y, n, ch, 1, 1, block), want, "global average", 1e-5f);
    const std::vector<float> xb = Block(x, n, ch, h, w, block);
    const int64_t units = n * ((ch + block - 1) / block);
    for (const nchwc::PoolKernels& k : PoolBuilds()) {
      std::vector<float> yb(units * block, std::nanf(""));
      k.global_average(xb.data(), yb.data(), h * w, block, 0, units / 3);
      k.global_average(xb.data(), yb.data(), h * w, block, units / 3, units);
      ExpectClose(Unblock(yb, n, ch, 1, 1, block), want, std::string(k.isa) + " global average", 1e-5f);
    }
  }
}

}  // namespace
}  // namespace oc

namespace oc {
namespace {

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Per-layer timing of the blocked conv against the NCHW Conv op (1 thread,
// process CPU time, median of 9): ResNet-50 and MobileNetV2 shapes.
// Run: oc_unit_tests --gtest_also_run_disabled_tests --gtest_filter='NchwcBench*'
TEST(NchwcBench, DISABLED_Layers) {
  struct L { const char* name; Case c; };
  const L layers[] = {
      {"r50 stem 7x7/2", {.c = 3, .h = 224, .w = 224, .m = 64, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .pt = 3, .pl = 3,
                          .pb = 3, .pr = 3, .nchw_input = true, .bias = true, .act = ActivationKind::kRelu}},
      {"r50 56 1x1 64-64", {.c = 64, .h = 56, .w = 56, .m = 64, .kh = 1, .kw = 1, .bias = true}},
      {"r50 56 3x3 64", {.c = 64, .h = 56, .w = 56, .m = 64, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true}},
      {"r50 56 1x1 64-256", {.c = 64, .h = 56, .w = 56, .m = 256, .kh = 1, .kw = 1, .bias = true, .residual = true}},
      {"r50 28 3x3 128", {.c = 128, .h = 28, .w = 28, .m = 128, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true}},
      {"r50 14 3x3 256", {.c = 256, .h = 14, .w = 14, .m = 256, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true}},
      {"r50 14 1x1 1024-256", {.c = 1024, .h = 14, .w = 14, .m = 256, .kh = 1, .kw = 1, .bias = true}},
      {"r50 7 3x3 512", {.c = 512, .h = 7, .w = 7, .m = 512, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .bias = true}},
      {"r50 7 1x1 512-2048", {.c = 512, .h = 7, .w = 7, .m = 2048, .kh = 1, .kw = 1, .bias = true}},
      {"r50 14->7 1x1/2 1024-2048", {.c = 1024, .h = 14, .w = 14, .m = 2048, .kh = 1, .kw = 1, .sh = 2, .sw = 2}},
      {"mv2 112 dw3x3 32", {.c = 32, .h = 112, .w = 112, .m = 32, .pt = 1, .pl = 1, .pb = 1, .pr = 1,
                            .depthwise = true, .bias = true, .act = ActivationKind::kClip}},
      {"mv2 56 dw3x3/2 144", {.c = 144, .h = 56, .w = 56, .m = 144, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1,
                              .pr = 1, .depthwise = true, .bias = true, .act = ActivationKind::kClip}},
      {"mv2 28 1x1 32-192", {.c = 32, .h = 28, .w = 28, .m = 192, .kh = 1, .kw = 1, .bias = true}},
      {"mv2 7 1x1 960-160", {.c = 960, .h = 7, .w = 7, .m = 160, .kh = 1, .kw = 1, .bias = true}},
  };
  ThreadPool one(1);
  const int block = nchwc::BlockForIsa(SelectedIsa());
  if (block == 0) GTEST_SKIP() << "no blocked layout on this ISA";
  for (const L& l : layers) {
    const Case& s = l.c;
    const Data d = MakeData(s, 3);
    auto make = [&](bool blocked) {
      auto op = std::make_unique<OpCase>(blocked ? "NchwcConv" : "Conv", blocked ? 1 : 17,
                                         blocked ? kOpenCannDomain : "");
      Node& n = op->node();
      if (blocked) n.SetInt("block", block);
      n.SetInts("kernel_shape", {s.kh, s.kw});
      n.SetInts("strides", {s.sh, s.sw});
      n.SetInts("pads", {s.pt, s.pl, s.pb, s.pr});
      if (s.depthwise) n.SetInt("group", s.c);
      if (s.nchw_input && blocked) n.SetInt("nchw_input", 1);
      const int64_t cb = (s.c + block - 1) / block;
      if (!blocked || s.nchw_input) op->In({s.n, s.c, s.h, s.w}, d.x, false);
      else op->In({s.n, cb, s.h, s.w, block}, Block(d.x, s.n, s.c, s.h, s.w, block), false);
      op->In({s.m, s.depthwise ? 1 : s.c, s.kh, s.kw}, d.w, true);
      op->In({s.m}, s.bias ? d.b : std::vector<float>(s.m, 0.f), true);
      return op;
    };
    double t[2];
    for (int blocked = 0; blocked < 2; ++blocked) {
      auto op = make(blocked);
      ASSERT_TRUE(op->Infer().ok());
      const Node& n = op->node();
      const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, n.opset);
      auto k = CpuKernelOf(*def)(KernelInit{n, {}, 1});
      ASSERT_TRUE(k.ok()) << k.status().ToString();
      const int64_t cb = (s.c + block - 1) / block;
      std::vector<float> x = blocked && !s.nchw_input ? Block(d.x, s.n, s.c, s.h, s.w, block) : d.x;
      (void)cb;
      std::vector<float> y(n.outputs[0]->NumElements());
      std::vector<uint8_t> scratch((*k)->ScratchBytes() + 64);
      void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
      const void* ins[] = {x.data(), d.w.data(), n.input(2)->constant->data()};
      void* outs[] = {y.data()};
      KernelIO io{ins, 3, outs, 1, &one, aligned};
      std::vector<double> times;
      for (int r = 0; r < 9; ++r) {
        const double t0 = CpuSeconds();
        ASSERT_TRUE((*k)->Run(io).ok());
        times.push_back(CpuSeconds() - t0);
      }
      std::sort(times.begin(), times.end());
      t[blocked] = times[times.size() / 2];
    }
    const double macs = double(s.n) * s.m * s.OutH() * s.OutW() * s.kh * s.kw * (s.depthwise ? 1 : s.c);
    std::printf("%-28s NCHW %7.3f ms  NCHWc %7.3f ms  (%.2fx, %.0f GFLOP/s blocked)\n",
                l.name, t[0] * 1e3, t[1] * 1e3, t[0] / t[1], 2 * macs / t[1] * 1e-9);
  }
}

}  // namespace
}  // namespace oc

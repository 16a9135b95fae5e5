// Winograd F(4x4, 3x3) against a direct convolution in double written here:
// sizes 1..17 (not multiples of 4 included), asymmetric pads 0..2, channels
// 1..70, batch 2, bias, residual, ReLU; the error is measured relative to the
// output scale and must stay near float rounding (it grows with Cin like any
// sum, by a small factor over im2col).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <cstdio>

#include "base/thread_pool.h"
#include "ops/cpu/conv/conv_winograd.h"
#include "ops/cpu/gemm/gemm_op_test_util.h"

namespace oc {
namespace {

using gemm_testing::OpCase;
using gemm_testing::Rand;

struct Case {
  int64_t n, cin, cout, h, w;
  int64_t pt, pl, pb, pr;  // pads top, left, bottom, right
};

ConvGeometry Geometry(const Case& c) {
  ConvGeometry g;
  g.nd = 2, g.batch = c.n, g.c_in = c.cin, g.c_out = c.cout;
  g.in = {1, c.h, c.w};
  g.kernel = {1, 3, 3};
  g.pad_begin = {0, c.pt, c.pl};
  g.pad_end = {0, c.pb, c.pr};
  g.out = {1, c.h + c.pt + c.pb - 2, c.w + c.pl + c.pr - 2};
  return g;
}

std::vector<double> Direct(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& b, const std::vector<float>& z, bool relu) {
  const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2];
  std::vector<double> y(g.batch * g.c_out * OH * OW);
  size_t i = 0;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t m = 0; m < g.c_out; ++m)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox, ++i) {
          double acc = b.empty() ? 0.0 : b[m];
          for (int64_t c = 0; c < g.c_in; ++c)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = oy - g.pad_begin[1] + ky, ix = ox - g.pad_begin[2] + kx;
                if (iy < 0 || iy >= IH || ix < 0 || ix >= IW) continue;
                acc += double(x[((n * g.c_in + c) * IH + iy) * IW + ix]) * w[((m * g.c_in + c) * 3 + ky) * 3 + kx];
              }
          if (!z.empty()) acc += z[i];
          if (relu) acc = std::max(acc, 0.0);
          y[i] = acc;
        }
  return y;
}

// Max |error| / max |output| of one case (bias, residual and ReLU on when `fused`).
double RunCase(const Case& c, bool fused, ThreadPool* pool, uint32_t seed, int planned_threads = 0,
               bool dynamic = false) {
  const ConvGeometry g = Geometry(c);
  EXPECT_TRUE(WinogradApplicable(g));
  auto x = Rand(c.n * c.cin * c.h * c.w, seed), w = Rand(c.cout * c.cin * 9, seed + 1);
  const int64_t ysize = c.n * c.cout * g.out[1] * g.out[2];
  std::vector<float> b = fused ? Rand(c.cout, seed + 2) : std::vector<float>{};
  std::vector<float> z = fused ? Rand(ysize, seed + 3) : std::vector<float>{};
  Activation act;
  if (fused) act.kind = ActivationKind::kRelu;
  const int threads = planned_threads ? planned_threads : pool->num_threads();
  WinogradConv wc = dynamic ? WinogradConv::Dynamic(g, threads) : WinogradConv(g, w.data(), {}, threads);
  EXPECT_TRUE(wc.valid());
  std::vector<float> scratch(wc.ScratchBytes() / sizeof(float) + 16);
  auto* aligned = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
  std::vector<float> y(ysize, std::nanf(""));
  if (dynamic) {  // a first run with other weights: each run must use the weights it is given
    auto other = Rand(c.cout * c.cin * 9, seed + 7);
    std::vector<float> y0(ysize);
    wc.Run(x.data(), nullptr, nullptr, y0.data(), Activation{}, pool, aligned, other.data());
  }
  wc.Run(x.data(), fused ? b.data() : nullptr, fused ? z.data() : nullptr, y.data(), act, pool, aligned, w.data());
  const auto want = Direct(g, x, w, b, z, fused);
  double scale = 1e-30, err = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    const double e = std::fabs(y[i] - want[i]);
    if (!(e <= err)) err = std::isnan(e) ? INFINITY : e;
  }
  return err / scale;
}

TEST(Winograd, MatchesDirectAllSmallSizesAndPads) {
  ThreadPool pool(3);
  uint32_t seed = 10;
  for (int64_t h = 1; h <= 17; ++h)
    for (int64_t w : {1, 3, 4, 5, 8, 11, 17}) {
      const int64_t pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 2}, {0, 2, 2, 1}};
      for (const auto& p : pads) {
        const Case c{2, 3 + h % 5, 2 + w % 7, h, w, p[0], p[1], p[2], p[3]};
        if (c.h + p[0] + p[2] < 3 || c.w + p[1] + p[3] < 3) continue;
        for (bool fused : {false, true}) {
          const double rel = RunCase(c, fused, &pool, seed++);
          EXPECT_LT(rel, 1e-5) << "h " << h << " w " << w << " pads " << p[0] << p[1] << p[2] << p[3]
                               << (fused ? " fused" : "");
        }
      }
    }
}

TEST(Winograd, DynamicWeightsTransformedEachRun) {
  ThreadPool pool(2);
  uint32_t seed = 900;
  for (const Case& c : {Case{2, 16, 16, 8, 8, 1, 1, 1, 1}, Case{3, 17, 33, 5, 11, 0, 2, 2, 1},
                        Case{1, 64, 32, 14, 14, 1, 1, 1, 1}})
    for (bool fused : {false, true}) {
      const double rel = RunCase(c, fused, &pool, seed++, 0, /*dynamic=*/true);
      EXPECT_LT(rel, 1e-5) << c.cin << "->" << c.cout << " " << c.h << "x" << c.w << (fused ? " fused" : "");
    }
}

TEST(Winograd, ChannelCountsAcrossLanesAndPanels) {
  ThreadPool pool(2);
  uint32_t seed = 500;
  for (int64_t cin : {1, 15, 16, 17, 33, 70})
    for (int64_t cout : {1, 14, 17, 32, 33, 70}) {
      const Case c{2, cin, cout, 9, 10, 1, 1, 1, 1};
      const double rel = RunCase(c, true, &pool, seed++);
      // F(4,3) error ~ a few ulps times sqrt(9 * Cin) terms.
      EXPECT_LT(rel, 1e-5) << "cin " << cin << " cout " << cout;
    }
}

// Whole 16-channel blocks and whole tiles take the AVX-512 build's row
// load/store transposes: no pads (the last tile column reads to the row end),
// pads, batch 2, fused residual and ReLU, 1-3 threads.
TEST(Winograd, FullChannelBlocksAndInteriorTiles) {
  uint32_t seed = 700;
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    const Case cases[] = {{2, 64, 48, 18, 22, 0, 0, 0, 0}, {1, 32, 16, 30, 30, 1, 1, 1, 1},
                          {2, 48, 33, 10, 14, 2, 1, 0, 2}};
    for (const Case& c : cases)
      for (bool fused : {false, true})
        EXPECT_LT(RunCase(c, fused, &pool, seed++), 2e-5)
            << "cin " << c.cin << " " << c.h << "x" << c.w << " threads " << threads << (fused ? " fused" : "");
  }
}

// NCHW [N][C][H][W] to blocked [N][ceil(C/b)][H][W][b], padding lanes `fill`.
std::vector<float> ToBlocked(const std::vector<float>& x, int64_t n, int64_t c, int64_t hw, int64_t b, float fill) {
  const int64_t cb = (c + b - 1) / b;
  std::vector<float> y(n * cb * hw * b, fill);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) y[((i * cb + ch / b) * hw + p) * b + ch % b] = x[(i * c + ch) * hw + p];
  return y;
}

// RunBlocked against Run on the same weights: blocks 8 and 16, channel counts
// that leave padding lanes (filled with junk on input, expected act(0) = 0
// on output), pads, batch 2, fused residual + Relu, 1-3 threads.
TEST(Winograd, BlockedLayoutMatchesNchw) {
  uint32_t seed = 1500;
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t block : {8, 16})
      for (const Case& c : {Case{2, 20, 21, 9, 10, 1, 1, 1, 1}, Case{1, 32, 16, 14, 14, 1, 1, 1, 1},
                            Case{2, 16, 40, 8, 11, 0, 2, 1, 0}})
        for (bool fused : {false, true}) {
          const ConvGeometry g = Geometry(c);
          const int64_t ihw = c.h * c.w, ohw = g.out[1] * g.out[2];
          auto x = Rand(c.n * c.cin * ihw, seed), w = Rand(c.cout * c.cin * 9, seed + 1);
          auto b = Rand(c.cout, seed + 2), z = Rand(c.n * c.cout * ohw, seed + 3);
          seed += 4;
          Activation act;
          if (fused) act.kind = ActivationKind::kRelu;
          WinogradConv wc(g, w.data(), {}, threads);
          std::vector<float> scratch(wc.ScratchBytes() / sizeof(float) + 16);
          void* s = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
          std::vector<float> want(c.n * c.cout * ohw);
          wc.Run(x.data(), b.data(), fused ? z.data() : nullptr, want.data(), act, &pool, s);
          const auto xb = ToBlocked(x, c.n, c.cin, ihw, block, 1e3f), zb = ToBlocked(z, c.n, c.cout, ohw, block, 1e3f);
          std::vector<float> yb(ToBlocked(want, c.n, c.cout, ohw, block, 0.f).size(), std::nanf(""));
          wc.RunBlocked(static_cast<int>(block), xb.data(), b.data(), fused ? zb.data() : nullptr, yb.data(), act,
                        &pool, s);
          const auto want_b = ToBlocked(want, c.n, c.cout, ohw, block, 0.f);  // padding lanes: act(0) = 0
          double err = 0, scale = 1e-30;
          for (size_t i = 0; i < yb.size(); ++i) {
            scale = std::max(scale, std::fabs(double(want_b[i])));
            const double e = std::fabs(double(yb[i]) - want_b[i]);
            if (!(e <= err)) err = std::isnan(e) ? INFINITY : e;
          }
          EXPECT_LT(err / scale, 1e-6) << "block " << block << " cin " << c.cin << " cout " << c.cout << " threads "
                                       << threads << (fused ? " fused" : "");
        }
  }
}

TEST(Winograd, ErrorGrowsSanelyWithChannels) {
  ThreadPool pool(1);
  for (int64_t cin : {64, 256}) {
    const Case c{1, cin, 16, 14, 14, 1, 1, 1, 1};
    const double rel = RunCase(c, false, &pool, 900 + cin);
    EXPECT_LT(rel, 2e-5) << "cin " << cin;
  }
}

// A pool with fewer threads than the conv was planned for (a model loaded at
// 8 threads, then aclrtSetOpExecuteThreads(2)): 2 threads split 196 tiles
// (56x56 outputs) where 8 would not, so the scratch must hold 2 per-thread
// V/Ms although the plan at 8 shares the GEMMs; and the converse, planned for
// 2 and run on 3 (capped at 2), and on 1.
TEST(Winograd, PoolSmallerOrLargerThanPlanned) {
  const Case c{1, 64, 64, 56, 56, 1, 1, 1, 1};
  uint32_t seed = 1900;
  for (const auto& [pool_threads, planned] : {std::pair{2, 8}, std::pair{2, 3}, std::pair{3, 2}, std::pair{1, 4}}) {
    ThreadPool pool(pool_threads);
    EXPECT_LT(RunCase(c, true, &pool, seed++, planned), 2e-5) << "pool " << pool_threads << " planned " << planned;
  }
}

TEST(Winograd, ManyTileChunks) {
  // 64x64 outputs, batch 2: 512 tiles, over several GEMM batches for 200 channels.
  ThreadPool pool(3);
  const Case c{2, 100, 100, 64, 64, 1, 1, 1, 1};
  EXPECT_LT(RunCase(c, true, &pool, 77), 2e-5);
}

// Through the Conv op (shape where the selection picks Winograd), with the
// prepacked transformed weights exported and reused.
TEST(Winograd, ConvOpPrepackedRoundTrip) {
  const Case cs{1, 64, 70, 14, 15, 1, 1, 1, 1};
  const ConvGeometry g = Geometry(cs);
  if (!WinogradPreferred(g)) GTEST_SKIP() << "Winograd not selected for this shape here";
  auto x = Rand(64 * 14 * 15, 3), w = Rand(70 * 64 * 9, 4);
  ThreadPool pool(2);
  auto setup = [&](OpCase& c) {
    c.In({1, 64, 14, 15}, x, false).In({70, 64, 3, 3}, w, true);
    c.node().SetInts("pads", {1, 1, 1, 1});
  };
  OpCase first("Conv", 11), again("Conv", 11);
  setup(first), setup(again);
  std::vector<uint8_t> blob, blob2;
  auto y0 = first.Run(&pool, {}, &blob);
  ASSERT_TRUE(y0.ok()) << y0.status().ToString();
  ASSERT_FALSE(blob.empty());
  auto y1 = again.Run(&pool, blob, &blob2);
  ASSERT_TRUE(y1.ok());
  EXPECT_EQ(*y0, *y1);
  EXPECT_EQ(blob, blob2);
  const auto want = Direct(g, x, w, {}, {}, false);
  double scale = 0, err = 0;
  for (size_t i = 0; i < want.size(); ++i)
    scale = std::max(scale, std::fabs(want[i])), err = std::max(err, std::fabs((*y0)[i] - want[i]));
  EXPECT_LT(err / scale, 2e-5);
}

}  // namespace
}  // namespace oc

namespace oc {
namespace {

struct Im2ColCtx {
  const ConvGeometry* g;
  const float* x;
};

double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Per-shape timing of Winograd against the im2col GEMM at 1 thread, process
// CPU time, best of 15 (the selection heuristic in WinogradPreferred comes
// from this). Run with --gtest_also_run_disabled_tests.
TEST(Winograd, DISABLED_BenchResNetShapes) {
  ThreadPool pool(1);
  const Case shapes[] = {{1, 64, 64, 56, 56, 1, 1, 1, 1},   {1, 128, 128, 28, 28, 1, 1, 1, 1},
                         {1, 256, 256, 14, 14, 1, 1, 1, 1}, {1, 512, 512, 7, 7, 1, 1, 1, 1},
                         {1, 32, 32, 56, 56, 1, 1, 1, 1},   {1, 64, 64, 14, 14, 1, 1, 1, 1},
                         {1, 128, 128, 8, 8, 1, 1, 1, 1},   {1, 256, 256, 8, 8, 1, 1, 1, 1},
                         {1, 16, 16, 56, 56, 1, 1, 1, 1},   {1, 16, 32, 28, 28, 1, 1, 1, 1},
                         {1, 32, 32, 14, 14, 1, 1, 1, 1},   {1, 8, 16, 56, 56, 1, 1, 1, 1},
                         {1, 64, 64, 7, 7, 1, 1, 1, 1},     {1, 128, 128, 7, 7, 1, 1, 1, 1},
                         {1, 256, 256, 7, 7, 1, 1, 1, 1},   {1, 512, 512, 10, 10, 1, 1, 1, 1},
                         {1, 512, 512, 14, 14, 1, 1, 1, 1}, {1, 1024, 1024, 14, 14, 1, 1, 1, 1},
                         {1, 512, 512, 28, 28, 1, 1, 1, 1},  {8, 512, 512, 7, 7, 1, 1, 1, 1}};
  for (const Case& c : shapes) {
    const ConvGeometry g = Geometry(c);
    auto x = Rand(c.n * c.cin * c.h * c.w, 1), w = Rand(c.cout * c.cin * 9, 2);
    std::vector<float> y(c.n * c.cout * g.OutSize());
    WinogradConv wc(g, w.data(), {}, 1);
    std::vector<float> scratch(wc.ScratchBytes() / sizeof(float) + 16);
    auto* s = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
    const gemm::GemmUkernel& uk = gemm::DefaultUkernel();
    const int64_t k = c.cin * 9;
    gemm::SgemmPlan plan(uk, c.cout, g.OutSize(), k, 1);
    auto pw = gemm::PackedOperand::Make(uk, gemm::PackedSide::kA, w.data(), k, false, c.cout, k, {});
    auto im2col = [&] {
      gemm::SgemmArgs a;
      a.m = c.cout, a.n = g.OutSize(), a.k = k, a.packed_a = pw.data();
      a.pack_b = [](const void* p, const gemm::GemmUkernel& u, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                    float* dst) {
        const auto* cx = static_cast<const Im2ColCtx*>(p);
        PackIm2ColPanels(*cx->g, cx->x, u.nr, k0, kc, n0, nc, dst);
      };
      a.ldc = g.OutSize();
      for (int64_t b = 0; b < c.n; ++b) {  // one GEMM per image, as the Conv op runs it
        Im2ColCtx img{&g, x.data() + b * c.cin * c.h * c.w};
        a.pack_b_ctx = &img, a.c = y.data() + b * c.cout * g.OutSize();
        plan.Run(a, &pool);
      }
    };
    auto wino = [&] { wc.Run(x.data(), nullptr, nullptr, y.data(), Activation{}, &pool, s); };
    const auto xb = ToBlocked(x, c.n, c.cin, c.h * c.w, 16, 0.f);
    std::vector<float> yb(c.n * ((c.cout + 15) / 16) * 16 * g.OutSize());
    auto blocked = [&] { wc.RunBlocked(16, xb.data(), nullptr, nullptr, yb.data(), Activation{}, &pool, s); };
    double best_i = 1e30, best_w = 1e30, best_b = 1e30;
    for (int r = 0; r < 15; ++r) {
      double t = CpuMs();
      im2col();
      best_i = std::min(best_i, CpuMs() - t);
      t = CpuMs();
      wino();
      best_w = std::min(best_w, CpuMs() - t);
      t = CpuMs();
      blocked();
      best_b = std::min(best_b, CpuMs() - t);
    }
    std::printf("n %ld cin %4ld cout %4ld %3ldx%-3ld im2col %7.3f ms  winograd %7.3f ms  speedup %.2fx  blocked-16 %7.3f ms\n",
                long(c.n), long(c.cin), long(c.cout), long(c.h), long(c.w), best_i, best_w, best_i / best_w, best_b);
  }
}

}  // namespace
}  // namespace oc

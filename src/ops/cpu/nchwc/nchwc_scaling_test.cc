// Per-layer 2-thread work inflation of NchwcConv: process CPU time of a
// 2-thread pool that sleeps instead of polling (so waiting is not counted)
// against a 1-thread pool, on the conv shapes of ResNet-50 (batch 1 and 8)
// and MobileNetV2. What a 2-thread run spends above 1 thread is partial-sum
// passes, weights re-read per thread, shared cache lines or set-up per unit.
// NchwcScaling.DISABLED_Halves times the two halves a 2-thread split gives
// one after the other on one thread (thread CPU time), which a loaded machine
// cannot blur: their imbalance and their sum against the 1-thread plan.
// Run: oc_unit_tests --gtest_also_run_disabled_tests --gtest_filter='NchwcScaling*'
// (NCHWC_SCALING_MODEL=r50|r50b8|mv2|mv2b8 picks one model; NCHWC_SCALING_RUNS).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "ops/cpu/gemm/gemm_op_test_util.h"
#include "ops/cpu/nchwc/nchwc.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

using gemm_testing::OpCase;
using gemm_testing::Rand;

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
double ThreadCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
double WallNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Layer {
  const char* name;
  int count;  // times the model runs this shape
  int64_t n, c, h, w, m, k, s, p;
  bool dw = false, nchw = false, res = false;
};

std::vector<Layer> Layers(const std::string& model) {
  std::vector<Layer> ls;
  if (model == "r50" || model == "r50b8") {
    const int64_t n = model == "r50" ? 1 : 8;
    ls = {
        {"stem 7x7/2 3-64", 1, n, 3, 224, 224, 64, 7, 2, 3, false, true},
        {"56 1x1 64-64", 1, n, 64, 56, 56, 64, 1, 1, 0},
        {"56 3x3 64 (wino)", 3, n, 64, 56, 56, 64, 3, 1, 1},
        {"56 1x1 64-256 +z", 3, n, 64, 56, 56, 256, 1, 1, 0, false, false, true},
        {"56 1x1 256-64", 2, n, 256, 56, 56, 64, 1, 1, 0},
        {"56 1x1 256-128", 1, n, 256, 56, 56, 128, 1, 1, 0},
        {"56 3x3/2 128", 1, n, 128, 56, 56, 128, 3, 2, 1},
        {"28 1x1 128-512 +z", 4, n, 128, 28, 28, 512, 1, 1, 0, false, false, true},
        {"28 1x1 512-128", 3, n, 512, 28, 28, 128, 1, 1, 0},
        {"28 3x3 128 (wino)", 3, n, 128, 28, 28, 128, 3, 1, 1},
        {"56 1x1/2 256-512", 1, n, 256, 56, 56, 512, 1, 2, 0},
        {"28 1x1 512-256", 1, n, 512, 28, 28, 256, 1, 1, 0},
        {"28 3x3/2 256", 1, n, 256, 28, 28, 256, 3, 2, 1},
        {"14 1x1 256-1024 +z", 6, n, 256, 14, 14, 1024, 1, 1, 0, false, false, true},
        {"14 1x1 1024-256", 5, n, 1024, 14, 14, 256, 1, 1, 0},
        {"14 3x3 256 (wino)", 5, n, 256, 14, 14, 256, 3, 1, 1},
        {"28 1x1/2 512-1024", 1, n, 512, 28, 28, 1024, 1, 2, 0},
        {"14 1x1 1024-512", 1, n, 1024, 14, 14, 512, 1, 1, 0},
        {"14 3x3/2 512", 1, n, 512, 14, 14, 512, 3, 2, 1},
        {"7 1x1 512-2048 +z", 3, n, 512, 7, 7, 2048, 1, 1, 0, false, false, true},
        {"7 1x1 2048-512", 2, n, 2048, 7, 7, 512, 1, 1, 0},
        {"7 3x3 512", 2, n, 512, 7, 7, 512, 3, 1, 1},
        {"14 1x1/2 1024-2048", 1, n, 1024, 14, 14, 2048, 1, 2, 0},
    };
  } else {
    const int64_t n = model == "mv2" ? 1 : 8;
    ls = {
        {"stem 3x3/2 3-32", 1, n, 3, 224, 224, 32, 3, 2, 1, false, true},
        {"112 dw 32", 1, n, 32, 112, 112, 32, 3, 1, 1, true},
        {"112 1x1 32-16", 1, n, 32, 112, 112, 16, 1, 1, 0},
        {"112 1x1 16-96", 1, n, 16, 112, 112, 96, 1, 1, 0},
        {"112 dw/2 96", 1, n, 96, 112, 112, 96, 3, 2, 1, true},
        {"56 1x1 96-24", 1, n, 96, 56, 56, 24, 1, 1, 0},
        {"56 1x1 24-144", 2, n, 24, 56, 56, 144, 1, 1, 0},
        {"56 dw 144", 1, n, 144, 56, 56, 144, 3, 1, 1, true},
        {"56 1x1 144-24 +z", 1, n, 144, 56, 56, 24, 1, 1, 0, false, false, true},
        {"56 dw/2 144", 1, n, 144, 56, 56, 144, 3, 2, 1, true},
        {"28 1x1 144-32", 1, n, 144, 28, 28, 32, 1, 1, 0},
        {"28 1x1 32-192", 3, n, 32, 28, 28, 192, 1, 1, 0},
        {"28 dw 192", 2, n, 192, 28, 28, 192, 3, 1, 1, true},
        {"28 1x1 192-32 +z", 2, n, 192, 28, 28, 32, 1, 1, 0, false, false, true},
        {"28 dw/2 192", 1, n, 192, 28, 28, 192, 3, 2, 1, true},
        {"14 1x1 192-64", 1, n, 192, 14, 14, 64, 1, 1, 0},
        {"14 1x1 64-384", 4, n, 64, 14, 14, 384, 1, 1, 0},
        {"14 dw 384", 4, n, 384, 14, 14, 384, 3, 1, 1, true},
        {"14 1x1 384-64 +z", 3, n, 384, 14, 14, 64, 1, 1, 0, false, false, true},
        {"14 1x1 384-96", 1, n, 384, 14, 14, 96, 1, 1, 0},
        {"14 1x1 96-576", 3, n, 96, 14, 14, 576, 1, 1, 0},
        {"14 dw 576", 2, n, 576, 14, 14, 576, 3, 1, 1, true},
        {"14 1x1 576-96 +z", 2, n, 576, 14, 14, 96, 1, 1, 0, false, false, true},
        {"14 dw/2 576", 1, n, 576, 14, 14, 576, 3, 2, 1, true},
        {"7 1x1 576-160", 1, n, 576, 7, 7, 160, 1, 1, 0},
        {"7 1x1 160-960", 3, n, 160, 7, 7, 960, 1, 1, 0},
        {"7 dw 960", 3, n, 960, 7, 7, 960, 3, 1, 1, true},
        {"7 1x1 960-160 +z", 2, n, 960, 7, 7, 160, 1, 1, 0, false, false, true},
        {"7 1x1 960-320", 1, n, 960, 7, 7, 320, 1, 1, 0},
        {"7 1x1 320-1280", 1, n, 320, 7, 7, 1280, 1, 1, 0},
    };
  }
  return ls;
}

// Median CPU and wall seconds of `runs` runs of the layer on `pool`, its kernel
// created for the pool's thread count.
std::pair<double, double> Time(const Layer& l, int block, ThreadPool& pool, int runs) {
  const int64_t cb = (l.c + block - 1) / block, oh = (l.h + 2 * l.p - l.k) / l.s + 1, ow = (l.w + 2 * l.p - l.k) / l.s + 1;
  const int64_t mb = (l.m + block - 1) / block;
  OpCase op("NchwcConv", 1, kOpenCannDomain);
  Node& n = op.node();
  n.SetInt("block", block);
  n.SetInts("kernel_shape", {l.k, l.k});
  n.SetInts("strides", {l.s, l.s});
  n.SetInts("pads", {l.p, l.p, l.p, l.p});
  if (l.dw) n.SetInt("group", l.c);
  if (l.nchw) n.SetInt("nchw_input", 1);
  std::vector<float> x = Rand(l.nchw ? l.n * l.c * l.h * l.w : l.n * cb * l.h * l.w * block, 1);
  if (l.nchw) op.In({l.n, l.c, l.h, l.w}, x, false);
  else op.In({l.n, cb, l.h, l.w, block}, x, false);
  op.In({l.m, l.dw ? 1 : l.c, l.k, l.k}, Rand(l.m * (l.dw ? 1 : l.c) * l.k * l.k, 2), true);
  op.In({l.m}, Rand(l.m, 3), true);
  std::vector<float> z;
  if (l.res) {
    z = Rand(l.n * mb * oh * ow * block, 4);
    op.In({l.n, mb, oh, ow, block}, z, false);
  }
  EXPECT_TRUE(op.Infer().ok());
  const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, n.opset);
  auto k = CpuKernelOf(*def)(KernelInit{n, {}, pool.num_threads()});
  EXPECT_TRUE(k.ok()) << k.status().ToString();
  if (!k.ok()) return {0.0, 0.0};
  std::vector<float> y(n.outputs[0]->NumElements());
  std::vector<uint8_t> scratch((*k)->ScratchBytes() + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  const void* ins[] = {x.data(), nullptr, n.input(2)->constant->data(), z.data()};
  void* outs[] = {y.data()};
  KernelIO io{ins, l.res ? 4u : 3u, outs, 1, &pool, aligned};
  std::vector<double> cpu, wall;
  for (int r = 0; r < runs + 2; ++r) {
    const double c0 = CpuNow(), w0 = WallNow();
    EXPECT_TRUE((*k)->Run(io).ok());
    if (r >= 2) cpu.push_back(CpuNow() - c0), wall.push_back(WallNow() - w0);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  return {cpu[cpu.size() / 2], wall[wall.size() / 2]};
}

TEST(NchwcScaling, DISABLED_TwoThreadInflation) {
  const int block = nchwc::BlockForIsa(SelectedIsa());
  if (block == 0) GTEST_SKIP() << "no blocked layout on this ISA";
  const char* only = std::getenv("NCHWC_SCALING_MODEL");
  const char* runs_env = std::getenv("NCHWC_SCALING_RUNS");
  const int runs = runs_env ? std::atoi(runs_env) : 11;
  ThreadPool one(1, 0), two(2, 0);
  for (const char* model : {"r50", "r50b8", "mv2", "mv2b8"}) {
    if (only && model != std::string(only)) continue;
    double sum1 = 0, sum2 = 0, sumw = 0;
    std::printf("%s (ms: 1-thread CPU, 2-thread CPU with sleep/wake, 2-thread wall; x count)\n", model);
    for (const Layer& l : Layers(model)) {
      const auto [c1, w1] = Time(l, block, one, runs);
      const auto [c2, w2] = Time(l, block, two, runs);
      (void)w1;
      sum1 += c1 * l.count, sum2 += c2 * l.count, sumw += w2 * l.count;
      std::printf("  %-22s x%d  %8.3f %8.3f (%+5.1f%%, %+6.3f ms)  wall %8.3f (%.2fx)\n", l.name, l.count, c1 * 1e3,
                  c2 * 1e3, (c2 / c1 - 1) * 100, (c2 - c1) * l.count * 1e3, w2 * 1e3, c1 / w2);
    }
    std::printf("  total %8.3f %8.3f (%+5.1f%%)  wall %8.3f (%.2fx)\n", sum1 * 1e3, sum2 * 1e3, (sum2 / sum1 - 1) * 100,
                sumw * 1e3, sum1 / sumw);
  }
}


// The conv's shape as NchwcConv's kernel runs it (pointwise convs flattened
// into one row, strided ones on their gathered pixels), planned for `threads`.
nchwc::ConvShape PlannedShape(const Layer& l, int block, int fb, int threads) {
  nchwc::ConvShape s;
  s.block = block, s.nchw_input = l.nchw, s.depthwise = l.dw, s.batch = l.n, s.c_in = l.c, s.c_out = l.m;
  s.in_h = l.h, s.in_w = l.w, s.out_h = (l.h + 2 * l.p - l.k) / l.s + 1, s.out_w = (l.w + 2 * l.p - l.k) / l.s + 1;
  s.k_h = s.k_w = l.k, s.stride_h = s.stride_w = l.s, s.pad_t = s.pad_l = l.p;
  if (l.k == 1 && !l.dw && !l.nchw) {
    s.in_w = s.out_w = s.out_h * s.out_w;
    s.in_h = s.out_h = 1;
    s.stride_h = s.stride_w = 1;
  }
  nchwc::PlanConvUnits(s, fb, threads);
  return s;
}

TEST(NchwcScaling, DISABLED_Halves) {
  const int block = nchwc::BlockForIsa(SelectedIsa());
  if (block == 0) GTEST_SKIP() << "no blocked layout on this ISA";
  const nchwc::ConvKernelChoice k = nchwc::SelectConvKernel(block);
  const char* only = std::getenv("NCHWC_SCALING_MODEL");
  const char* runs_env = std::getenv("NCHWC_SCALING_RUNS");
  const int runs = runs_env ? std::atoi(runs_env) : 11;
  for (const char* model : {"r50", "r50b8", "mv2", "mv2b8"}) {
    if (only && model != std::string(only)) continue;
    double sum1 = 0, sum_max = 0, sum_halves = 0;
    std::printf("%s (thread CPU ms, medians: 1-thread plan whole; 2-thread plan: halves, their sum; x count)\n", model);
    for (const Layer& l : Layers(model)) {
      if (std::string(l.name).find("wino") != std::string::npos) continue;
      const nchwc::ConvShape s1 = PlannedShape(l, block, k.fb, 1), s2 = PlannedShape(l, block, k.fb, 2);
      const int64_t xs = l.nchw ? l.n * l.c * l.h * l.w : l.n * s1.InBlocks() * s1.in_h * s1.in_w * block;
      const std::vector<float> x = Rand(xs, 1), w = Rand(l.m * (l.dw ? 1 : l.c) * l.k * l.k, 2);
      std::vector<float> packed(s1.PackedWeightFloats()), bias(s1.OutBlocks() * block, 0.1f);
      nchwc::PackConvWeights(s1, w.data(), packed.data());
      const size_t ys = l.n * s1.OutBlocks() * s1.out_h * s1.out_w * block;
      std::vector<float> y(ys), z(l.res ? ys : 0, 0.5f);
      auto time = [&](const nchwc::ConvShape& s, int64_t b, int64_t e) {
        nchwc::ConvArgs a{&s, x.data(), packed.data(), bias.data(), l.res ? z.data() : nullptr, y.data(),
                          Activation{ActivationKind::kRelu, 0, 0}};
        std::vector<double> t;
        for (int r = 0; r < runs + 1; ++r) {
          const double t0 = ThreadCpuNow();
          k.run(a, b, e);
          if (r) t.push_back(ThreadCpuNow() - t0);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
      };
      const int64_t u1 = nchwc::ConvWorkUnits(s1, k.fb), u2 = nchwc::ConvWorkUnits(s2, k.fb);
      const double whole = time(s1, 0, u1), h0 = time(s2, 0, u2 / 2), h1 = time(s2, u2 / 2, u2);
      sum1 += whole * l.count, sum_max += std::max(h0, h1) * l.count, sum_halves += (h0 + h1) * l.count;
      std::printf("  %-22s x%d  %8.3f | %8.3f %8.3f  sum %+5.1f%%  max/mean %.3f  units %lld/%lld order %d\n", l.name,
                  l.count, whole * 1e3, h0 * 1e3, h1 * 1e3, ((h0 + h1) / whole - 1) * 100,
                  2 * std::max(h0, h1) / (h0 + h1), static_cast<long long>(u1), static_cast<long long>(u2),
                  static_cast<int>(s2.order));
    }
    std::printf("  total (no Winograd) 1-thread %.3f ms, halves sum %.3f (%+.1f%%), 2-thread bound %.3f ms (%.2fx)\n",
                sum1 * 1e3, sum_halves * 1e3, (sum_halves / sum1 - 1) * 100, sum_max * 1e3, sum1 / sum_max);
  }
}

}  // namespace
}  // namespace oc

// Per-layer timing of the Conv op on the ResNet-50 and MobileNetV2 shapes
// (not a test: run with --gtest_also_run_disabled_tests
// --gtest_filter='ConvBench.*'). For each shape: 1-thread process CPU time,
// 2-thread wall time and 2-thread process CPU time (run with
// OPENCANN_SPIN_US=0 so that waiting is not counted as work), best of
// interleaved runs. OC_CONV_BENCH_RUNS sets the run count (default 15),
// OC_CONV_BENCH_ONLY a substring of the shape names, OC_CONV_BENCH_BATCH the batch.
#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/thread_pool.h"
#include "ops/cpu/gemm/gemm_op_test_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

using gemm_testing::Rand;

double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
double WallMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct Shape {
  const char* name;
  int64_t cin, h, w, cout, k, stride, pad, group;
  bool residual;
};

// A one-node FusedConv (bias, optional residual, ReLU) with constant weights,
// its kernel built once for `threads`.
struct Bench {
  Graph graph;
  KernelPtr kernel;
  std::vector<std::vector<float>> data;
  std::vector<float> y;
  std::vector<uint8_t> scratch;
  double gflop = 0;

  Bench(const Shape& s, int64_t batch, int threads) {
    Node* n = graph.AddNode("FusedConv", "bench", {}, {}, kOpenCannDomain);
    n->opset = 1;
    n->outputs.push_back(graph.AddValue("y"));
    auto add = [&](std::vector<int64_t> shape, bool constant, uint32_t seed) {
      int64_t count = 1;
      for (int64_t d : shape) count *= d;
      data.push_back(Rand(count, seed));
      Value* v = constant ? graph.AddConstant(graph.UniqueName("c"), DataType::kFloat32, shape,
                                              TensorData::Copy(data.back().data(), count * sizeof(float)))
                          : graph.AddValue(graph.UniqueName("x"));
      v->dtype = DataType::kFloat32;
      v->has_shape = true;
      v->shape = shape;
      v->dim_params.assign(shape.size(), "");
      n->inputs.push_back(v);
    };
    const int64_t oh = (s.h + 2 * s.pad - s.k) / s.stride + 1, ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
    add({batch, s.cin, s.h, s.w}, false, 1);
    add({s.cout, s.cin / s.group, s.k, s.k}, true, 2);
    add({s.cout}, true, 3);
    if (s.residual) add({batch, s.cout, oh, ow}, false, 4);
    n->SetInts("strides", {s.stride, s.stride});
    n->SetInts("pads", {s.pad, s.pad, s.pad, s.pad});
    n->SetInt("group", s.group);
    n->SetString("activation", "Relu");
    const OpDef* def = OpRegistry::Global().Find(kOpenCannDomain, "FusedConv", 1);
    EXPECT_TRUE(def->infer(*n).ok());
    auto k = CpuKernelOf(*def)(KernelInit{*n, {}, threads});
    EXPECT_TRUE(k.ok()) << k.status().ToString();
    kernel = std::move(*k);
    y.resize(batch * s.cout * oh * ow);
    scratch.resize(kernel->ScratchBytes() + 64);
    gflop = 2.0 * batch * s.cout * oh * ow * (s.cin / s.group) * s.k * s.k * 1e-9;
  }
  void Run(ThreadPool* pool) {
    std::vector<const void*> ins;
    for (auto& d : data) ins.push_back(d.data());
    void* outs[] = {y.data()};
    void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
    KernelIO io{ins.data(), ins.size(), outs, 1, pool, aligned};
    EXPECT_TRUE(kernel->Run(io).ok());
  }
};

// Best of the runs: on a shared machine the other core is often busy, and the
// fastest run is the one that had both cores (medians mostly measure the load).
double Best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

const Shape kShapes[] = {
    {"r50.conv1 7x7s2", 3, 224, 224, 64, 7, 2, 3, 1, false},
    {"r50.l1.c1 1x1 64", 64, 56, 56, 64, 1, 1, 0, 1, false},
    {"r50.l1.c2 3x3 64", 64, 56, 56, 64, 3, 1, 1, 1, false},
    {"r50.l1.c3 1x1 64-256 res", 64, 56, 56, 256, 1, 1, 0, 1, true},
    {"r50.l1.c1b 1x1 256-64", 256, 56, 56, 64, 1, 1, 0, 1, false},
    {"r50.l2.0c1 1x1 256-128", 256, 56, 56, 128, 1, 1, 0, 1, false},
    {"r50.l2.0c2 3x3s2 128", 128, 56, 56, 128, 3, 2, 1, 1, false},
    {"r50.l2.ds 1x1s2 256-512", 256, 56, 56, 512, 1, 2, 0, 1, false},
    {"r50.l2.c2 3x3 128", 128, 28, 28, 128, 3, 1, 1, 1, false},
    {"r50.l2.c3 1x1 128-512 res", 128, 28, 28, 512, 1, 1, 0, 1, true},
    {"r50.l2.c1 1x1 512-128", 512, 28, 28, 128, 1, 1, 0, 1, false},
    {"r50.l3.0c2 3x3s2 256", 256, 28, 28, 256, 3, 2, 1, 1, false},
    {"r50.l3.ds 1x1s2 512-1024", 512, 28, 28, 1024, 1, 2, 0, 1, false},
    {"r50.l3.c2 3x3 256", 256, 14, 14, 256, 3, 1, 1, 1, false},
    {"r50.l3.c3 1x1 256-1024 res", 256, 14, 14, 1024, 1, 1, 0, 1, true},
    {"r50.l3.c1 1x1 1024-256", 1024, 14, 14, 256, 1, 1, 0, 1, false},
    {"r50.l4.0c1 1x1 1024-512", 1024, 14, 14, 512, 1, 1, 0, 1, false},
    {"r50.l4.0c2 3x3s2 512", 512, 14, 14, 512, 3, 2, 1, 1, false},
    {"r50.l4.ds 1x1s2 1024-2048", 1024, 14, 14, 2048, 1, 2, 0, 1, false},
    {"r50.l4.c2 3x3 512", 512, 7, 7, 512, 3, 1, 1, 1, false},
    {"r50.l4.c3 1x1 512-2048 res", 512, 7, 7, 2048, 1, 1, 0, 1, true},
    {"r50.l4.c1 1x1 2048-512", 2048, 7, 7, 512, 1, 1, 0, 1, false},
    {"mb2.stem 3x3s2", 3, 224, 224, 32, 3, 2, 1, 1, false},
    {"mb2.dw 112 32", 32, 112, 112, 32, 3, 1, 1, 32, false},
    {"mb2.pw 112 32-16", 32, 112, 112, 16, 1, 1, 0, 1, false},
    {"mb2.pw 112 16-96", 16, 112, 112, 96, 1, 1, 0, 1, false},
    {"mb2.dw s2 96 112", 96, 112, 112, 96, 3, 2, 1, 96, false},
    {"mb2.pw 56 96-24", 96, 56, 56, 24, 1, 1, 0, 1, false},
    {"mb2.pw 56 24-144", 24, 56, 56, 144, 1, 1, 0, 1, false},
    {"mb2.dw 144 56", 144, 56, 56, 144, 3, 1, 1, 144, false},
    {"mb2.pw 28 192-32", 192, 28, 28, 32, 1, 1, 0, 1, false},
    {"mb2.pw 14 64-384", 64, 14, 14, 384, 1, 1, 0, 1, false},
    {"mb2.dw 384 14", 384, 14, 14, 384, 3, 1, 1, 384, false},
    {"mb2.pw 14 384-64", 384, 14, 14, 64, 1, 1, 0, 1, false},
    {"mb2.pw 7 960-160", 960, 7, 7, 160, 1, 1, 0, 1, false},
    {"mb2.dw 960 7", 960, 7, 7, 960, 3, 1, 1, 960, false},
    {"mb2.pw 7 160-960", 160, 7, 7, 960, 1, 1, 0, 1, false},
    {"mb2.pw 7 320-1280", 320, 7, 7, 1280, 1, 1, 0, 1, false},
};

TEST(ConvBench, DISABLED_Layers) {
  const char* runs_env = std::getenv("OC_CONV_BENCH_RUNS");
  const char* only = std::getenv("OC_CONV_BENCH_ONLY");
  const char* batch_env = std::getenv("OC_CONV_BENCH_BATCH");
  const int runs = runs_env ? std::atoi(runs_env) : 15;
  const int64_t batch = batch_env ? std::atoi(batch_env) : 1;
  ThreadPool pool1(1), pool2(2);
  double tot1 = 0, tot2w = 0, tot2c = 0;
  std::printf("%-28s %9s %7s | %9s %9s | %6s %6s\n", "shape", "1t cpu ms", "GF/s", "2t wall", "2t cpu", "w2/1",
              "cpu2/1");
  for (const Shape& s : kShapes) {
    if (only && !std::strstr(s.name, only)) continue;
    Bench b1(s, batch, 1), b2(s, batch, 2);
    b1.Run(&pool1), b2.Run(&pool2);
    std::vector<double> c1, w2, c2;
    for (int r = 0; r < runs; ++r) {
      double t = CpuMs();
      b1.Run(&pool1);
      c1.push_back(CpuMs() - t);
      double w = WallMs();
      t = CpuMs();
      b2.Run(&pool2);
      w2.push_back(WallMs() - w);
      c2.push_back(CpuMs() - t);
    }
    const double m1 = Best(c1), mw = Best(w2), mc = Best(c2);
    tot1 += m1, tot2w += mw, tot2c += mc;
    std::printf("%-28s %9.3f %7.1f | %9.3f %9.3f | %6.2f %6.2f\n", s.name, m1, b1.gflop / m1 * 1e3, mw, mc, mw / m1,
                mc / m1);
  }
  std::printf("%-28s %9.3f %7s | %9.3f %9.3f\n", "sum", tot1, "", tot2w, tot2c);
}

}  // namespace
}  // namespace oc

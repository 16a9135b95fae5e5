// sgemm throughput (GFLOP/s) for square sizes and layer shapes from ResNet-50
// and BERT-base, per micro-kernel ISA, plus the machine's FMA peak for scale.
// Run single-threaded with --benchmark_filter as needed; OPENCANN_NUM_THREADS
// is not consulted here (each benchmark uses its own pool).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/cpu/gemm_kernel.h"

namespace {
using namespace oc;
using namespace oc::gemm;

std::vector<float> Random(size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// args: isa, M, N, K, trans_b, prepacked B, threads
void BM_Sgemm(benchmark::State& st) {
  const Isa isa = static_cast<Isa>(st.range(0));
  const GemmUkernel* uk = UkernelForIsa(isa);
  if (!uk) {
    st.SkipWithError("ISA not supported here");
    return;
  }
  const int64_t m = st.range(1), n = st.range(2), k = st.range(3);
  const bool tb = st.range(4), prepack = st.range(5);
  const int threads = static_cast<int>(st.range(6));
  ThreadPool pool(threads);
  auto a = Random(m * k), b = Random(k * n);
  std::vector<float> c(m * n);
  SgemmPlan plan(*uk, m, n, k, threads);
  PackedOperand pb;
  SgemmArgs g;
  g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k;
  g.b = b.data(), g.ldb = tb ? k : n, g.trans_b = tb;
  g.c = c.data(), g.ldc = n;
  if (prepack) {
    pb = PackedOperand::Make(*uk, PackedSide::kB, b.data(), g.ldb, tb, n, k, {});
    g.packed_b = pb.data();
  }
  double best = 1e30;
  for (auto _ : st) {
    auto t0 = std::chrono::steady_clock::now();
    plan.Run(g, &pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  // On a shared machine the fastest iteration is the one least disturbed.
  st.counters["best_GFLOP/s"] = 2.0 * m * n * k / best * 1e-9;
  st.SetLabel(uk->name);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"isa", "M", "N", "K", "tB", "pack", "thr"});
  for (int isa : {2, 1, 0}) {
    for (int s : {512, 1024}) b->Args({isa, s, s, s, 0, 0, 1});
    if (isa == 0) continue;
    b->Args({isa, 1024, 1024, 1024, 0, 1, 1});
    // ResNet-50 convs as GEMMs (M = Cout, N = H*W, K = Cin*kh*kw), batch 1.
    b->Args({isa, 64, 3136, 576, 0, 0, 1});    // conv2_x 3x3
    b->Args({isa, 256, 3136, 64, 0, 0, 1});    // conv2_x 1x1 expand
    b->Args({isa, 128, 784, 1152, 0, 0, 1});   // conv3_x 3x3
    b->Args({isa, 256, 196, 2304, 0, 0, 1});   // conv4_x 3x3
    b->Args({isa, 2048, 49, 512, 0, 0, 1});    // conv5_x 1x1 expand
    b->Args({isa, 1, 1000, 2048, 1, 1, 1});    // fc, batch 1
    // BERT-base, sequence 128 (M = tokens): QKV/out projection, FFN up/down.
    b->Args({isa, 128, 768, 768, 0, 1, 1});
    b->Args({isa, 128, 3072, 768, 0, 1, 1});
    b->Args({isa, 128, 768, 3072, 0, 1, 1});
    b->Args({isa, 128, 128, 64, 1, 0, 1});     // attention scores Q K^T per head
  }
}
BENCHMARK(BM_Sgemm)->Apply(Shapes)->UseRealTime()->MinTime(0.3);

#if defined(__x86_64__)
// Back-to-back independent FMAs: the single-core peak the GEMM is measured against.
__attribute__((target("avx512f,fma"))) void BM_PeakAvx512Fma(benchmark::State& st) {
  // 12 independent chains in named registers (an array would live in memory).
  // Distinct starting values, or the compiler folds identical chains into one.
  __m512 a0 = _mm512_set1_ps(0.f), a1 = _mm512_set1_ps(1.f), a2 = _mm512_set1_ps(2.f),
         a3 = _mm512_set1_ps(3.f), a4 = _mm512_set1_ps(4.f), a5 = _mm512_set1_ps(5.f),
         a6 = _mm512_set1_ps(6.f), a7 = _mm512_set1_ps(7.f), a8 = _mm512_set1_ps(8.f),
         a9 = _mm512_set1_ps(9.f), a10 = _mm512_set1_ps(10.f), a11 = _mm512_set1_ps(11.f);
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
  double best = 1e30;
  for (auto _ : st) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 1000; ++r) {
      a0 = _mm512_fmadd_ps(a0, x, y); a1 = _mm512_fmadd_ps(a1, x, y); a2 = _mm512_fmadd_ps(a2, x, y);
      a3 = _mm512_fmadd_ps(a3, x, y); a4 = _mm512_fmadd_ps(a4, x, y); a5 = _mm512_fmadd_ps(a5, x, y);
      a6 = _mm512_fmadd_ps(a6, x, y); a7 = _mm512_fmadd_ps(a7, x, y); a8 = _mm512_fmadd_ps(a8, x, y);
      a9 = _mm512_fmadd_ps(a9, x, y); a10 = _mm512_fmadd_ps(a10, x, y); a11 = _mm512_fmadd_ps(a11, x, y);
    }
    benchmark::DoNotOptimize(a0), benchmark::DoNotOptimize(a5), benchmark::DoNotOptimize(a11);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  sum = _mm512_add_ps(sum, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  benchmark::DoNotOptimize(sum);
  st.counters["GFLOP/s"] = benchmark::Counter(1000.0 * 12 * 32, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  st.counters["best_GFLOP/s"] = 1000.0 * 12 * 32 / best * 1e-9;
}
BENCHMARK(BM_PeakAvx512Fma)->UseRealTime();
#endif

}  // namespace

BENCHMARK_MAIN();

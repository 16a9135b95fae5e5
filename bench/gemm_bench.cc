// sgemm throughput (GFLOP/s) for square sizes and layer shapes from ResNet-50
// and BERT-base, per micro-kernel ISA, plus the machine's FMA peak for scale.
// Run single-threaded with --benchmark_filter as needed; OPENCANN_NUM_THREADS
// is not consulted here (each benchmark uses its own pool).
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/cpu/gemm/gemm_kernel.h"

namespace {
using namespace oc;
using namespace oc::gemm;

// CPU seconds of this thread (1-thread runs) or of the process (pool runs):
// on a shared machine CPU time is what a run costs, wall time adds waiting.
double CpuSeconds(bool process) {
  timespec ts;
  clock_gettime(process ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

std::vector<float> Random(size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// args: isa, M, N, K, trans_b, pack (bit 0: B pre-packed as constant weights
// are, bit 1: A pre-packed, bit 2 with bit 0: cold B, each call reads the next
// of copies of the packed B spanning 256 MiB, as a model's weights come from
// memory after the other layers ran), threads
void BM_Sgemm(benchmark::State& st) {
  const Isa isa = static_cast<Isa>(st.range(0));
  const GemmUkernel* found = UkernelForIsa(isa);
  if (!found) {
    st.SkipWithError("ISA not supported here");
    return;
  }
  // Blocking experiments without a rebuild: GEMM_BENCH_KC / _MC / _NC
  // override the table's cache blocking (the micro-kernel stays the same).
  GemmUkernel tuned = *found;
  if (const char* e = std::getenv("GEMM_BENCH_KC")) tuned.kc = std::atoi(e);
  if (const char* e = std::getenv("GEMM_BENCH_MC")) tuned.mc = std::atoi(e);
  if (const char* e = std::getenv("GEMM_BENCH_NC")) tuned.nc = std::atoi(e);
  const GemmUkernel* uk = &tuned;
  const int64_t m = st.range(1), n = st.range(2), k = st.range(3);
  const bool tb = st.range(4), prepack_b = st.range(5) & 1, prepack_a = st.range(5) & 2;
  const bool cold_b = prepack_b && (st.range(5) & 4);
  const int threads = static_cast<int>(st.range(6));
  ThreadPool pool(threads);
  auto a = Random(m * k), b = Random(k * n);
  std::vector<float> c(m * n);
  SgemmPlan plan(*uk, m, n, k, threads);
  PackedOperand pa, pb;
  std::vector<std::vector<float>> cold_copies;
  SgemmArgs g;
  g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k;
  g.b = b.data(), g.ldb = tb ? k : n, g.trans_b = tb;
  g.c = c.data(), g.ldc = n;
  if (prepack_b) {
    pb = PackedOperand::Make(*uk, PackedSide::kB, b.data(), g.ldb, tb, n, k, {});
    g.packed_b = pb.data();
    if (cold_b) {
      const size_t floats = static_cast<size_t>(PackedBSize(*uk, n, k));
      const size_t copies = std::max<size_t>(2, (size_t{256} << 20) / (floats * sizeof(float)));
      for (size_t i = 0; i < copies; ++i) cold_copies.emplace_back(pb.data(), pb.data() + floats);
    }
  }
  if (prepack_a) {
    pa = PackedOperand::Make(*uk, PackedSide::kA, a.data(), g.lda, false, m, k, {});
    g.packed_a = pa.data();
  }
  double best = 1e30;
  std::vector<double> cpu;
  cpu.reserve(1 << 16);
  size_t next_copy = 0;
  for (auto _ : st) {
    if (cold_b) g.packed_b = cold_copies[next_copy++ % cold_copies.size()].data();
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds(threads > 1);
    plan.Run(g, &pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
    cpu.push_back(CpuSeconds(threads > 1) - c0);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double flop = 2.0 * m * n * k;
  st.counters["GFLOP/s"] = benchmark::Counter(flop, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  // On a shared machine the fastest iteration is the one least disturbed.
  st.counters["best_GFLOP/s"] = flop / best * 1e-9;
  // Per CPU second (all threads): the median is robust against other load;
  // at 2 threads it falls below the 1-thread figure by the work inflation.
  st.counters["cpu_GFLOP/s"] = flop / std::max(Median(cpu), 1e-9) * 1e-9;
  st.SetLabel(uk->name);
}

// Shapes from real models (batch 1 unless noted). Convolutions as GEMMs:
// M = Cout, N = H*W, K = Cin*kh*kw, A = weights pre-packed at load (pack 2),
// B = the input (1x1: used in place, ldb = N). MatMul/Gemm layers: M = tokens,
// B = weights pre-packed (pack 1).
void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"isa", "M", "N", "K", "tB", "pack", "thr"});
  for (int isa : {2, 1, 0}) {
    for (int s : {512, 1024}) b->Args({isa, s, s, s, 0, 0, 1});
    if (isa == 0) continue;
    // Both operands pre-packed: the packing's share of the squares.
    for (int s : {512, 1024}) b->Args({isa, s, s, s, 0, 3, 1});
    b->Args({isa, 1024, 1024, 1024, 0, 1, 1});
    b->Args({isa, 64, 3136, 576, 0, 0, 1});    // ResNet-50 conv2_x 3x3 (plain B)
    b->Args({isa, 64, 3136, 576, 0, 2, 1});    // the same with pre-packed weights
    b->Args({isa, 256, 3136, 64, 0, 2, 1});    // ResNet-50 conv2_x 1x1 expand
    b->Args({isa, 64, 3136, 256, 0, 2, 1});    // ResNet-50 conv2_x 1x1 reduce
    b->Args({isa, 64, 3136, 256, 0, 3, 1});    // the same without B packing: its cost
    b->Args({isa, 16, 12544, 32, 0, 2, 1});    // MobileNetV2 block 1 1x1 project (112x112)
    b->Args({isa, 96, 12544, 16, 0, 2, 1});    // MobileNetV2 block 2 1x1 expand
    b->Args({isa, 96, 12544, 16, 0, 3, 1});    // the same without B packing
    b->Args({isa, 24, 3136, 144, 0, 2, 1});    // MobileNetV2 block 3 1x1 project (56x56)
    b->Args({isa, 128, 784, 1152, 0, 2, 1});   // ResNet-50 conv3_x 3x3
    b->Args({isa, 128, 784, 512, 0, 2, 1});    // ResNet-50 conv3_x 1x1 reduce
    b->Args({isa, 256, 784, 128, 0, 2, 1});    // ResNet-50 conv3_x 1x1 reduce (first block)
    b->Args({isa, 256, 196, 2304, 0, 0, 1});   // ResNet-50 conv4_x 3x3 (plain A)
    b->Args({isa, 256, 196, 2304, 0, 2, 1});   // ResNet-50 conv4_x 3x3
    b->Args({isa, 1024, 196, 256, 0, 2, 1});   // ResNet-50 conv4_x 1x1 expand
    b->Args({isa, 2048, 49, 512, 0, 0, 1});    // ResNet-50 conv5_x 1x1 expand (plain A)
    b->Args({isa, 2048, 49, 512, 0, 2, 1});    // ResNet-50 conv5_x 1x1 expand
    b->Args({isa, 512, 49, 2048, 0, 2, 1});    // ResNet-50 conv5_x 1x1 reduce
    b->Args({isa, 512, 49, 4608, 0, 2, 1});    // ResNet-50 conv5_x 3x3
    b->Args({isa, 1, 1000, 2048, 1, 1, 1});    // ResNet-50 fc (Gemm transB), batch 1
    b->Args({isa, 1, 1000, 1280, 1, 1, 1});    // MobileNetV2 classifier, batch 1
    b->Args({isa, 8, 1000, 1280, 1, 1, 1});    // MobileNetV2 classifier, batch 8
    b->Args({isa, 1, 1000, 1280, 1, 5, 1});    // the same with the weights cold (from memory)
    b->Args({isa, 8, 1000, 1280, 1, 5, 1});
    b->Args({isa, 1, 2304, 768, 0, 5, 1});     // GPT-2 decode QKV, cold weights
    b->Args({isa, 1, 2304, 768, 0, 1, 1});     // GPT-2 small decode: QKV projection
    b->Args({isa, 1, 768, 3072, 0, 1, 1});     // GPT-2 small decode: MLP down
    // BERT-base / GPT-2 small, sequence 128 (M = tokens): projections, FFN up/down.
    b->Args({isa, 128, 768, 768, 0, 1, 1});
    b->Args({isa, 128, 2304, 768, 0, 1, 1});   // GPT-2 fused QKV
    b->Args({isa, 128, 3072, 768, 0, 1, 1});
    b->Args({isa, 128, 768, 3072, 0, 1, 1});
    for (int64_t n : {768, 3072}) b->Args({isa, 128, n, 768, 0, 5, 1});  // the same, cold weights
    b->Args({isa, 128, 768, 3072, 0, 5, 1});
    b->Args({isa, 128, 128, 64, 1, 0, 1});     // attention scores Q K^T per head
  }
  // 2 threads (split of C between the threads; process CPU time per GFLOP
  // shows the work inflation).
  for (auto s : std::vector<std::array<int64_t, 4>>{{1024, 1024, 1024, 0}, {64, 3136, 256, 2},
                                                    {256, 196, 2304, 2}, {2048, 49, 512, 2},
                                                    {512, 49, 4608, 2}, {128, 768, 768, 1},
                                                    {128, 3072, 768, 1}, {1, 2304, 768, 1}})
    b->Args({2, s[0], s[1], s[2], 0, s[3], 2});
}
BENCHMARK(BM_Sgemm)->Apply(Shapes)->UseRealTime()->MinTime(0.3);

// The micro-kernel alone on L1-resident panels (one MR x NR tile, C += A B
// with beta = 1): the ceiling the blocked driver can approach.
// args: isa, kc
void BM_Ukernel(benchmark::State& st) {
  const GemmUkernel* uk = UkernelForIsa(static_cast<Isa>(st.range(0)));
  if (!uk) {
    st.SkipWithError("ISA not supported here");
    return;
  }
  const int64_t kc = st.range(1);
  auto a = Random(uk->mr * kc), b = Random(kc * uk->nr);
  std::vector<float> c(uk->mr * uk->nr);
  constexpr int kCalls = 64;
  std::vector<double> cpu;
  cpu.reserve(1 << 20);
  for (auto _ : st) {
    const double c0 = CpuSeconds(false);
    for (int r = 0; r < kCalls; ++r) uk->fn(kc, a.data(), b.data(), c.data(), uk->nr, uk->mr, uk->nr, 1.f, 1.f);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
    cpu.push_back(CpuSeconds(false) - c0);
  }
  const double flop = 2.0 * uk->mr * uk->nr * kc * kCalls;
  st.counters["cpu_GFLOP/s"] = flop / std::max(Median(cpu), 1e-12) * 1e-9;
  st.SetLabel(uk->name);
}
BENCHMARK(BM_Ukernel)->ArgNames({"isa", "kc"})->ArgsProduct({{2, 1}, {64, 128, 256, 384}});

#if defined(__x86_64__)
// Back-to-back independent FMAs: the single-core peak the GEMM is measured against.
// 12 independent chains in named registers (an array would live in memory),
// distinct starting values (or the compiler folds identical chains into one),
// and no call inside the loop (a call would spill the chains).
__attribute__((target("avx512f,fma"), noinline)) float PeakFmaLoop(int reps, float xs, float ys) {
  __m512 a0 = _mm512_set1_ps(0.f), a1 = _mm512_set1_ps(1.f), a2 = _mm512_set1_ps(2.f),
         a3 = _mm512_set1_ps(3.f), a4 = _mm512_set1_ps(4.f), a5 = _mm512_set1_ps(5.f),
         a6 = _mm512_set1_ps(6.f), a7 = _mm512_set1_ps(7.f), a8 = _mm512_set1_ps(8.f),
         a9 = _mm512_set1_ps(9.f), a10 = _mm512_set1_ps(10.f), a11 = _mm512_set1_ps(11.f);
  const __m512 x = _mm512_set1_ps(xs), y = _mm512_set1_ps(ys);
  for (int r = 0; r < reps; ++r) {
    a0 = _mm512_fmadd_ps(a0, x, y); a1 = _mm512_fmadd_ps(a1, x, y); a2 = _mm512_fmadd_ps(a2, x, y);
    a3 = _mm512_fmadd_ps(a3, x, y); a4 = _mm512_fmadd_ps(a4, x, y); a5 = _mm512_fmadd_ps(a5, x, y);
    a6 = _mm512_fmadd_ps(a6, x, y); a7 = _mm512_fmadd_ps(a7, x, y); a8 = _mm512_fmadd_ps(a8, x, y);
    a9 = _mm512_fmadd_ps(a9, x, y); a10 = _mm512_fmadd_ps(a10, x, y); a11 = _mm512_fmadd_ps(a11, x, y);
  }
  __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  sum = _mm512_add_ps(sum, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  return lanes[0] + lanes[15];
}

void BM_PeakAvx512Fma(benchmark::State& st) {
  // ~35 us per iteration, so the clock reads (system calls) cost < 3%.
  constexpr int kReps = 20000;
  // Opaque multipliers, so the compiler cannot fold the chains at compile time.
  float xs = 0.999f, ys = 0.001f;
  benchmark::DoNotOptimize(xs), benchmark::DoNotOptimize(ys);
  double best = 1e30;
  std::vector<double> cpu;
  cpu.reserve(1 << 20);
  for (auto _ : st) {
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds(false);
    benchmark::DoNotOptimize(PeakFmaLoop(kReps, xs, ys));
    cpu.push_back(CpuSeconds(false) - c0);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  st.counters["GFLOP/s"] = benchmark::Counter(kReps * 12.0 * 32, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
  st.counters["best_GFLOP/s"] = kReps * 12.0 * 32 / best * 1e-9;
  st.counters["cpu_GFLOP/s"] = kReps * 12.0 * 32 / std::max(Median(cpu), 1e-12) * 1e-9;
}
BENCHMARK(BM_PeakAvx512Fma)->UseRealTime();
#endif

}  // namespace

BENCHMARK_MAIN();

// Fused attention kernel (src/ops/cpu/attention/attention_core.h) at BERT-base and
// GPT-2 shapes: Y = softmax(Q K^T / sqrt(d) + mask) V per head, 3-D [batch,
// seq, heads * 64] inputs read in place. Reports GFLOP/s over the two
// products (4 * batch * heads * q_len * kv_len * head flops).
// Each benchmark runs 10 short repetitions and reports their median and
// minimum (on a shared machine the minimum is the steadier figure);
// bench/attention_ort.py times onnxruntime at the same shapes.
// Build (no CMake target yet): g++ -O2 -std=c++20 -Isrc bench/attention_bench.cc
//   build/liboc_core.a -lbenchmark -lpthread
// Args: threads, seq, causal.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "ops/cpu/attention/attention_core.h"

namespace {
using namespace oc;

void BM_AttentionBert(benchmark::State& st) {
  const int threads = static_cast<int>(st.range(0));
  const int64_t seq = st.range(1);
  const bool causal = st.range(2) != 0;
  const int64_t batch = 1, heads = 12, head = 64, hidden = heads * head;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> q(batch * seq * hidden), k(q.size()), v(q.size()), y(q.size()), mask(seq, 0.f);
  for (auto* t : {&q, &k, &v})
    for (auto& x : *t) x = d(rng);
  attn::Params p;
  p.batch = batch;
  p.q_heads = p.kv_heads = heads;
  p.q_len = p.kv_len = seq;
  p.head_dim = p.v_dim = head;
  p.q = {q.data(), seq * hidden, head, hidden};
  p.k = {k.data(), seq * hidden, head, hidden};
  p.v = {v.data(), seq * hidden, head, hidden};
  p.y = y.data();
  p.y_sb = seq * hidden, p.y_sh = head, p.y_ss = hidden;
  p.scale = 0.125;
  p.causal = causal;
  if (!causal) {  // BERT's [batch, 1, 1, seq] additive padding mask
    p.mask_kind = attn::MaskKind::kAdditive;
    p.mask = mask.data();
    p.mask_len = seq;
    p.m_sb = seq;
  }
  ThreadPool pool(threads);
  attn::Plan plan(p, true, threads, false);
  std::vector<unsigned char> scratch(plan.ScratchBytes() + 64);
  void* s = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  for (auto _ : st) {
    plan.Run<float>(p, &pool, s);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = 4.0 * batch * heads * seq * seq * head * (causal ? 0.5 : 1.0);
  st.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

BENCHMARK(BM_AttentionBert)
    ->ArgNames({"threads", "seq", "causal"})
    ->Args({1, 128, 0})
    ->Args({2, 128, 0})
    ->Args({1, 512, 0})
    ->Args({1, 1024, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->Repetitions(10)
    ->ReportAggregatesOnly(true)
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });

// One decoding step of a grouped-query model (32 query heads over 8 KV heads,
// head 128) against a KV cache of `kv` positions, 4-D [batch, heads, seq, dim].
// Args: threads, kv.
void BM_AttentionDecodeGqa(benchmark::State& st) {
  const int threads = static_cast<int>(st.range(0));
  const int64_t kv = st.range(1), hq = 32, hkv = 8, head = 128;
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> q(hq * head), k(hkv * kv * head), v(k.size()), y(q.size());
  for (auto* t : {&q, &k, &v})
    for (auto& x : *t) x = d(rng);
  attn::Params p;
  p.batch = 1;
  p.q_heads = hq;
  p.kv_heads = hkv;
  p.q_len = 1;
  p.kv_len = kv;
  p.head_dim = p.v_dim = head;
  p.q = {q.data(), hq * head, head, head};
  p.k = {k.data(), hkv * kv * head, kv * head, head};
  p.v = {v.data(), hkv * kv * head, kv * head, head};
  p.y = y.data();
  p.y_sb = hq * head, p.y_sh = head, p.y_ss = head;
  p.scale = 1.0 / std::sqrt(128.0);
  p.causal = true;
  p.offset = kv - 1;
  ThreadPool pool(threads);
  attn::Plan plan(p, true, threads, false);
  std::vector<unsigned char> scratch(plan.ScratchBytes() + 64);
  void* s = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  for (auto _ : st) {
    plan.Run<float>(p, &pool, s);
    benchmark::DoNotOptimize(y.data());
  }
  st.counters["GB/s"] = benchmark::Counter(2.0 * hkv * kv * head * sizeof(float),
                                           benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

BENCHMARK(BM_AttentionDecodeGqa)
    ->ArgNames({"threads", "kv"})
    ->Args({1, 2048})
    ->Args({2, 2048})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->Repetitions(10)
    ->ReportAggregatesOnly(true)
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });

}  // namespace

BENCHMARK_MAIN();

// Thread-pool choice (docs/benchmarks.md "Thread pool"): the same workloads on
// our ThreadPool and, where the optional libraries were found at configure
// time, OpenMP (static schedule), oneTBB (static_partitioner in a 2-thread
// arena) and pthreadpool (parallelize_1d_tile_1d). Every pool runs 2 threads,
// the caller included, and splits each job into exactly 2 chunks.
//
// The CPU column is process CPU time (MeasureProcessCPUTime): it includes the
// workers, so a pool that spins while the caller waits shows up there.
// BM_IdleBurn reports the CPU the process burns while the caller sleeps right
// after a burst of small jobs: a pool whose workers keep spinning once idle
// shows idle_cpu_pct > 0.
//
// Run each pool in its own process so that one library's lingering spinners
// cannot steal the CPU from the next:  threadpool_bench --benchmark_filter=/ours
#include <benchmark/benchmark.h>
#include <sys/resource.h>


#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <thread>
#include <vector>

#include "base/thread_pool.h"

#ifdef OC_BENCH_OPENMP
#include <omp.h>
#endif
#ifdef OC_BENCH_TBB
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#endif
#ifdef OC_BENCH_PTHREADPOOL
#include <pthreadpool.h>
#endif

namespace {

constexpr int kThreads = 2;

// Each pool adapter runs fn(chunk) for chunk in [0, 2), one chunk per thread.
struct Ours {
  static constexpr const char* kName = "ours";
  oc::ThreadPool pool{kThreads};
  template <typename F>
  void Run(F&& fn) {
    pool.ParallelFor(kThreads, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) fn(c);
    });
  }
};

// Our pool with pure sleep/wake (OPENCANN_SPIN_US=0): what the default 200 us
// of polling buys.
struct OursNoSpin {
  static constexpr const char* kName = "ours_nospin";
  oc::ThreadPool pool{kThreads, 0};
  template <typename F>
  void Run(F&& fn) {
    pool.ParallelFor(kThreads, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) fn(c);
    });
  }
};

#ifdef OC_BENCH_OPENMP
struct OpenMP {
  static constexpr const char* kName = "openmp";
  template <typename F>
  void Run(F&& fn) {
#pragma omp parallel for schedule(static) num_threads(kThreads)
    for (int64_t c = 0; c < kThreads; ++c) fn(c);
  }
};
#endif

#ifdef OC_BENCH_TBB
struct Tbb {
  static constexpr const char* kName = "tbb";
  tbb::task_arena arena{kThreads};
  template <typename F>
  void Run(F&& fn) {
    arena.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(0, kThreads, 1),
          [&](const tbb::blocked_range<int64_t>& r) {
            for (int64_t c = r.begin(); c < r.end(); ++c) fn(c);
          },
          tbb::static_partitioner());
    });
  }
};
#endif

#ifdef OC_BENCH_PTHREADPOOL
struct PthreadPool {
  static constexpr const char* kName = "pthreadpool";
  pthreadpool_t pool = pthreadpool_create(kThreads);
  ~PthreadPool() { pthreadpool_destroy(pool); }
  template <typename F>
  void Run(F&& fn) {
    pthreadpool_parallelize_1d_tile_1d(
        pool,
        [](void* ctx, size_t start, size_t tile) {
          for (size_t c = start; c < start + tile; ++c) (*static_cast<F*>(ctx))(static_cast<int64_t>(c));
        },
        &fn, kThreads, 1, 0);
  }
};
#endif

// 1) What a tiny op pays: an empty 2-chunk job, back to back.
template <typename P>
void BM_EmptyDispatch(benchmark::State& st) {
  P pool;
  int sink[2 * 16] = {};
  for (auto _ : st) {
    pool.Run([&](int64_t c) { benchmark::DoNotOptimize(sink[c * 16] += 1); });
  }
}

// 2/3) Element-wise op (ReLU) over n floats, one half per thread.
template <typename P>
void BM_Relu(benchmark::State& st) {
  P pool;
  const int64_t n = st.range(0);
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i % 17) - 8);
  const auto caller = std::this_thread::get_id();
  int64_t by_others = 0;  // chunks a pool thread (not the caller) ran
  for (auto _ : st) {
    pool.Run([&](int64_t c) {
      if (std::this_thread::get_id() != caller) by_others++;  // at most one such chunk per job
      int64_t b = n * c / kThreads, e = n * (c + 1) / kThreads;
      for (int64_t i = b; i < e; ++i) y[i] = std::max(x[i], 0.0f);
    });
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * n * 8);
  st.counters["pool_share"] = static_cast<double>(by_others) / (kThreads * st.iterations());
}

// 4) Compute-bound: C[256x256] += A[256x256] * B[256x256], rows split in two.
// The kernel is the same plain loop on every pool; only the split differs.
template <typename P>
void BM_Compute(benchmark::State& st) {
  P pool;
  constexpr int64_t m = 256, k = 256, n = 256;
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n, 0.0f);
  const auto caller = std::this_thread::get_id();
  int64_t by_others = 0;
  for (auto _ : st) {
    pool.Run([&](int64_t chunk) {
      if (std::this_thread::get_id() != caller) by_others++;
      int64_t r0 = m * chunk / kThreads, r1 = m * (chunk + 1) / kThreads;
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t p = 0; p < k; ++p) {
          float av = a[i * k + p];
          float* crow = &c[i * n];
          const float* brow = &b[p * n];
          for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        }
    });
    benchmark::ClobberMemory();
  }
  st.counters["pool_share"] = static_cast<double>(by_others) / (kThreads * st.iterations());
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * st.iterations() / 1e9, benchmark::Counter::kIsRate);
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// 5) A burst of 200 small ops, then the caller sleeps 20 ms: the CPU the
// process burns during the sleep is what idle workers cost the rest of the
// machine. Reported both over the first 20 ms after the burst and as a
// percentage of one core.
template <typename P>
void BM_IdleBurn(benchmark::State& st) {
  P pool;
  int sink[2 * 16] = {};
  double idle_cpu = 0, idle_wall = 0;
  for (auto _ : st) {
    for (int r = 0; r < 200; ++r) pool.Run([&](int64_t c) { benchmark::DoNotOptimize(sink[c * 16] += 1); });
    double c0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    idle_wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    idle_cpu += CpuSeconds() - c0;
  }
  st.counters["idle_cpu_ms_per_20ms"] = 1e3 * idle_cpu / st.iterations();
  st.counters["idle_cpu_pct"] = 100.0 * idle_cpu / idle_wall;
}

template <typename P>
void RegisterAll() {
  std::string s = std::string("/") + P::kName;
  benchmark::RegisterBenchmark(("BM_EmptyDispatch" + s).c_str(), BM_EmptyDispatch<P>)->UseRealTime()->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark(("BM_Relu64K" + s).c_str(), BM_Relu<P>)->Arg(64 << 10)->UseRealTime()->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark(("BM_Relu256K" + s).c_str(), BM_Relu<P>)->Arg(256 << 10)->UseRealTime()->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark(("BM_Compute256" + s).c_str(), BM_Compute<P>)->UseRealTime()->MeasureProcessCPUTime();
  benchmark::RegisterBenchmark(("BM_IdleBurn" + s).c_str(), BM_IdleBurn<P>)->Iterations(20)->UseRealTime()->MeasureProcessCPUTime();
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll<Ours>();
  RegisterAll<OursNoSpin>();
#ifdef OC_BENCH_OPENMP
  RegisterAll<OpenMP>();
#endif
#ifdef OC_BENCH_TBB
  RegisterAll<Tbb>();
#endif
#ifdef OC_BENCH_PTHREADPOOL
  RegisterAll<PthreadPool>();
#endif
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

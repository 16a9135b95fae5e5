#include "base/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace oc {
namespace {

TEST(ThreadPoolTest, ParallelForCoversRangeExactlyOnce) {
  ThreadPool pool(4);
  for (int64_t n : {1, 2, 3, 7, 100, 1001}) {
    std::vector<std::atomic<int>> hits(n);
    pool.ParallelFor(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPoolTest, GrainLimitsChunking) {
  ThreadPool pool(4);
  std::atomic<int> calls{0};
  pool.ParallelFor(10, 100, [&](int64_t b, int64_t e) {
    calls++;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 10);
  });
  EXPECT_EQ(calls.load(), 1);
}

TEST(ThreadPoolTest, NestedCallsRunSerially) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.ParallelFor(10, 1, [&](int64_t b2, int64_t e2) { sum += e2 - b2; });
  });
  EXPECT_EQ(sum.load(), 80);
}

TEST(ThreadPoolTest, ConcurrentCallersAreSerialisedCorrectly) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int r = 0; r < 200; ++r)
        pool.ParallelFor(64, 1, [&](int64_t b, int64_t e) { total += e - b; });
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 4 * 200 * 64);
}

double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Issue 4: no spinning once idle. After a burst of small jobs the workers must
// go to sleep: the process may burn only a sliver of one core while the
// caller sleeps (a spinning worker would burn ~100%; the bound leaves room for
// a loaded machine and sanitizer builds).
TEST(ThreadPoolTest, IdleWorkersDoNotBurnCpu) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 500; ++r) pool.ParallelFor(4, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 500 * 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past any grace period
  double c0 = ProcessCpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = ProcessCpuSeconds() - c0;
  EXPECT_LT(cpu, 0.25 * wall) << "idle process burned " << 1e3 * cpu << " ms CPU in " << 1e3 * wall << " ms";
}

// Both waiting modes (polling and pure sleep/wake), and a poll budget short
// enough that workers fall asleep between jobs: every job must still be
// picked up (a lost wake-up would hang here), cover its range once, and
// spread over the threads.
TEST(ThreadPoolTest, EveryWaitingModeRunsEveryJob) {
  for (int spin_us : {0, 1, 200}) {
    ThreadPool pool(3, spin_us);
    EXPECT_EQ(pool.spin_us(), spin_us);
    for (int r = 0; r < 2000; ++r) {
      const int64_t n = 1 + r % 37;
      std::vector<int> hits(n, 0);
      pool.ParallelFor(n, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "spin_us=" << spin_us << " r=" << r;
      if (r % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // let workers sleep
    }
  }
}

// The worker takes a share of the jobs: chunks are long (5 ms) so that even on
// a loaded machine, where the worker may wait for a core, it gets some of
// them. What polling buys (the share of short jobs) is a latency figure,
// measured by bench/threadpool_bench (ours vs ours_nospin), not asserted here.
TEST(ThreadPoolTest, WorkerTakesChunksOfLongJobs) {
  ThreadPool pool(2, 2000);
  std::atomic<int> on_worker{0};
  const auto caller = std::this_thread::get_id();
  for (int r = 0; r < 20; ++r) {
    pool.ParallelFor(2, 1, [&](int64_t, int64_t) {
      auto t0 = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(5)) {
      }
      if (std::this_thread::get_id() != caller) on_worker++;
    });
  }
  EXPECT_GT(on_worker.load(), 0);
}

// A thread whose part is slow is helped: the other thread, done with its own
// part, takes indices from the back of the slow one. The slow indices last
// 5 ms each (40 ms in all), long enough for a worker on a loaded machine to
// wake and finish its instant part.
TEST(ThreadPoolTest, IdleThreadStealsFromTheSlowPart) {
  ThreadPool pool(2, 2000);
  int stolen_jobs = 0;
  for (int r = 0; r < 5; ++r) {
    std::vector<std::thread::id> ran_by(16);
    pool.ParallelFor(16, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ran_by[i] = std::this_thread::get_id();
        if (i < 8) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
    // Index 0 starts the slow part; another thread ran some of indices 1..7.
    if (std::any_of(ran_by.begin() + 1, ran_by.begin() + 8, [&](std::thread::id t) { return t != ran_by[0]; }))
      ++stolen_jobs;
  }
  EXPECT_GT(stolen_jobs, 0);
}

// Calls are at least a grain long (but for the last of a part; the last two
// cases are ones where the grain, not the part size, sets the step), the ranges of
// one ParallelFor are disjoint and cover [0, n), also for n of 2^33 and more,
// which the pool counts in units of several indices (32-bit part bounds).
TEST(ThreadPoolTest, StepsRespectGrainAndCoverHugeRanges) {
  ThreadPool pool(3);
  for (const auto& [n, grain] : {std::pair<int64_t, int64_t>{1000, 7}, {1000, 1}, {99999, 1000},
                                 {int64_t{1} << 33, int64_t{1} << 26}, {(int64_t{1} << 34) + 12345, 3},
                                 {1000, 100}, {int64_t{1} << 33, int64_t{1} << 31}}) {
    std::mutex mu;
    std::vector<std::pair<int64_t, int64_t>> calls;
    pool.ParallelFor(n, grain, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lk(mu);
      calls.emplace_back(b, e);
    });
    std::sort(calls.begin(), calls.end());
    ASSERT_FALSE(calls.empty());
    EXPECT_EQ(calls.front().first, 0) << "n=" << n;
    EXPECT_EQ(calls.back().second, n) << "n=" << n;
    int64_t short_calls = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      ASSERT_LT(calls[i].first, calls[i].second) << "n=" << n;
      if (i) ASSERT_EQ(calls[i].first, calls[i - 1].second) << "n=" << n << ": gap or overlap";
      short_calls += calls[i].second - calls[i].first < grain;
    }
    // Only a part's (or a stolen piece's) last step may be short: a few per thread.
    EXPECT_LE(short_calls, 2 * pool.num_threads()) << "n=" << n;
    EXPECT_LE(calls.size(), size_t{64}) << "n=" << n << ": steps too small";
  }
}

TEST(ThreadPoolTest, ConcurrentCallersWithSleepingWorkers) {
  ThreadPool pool(2, 0);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      for (int r = 0; r < 300; ++r)
        pool.ParallelFor(5, 1, [&](int64_t b, int64_t e) { total += e - b; });
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 3 * 300 * 5);
}

}  // namespace
}  // namespace oc

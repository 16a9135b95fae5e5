// One intra-op thread pool per process. ParallelFor splits [0, n) into one
// contiguous part per thread (the caller takes one too) and returns when all
// are done. A thread walks its part from the front in steps; one that runs out
// takes steps from the back of the part with the most left, so a thread slowed
// by anything (a cache miss storm, the OS) is helped at the end of the job
// while the bulk of each part stays with one thread (the next operator finds
// most of its input in the cache that wrote it). Nested calls from inside a worker run serially. Several callers
// (streams) may use the pool at once; their jobs are serialised, so there is no
// oversubscription.
//
// Waiting: after a job a worker polls for the next one for a short, bounded
// time (OPENCANN_SPIN_US, default 200 microseconds) and then sleeps on a
// condition variable, so that back-to-back operators of a model run do not pay
// a futex wake-up each (which costs more than a small operator), while an idle
// process burns no CPU. The caller waits for the last chunk the same way.
// OPENCANN_SPIN_US=0 turns polling off (pure sleep/wake).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace oc {

class ThreadPool {
 public:
  // num_threads counts the caller: 1 means no worker threads. spin_us < 0:
  // OPENCANN_SPIN_US or the default.
  explicit ThreadPool(int num_threads, int spin_us = -1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Most threads a pool takes (the chunk index of a job has 16 bits).
  static constexpr int kMaxThreads = 256;

  int num_threads() const { return num_threads_; }
  int spin_us() const { return spin_us_; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n). `grain` is the
  // smallest chunk worth a thread. No allocation.
  // The calls of one ParallelFor cover disjoint ranges, each index in exactly
  // one call. A call is a grain or more, except the last step of a part (or
  // of a stolen piece), which may be shorter.
  template <typename F>
  void ParallelFor(int64_t n, int64_t grain, F&& fn) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t max_chunks = (n + grain - 1) / grain;
    if (num_threads_ == 1 || max_chunks == 1 || InWorker()) { fn(int64_t{0}, n); return; }
    RunChunks(n, grain, max_chunks, &fn, [](void* ctx, int64_t b, int64_t e) { (*static_cast<F*>(ctx))(b, e); });
  }

  // The process-wide pool. Thread count: OPENCANN_NUM_THREADS if set, else the
  // number of hardware threads. SetGlobalThreads replaces it (not while in use).
  static ThreadPool& Global();
  static void SetGlobalThreads(int num_threads);

 private:
  using Trampoline = void (*)(void*, int64_t, int64_t);
  void RunChunks(int64_t n, int64_t grain, int64_t max_chunks, void* ctx, Trampoline tramp);
  void WorkerLoop();
  // Claims parts of job `seq` and runs them, then steals steps from the other
  // parts until no index is left; returns the count of indices it ran.
  int64_t Work(uint64_t seq);
  // Runs steps of part p from its front until it is empty.
  int64_t RunOwnPart(int64_t p);
  // Takes steps from the back of the fullest of the job's `parts` parts.
  int64_t Steal(int64_t parts);
  void RunRange(int64_t begin, int64_t end);
  static bool InWorker();

  int num_threads_;
  int spin_us_;
  std::vector<std::thread> workers_;
  std::mutex submit_mu_;  // one job at a time

  // The current job. Its descriptor is written before `claim_` publishes it.
  // claim_ = seq << 32 | chunks << 16 | next chunk: a claim (CAS) succeeds only
  // for the job it was read for, so a worker still leaving job s cannot take a
  // chunk of job s + 1 with job s's view of it.
  // Indices are run in units of scale_ (1 unless n_ >= 2^31) so that a part's
  // front and back fit 32 bits each.
  // A thread reads the descriptor only while it holds unfinished units of the
  // job (after the claim), except step_, which a thread that ran out may read
  // while the next job is being published (any value is a safe step).
  void* ctx_ = nullptr;
  Trampoline tramp_ = nullptr;
  int64_t n_ = 0, scale_ = 1;
  std::atomic<int64_t> step_{1};
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_{0};
  // Part p of the current job: front << 32 | back (units). Written before
  // claim_ publishes the job; emptied (front >= back) before the job ends, so
  // a part left over from an earlier job never holds work.
  struct alignas(64) Part {
    std::atomic<uint64_t> range{0};
  };
  Part parts_[kMaxThreads];

  // Sleeping: workers (and a caller waiting for the last chunk) block here
  // after their polling budget; the publisher takes mu_ only when someone is
  // asleep (sleepers_ / caller_sleeping_, checked after publishing).
  std::mutex mu_;
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> stop_{false};
};

}  // namespace oc

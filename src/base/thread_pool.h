// One intra-op thread pool per process. Workers sleep on a condition variable
// when idle (no spinning). ParallelFor splits [0, n) into contiguous chunks,
// runs one on the calling thread, and returns when all are done. Nested calls
// from inside a worker run serially. Several callers (streams) may use the pool
// at once; their jobs are serialised, so there is no oversubscription.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace oc {

class ThreadPool {
 public:
  // num_threads counts the caller: 1 means no worker threads.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n). `grain` is the
  // smallest chunk worth a thread. No allocation.
  template <typename F>
  void ParallelFor(int64_t n, int64_t grain, F&& fn) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t max_chunks = (n + grain - 1) / grain;
    if (num_threads_ == 1 || max_chunks == 1 || InWorker()) { fn(int64_t{0}, n); return; }
    RunChunks(n, max_chunks, &fn, [](void* ctx, int64_t b, int64_t e) { (*static_cast<F*>(ctx))(b, e); });
  }

  // The process-wide pool. Thread count: OPENCANN_NUM_THREADS if set, else the
  // number of hardware threads. SetGlobalThreads replaces it (not while in use).
  static ThreadPool& Global();
  static void SetGlobalThreads(int num_threads);

 private:
  using Trampoline = void (*)(void*, int64_t, int64_t);
  void RunChunks(int64_t n, int64_t max_chunks, void* ctx, Trampoline tramp);
  void WorkerLoop(int index);
  static bool InWorker();

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex submit_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  // Current job.
  uint64_t generation_ = 0;
  void* ctx_ = nullptr;
  Trampoline tramp_ = nullptr;
  int64_t n_ = 0;
  int64_t chunks_ = 0;
  int64_t next_chunk_ = 0;
  int64_t done_chunks_ = 0;
  bool stop_ = false;
};

}  // namespace oc

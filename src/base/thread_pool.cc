#include "base/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace oc {

namespace {
thread_local bool t_in_worker = false;
std::mutex g_pool_mu;
std::unique_ptr<ThreadPool> g_pool;

int DefaultThreads() {
  if (const char* env = std::getenv("OPENCANN_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return std::min(n, 256);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}
}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::InWorker() { return t_in_worker; }

void ThreadPool::RunChunks(int64_t n, int64_t max_chunks, void* ctx, Trampoline tramp) {
  std::lock_guard<std::mutex> submit(submit_mu_);
  int64_t chunks = std::min<int64_t>(max_chunks, num_threads_);
  {
    std::lock_guard<std::mutex> lk(mu_);
    ctx_ = ctx;
    tramp_ = tramp;
    n_ = n;
    chunks_ = chunks;
    next_chunk_ = 0;
    done_chunks_ = 0;
    ++generation_;
  }
  cv_work_.notify_all();
  // The caller takes chunks too.
  t_in_worker = true;
  for (;;) {
    int64_t c;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (next_chunk_ >= chunks_) break;
      c = next_chunk_++;
    }
    int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    tramp(ctx, b, e);
    std::lock_guard<std::mutex> lk(mu_);
    ++done_chunks_;
  }
  t_in_worker = false;
  std::unique_lock<std::mutex> lk(mu_);
  cv_done_.wait(lk, [&] { return done_chunks_ == chunks_; });
  chunks_ = 0;
}

void ThreadPool::WorkerLoop(int) {
  t_in_worker = true;
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_work_.wait(lk, [&] { return stop_ || (generation_ != seen && next_chunk_ < chunks_); });
    if (stop_) return;
    seen = generation_;
    while (next_chunk_ < chunks_) {
      int64_t c = next_chunk_++;
      int64_t n = n_, chunks = chunks_;
      void* ctx = ctx_;
      Trampoline tramp = tramp_;
      lk.unlock();
      tramp(ctx, n * c / chunks, n * (c + 1) / chunks);
      lk.lock();
      if (++done_chunks_ == chunks_) cv_done_.notify_all();
    }
  }
}

ThreadPool& ThreadPool::Global() {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  if (!g_pool) g_pool = std::make_unique<ThreadPool>(DefaultThreads());
  return *g_pool;
}

void ThreadPool::SetGlobalThreads(int num_threads) {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  if (g_pool && g_pool->num_threads() == std::max(1, num_threads)) return;
  g_pool = std::make_unique<ThreadPool>(num_threads);
}

}  // namespace oc

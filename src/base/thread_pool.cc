#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#define OC_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define OC_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define OC_CPU_RELAX() ((void)0)
#endif

namespace oc {

namespace {
thread_local bool t_in_worker = false;
std::mutex g_pool_mu;
std::unique_ptr<ThreadPool> g_pool;

constexpr int kDefaultSpinUs = 200;

int DefaultThreads() {
  if (const char* env = std::getenv("OPENCANN_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return std::min(n, ThreadPool::kMaxThreads);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

int DefaultSpinUs() {
  if (const char* env = std::getenv("OPENCANN_SPIN_US")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && v >= 0) return static_cast<int>(std::min<long>(v, 100000));
  }
  return kDefaultSpinUs;
}

constexpr uint64_t Seq(uint64_t c) { return c >> 32; }
constexpr int64_t Chunks(uint64_t c) { return static_cast<int64_t>((c >> 16) & 0xffff); }
constexpr int64_t Next(uint64_t c) { return static_cast<int64_t>(c & 0xffff); }

// Polls `ready` for up to spin_us microseconds; true when it became true.
template <typename Pred>
bool SpinUntil(int spin_us, Pred ready) {
  if (spin_us <= 0) return ready();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  for (uint32_t i = 0;; ++i) {
    if (ready()) return true;
    OC_CPU_RELAX();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline) return ready();
  }
}
}  // namespace

ThreadPool::ThreadPool(int num_threads, int spin_us)
    : num_threads_(std::clamp(num_threads, 1, kMaxThreads)), spin_us_(spin_us < 0 ? DefaultSpinUs() : spin_us) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_.store(true);
  }
  cv_work_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::InWorker() { return t_in_worker; }

void ThreadPool::Work(uint64_t seq) {
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (Seq(c) != seq || Next(c) >= Chunks(c)) return;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The job cannot finish (nor its descriptor change) before this chunk is
    // counted done, so reading it here is safe.
    const int64_t chunk = Next(c), chunks = Chunks(c), n = n_;
    tramp_(ctx_, n * chunk / chunks, n * (chunk + 1) / chunks);
    if (done_.fetch_add(1) + 1 == chunks && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lk(mu_);
      cv_done_.notify_all();
    }
    c = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::RunChunks(int64_t n, int64_t max_chunks, void* ctx, Trampoline tramp) {
  std::lock_guard<std::mutex> submit(submit_mu_);
  const int64_t chunks = std::min<int64_t>(max_chunks, num_threads_);
  const uint64_t seq = Seq(claim_.load(std::memory_order_relaxed)) + 1;
  ctx_ = ctx;
  tramp_ = tramp;
  n_ = n;
  done_.store(0, std::memory_order_relaxed);
  // seq_cst: ordered before the sleepers_ check below (pairs with WorkerLoop).
  claim_.store(seq << 32 | static_cast<uint64_t>(chunks) << 16);
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lk(mu_);
    cv_work_.notify_all();
  }
  // The caller takes chunks too.
  t_in_worker = true;
  Work(seq);
  t_in_worker = false;
  // seq_cst loads in both predicates: they pair with the RMW/store on the other
  // side of the sleeping flags (a Dekker-style handshake).
  auto finished = [&] { return done_.load() == chunks; };
  if (!SpinUntil(spin_us_, finished)) {
    std::unique_lock<std::mutex> lk(mu_);
    caller_sleeping_.store(true);
    cv_done_.wait(lk, finished);
    caller_sleeping_.store(false);
  }
}

void ThreadPool::WorkerLoop() {
  t_in_worker = true;
  uint64_t seen = 0;
  for (;;) {
    auto fresh = [&] { return Seq(claim_.load()) != seen || stop_.load(); };
    if (!SpinUntil(spin_us_, fresh)) {
      std::unique_lock<std::mutex> lk(mu_);
      sleepers_.fetch_add(1);  // seq_cst, then the predicate re-reads claim_
      cv_work_.wait(lk, fresh);
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = Seq(claim_.load(std::memory_order_acquire));
    Work(seen);
  }
}

ThreadPool& ThreadPool::Global() {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  if (!g_pool) g_pool = std::make_unique<ThreadPool>(DefaultThreads());
  return *g_pool;
}

void ThreadPool::SetGlobalThreads(int num_threads) {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  if (g_pool && g_pool->num_threads() == std::clamp(num_threads, 1, kMaxThreads)) return;
  g_pool = std::make_unique<ThreadPool>(num_threads);
}

}  // namespace oc

#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "base/cpu_relax.h"

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

namespace {
constexpr uint64_t Range(int64_t front, int64_t back) {
  return static_cast<uint64_t>(front) << 32 | static_cast<uint64_t>(back);
}
constexpr int64_t Front(uint64_t r) { return static_cast<int64_t>(r >> 32); }
constexpr int64_t Back(uint64_t r) { return static_cast<int64_t>(r & 0xffffffffu); }
}  // namespace

void ThreadPool::RunRange(int64_t begin, int64_t end) {
  // Read after the claim that handed out [begin, end): the job cannot end (nor
  // its descriptor change) before the claimer counts these units done.
  tramp_(ctx_, begin * scale_, std::min(n_, end * scale_));
}

int64_t ThreadPool::RunOwnPart(int64_t p) {
  std::atomic<uint64_t>& range = parts_[p].range;
  int64_t ran = 0;
  uint64_t r = range.load(std::memory_order_acquire);
  for (;;) {
    const int64_t f = Front(r), b = Back(r);
    if (f >= b) return ran;
    const int64_t take = std::min(step_.load(std::memory_order_relaxed), b - f);
    if (!range.compare_exchange_weak(r, Range(f + take, b), std::memory_order_acq_rel, std::memory_order_acquire))
      continue;
    RunRange(f, f + take);
    ran += take;
    r = range.load(std::memory_order_acquire);
  }
}

int64_t ThreadPool::Steal(int64_t parts) {
  int64_t ran = 0;
  for (;;) {
    int64_t victim = -1, most = 0;
    uint64_t r = 0;
    for (int64_t q = 0; q < parts; ++q) {
      const uint64_t v = parts_[q].range.load(std::memory_order_acquire);
      if (Back(v) - Front(v) > most) most = Back(v) - Front(v), victim = q, r = v;
    }
    if (victim < 0) return ran;
    // Half of what is left, at least a step: the owner and the thief then
    // finish together if they run at the same speed.
    const int64_t take = std::min(most, std::max(step_.load(std::memory_order_relaxed), most / 2));
    const int64_t f = Front(r), b = Back(r);
    if (!parts_[victim].range.compare_exchange_strong(r, Range(f, b - take), std::memory_order_acq_rel,
                                                      std::memory_order_acquire))
      continue;
    RunRange(b - take, b);
    ran += take;
  }
}

int64_t ThreadPool::Work(uint64_t seq) {
  int64_t ran = 0, parts = 0;
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (Seq(c) != seq) break;
    parts = Chunks(c);
    if (Next(c) >= parts) break;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    ran += RunOwnPart(Next(c));
    c = claim_.load(std::memory_order_acquire);
  }
  // A part walked or stolen from may belong to a later job only if this
  // thread ran nothing of job `seq` (else that job cannot have ended): e.g. a
  // claimed part all stolen by others, then the next job published. Such
  // units are legitimately that job's (the CAS acquired its part word, which
  // was written after its descriptor) and are counted in its done_, reset
  // before its parts were written.
  if (parts > 0) ran += Steal(parts);
  return ran;
}

void ThreadPool::RunChunks(int64_t n, int64_t grain, int64_t max_chunks, void* ctx, Trampoline tramp) {
  std::lock_guard<std::mutex> submit(submit_mu_);
  const int64_t chunks = std::min<int64_t>(max_chunks, num_threads_);
  const uint64_t seq = (Seq(claim_.load(std::memory_order_relaxed)) + 1) & 0xffffffffu;  // 32 bits in claim_
  scale_ = n >> 31 ? (n >> 31) + 1 : 1;
  const int64_t units = (n + scale_ - 1) / scale_;
  // Steps of a grain at least, and about an eighth of a part: small enough to
  // even out the end of a job, few enough that claiming costs nothing.
  step_.store(std::max<int64_t>((grain + scale_ - 1) / scale_, units / (8 * chunks)), std::memory_order_relaxed);
  ctx_ = ctx;
  tramp_ = tramp;
  n_ = n;
  done_.store(0, std::memory_order_relaxed);
  for (int64_t p = 0; p < chunks; ++p)
    parts_[p].range.store(Range(units * p / chunks, units * (p + 1) / chunks), std::memory_order_release);
  // seq_cst: ordered before the sleepers_ check below (pairs with WorkerLoop).
  claim_.store(seq << 32 | static_cast<uint64_t>(chunks) << 16);
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lk(mu_);
    cv_work_.notify_all();
  }
  // The caller takes parts too.
  t_in_worker = true;
  const int64_t ran = Work(seq);
  t_in_worker = false;
  // seq_cst loads in both predicates: they pair with the RMW/store on the other
  // side of the sleeping flags (a Dekker-style handshake).
  auto finished = [&] { return done_.load() == units; };
  if (done_.fetch_add(ran) + ran == units) return;
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
    const int64_t ran = Work(seen);
    if (ran > 0) {
      // The job's units: read before adding, as the job may end with this add.
      const int64_t units = (n_ + scale_ - 1) / scale_;
      if (done_.fetch_add(ran) + ran == units && caller_sleeping_.load()) {
        std::lock_guard<std::mutex> lk(mu_);
        cv_done_.notify_all();
      }
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
  if (g_pool && g_pool->num_threads() == std::clamp(num_threads, 1, kMaxThreads)) return;
  g_pool = std::make_unique<ThreadPool>(num_threads);
}

}  // namespace oc

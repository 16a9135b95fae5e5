#include "runtime/device/stream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>

#include "runtime/trace.h"

namespace oc::rt {

HostStream::HostStream() : worker_([this] {
  trace::BindStreamThread();  // profiling records name the stream by its worker
  Loop();
}) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_one();
  worker_.join();
}

void HostStream::Enqueue(Task task, std::string what) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.emplace_back(std::move(task), std::move(what));
    ++enqueued_;
    enqueued_seen_.store(enqueued_, std::memory_order_release);
  }
  cv_work_.notify_one();
}

void HostStream::Loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (queue_.empty() && !stop_) {
      // Drained: poll a short while before sleeping, yielding the CPU to any
      // other thread on it (the caller about to queue more, often), so that
      // work queued right after a synchronize does not wait for this thread
      // to be woken.
      const uint64_t seen = enqueued_;
      lk.unlock();
      const auto until = std::chrono::steady_clock::now() + kIdlePoll;
      while (enqueued_seen_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      lk.lock();
    }
    cv_work_.wait(lk, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and drained
    auto [task, what] = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    Status st;
    try {
      st = task();
    } catch (const std::exception& e) {
      st = Internal("exception: ", e.what());
    } catch (...) {
      st = Internal("unknown exception");
    }
    lk.lock();
    if (!st.ok() && error_.ok()) error_ = st.WithContext(what);
    ++finished_;
    // Wake the waiters only when the earliest of their targets is reached,
    // not after every task (a thread in WaitIdle behind a thousand queued
    // tasks would otherwise wake a thousand times).
    if (finished_ >= earliest_wait_) {
      earliest_wait_ = UINT64_MAX;
      cv_done_.notify_all();
    }
  }
}

bool HostStream::WaitIdle(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t target = enqueued_;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (finished_ < target) {
    earliest_wait_ = std::min(earliest_wait_, target);  // again after every wake: the worker clears it
    if (timeout_ms < 0) cv_done_.wait(lk);
    else if (cv_done_.wait_until(lk, deadline) == std::cv_status::timeout) return finished_ >= target;
  }
  return true;
}

bool HostStream::Idle() const {
  std::lock_guard<std::mutex> lk(mu_);
  return finished_ == enqueued_;
}

Status HostStream::TakeError() {
  std::lock_guard<std::mutex> lk(mu_);
  Status st = std::move(error_);
  error_ = Status::Ok();
  return st;
}

uint64_t Event::BeginRecord() {
  std::lock_guard<std::mutex> lk(mu_);
  return ++begun_;
}

void Event::CompleteRecord(uint64_t seq) {
  auto now = Clock::now();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (seq > done_) done_ = seq;
    recorded_ = true;
    stamp_ = now;
  }
  cv_.notify_all();
}

void Event::Reset() {
  std::lock_guard<std::mutex> lk(mu_);
  recorded_ = false;
}

uint64_t Event::LastRecord() const {
  std::lock_guard<std::mutex> lk(mu_);
  return begun_;
}

bool Event::WaitFor(uint64_t seq, int64_t timeout_ms) {
  std::unique_lock<std::mutex> lk(mu_);
  auto reached = [&] { return done_ >= seq; };
  if (timeout_ms < 0) {
    cv_.wait(lk, reached);
    return true;
  }
  return cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), reached);
}

bool Event::Complete() const {
  std::lock_guard<std::mutex> lk(mu_);
  return done_ >= begun_;
}

bool Event::RecordedComplete() const {
  std::lock_guard<std::mutex> lk(mu_);
  return recorded_ && done_ >= begun_;
}

std::optional<Event::Clock::time_point> Event::Timestamp() const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!recorded_) return std::nullopt;
  return stamp_;
}

class HostStreamSet::Member final : public Stream {
 public:
  explicit Member(HostStreamSet& set) : set_(set) {
    std::lock_guard<std::mutex> lock(set_.mu_);
    set_.live_.insert(this);
  }
  // Leaves the set first; the host stream (destroyed after this body) then
  // drains its queue.
  ~Member() override {
    std::lock_guard<std::mutex> lock(set_.mu_);
    set_.live_.erase(this);
  }
  void Enqueue(Task task, std::string what) override { impl_.Enqueue(std::move(task), std::move(what)); }
  bool WaitIdle(int64_t timeout_ms) override { return impl_.WaitIdle(timeout_ms); }
  bool Idle() const override { return impl_.Idle(); }
  Status TakeError() override { return impl_.TakeError(); }

 private:
  HostStreamSet& set_;
  HostStream impl_;
};

std::unique_ptr<Stream> HostStreamSet::Create() { return std::make_unique<Member>(*this); }

Status HostStreamSet::SynchronizeAll() {
  std::lock_guard<std::mutex> lock(mu_);
  Status first;
  for (Member* s : live_) {
    s->WaitIdle(-1);
    Status st = s->TakeError();
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

}  // namespace oc::rt

// Streams and events (the device interface, device.h, hands them out).
//
// A Stream is an in-order queue of tasks. HostStream, the implementation of
// every device whose work the host drives, runs them on one worker thread owned
// by the stream; the worker sleeps on a condition variable when the queue is
// empty.
// The first task error since the last synchronization is kept and handed to
// whoever synchronizes next. An Event marks a point in a stream: recording
// enqueues a marker task; waiting blocks until the marker of a given record has
// run. Record numbers only grow, so a wait captured at enqueue time can never be
// confused by later records or resets.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>

#include "base/status.h"

namespace oc::rt {

class Stream {
 public:
  using Task = std::function<Status()>;

  virtual ~Stream() = default;
  // `what` names the task in an error message ("model 3 execution").
  virtual void Enqueue(Task task, std::string what) = 0;
  // Waits until every task enqueued before this call has run. A negative
  // timeout waits forever. Returns false on timeout.
  virtual bool WaitIdle(int64_t timeout_ms) = 0;
  // True when nothing is queued or running.
  virtual bool Idle() const = 0;
  // The first failure since the previous TakeError (Ok if none), and clears it.
  virtual Status TakeError() = 0;
};

class HostStream final : public Stream {
 public:
  HostStream();
  // Runs everything still queued, then stops the worker.
  ~HostStream() override;
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  void Enqueue(Task task, std::string what) override;
  bool WaitIdle(int64_t timeout_ms) override;
  bool Idle() const override;
  Status TakeError() override;

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  std::deque<std::pair<Task, std::string>> queue_;
  uint64_t enqueued_ = 0;
  std::atomic<uint64_t> enqueued_seen_{0};  // enqueued_, for the worker's idle poll (no lock)
  static constexpr std::chrono::microseconds kIdlePoll{50};
  uint64_t finished_ = 0;
  uint64_t earliest_wait_ = UINT64_MAX;  // the smallest target of the threads in WaitIdle
  bool stop_ = false;
  Status error_;
  std::thread worker_;
};

// The live streams of one device, for Device::Synchronize: Create hands out
// host streams that stay in the set until destroyed.
class HostStreamSet {
 public:
  HostStreamSet() = default;
  HostStreamSet(const HostStreamSet&) = delete;
  HostStreamSet& operator=(const HostStreamSet&) = delete;

  std::unique_ptr<Stream> Create();
  // Waits for every live stream and returns the first task error among them
  // (each stream's error is taken, as synchronising it would). A stream is
  // not destroyed while it is waited for.
  Status SynchronizeAll();

 private:
  class Member;
  std::mutex mu_;
  std::unordered_set<Member*> live_;
};

class Event {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Event(bool timing) : timing_(timing) {}

  bool timing() const { return timing_; }
  // At enqueue time: returns the number of the new record.
  uint64_t BeginRecord();
  // In the stream: record `seq` has been reached.
  void CompleteRecord(uint64_t seq);
  // In the stream: the event reads as not recorded until the next record runs.
  void Reset();
  // The number of the latest record begun so far (0 = never recorded).
  uint64_t LastRecord() const;
  // Blocks until record `seq` has run. Negative timeout = forever; false on timeout.
  bool WaitFor(uint64_t seq, int64_t timeout_ms);
  // Every record begun so far has run.
  bool Complete() const;
  // Recorded, its latest record has run, and no reset ran after it.
  bool RecordedComplete() const;
  // Time the latest completed record ran, if any (and not reset since).
  std::optional<Clock::time_point> Timestamp() const;

 private:
  const bool timing_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t begun_ = 0;
  uint64_t done_ = 0;
  bool recorded_ = false;
  Clock::time_point stamp_{};
};

}  // namespace oc::rt

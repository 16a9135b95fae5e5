#include "runtime/device/stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/device/cpu/memory_registry.h"

namespace oc::rt {
namespace {

TEST(RuntimeStream, EnqueueReturnsBeforeTheTaskRuns) {
  HostStream s;
  std::atomic<bool> release{false}, ran{false};
  s.Enqueue([&] {
    while (!release.load()) std::this_thread::yield();
    ran = true;
    return Status::Ok();
  }, "blocker");
  EXPECT_FALSE(s.Idle());
  EXPECT_FALSE(s.WaitIdle(20));  // times out while the task is blocked
  release = true;
  EXPECT_TRUE(s.WaitIdle(-1));
  EXPECT_TRUE(ran);
  EXPECT_TRUE(s.Idle());
}

TEST(RuntimeStream, TasksRunInOrderOnOneThread) {
  HostStream s;
  std::vector<int> order;
  std::thread::id worker;
  for (int i = 0; i < 100; ++i)
    s.Enqueue([&, i] {
      if (i == 0) worker = std::this_thread::get_id();
      EXPECT_EQ(worker, std::this_thread::get_id());
      order.push_back(i);
      return Status::Ok();
    }, "push");
  s.WaitIdle(-1);
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(worker, std::this_thread::get_id());
}

TEST(RuntimeStream, FirstErrorIsReportedOnceWithTheTaskName) {
  HostStream s;
  s.Enqueue([] { return InvalidArgument("bad input 3"); }, "model 7 execution");
  s.Enqueue([] { return Internal("second"); }, "other");
  s.Enqueue([]() -> Status { throw std::runtime_error("boom"); }, "thrower");
  s.WaitIdle(-1);
  Status st = s.TakeError();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("model 7 execution"), std::string::npos);
  EXPECT_NE(st.message().find("bad input 3"), std::string::npos);
  EXPECT_TRUE(s.TakeError().ok());
}

TEST(RuntimeStream, DestructorDrainsQueuedWork) {
  std::atomic<int> n{0};
  {
    HostStream s;
    for (int i = 0; i < 50; ++i) s.Enqueue([&] { ++n; return Status::Ok(); }, "inc");
  }
  EXPECT_EQ(n.load(), 50);
}

TEST(RuntimeEvent, WaitCapturedBeforeALaterRecordDoesNotHang) {
  Event ev(true);
  EXPECT_TRUE(ev.Complete());
  EXPECT_FALSE(ev.RecordedComplete());
  uint64_t first = ev.BeginRecord();
  EXPECT_FALSE(ev.Complete());
  EXPECT_FALSE(ev.WaitFor(first, 10));
  uint64_t second = ev.BeginRecord();
  ev.CompleteRecord(second);  // a later record completing satisfies earlier waits
  EXPECT_TRUE(ev.WaitFor(first, 0));
  EXPECT_TRUE(ev.RecordedComplete());
  EXPECT_TRUE(ev.Timestamp().has_value());
  ev.Reset();
  EXPECT_FALSE(ev.RecordedComplete());
  EXPECT_TRUE(ev.Complete());
}

TEST(RuntimeEvent, CrossStreamWaitOrdersWork) {
  HostStream a, b;
  auto ev = std::make_shared<Event>(false);
  std::atomic<bool> release{false};
  std::atomic<int> stage{0};
  a.Enqueue([&] {
    while (!release.load()) std::this_thread::yield();
    stage = 1;
    return Status::Ok();
  }, "a1");
  uint64_t seq = ev->BeginRecord();
  a.Enqueue([ev, seq] { ev->CompleteRecord(seq); return Status::Ok(); }, "record");
  b.Enqueue([ev, seq] { ev->WaitFor(seq, -1); return Status::Ok(); }, "wait");
  b.Enqueue([&] { EXPECT_EQ(stage.load(), 1); stage = 2; return Status::Ok(); }, "b1");
  EXPECT_FALSE(b.WaitIdle(20));
  release = true;
  b.WaitIdle(-1);
  EXPECT_EQ(stage.load(), 2);
}

TEST(RuntimeMemory, RegistryTracksBlocksAndKinds) {
  MemoryRegistry mem;
  auto d = mem.Allocate(100, MemKind::kDevice);
  auto h = mem.Allocate(50, MemKind::kHost);
  ASSERT_TRUE(d.ok() && h.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*d) % 64, 0u);
  auto* p = static_cast<uint8_t*>(*d);
  EXPECT_TRUE(mem.Find(p, 100).has_value());
  EXPECT_TRUE(mem.Find(p + 99, 1).has_value());
  EXPECT_FALSE(mem.Find(p + 1, 100).has_value());  // runs past the end
  EXPECT_TRUE(mem.OverlapsDevice(p - 10, 20));
  EXPECT_FALSE(mem.OverlapsDevice(*h, 50));
  EXPECT_EQ(mem.Stats().device_bytes, 100u);
  EXPECT_EQ(mem.Stats().host_bytes, 50u);
  EXPECT_FALSE(mem.Free(p + 1, MemKind::kDevice).ok());
  EXPECT_FALSE(mem.Free(*h, MemKind::kDevice).ok());
  EXPECT_TRUE(mem.Free(*d, MemKind::kDevice).ok());
  EXPECT_FALSE(mem.Free(*d, MemKind::kDevice).ok());
  EXPECT_FALSE(mem.Allocate(0, MemKind::kDevice).ok());
  EXPECT_EQ(mem.Stats().live_blocks, 1u);
  SystemMemory sys = ReadSystemMemory();
  EXPECT_GT(sys.total, 0u);
  EXPECT_LE(sys.available, sys.total);
}

}  // namespace
}  // namespace oc::rt

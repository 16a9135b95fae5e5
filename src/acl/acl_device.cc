// Devices, contexts, streams and events of the logical CPU devices
// (runtime/device/cpu/cpu_device.h: OPENCANN_DEVICE_COUNT of them, default 8).
#include <condition_variable>

#include "acl/acl_internal.h"
#include "base/thread_pool.h"

using namespace oc::acl;
using oc::StrCat;

namespace {

aclError CheckDeviceId(int32_t deviceId) {
  const int n = oc::rt::CpuDevice::Count();
  if (deviceId < 0 || deviceId >= n)
    return Fail(ACL_ERROR_INVALID_DEVICE,
                StrCat("deviceId ", deviceId, " is out of range: this process has ", n,
                       " logical CPU devices (ids 0..", n - 1, "; OPENCANN_DEVICE_COUNT sets how many)"));
  return ACL_SUCCESS;
}

aclError NullArg(const char* name) {
  return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument '", name, "' is NULL"));
}

aclError NotInit() { return Fail(ACL_ERROR_UNINITIALIZE, "AscendCL is not initialised; call aclInit first"); }

ContextObj* NewContextLocked(Runtime& r, int32_t device, bool is_default) {
  auto ctx = std::make_unique<ContextObj>();
  ctx->id = r.next_ctx_id++;
  ctx->device = device;
  ctx->is_default = is_default;
  ContextObj* raw = ctx.get();
  r.contexts[raw] = std::move(ctx);
  return raw;
}

aclError FindEvent(Runtime& r, aclrtEvent event, std::shared_ptr<EventObj>* out) {
  if (!event) return NullArg("event");
  auto it = r.events.find(event);
  if (it == r.events.end())
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat("event ", PtrString(event), " is not a live event (never created or already destroyed)"));
  *out = it->second;
  return ACL_SUCCESS;
}

aclError LookupEvent(aclrtEvent event, std::shared_ptr<EventObj>* out) {
  Runtime& r = RuntimeState();
  std::lock_guard<std::mutex> lk(r.mu);
  if (!r.initialized) return NotInit();
  return FindEvent(r, event, out);
}

}  // namespace

// ---- Devices ----------------------------------------------------------------------------

aclError aclrtSetDevice(int32_t deviceId) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (aclError e = CheckDeviceId(deviceId)) return e;
    Runtime::DeviceUse& use = r.devices[deviceId];
    if (!use.default_ctx) use.default_ctx = NewContextLocked(r, deviceId, true);
    ++use.refs;
    SetCurrentContextLocked(use.default_ctx);
    return ACL_SUCCESS;
  });
}

aclError aclrtResetDevice(int32_t deviceId) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::vector<std::shared_ptr<StreamObj>> doomed;
    {
      std::lock_guard<std::mutex> lk(r.mu);
      if (!r.initialized) return NotInit();
      if (aclError e = CheckDeviceId(deviceId)) return e;
      auto it = r.devices.find(deviceId);
      if (it == r.devices.end() || it->second.refs == 0)
        return Fail(ACL_ERROR_INVALID_DEVICE,
                    StrCat("device ", deviceId, " is not set in this process (call aclrtSetDevice first)"));
      if (--it->second.refs > 0) return ACL_SUCCESS;
      ContextObj* ctx = it->second.default_ctx;
      doomed = DetachStreamsLocked(r, ctx);
      if (CurrentContextLocked(r) == ctx) SetCurrentContextLocked(nullptr);
      r.contexts.erase(ctx);
      r.devices.erase(it);
    }
    doomed.clear();  // drains and joins outside the lock
    return ACL_SUCCESS;
  });
}

aclError aclrtGetDevice(int32_t* deviceId) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (!deviceId) return NullArg("deviceId");
    ContextObj* ctx = CurrentContextLocked(r);
    if (!ctx)
      return Fail(ACL_ERROR_RT_CONTEXT_NULL,
                  "this thread has no current context; call aclrtSetDevice or aclrtSetCurrentContext first");
    *deviceId = ctx->device;
    return ACL_SUCCESS;
  });
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!count) return NullArg("count");
    *count = static_cast<uint32_t>(oc::rt::CpuDevice::Count());
    return ACL_SUCCESS;
  });
}

aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!runMode) return NullArg("runMode");
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
  });
}

aclError aclrtSynchronizeDevice(void) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    return SynchronizeAllStreams();
  });
}

namespace oc::acl {
namespace {
struct PoolGate {
  std::mutex mu;
  std::condition_variable cv;
  int users = 0;
  bool replacing = false;
};
PoolGate& Gate() {
  static PoolGate* g = new PoolGate();
  return *g;
}
}  // namespace

ThreadPoolUse::ThreadPoolUse() {
  PoolGate& g = Gate();
  std::unique_lock<std::mutex> lk(g.mu);
  g.cv.wait(lk, [&] { return !g.replacing; });
  ++g.users;
  pool_ = &oc::ThreadPool::Global();
}

ThreadPoolUse::~ThreadPoolUse() {
  PoolGate& g = Gate();
  std::lock_guard<std::mutex> lk(g.mu);
  if (--g.users == 0) g.cv.notify_all();
}

void ReplaceThreadPool(int num_threads) {
  PoolGate& g = Gate();
  std::unique_lock<std::mutex> lk(g.mu);
  g.cv.wait(lk, [&] { return !g.replacing; });
  g.replacing = true;
  g.cv.wait(lk, [&] { return g.users == 0; });
  oc::ThreadPool::SetGlobalThreads(num_threads);
  g.replacing = false;
  g.cv.notify_all();
}
}  // namespace oc::acl

aclError aclrtSetOpExecuteThreads(uint32_t numThreads) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (numThreads == 0 || numThreads > static_cast<uint32_t>(oc::ThreadPool::kMaxThreads))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("numThreads ", numThreads, " is outside [1, ", oc::ThreadPool::kMaxThreads, "]"));
    if (aclError e = SynchronizeAllStreams()) return e;
    ReplaceThreadPool(static_cast<int>(numThreads));
    Log(kLogInfo, StrCat("aclrtSetOpExecuteThreads: ", numThreads, " threads"));
    return ACL_SUCCESS;
  });
}

// ---- Contexts -------------------------------------------------------------------------

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (!context) return NullArg("context");
    if (aclError e = CheckDeviceId(deviceId)) return e;
    ContextObj* ctx = NewContextLocked(r, deviceId, false);
    SetCurrentContextLocked(ctx);
    *context = ctx;
    return ACL_SUCCESS;
  });
}

aclError aclrtDestroyContext(aclrtContext context) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::vector<std::shared_ptr<StreamObj>> doomed;
    {
      std::lock_guard<std::mutex> lk(r.mu);
      if (!r.initialized) return NotInit();
      if (!context) return NullArg("context");
      auto it = r.contexts.find(context);
      if (it == r.contexts.end())
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("context ", PtrString(context),
                                                    " is not a live context (never created or already destroyed)"));
      if (it->second->is_default)
        return Fail(ACL_ERROR_INVALID_PARAM,
                    "context is the device's default context; it is released by aclrtResetDevice");
      doomed = DetachStreamsLocked(r, it->second.get());
      if (CurrentContextLocked(r) == it->second.get()) SetCurrentContextLocked(nullptr);
      r.contexts.erase(it);
    }
    doomed.clear();
    return ACL_SUCCESS;
  });
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (!context) return NullArg("context");
    auto it = r.contexts.find(context);
    if (it == r.contexts.end())
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("context ", PtrString(context),
                                                  " is not a live context (never created or already destroyed)"));
    SetCurrentContextLocked(it->second.get());
    return ACL_SUCCESS;
  });
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (!context) return NullArg("context");
    ContextObj* ctx = CurrentContextLocked(r);
    if (!ctx) return Fail(ACL_ERROR_RT_CONTEXT_NULL, "this thread has no current context");
    *context = ctx;
    return ACL_SUCCESS;
  });
}

// ---- Streams ------------------------------------------------------------------------------

aclError aclrtCreateStream(aclrtStream* stream) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (!stream) return NullArg("stream");
    ContextObj* ctx = CurrentContextLocked(r);
    if (!ctx)
      return Fail(ACL_ERROR_RT_CONTEXT_NULL,
                  "this thread has no current context; call aclrtSetDevice or aclrtCreateContext first");
    *stream = NewStreamLocked(r, ctx, false);
    return ACL_SUCCESS;
  });
}

aclError aclrtDestroyStream(aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::shared_ptr<StreamObj> doomed;
    {
      std::lock_guard<std::mutex> lk(r.mu);
      if (!r.initialized) return NotInit();
      if (!stream) return NullArg("stream");
      auto it = r.streams.find(stream);
      if (it == r.streams.end())
        return Fail(ACL_ERROR_INVALID_PARAM, StrCat("stream ", PtrString(stream),
                                                    " is not a live stream (never created or already destroyed)"));
      if (it->second->is_default)
        return Fail(ACL_ERROR_INVALID_PARAM, "stream is a context's default stream and cannot be destroyed");
      doomed = std::move(it->second);
      r.streams.erase(it);
    }
    doomed.reset();
    return ACL_SUCCESS;
  });
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    return SyncStream(*s, -1);
  });
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    if (timeout < -1)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("timeout ", timeout, " ms is invalid (use -1 to wait forever)"));
    return SyncStream(*s, timeout);
  });
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus* status) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    if (!status) return NullArg("status");
    *status = s->queue->Idle() ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
    return ACL_SUCCESS;
  });
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    Runtime& r = RuntimeState();
    // The lock spans reading the record number and enqueueing so that a record
    // issued concurrently cannot slip in between on the same stream.
    std::lock_guard<std::mutex> lk(r.mu);
    std::shared_ptr<EventObj> ev;
    if (aclError e = FindEvent(r, event, &ev)) return e;
    uint64_t seq = ev->event->LastRecord();
    if (seq == 0) return ACL_SUCCESS;
    s->queue->Enqueue(
        [ev, seq]() -> oc::Status {
          ev->event->WaitFor(seq, -1);
          return oc::Status::Ok();
        },
        "wait for event");
    return ACL_SUCCESS;
  });
}

// ---- Events -------------------------------------------------------------------------------

aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (!event) return NullArg("event");
    constexpr uint32_t kKnown = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | 0x4U | ACL_EVENT_TIME_LINE;
    if (flag & ~kKnown)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("flag ", flag, " has bits outside the ACL_EVENT_* flags (",
                                                  kKnown, ")"));
    auto ev = std::make_shared<EventObj>(flag);
    r.events[ev.get()] = ev;
    *event = ev.get();
    return ACL_SUCCESS;
  });
}

aclError aclrtCreateEvent(aclrtEvent* event) {
  return aclrtCreateEventWithFlag(event, ACL_EVENT_DEFAULT);
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::shared_ptr<EventObj> doomed;
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return NotInit();
    if (aclError e = FindEvent(r, event, &doomed)) return e;
    r.events.erase(event);  // queued tasks keep their own reference
    return ACL_SUCCESS;
  });
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    std::shared_ptr<EventObj> ev;
    if (aclError e = FindEvent(r, event, &ev)) return e;
    uint64_t seq = ev->event->BeginRecord();
    s->queue->Enqueue(
        [ev, seq]() -> oc::Status {
          ev->event->CompleteRecord(seq);
          return oc::Status::Ok();
        },
        "event record");
    return ACL_SUCCESS;
  });
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    std::shared_ptr<EventObj> ev;
    if (aclError e = FindEvent(r, event, &ev)) return e;
    s->queue->Enqueue(
        [ev]() -> oc::Status {
          ev->event->Reset();
          return oc::Status::Ok();
        },
        "event reset");
    return ACL_SUCCESS;
  });
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<EventObj> ev;
    if (aclError e = LookupEvent(event, &ev)) return e;
    ev->event->WaitFor(ev->event->LastRecord(), -1);
    return ACL_SUCCESS;
  });
}

aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus* status) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<EventObj> ev;
    if (aclError e = LookupEvent(event, &ev)) return e;
    if (!status) return NullArg("status");
    *status = ev->event->Complete() ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    return ACL_SUCCESS;
  });
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<EventObj> ev;
    if (aclError e = LookupEvent(event, &ev)) return e;
    if (!status) return NullArg("status");
    *status = ev->event->RecordedComplete() ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    return ACL_SUCCESS;
  });
}

aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  return Guard(__func__, [&]() -> aclError {
    if (!ms) return NullArg("ms");
    std::shared_ptr<EventObj> a, b;
    {
      Runtime& r = RuntimeState();
      std::lock_guard<std::mutex> lk(r.mu);
      if (!r.initialized) return NotInit();
      if (!startEvent) return NullArg("startEvent");
      if (!endEvent) return NullArg("endEvent");
      if (aclError e = FindEvent(r, startEvent, &a)) return e;
      if (aclError e = FindEvent(r, endEvent, &b)) return e;
    }
    if (!a->event->timing() || !b->event->timing())
      return Fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                  StrCat(!a->event->timing() ? "startEvent" : "endEvent",
                         " was created without ACL_EVENT_TIME_LINE and has no timestamp"));
    auto ta = a->event->Timestamp();
    auto tb = b->event->Timestamp();
    if (!a->event->RecordedComplete() || !ta)
      return Fail(ACL_ERROR_RT_EVENT_NOT_COMPLETE, "startEvent has no completed record (synchronize it first)");
    if (!b->event->RecordedComplete() || !tb)
      return Fail(ACL_ERROR_RT_EVENT_NOT_COMPLETE, "endEvent has no completed record (synchronize it first)");
    *ms = std::chrono::duration<float, std::milli>(*tb - *ta).count();
    return ACL_SUCCESS;
  });
}

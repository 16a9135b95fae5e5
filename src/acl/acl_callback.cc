// Host callbacks on streams (aclrtLaunchCallback) and the report threads that
// run them (aclrtSubscribeReport / aclrtProcessReport), plus small stream and
// device queries.
//
// A callback task on a stream posts the function to the report queue of the
// stream's subscribed thread; with ACL_CALLBACK_BLOCK the stream's worker then
// waits until that thread has run it, which keeps the stream's order.
#include <pthread.h>

#include <condition_variable>
#include <deque>

#include "acl/acl_internal.h"
#include "base/cpu_features.h"

using namespace oc::acl;
using oc::StrCat;

namespace {

struct Completion {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

struct Report {
  aclrtCallback fn;
  void* user;
  std::shared_ptr<Completion> completion;  // null for ACL_CALLBACK_NO_BLOCK
};

struct ReportQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Report> items;
  int subscriptions = 0;
};

// Keyed by thread id; queues live for the process so a report posted to a
// thread that unsubscribed meanwhile still has somewhere to go.
std::mutex g_queues_mu;
std::map<uint64_t, std::shared_ptr<ReportQueue>> g_queues;

std::shared_ptr<ReportQueue> QueueFor(uint64_t thread, bool create) {
  std::lock_guard<std::mutex> lk(g_queues_mu);
  auto it = g_queues.find(thread);
  if (it != g_queues.end()) return it->second;
  if (!create) return nullptr;
  auto q = std::make_shared<ReportQueue>();
  g_queues[thread] = q;
  return q;
}

aclError FindStreamLocked(Runtime& r, aclrtStream stream, std::shared_ptr<StreamObj>* out) {
  if (!stream) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'stream' is NULL");
  auto it = r.streams.find(stream);
  if (it == r.streams.end())
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat("stream ", PtrString(stream), " is not a live stream (never created or already destroyed)"));
  *out = it->second;
  return ACL_SUCCESS;
}

}  // namespace

aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag) {
  (void)priority;
  (void)flag;
  return aclrtCreateStream(stream);
}

const char* aclrtGetSocName(void) {
  static const std::string name = StrCat("OpenCANN-CPU-", oc::IsaName(oc::SelectedIsa()));
  Runtime& r = RuntimeState();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.initialized ? name.c_str() : nullptr;
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return Fail(ACL_ERROR_UNINITIALIZE, "AscendCL is not initialised; call aclInit first");
    std::shared_ptr<StreamObj> s;
    if (aclError e = FindStreamLocked(r, stream, &s)) return e;
    if (s->subscribed)
      return Fail(ACL_ERROR_REPEAT_SUBSCRIBE, StrCat("stream ", PtrString(stream), " is already subscribed by thread ",
                                                     s->report_thread));
    auto q = QueueFor(threadId, true);
    {
      std::lock_guard<std::mutex> qlk(q->mu);
      ++q->subscriptions;
    }
    s->subscribed = true;
    s->report_thread = threadId;
    return ACL_SUCCESS;
  });
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (!r.initialized) return Fail(ACL_ERROR_UNINITIALIZE, "AscendCL is not initialised; call aclInit first");
    std::shared_ptr<StreamObj> s;
    if (aclError e = FindStreamLocked(r, stream, &s)) return e;
    if (!s->subscribed || s->report_thread != threadId)
      return Fail(ACL_ERROR_STREAM_NOT_SUBSCRIBE,
                  StrCat("thread ", threadId, " is not subscribed to stream ", PtrString(stream)));
    s->subscribed = false;
    if (auto q = QueueFor(threadId, false)) {
      std::lock_guard<std::mutex> qlk(q->mu);
      --q->subscriptions;
    }
    return ACL_SUCCESS;
  });
}

aclError aclrtLaunchCallback(aclrtCallback fn, void* userData, aclrtCallbackBlockType blockType,
                             aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (!fn) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'fn' is NULL");
    if (EnumBits(blockType) != ACL_CALLBACK_NO_BLOCK && EnumBits(blockType) != ACL_CALLBACK_BLOCK)
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("blockType ", EnumBits(blockType), " is not an aclrtCallbackBlockType"));
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    uint64_t thread;
    {
      Runtime& r = RuntimeState();
      std::lock_guard<std::mutex> lk(r.mu);
      if (!s->subscribed)
        return Fail(ACL_ERROR_STREAM_NOT_SUBSCRIBE,
                    "no thread is subscribed to the stream; call aclrtSubscribeReport first");
      thread = s->report_thread;
    }
    auto q = QueueFor(thread, true);
    bool block = blockType == ACL_CALLBACK_BLOCK;
    s->queue->Enqueue(
        [q, fn, userData, block]() -> oc::Status {
          auto completion = block ? std::make_shared<Completion>() : nullptr;
          {
            std::lock_guard<std::mutex> lk(q->mu);
            q->items.push_back(Report{fn, userData, completion});
          }
          q->cv.notify_all();
          if (completion) {
            std::unique_lock<std::mutex> lk(completion->mu);
            completion->cv.wait(lk, [&] { return completion->done; });
          }
          return oc::Status::Ok();
        },
        "host callback");
    return ACL_SUCCESS;
  });
}

aclError aclrtProcessReport(int32_t timeout) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (timeout < -1)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("timeout ", timeout, " ms is invalid (use -1 to wait forever)"));
    uint64_t self = static_cast<uint64_t>(pthread_self());
    auto q = QueueFor(self, false);
    Report item{};
    {
      if (!q) return Fail(ACL_ERROR_THREAD_NOT_SUBSCRIBE, "the calling thread is not subscribed to any stream");
      std::unique_lock<std::mutex> lk(q->mu);
      if (q->subscriptions == 0 && q->items.empty())
        return Fail(ACL_ERROR_THREAD_NOT_SUBSCRIBE, "the calling thread is not subscribed to any stream");
      auto ready = [&] { return !q->items.empty(); };
      if (timeout < 0) q->cv.wait(lk, ready);
      else if (!q->cv.wait_for(lk, std::chrono::milliseconds(timeout), ready))
        return Fail(ACL_ERROR_WAIT_CALLBACK_TIMEOUT, StrCat("no callback arrived within ", timeout, " ms"));
      item = std::move(q->items.front());
      q->items.pop_front();
    }
    // Signal completion even if the callback throws (it is user C code, but a
    // C++ caller could).
    struct Signal {
      std::shared_ptr<Completion> c;
      ~Signal() {
        if (!c) return;
        {
          std::lock_guard<std::mutex> lk(c->mu);
          c->done = true;
        }
        c->cv.notify_all();
      }
    } signal{item.completion};
    item.fn(item.user);
    return ACL_SUCCESS;
  });
}

// Entry points for the project's other libraries (acl_hooks.h).
#include "acl/acl_hooks.h"

#include <memory>

#include "acl/acl_internal.h"
#include "base/thread_pool.h"

using namespace oc::acl;

aclError aclrtOcEnqueueHostTask(aclrtStream stream, aclrtOcHostTask task, void* arg, void (*release)(void*),
                                const char* what) {
  // Owns `arg` from here on: released exactly once, whatever happens. One
  // allocation per task: the closure holds only the shared pointer, which
  // fits inside std::function.
  struct Arg {
    Arg(aclrtOcHostTask t, void* a, void (*r)(void*)) : task(t), arg(a), release(r) {}
    Arg(const Arg&) = delete;
    Arg& operator=(const Arg&) = delete;
    aclrtOcHostTask task;
    void* arg;
    void (*release)(void*);
    ~Arg() {
      if (release) release(arg);
    }
  };
  auto owned = std::make_shared<Arg>(task, arg, release);
  return Guard(__func__, [&]() -> aclError {
    if (!task) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'task' is NULL");
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    s->queue->Enqueue(
        [owned = std::move(owned)]() -> oc::Status {
          char msg[1024];
          msg[0] = '\0';
          int32_t rc = owned->task(owned->arg, msg, sizeof msg);
          if (rc == 0) return oc::Status::Ok();
          msg[sizeof msg - 1] = '\0';
          // The stream prefixes the task's name; its synchronisation reports rc.
          return oc::Status(oc::StatusCode::kUnavailable, msg).WithApiCode(rc);
        },
        what ? what : "host task");
    return ACL_SUCCESS;
  });
}

void aclrtOcParallelFor(int64_t n, aclrtOcRangeFn fn, void* ctx) {
  oc::ThreadPool::Global().ParallelFor(n, 1, [&](int64_t b, int64_t e) { fn(ctx, b, e); });
}

size_t aclrtOcMemExtent(const void* p) {
  auto block = oc::rt::CpuDevice::memory().Find(p, 1);
  if (!block) return 0;
  return block->begin + block->size - reinterpret_cast<uintptr_t>(p);
}

int64_t aclrtOcNowNs(void) { return oc::trace::NowNs(); }

void aclrtOcTraceKernel(const char* kernel, uint32_t block_dim, int64_t start_ns, int64_t end_ns) {
  if (!kernel || !oc::trace::On(oc::trace::kTasks)) return;
  try {
    oc::trace::EmitNode(oc::trace::RegisterKernel(kernel, block_dim), 0, start_ns, end_ns);
  } catch (...) {
    // A lost profiling record is not the kernel's failure.
  }
}

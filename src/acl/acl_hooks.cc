// Entry points for the project's other libraries (acl_hooks.h).
#include "acl/acl_hooks.h"

#include <memory>

#include "acl/acl_internal.h"

using namespace oc::acl;

aclError aclrtOcEnqueueHostTask(aclrtStream stream, aclrtOcHostTask task, void* arg, void (*release)(void*),
                                const char* what) {
  // Owns `arg` from here on: released exactly once, whatever happens.
  struct Arg {
    void* arg;
    void (*release)(void*);
    ~Arg() {
      if (release) release(arg);
    }
  };
  std::shared_ptr<Arg> owned(new Arg{arg, release});
  return Guard(__func__, [&]() -> aclError {
    if (!task) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'task' is NULL");
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    std::string name = what ? what : "host task";
    s->queue->Enqueue(
        [task, owned]() -> oc::Status {
          char msg[1024] = {0};
          int32_t rc = task(owned->arg, msg, sizeof msg);
          if (rc == 0) return oc::Status::Ok();
          msg[sizeof msg - 1] = '\0';
          return oc::Status(oc::StatusCode::kUnavailable, msg);  // the stream prefixes the task's name
        },
        name);
    return ACL_SUCCESS;
  });
}

/* Entry points libascendcl.so exports for the project's other libraries
 * (libhccl.so), beside the AscendCL API. Not part of AscendCL and not installed
 * with its headers: applications must not call them. C declarations, so that
 * no C++ type or exception crosses the library boundary. */
#ifndef OPENCANN_ACL_HOOKS_H_
#define OPENCANN_ACL_HOOKS_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"
#include "ops/custom_op_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A host task run in stream order. Returns 0 on success; otherwise writes a
 * message of at most msg_len bytes (NUL-terminated) into msg and returns the
 * aclError the stream's synchronisation reports. */
typedef int32_t (*aclrtOcHostTask)(void* arg, char* msg, size_t msg_len);

/* Queues `task(arg)` on `stream` (NULL: the current context's default stream)
 * behind its earlier work; `release(arg)` runs once after the task has run or
 * when it can no longer run (it may be NULL). `what` names the task in error
 * messages. Fails, without running the task but calling release, when the
 * stream is not live or AscendCL is not initialised. */
ACL_FUNC_VISIBILITY aclError aclrtOcEnqueueHostTask(aclrtStream stream, aclrtOcHostTask task, void* arg,
                                                   void (*release)(void* arg), const char* what);

/* Runs fn(ctx, begin, end) over disjoint ranges covering [0, n) on the
 * process's thread pool (the caller takes part) and returns when all are done.
 * fn must not throw. */
typedef void (*aclrtOcRangeFn)(void* ctx, int64_t begin, int64_t end);
ACL_FUNC_VISIBILITY void aclrtOcParallelFor(int64_t n, aclrtOcRangeFn fn, void* ctx);

/* Bytes from p to the end of the device (aclrtMalloc) or host (aclrtMallocHost)
 * allocation holding it; 0 when p is in neither. */
ACL_FUNC_VISIBILITY size_t aclrtOcMemExtent(const void* p);

/* The profiler's clock (CLOCK_MONOTONIC, ns), and a record of one Ascend C
 * kernel launch for it (kept only while a profiling session records tasks). */
ACL_FUNC_VISIBILITY int64_t aclrtOcNowNs(void);
ACL_FUNC_VISIBILITY void aclrtOcTraceKernel(const char* kernel, uint32_t block_dim, int64_t start_ns, int64_t end_ns);

/* Custom operators (Ascend C packages): libascendc.so hands its table
 * (ops/custom_op_abi.h) over when it loads, and takes it back (NULL) when it
 * unloads; aclopExecuteV2 and friends, and models' AscendCustom nodes, run the
 * op types it has. */
ACL_FUNC_VISIBILITY void aclrtOcSetCustomOps(const OcCustomOps* ops);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_HOOKS_H_ */

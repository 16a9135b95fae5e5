/* Entry points libascendcl.so exports for the project's other libraries
 * (libhccl.so), beside the AscendCL API. Not part of AscendCL and not installed
 * with its headers: applications must not call them. C declarations, so that
 * no C++ type or exception crosses the library boundary. */
#ifndef OPENCANN_ACL_HOOKS_H_
#define OPENCANN_ACL_HOOKS_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

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

/* Custom operators (Ascend C packages): libascendc.so installs these when it
 * loads; aclopExecuteV2 and friends hand an op type `has` accepts to `run`.
 * Tensors and attributes are described in plain C; `run` queues the operator
 * on the stream and returns 0, or an aclError with a message. */
typedef struct aclrtOcOpTensor {
  const int64_t* dims;
  size_t num_dims;
  int32_t dtype;   /* aclDataType */
  int32_t format;  /* aclFormat */
  void* data;
  size_t size;
} aclrtOcOpTensor;
typedef struct aclrtOcOpAttr {
  const char* name;
  int32_t kind;  /* 0 int (and bool), 1 float, 2 string, 3 ints, 4 floats */
  int64_t i;
  float f;
  const char* s;
  const int64_t* ints;
  const float* floats;
  size_t count;
} aclrtOcOpAttr;
typedef struct aclrtOcCustomOps {
  int (*has)(const char* op_type);
  int32_t (*run)(const char* op_type, const aclrtOcOpTensor* inputs, size_t num_inputs, const aclrtOcOpTensor* outputs,
                 size_t num_outputs, const aclrtOcOpAttr* attrs, size_t num_attrs, void* stream, char* msg,
                 size_t msg_len);
} aclrtOcCustomOps;
ACL_FUNC_VISIBILITY void aclrtOcSetCustomOps(const aclrtOcCustomOps* ops);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_HOOKS_H_ */

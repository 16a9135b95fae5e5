/* The plain-C interface between the runtime and the library that runs custom
 * operators of Ascend C packages (libascendc.so, src/ascendc/aclnn_runtime.cc).
 * libascendc.so exports OcAscendcCustomOps() returning its table; libascendcl.so
 * is also handed the table when libascendc.so loads (aclrtOcSetCustomOps).
 * C declarations only: no C++ type or exception crosses it. Data types are
 * aclDataType values, formats aclFormat values. Every call that can fail
 * returns 0 or an aclError and writes a NUL-terminated message of at most
 * msg_len bytes into msg. */
#ifndef OPENCANN_OPS_CUSTOM_OP_ABI_H_
#define OPENCANN_OPS_CUSTOM_OP_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most dimensions a custom operator's tensor has (aclCreateTensor's limit). */
#define OC_CUSTOM_OP_MAX_DIMS 25

typedef struct OcOpTensor {
  const int64_t* dims;
  size_t num_dims;
  int32_t dtype;  /* aclDataType; -1 (ACL_DT_UNDEFINED): an omitted optional input */
  int32_t format; /* aclFormat */
  void* data;     /* NULL in descriptions (infer, prepare) */
  size_t size;
} OcOpTensor;

typedef struct OcOpAttr {
  const char* name;
  int32_t kind; /* 0 int (and bool), 1 float, 2 string, 3 ints, 4 floats */
  int64_t i;
  float f;
  const char* s;
  const int64_t* ints;
  const float* floats;
  size_t count;
} OcOpAttr;

/* An inferred output: the callee writes num_dims dimensions into dims (room
 * for OC_CUSTOM_OP_MAX_DIMS) and the data type. */
typedef struct OcOpInferred {
  int64_t dims[OC_CUSTOM_OP_MAX_DIMS];
  size_t num_dims;
  int32_t dtype;
} OcOpInferred;

typedef struct OcCustomOps {
  /* Nonzero when a loaded package defines op_type. */
  int (*has)(const char* op_type);
  /* Queues the operator on the stream (aclopExecuteV2 and friends). */
  int32_t (*run)(const char* op_type, const OcOpTensor* inputs, size_t num_inputs, const OcOpTensor* outputs,
                 size_t num_outputs, const OcOpAttr* attrs, size_t num_attrs, void* stream, char* msg,
                 size_t msg_len);
  /* The operator's shape and type inference (graph compilation): inputs are
   * descriptions (data may be NULL), outputs[num_outputs] receive the result. */
  int32_t (*infer)(const char* op_type, const OcOpTensor* inputs, size_t num_inputs, const OcOpAttr* attrs,
                   size_t num_attrs, OcOpInferred* outputs, size_t num_outputs, char* msg, size_t msg_len);
  /* Checks the tensors (descriptions) against the definition and runs the
   * tiling once, for a node of fixed shapes: returns a handle (NULL on failure)
   * and the workspace bytes each launch needs. */
  void* (*prepare)(const char* op_type, const OcOpTensor* inputs, size_t num_inputs, const OcOpTensor* outputs,
                   size_t num_outputs, const OcOpAttr* attrs, size_t num_attrs, uint64_t* workspace_bytes,
                   char* msg, size_t msg_len);
  /* Runs a prepared operator now on the calling thread (its blocks on the
   * thread pool): the data pointers in node order, and a workspace of the
   * prepared size. Safe to call concurrently on one handle. */
  int32_t (*launch)(void* prepared, const void* const* inputs, size_t num_inputs, void* const* outputs,
                    size_t num_outputs, void* workspace, char* msg, size_t msg_len);
  void (*release)(void* prepared);
} OcCustomOps;

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_OPS_CUSTOM_OP_ABI_H_ */

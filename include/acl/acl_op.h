/*
 * OpenCANN: single-operator execution (the AscendCL aclop* API) on the CPU.
 *
 * An operator is named by its ONNX op type in the default domain ("Add",
 * "Conv", "Softmax", ...: the ops of docs/operators.md, at the latest opset
 * each implements, ONNX attribute names) or by one of the CANN op types listed
 * in docs/single_op.md, whose attributes are translated ("Conv2D", "MatMul"
 * with transpose_x1/transpose_x2, "BatchMatMul", "Cast" with dst_type,
 * "SoftmaxV2", "ReduceSumD", "TransposeD", "ConcatD", "RealDiv", ...).
 *
 * Shapes are inferred from the input descriptions; output descriptions must
 * agree (aclopExecuteV2 fills in the dims of an output desc given with -1
 * dims). An input whose value decides a shape must be made constant with
 * aclSetTensorConst. An absent optional input is a desc of type
 * ACL_DT_UNDEFINED. Compilation happens on first use and is cached per
 * (op type, descriptions, attributes), OPENCANN_OP_CACHE_SIZE entries (default
 * 64); aclopCompile fills the cache ahead, aclopCreateHandle keeps one
 * compiled operator for aclopExecWithHandle. Execution is asynchronous on the
 * given stream (NULL: the default stream), as for models.
 *
 * Offline: atc --singleop=ops.json --output=DIR writes one .om per operator;
 * aclopSetModelDir(DIR) / aclopLoad load them (ops not loaded still compile on
 * first use). Not supported (ACL_ERROR_FEATURE_UNSUPPORTED with a message):
 * NHWC data formats for Conv2D, unknown dims in input descriptions.
 */
#ifndef OPENCANN_ACL_ACL_OP_H_
#define OPENCANN_ACL_ACL_OP_H_

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclopAttr aclopAttr;
typedef struct aclopHandle aclopHandle;

typedef enum aclopEngineType {
  ACL_ENGINE_SYS,
  ACL_ENGINE_AICORE,
  ACL_ENGINE_VECTOR
} aclopEngineType;

typedef enum aclopCompileType {
  ACL_COMPILE_SYS,
  ACL_COMPILE_UNREGISTERED
} aclopCompileType;

typedef enum aclOpCompileFlag {
  ACL_OP_COMPILE_DEFAULT,
  ACL_OP_COMPILE_FUZZ
} aclOpCompileFlag;

/* Attributes: a name -> value set; setting a name again replaces its value.
 * Every setter returns ACL_ERROR_INVALID_PARAM for a NULL or unknown attr, a
 * NULL name, or a NULL array with a positive count. */
ACL_FUNC_VISIBILITY aclopAttr *aclopCreateAttr(void);
ACL_FUNC_VISIBILITY void aclopDestroyAttr(const aclopAttr *attr);
ACL_FUNC_VISIBILITY aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues,
                                                  const uint8_t *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues,
                                                 const int64_t *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues,
                                                   const float *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListString(aclopAttr *attr, const char *attrName, int numValues,
                                                    const char **values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListDataType(aclopAttr *attr, const char *attrName, int numValues,
                                                      const aclDataType values[]);
/* Stored flattened (ONNX attributes have no list of lists). */
ACL_FUNC_VISIBILITY aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists,
                                                     const int *numValues, const int64_t *const values[]);

/* Runs `opType` on the stream (asynchronous). Errors: ACL_ERROR_OP_NOT_FOUND
 * for an unknown op type, ACL_ERROR_OP_INPUT_NOT_MATCH /
 * ACL_ERROR_OP_OUTPUT_NOT_MATCH / ACL_ERROR_OP_ATTR_NOT_MATCH when the
 * descriptions or attributes do not fit the op (the message says how),
 * ACL_ERROR_INVALID_PARAM for bad arguments or buffers smaller than their
 * tensors. */
ACL_FUNC_VISIBILITY aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                            aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                            aclDataBuffer *outputs[], aclopAttr *attr, aclrtStream stream);
/* The older form: output descs are not updated. */
ACL_FUNC_VISIBILITY aclError aclopExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                          const aclDataBuffer *const inputs[], int numOutputs,
                                          const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                          const aclopAttr *attr, aclrtStream stream);

/* Compiles the operator into the cache (engineType, compileFlag and opPath
 * are accepted and ignored: every op compiles for the CPU). */
ACL_FUNC_VISIBILITY aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                          int numOutputs, const aclTensorDesc *const outputDesc[],
                                          const aclopAttr *attr, aclopEngineType engineType,
                                          aclopCompileType compileFlag, const char *opPath);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(const char *opType, int numInputs,
                                                    const aclTensorDesc *const inputDesc[],
                                                    const aclDataBuffer *const inputs[], int numOutputs,
                                                    const aclTensorDesc *const outputDesc[],
                                                    aclDataBuffer *const outputs[], const aclopAttr *attr,
                                                    aclopEngineType engineType, aclopCompileType compileFlag,
                                                    const char *opPath, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                                      aclDataBuffer *inputs[], int numOutputs,
                                                      aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
                                                      aclopAttr *attr, aclopEngineType engineType,
                                                      aclopCompileType compileFlag, const char *opPath,
                                                      aclrtStream stream);
/* Accepted; compilation is the same whatever the flag. */
ACL_FUNC_VISIBILITY aclError aclopSetCompileFlag(aclOpCompileFlag flag);

/* A compiled operator for repeated runs with the same descriptions. */
ACL_FUNC_VISIBILITY aclError aclopCreateHandle(const char *opType, int numInputs,
                                               const aclTensorDesc *const inputDesc[], int numOutputs,
                                               const aclTensorDesc *const outputDesc[], const aclopAttr *opAttr,
                                               aclopHandle **handle);
ACL_FUNC_VISIBILITY void aclopDestroyHandle(aclopHandle *handle);
ACL_FUNC_VISIBILITY aclError aclopExecWithHandle(aclopHandle *handle, int numInputs,
                                                 const aclDataBuffer *const inputs[], int numOutputs,
                                                 aclDataBuffer *const outputs[], aclrtStream stream);

/* Single-op models from atc --singleop: every .om of the directory / one from
 * memory. ACL_ERROR_PARSE_MODEL for a file that is not a single-op model,
 * ACL_ERROR_READ_MODEL_FAILURE for an unreadable one. */
ACL_FUNC_VISIBILITY aclError aclopSetModelDir(const char *modelDir);
ACL_FUNC_VISIBILITY aclError aclopLoad(const void *model, size_t modelSize);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_ACL_OP_H_ */

/* OpenCANN: what the generated aclnnXxx functions of a custom-operator package
 * call (tools/ascendc/opp_build.py writes them). Not for applications: use the
 * generated aclnn_<op>.h. */
#ifndef OPENCANN_ACLNN_OC_OP_CALL_H_
#define OPENCANN_ACLNN_OC_OP_CALL_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

enum OcAclnnAttrKind { OC_ATTR_BOOL = 1, OC_ATTR_INT, OC_ATTR_FLOAT, OC_ATTR_STRING, OC_ATTR_LIST_INT,
                       OC_ATTR_LIST_FLOAT };
typedef struct OcAclnnAttr {
  int kind;
  bool b;
  int64_t i;
  double f;
  const char *s;
  const aclIntArray *li;
  const aclFloatArray *lf;
} OcAclnnAttr;

/* Checks the tensors against the operator's definition, infers and checks the
 * outputs, runs its tiling function; *workspaceSize and *executor for the
 * launch. `api` names the calling function in messages. */
ACL_FUNC_VISIBILITY aclnnStatus OcAclnnPrepare(const char *api, const char *opType, const aclTensor *const *inputs,
                                               size_t numInputs, const aclTensor *const *outputs, size_t numOutputs,
                                               const OcAclnnAttr *attrs, size_t numAttrs, uint64_t *workspaceSize,
                                               aclOpExecutor **executor);
/* Queues the prepared kernel on the stream; the executor is released after it ran. */
ACL_FUNC_VISIBILITY aclnnStatus OcAclnnRun(const char *api, void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACLNN_OC_OP_CALL_H_ */

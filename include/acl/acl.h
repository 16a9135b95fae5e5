/*
 * OpenCANN: umbrella header of the AscendCL-compatible C API, plus process
 * initialisation. Link with -lascendcl.
 *
 * Environment:
 *   ASCEND_GLOBAL_LOG_LEVEL  0 debug, 1 info, 2 warning, 3 error, 4 off
 *                            (default: off). Log lines go to stderr.
 *   OPENCANN_NUM_THREADS     CPU threads used inside one model execution
 *                            (default: all hardware threads); see also
 *                            aclrtSetOpExecuteThreads.
 *   OPENCANN_PROF_DIR        set by the msprof tool: aclInit starts recording a
 *                            profile (OPENCANN_PROF_MASK: ACL_PROF_* bits,
 *                            default all) and aclFinalize or exit writes it
 *                            there; see acl_prof.h and docs/profiling.md.
 *   OPENCANN_PROFILE_NODES   1: per-op-type and slowest-node times on stderr at
 *                            exit (N > 1: the N slowest nodes).
 */
#ifndef OPENCANN_ACL_ACL_H_
#define OPENCANN_ACL_ACL_H_

#include "acl_base.h"
#include "acl_mdl.h"
#include "acl_op.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAJOR_VERSION 0
#define ACL_MINOR_VERSION 1
#define ACL_PATCH_VERSION 0

/* Initialises the library for this process. `configPath` may be NULL or name a
 * JSON file holding one object (its keys are accepted and currently unused).
 * Returns ACL_ERROR_REPEAT_INITIALIZE when already initialised,
 * ACL_ERROR_INVALID_FILE when the file cannot be read and ACL_ERROR_PARSE_FILE
 * when it is not a JSON object (the message gives the byte offset). After
 * aclFinalize the library may be initialised again. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
/* Releases everything the process still holds: finishes and destroys all
 * streams, destroys contexts and events, unloads models and frees memory from
 * aclrtMalloc/aclrtMallocHost. ACL_ERROR_UNINITIALIZE when aclInit was never
 * called; ACL_ERROR_REPEAT_FINALIZE when already finalised. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
/* Writes the library version (ACL_*_VERSION). ACL_ERROR_INVALID_PARAM for a
 * NULL pointer. Needs no aclInit. */
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_ACL_H_ */

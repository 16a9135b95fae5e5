/*
 * OpenCANN: the AscendCL profiling API (aclprof*). A program profiles a part
 * of its own run: aclprofInit names the output directory, aclprofStart and
 * aclprofStop bracket what is recorded (any number of times), and
 * aclprofFinalize writes the reports into <profilerResultPath>/PROF_<time>/:
 * op_summary_<time>.csv, op_statistic_<time>.csv, api_statistic_<time>.csv,
 * msprof_<time>.json (timeline, Chrome trace format) and report.html.
 * docs/profiling.md describes the files. To profile an unchanged program, run
 * it under the msprof tool instead.
 *
 * On the CPU device the data types recorded are ACL_PROF_ACL_API (API call
 * times, memory copies) and ACL_PROF_TASK_TIME / ACL_PROF_TASK_TIME_L0 (one
 * record per executed model node, with shapes, data types, formats and FLOPs).
 * The other bits are accepted and record nothing (there are no AI Cores,
 * caches or collectives to sample). Call between aclInit and aclFinalize.
 */
#ifndef OPENCANN_ACL_ACL_PROF_H_
#define OPENCANN_ACL_ACL_PROF_H_

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dataTypeConfig bits for aclprofCreateConfig (CANN's values). */
#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL
#define ACL_PROF_TASK_TIME_L0 0x0800ULL
#define ACL_PROF_TASK_MEMORY 0x1000ULL
#define ACL_PROF_OP_ATTR 0x4000ULL

#define ACL_PROF_MAX_OP_NAME_LEN 257
#define ACL_PROF_MAX_OP_TYPE_LEN 65

typedef enum {
  ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
  ACL_AICORE_PIPE_UTILIZATION = 1,
  ACL_AICORE_MEMORY_BANDWIDTH = 2,
  ACL_AICORE_L0B_AND_WIDTH = 3,
  ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
  ACL_AICORE_MEMORY_UB = 5,
  ACL_AICORE_L2_CACHE = 6,
  ACL_AICORE_PIPE_EXECUTE_UTILIZATION = 7,
  ACL_AICORE_MEMORY_ACCESS = 8,
  ACL_AICORE_NONE = 0xFF
} aclprofAicoreMetrics;

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;

/* Sets the directory the reports go to (created if missing); `length` is
 * strlen(profilerResultPath). ACL_ERROR_INVALID_PARAM for a NULL or empty
 * path, a length that does not match, or a directory that cannot be created;
 * ACL_ERROR_REPEAT_INITIALIZE when already initialised (without
 * aclprofFinalize); ACL_ERROR_UNINITIALIZE before aclInit. */
ACL_FUNC_VISIBILITY aclError aclprofInit(const char *profilerResultPath, size_t length);

/* Stops a session still running, writes the reports of everything recorded
 * since aclprofInit, and forgets the directory. ACL_ERROR_PROF_NOT_RUN when
 * aclprofInit was not called; ACL_ERROR_PROFILING_FAILURE when the files
 * cannot be written (the message names the path). */
ACL_FUNC_VISIBILITY aclError aclprofFinalize(void);

/* Starts recording what `profilerConfig` selects. ACL_ERROR_PROF_NOT_RUN
 * before aclprofInit; ACL_ERROR_PROF_ALREADY_RUN while a session runs;
 * ACL_ERROR_INVALID_PARAM for a NULL or destroyed config. */
ACL_FUNC_VISIBILITY aclError aclprofStart(const aclprofConfig *profilerConfig);

/* Makes a config (the caller owns it; free with aclprofDestroyConfig).
 * deviceIdList holds deviceNums device ids (only device 0 exists here);
 * aicoreMetrics is any aclprofAicoreMetrics value; aicoreEvents must be NULL;
 * dataTypeConfig ORs ACL_PROF_* bits. Returns NULL (the reason in
 * aclGetRecentErrMsg) for a bad device list, metric, or unknown bits. */
ACL_FUNC_VISIBILITY aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                       aclprofAicoreMetrics aicoreMetrics,
                                                       const aclprofAicoreEvents *aicoreEvents,
                                                       uint64_t dataTypeConfig);

/* Frees a config. ACL_ERROR_INVALID_PARAM for NULL or a config not made by
 * aclprofCreateConfig (or already destroyed). */
ACL_FUNC_VISIBILITY aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);

/* Stops recording; the data is kept for aclprofFinalize. `profilerConfig`
 * must be the config the session was started with. ACL_ERROR_PROF_NOT_RUN
 * when no session runs; ACL_ERROR_INVALID_PARAM for another config. */
ACL_FUNC_VISIBILITY aclError aclprofStop(const aclprofConfig *profilerConfig);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_ACL_ACL_PROF_H_ */

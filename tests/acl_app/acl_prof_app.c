/* An AscendCL application for the profiling tests: loads a model, runs it
 * RUNS times with aclmdlExecute and prints its own wall-clock measurement of
 * the runs, so a test can compare the profile's node times with it.
 *
 * Usage: acl_prof_app MODEL.om RUNS [PROF_DIR]
 *        acl_prof_app --misuse    (error codes of the aclprof calls)
 * Without PROF_DIR the program does nothing about profiling (msprof profiles
 * it from outside). With PROF_DIR it profiles the runs itself through the
 * aclprof API (aclprofInit / CreateConfig / Start ... Stop / Finalize).
 * Prints "run_ms <r> <ms>" per run and "total_run_ms <ms>". */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl_prof.h"
#include "acl_check.h"

#define MAX_IO 16

static double NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int RemoveEntry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* The aclprof calls out of order or with bad arguments return the codes
 * acl_prof.h documents. The profile they leave (the API calls made while it
 * ran) goes to a directory of our own, removed at the end. */
static int Misuse(void) {
  uint32_t dev0[1] = {0}, dev7[1] = {7};
  aclprofConfig* cfg;
  char dir[] = "/tmp/acl_prof_misuse_XXXXXX";
  int rc;
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  EXPECT_CODE(aclprofInit("/tmp", 4), ACL_ERROR_UNINITIALIZE);
  EXPECT_OK(aclInit(NULL));
  EXPECT_CODE(aclprofInit(NULL, 0), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclprofInit("/tmp", 3), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("length");
  EXPECT_TRUE(aclprofCreateConfig(dev7, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME) == NULL);
  EXPECT_MSG_HAS("deviceIdList[0]");
  EXPECT_TRUE(aclprofCreateConfig(NULL, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME) == NULL);
  EXPECT_TRUE(aclprofCreateConfig(dev0, 1, (aclprofAicoreMetrics)77, NULL, ACL_PROF_TASK_TIME) == NULL);
  EXPECT_TRUE(aclprofCreateConfig(dev0, 1, ACL_AICORE_NONE, NULL, 1ULL << 40) == NULL);
  EXPECT_MSG_HAS("unknown bits");
  cfg = aclprofCreateConfig(dev0, 1, ACL_AICORE_PIPE_UTILIZATION, NULL,
                            ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS);
  EXPECT_TRUE(cfg != NULL);
  EXPECT_CODE(aclprofStart(cfg), ACL_ERROR_PROF_NOT_RUN);
  EXPECT_CODE(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
  EXPECT_CODE(aclprofStart(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclprofInit(dir, strlen(dir)));
  EXPECT_CODE(aclprofInit(dir, strlen(dir)), ACL_ERROR_REPEAT_INITIALIZE);
  EXPECT_CODE(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN);
  EXPECT_OK(aclprofStart(cfg));
  EXPECT_CODE(aclprofStart(cfg), ACL_ERROR_PROF_ALREADY_RUN);
  EXPECT_CODE(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("aclprofStop");
  EXPECT_OK(aclprofStop(cfg));
  EXPECT_OK(aclprofDestroyConfig(cfg));
  EXPECT_CODE(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclprofFinalize());
  EXPECT_OK(aclFinalize());
  rc = Summary("acl_prof_app");
  nftw(dir, RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  return rc;
}

int main(int argc, char** argv) {
  uint32_t model_id = 0;
  aclmdlDesc* desc = NULL;
  aclmdlDataset* input = NULL;
  aclmdlDataset* output = NULL;
  aclprofConfig* config = NULL;
  void* dev_in[MAX_IO] = {0};
  void* dev_out[MAX_IO] = {0};
  size_t n_in, n_out, i;
  int runs, r;
  double total = 0;
  const char* prof_dir;
  if (argc == 2 && strcmp(argv[1], "--misuse") == 0) return Misuse();
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL.om RUNS [PROF_DIR] | --misuse\n", argv[0]);
    return 2;
  }
  runs = atoi(argv[2]);
  prof_dir = argc > 3 ? argv[3] : NULL;
  EXPECT_OK(aclInit(NULL));
  EXPECT_OK(aclrtSetDevice(0));
  if (prof_dir) {
    uint32_t devices[1] = {0};
    EXPECT_OK(aclprofInit(prof_dir, strlen(prof_dir)));
    config = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, NULL, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
    EXPECT_TRUE(config != NULL);
  }
  EXPECT_OK(aclmdlLoadFromFile(argv[1], &model_id));
  desc = aclmdlCreateDesc();
  EXPECT_OK(aclmdlGetDesc(desc, model_id));
  n_in = aclmdlGetNumInputs(desc);
  n_out = aclmdlGetNumOutputs(desc);
  if (n_in > MAX_IO || n_out > MAX_IO) return 2;
  input = aclmdlCreateDataset();
  output = aclmdlCreateDataset();
  for (i = 0; i < n_in; ++i) {
    size_t bytes = aclmdlGetInputSizeByIndex(desc, i);
    void* host = NULL;
    size_t k;
    EXPECT_OK(aclrtMalloc(&dev_in[i], bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMallocHost(&host, bytes ? bytes : 1));
    /* Small normal floats for float inputs: random bytes would make denormals
     * and slow the kernels down. */
    if (aclmdlGetInputDataType(desc, i) == ACL_FLOAT) {
      for (k = 0; k < bytes / 4; ++k) ((float*)host)[k] = (float)((int)(k % 13) - 6) * 0.125f;
    } else {
      for (k = 0; k < bytes; ++k) ((unsigned char*)host)[k] = (unsigned char)(k % 7);
    }
    EXPECT_OK(aclrtMemcpy(dev_in[i], bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_OK(aclrtFreeHost(host));
    EXPECT_OK(aclmdlAddDatasetBuffer(input, aclCreateDataBuffer(dev_in[i], bytes)));
  }
  for (i = 0; i < n_out; ++i) {
    size_t bytes = aclmdlGetOutputSizeByIndex(desc, i);
    EXPECT_OK(aclrtMalloc(&dev_out[i], bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclmdlAddDatasetBuffer(output, aclCreateDataBuffer(dev_out[i], bytes)));
  }
  if (config) EXPECT_OK(aclprofStart(config));
  for (r = 0; r < runs; ++r) {
    double t0 = NowMs(), ms;
    EXPECT_OK(aclmdlExecute(model_id, input, output));
    ms = NowMs() - t0;
    total += ms;
    printf("run_ms %d %.4f\n", r + 1, ms);
  }
  printf("total_run_ms %.4f\n", total);
  if (config) {
    EXPECT_OK(aclprofStop(config));
    EXPECT_OK(aclprofDestroyConfig(config));
    EXPECT_OK(aclprofFinalize());
  }
  for (i = 0; i < aclmdlGetDatasetNumBuffers(input); ++i) aclDestroyDataBuffer(aclmdlGetDatasetBuffer(input, i));
  for (i = 0; i < aclmdlGetDatasetNumBuffers(output); ++i) aclDestroyDataBuffer(aclmdlGetDatasetBuffer(output, i));
  EXPECT_OK(aclmdlDestroyDataset(input));
  EXPECT_OK(aclmdlDestroyDataset(output));
  for (i = 0; i < n_in; ++i) EXPECT_OK(aclrtFree(dev_in[i]));
  for (i = 0; i < n_out; ++i) EXPECT_OK(aclrtFree(dev_out[i]));
  EXPECT_OK(aclmdlDestroyDesc(desc));
  EXPECT_OK(aclmdlUnload(model_id));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
  return Summary("acl_prof_app");
}

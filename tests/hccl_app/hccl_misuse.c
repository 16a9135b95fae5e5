/* HCCL API misuse, checked in one process with a one-rank communicator: every
 * bad argument returns the documented HcclResult (HCCL_E_PTR for NULL
 * pointers, HCCL_E_PARA for values out of range or destroyed handles,
 * HCCL_E_NOT_SUPPORT for type/reduction pairs HCCL does not reduce), nothing
 * crashes, and the valid calls around them still work. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hccl/hccl.h"

static int g_checks = 0, g_failures = 0;

#define EXPECT_RC(call, want)                                                                        \
  do {                                                                                               \
    int rc_ = (int)(call);                                                                           \
    ++g_checks;                                                                                      \
    if (rc_ != (int)(want)) {                                                                        \
      ++g_failures;                                                                                  \
      fprintf(stderr, "FAIL line %d: %s returned %d, expected %d\n", __LINE__, #call, rc_, (int)(want)); \
    }                                                                                                \
  } while (0)
#define EXPECT_OK(call) EXPECT_RC(call, HCCL_SUCCESS)
#define EXPECT_TRUE(cond)                                                 \
  do {                                                                    \
    ++g_checks;                                                           \
    if (!(cond)) {                                                        \
      ++g_failures;                                                       \
      fprintf(stderr, "FAIL line %d: expected %s\n", __LINE__, #cond);    \
    }                                                                     \
  } while (0)

int main(void) {
  HcclRootInfo info;
  HcclComm comm = NULL;
  /* Before any device is set: the communicator needs one. */
  EXPECT_OK(aclInit(NULL));
  EXPECT_OK(HcclGetRootInfo(&info));
  EXPECT_RC(HcclCommInitRootInfo(1, &info, 0, &comm), HCCL_E_UNAVAIL);
  EXPECT_OK(aclrtSetDevice(0));

  EXPECT_RC(HcclGetRootInfo(NULL), HCCL_E_PTR);
  EXPECT_RC(HcclCommInitRootInfo(1, NULL, 0, &comm), HCCL_E_PTR);
  EXPECT_RC(HcclCommInitRootInfo(1, &info, 0, NULL), HCCL_E_PTR);
  EXPECT_RC(HcclCommInitRootInfo(0, &info, 0, &comm), HCCL_E_PARA);
  EXPECT_RC(HcclCommInitRootInfo(2, &info, 2, &comm), HCCL_E_PARA);
  HcclRootInfo junk;
  memset(&junk, 0x5a, sizeof junk);
  EXPECT_RC(HcclCommInitRootInfo(1, &junk, 0, &comm), HCCL_E_PARA);
  EXPECT_OK(HcclCommInitRootInfo(1, &info, 0, &comm));

  HcclCommConfig bad_config;
  memset(&bad_config, 0, sizeof bad_config);
  HcclComm other = NULL;
  EXPECT_RC(HcclCommInitRootInfoConfig(1, &info, 0, &bad_config, &other), HCCL_E_PARA);
  EXPECT_RC(HcclCommInitClusterInfo("/nonexistent/rank_table.json", 0, &other), HCCL_E_OPEN_FILE_FAILURE);
  EXPECT_RC(HcclCommInitClusterInfo(NULL, 0, &other), HCCL_E_PTR);

  uint32_t n = 0, r = 7;
  EXPECT_OK(HcclGetRankSize(comm, &n));
  EXPECT_OK(HcclGetRankId(comm, &r));
  EXPECT_TRUE(n == 1 && r == 0);
  EXPECT_RC(HcclGetRankSize(comm, NULL), HCCL_E_PTR);
  char name[COMM_NAME_MAX_LENGTH];
  EXPECT_OK(HcclGetCommName(comm, name));
  EXPECT_TRUE(strlen(name) > 0);
  HcclComm found = NULL;
  EXPECT_OK(HcclCommGetHandleWithName(name, &found));
  EXPECT_TRUE(found == comm);
  EXPECT_RC(HcclCommGetHandleWithName("no such communicator", &found), HCCL_E_NOT_FOUND);

  aclrtStream stream;
  EXPECT_TRUE(aclrtCreateStream(&stream) == ACL_SUCCESS);
  float* buf = NULL;
  EXPECT_TRUE(aclrtMalloc((void**)&buf, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
  float ones[64];
  for (int i = 0; i < 64; ++i) ones[i] = 1.0f;
  EXPECT_TRUE(aclrtMemcpy(buf, sizeof ones, ones, sizeof ones, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);

  EXPECT_RC(HcclAllReduce(NULL, buf, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream), HCCL_E_PTR);
  EXPECT_RC(HcclAllReduce(buf, NULL, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream), HCCL_E_PTR);
  EXPECT_RC(HcclAllReduce(buf, buf, 64, (HcclDataType)99, HCCL_REDUCE_SUM, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclAllReduce(buf, buf, 64, HCCL_DATA_TYPE_FP32, (HcclReduceOp)9, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclAllReduce(buf, buf, 4, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM, comm, stream), HCCL_E_NOT_SUPPORT);
  EXPECT_RC(HcclAllReduce(buf, buf, 4, HCCL_DATA_TYPE_FP8E4M3, HCCL_REDUCE_MAX, comm, stream), HCCL_E_NOT_SUPPORT);
  EXPECT_RC(HcclAllReduce(buf, buf, UINT64_MAX / 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclBroadcast(buf, 64, HCCL_DATA_TYPE_FP32, 1, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclReduce(buf, buf, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 3, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclScatter(buf, buf, 64, HCCL_DATA_TYPE_FP32, 5, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclSend(buf, 64, HCCL_DATA_TYPE_FP32, 0, comm, stream), HCCL_E_PARA); /* to itself */
  EXPECT_RC(HcclRecv(buf, 64, HCCL_DATA_TYPE_FP32, 4, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclAlltoAllV(buf, NULL, NULL, HCCL_DATA_TYPE_FP32, buf, NULL, NULL, HCCL_DATA_TYPE_FP32, comm, stream),
            HCCL_E_PTR);
  EXPECT_RC(HcclAlltoAll(buf, 4, HCCL_DATA_TYPE_FP32, buf, 4, HCCL_DATA_TYPE_INT8, comm, stream), HCCL_E_PARA);
  HcclSendRecvItem item = {(HcclSendRecvType)7, buf, 4, HCCL_DATA_TYPE_FP32, 0};
  EXPECT_RC(HcclBatchSendRecv(&item, 1, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclAllReduce(buf, buf, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, NULL, stream), HCCL_E_PARA);
  EXPECT_RC(HcclAllGatherV(buf, 1, buf, NULL, NULL, HCCL_DATA_TYPE_FP32, comm, stream), HCCL_E_PTR);
  uint64_t one = 1, zero = 0, two = 2;
  EXPECT_RC(HcclAllGatherV(buf, 1, buf, &two, &zero, HCCL_DATA_TYPE_FP32, comm, stream), HCCL_E_PARA);
  EXPECT_RC(HcclReduceScatterV(buf, &one, &zero, buf, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream),
            HCCL_E_PARA);
  EXPECT_RC(HcclAlltoAllVC(buf, NULL, HCCL_DATA_TYPE_FP32, buf, HCCL_DATA_TYPE_FP32, comm, stream), HCCL_E_PTR);
  EXPECT_RC(HcclCommSuspend(comm), HCCL_E_NOT_SUPPORT);
  EXPECT_RC(HcclGroupEnd(), HCCL_E_UNAVAIL);

  /* The valid calls still work after all that: a one-rank all-reduce is the identity. */
  EXPECT_OK(HcclAllReduce(buf, buf, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  EXPECT_OK(HcclBarrier(comm, stream));
  EXPECT_TRUE(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
  float back[64];
  EXPECT_TRUE(aclrtMemcpy(back, sizeof back, buf, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
  EXPECT_TRUE(back[0] == 1.0f && back[63] == 1.0f);
  HcclResult async = HCCL_E_INTERNAL;
  EXPECT_OK(HcclGetCommAsyncError(comm, &async));
  EXPECT_TRUE(async == HCCL_SUCCESS);

  for (int code = 0; code <= 30; ++code) EXPECT_TRUE(HcclGetErrorString((HcclResult)code) != NULL);
  EXPECT_TRUE(strcmp(HcclGetErrorString(HCCL_E_TIMEOUT), "timeout") == 0);

  EXPECT_OK(HcclCommDestroy(comm));
  EXPECT_RC(HcclCommDestroy(comm), HCCL_E_PARA);
  EXPECT_RC(HcclGetRankSize(comm, &n), HCCL_E_PARA);
  EXPECT_RC(HcclAllReduce(buf, buf, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream), HCCL_E_PARA);

  int32_t devices[2] = {0, 0};
  HcclComm comms[2];
  EXPECT_RC(HcclCommInitAll(2, devices, comms), HCCL_E_PARA);
  EXPECT_RC(HcclCommInitAll(0, devices, comms), HCCL_E_PARA);
  EXPECT_RC(HcclCommInitAll(2, NULL, comms), HCCL_E_PTR);

  aclrtFree(buf);
  aclrtDestroyStream(stream);
  aclFinalize();
  if (g_failures) {
    fprintf(stderr, "hccl_misuse: %d of %d checks failed\n", g_failures, g_checks);
    return 1;
  }
  printf("hccl_misuse: PASS (%d checks)\n", g_checks);
  return 0;
}

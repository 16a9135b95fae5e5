/* Host callbacks: a report thread subscribes to a stream and runs callbacks in
 * aclrtProcessReport; blocking callbacks hold the stream back, and the stream's
 * order is kept. No model needed. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "acl_check.h"

static int g_stop = 0;
static aclrtContext g_ctx = NULL;

static void* ReportThread(void* arg) {
  (void)arg;
  aclrtSetCurrentContext(g_ctx);
  while (!__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) aclrtProcessReport(20);
  return NULL;
}

typedef struct {
  int order[64];
  int count;
} Log;

static void Append(void* user) {
  Log* log = (Log*)user;
  int n = __atomic_load_n(&log->count, __ATOMIC_ACQUIRE);
  log->order[n] = n;
  __atomic_store_n(&log->count, n + 1, __ATOMIC_RELEASE);
}

static void CheckBufferIsSeven(void* user) {
  unsigned char* host = (unsigned char*)user;
  /* The copy queued before this blocking callback must have finished. */
  host[1] = host[0] == 7 ? 1 : 2;
}

int main(void) {
  aclrtStream s = NULL;
  pthread_t tid;
  Log log;
  void* dev = NULL;
  unsigned char host[2] = {0, 0};
  int i;
  memset(&log, 0, sizeof log);
  REQUIRE_OK(aclInit(NULL));
  REQUIRE_OK(aclrtSetDevice(0));
  REQUIRE_OK(aclrtGetCurrentContext(&g_ctx));
  EXPECT_TRUE(aclrtGetSocName() != NULL && strncmp(aclrtGetSocName(), "OpenCANN-CPU", 12) == 0);
  REQUIRE_OK(aclrtCreateStreamWithConfig(&s, 0, 0));

  EXPECT_CODE(aclrtLaunchCallback(Append, &log, ACL_CALLBACK_BLOCK, s), ACL_ERROR_STREAM_NOT_SUBSCRIBE);
  EXPECT_CODE(aclrtProcessReport(10), ACL_ERROR_THREAD_NOT_SUBSCRIBE);
  EXPECT_CODE(aclrtSubscribeReport(1, NULL), ACL_ERROR_INVALID_PARAM);

  pthread_create(&tid, NULL, ReportThread, NULL);
  REQUIRE_OK(aclrtSubscribeReport((uint64_t)tid, s));
  EXPECT_CODE(aclrtSubscribeReport((uint64_t)tid, s), ACL_ERROR_REPEAT_SUBSCRIBE);
  EXPECT_CODE(aclrtLaunchCallback(NULL, &log, ACL_CALLBACK_BLOCK, s), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtLaunchCallback(Append, &log, (aclrtCallbackBlockType)5, s), ACL_ERROR_INVALID_PARAM);

  for (i = 0; i < 10; ++i) EXPECT_OK(aclrtLaunchCallback(Append, &log, ACL_CALLBACK_BLOCK, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_TRUE(log.count == 10);
  for (i = 0; i < log.count; ++i) EXPECT_TRUE(log.order[i] == i);

  REQUIRE_OK(aclrtMalloc(&dev, 1, ACL_MEM_MALLOC_HUGE_FIRST));
  REQUIRE_OK(aclrtMemset(dev, 1, 7, 1));
  EXPECT_OK(aclrtMemcpyAsync(host, 1, dev, 1, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT_OK(aclrtLaunchCallback(CheckBufferIsSeven, host, ACL_CALLBACK_BLOCK, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_TRUE(host[1] == 1);

  /* A non-blocking callback lets the stream finish before it has run. */
  EXPECT_OK(aclrtLaunchCallback(Append, &log, ACL_CALLBACK_NO_BLOCK, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  for (i = 0; i < 5000 && __atomic_load_n(&log.count, __ATOMIC_ACQUIRE) < 11; ++i) usleep(1000);
  EXPECT_CODE(aclrtUnSubscribeReport(12345, s), ACL_ERROR_STREAM_NOT_SUBSCRIBE);
  EXPECT_OK(aclrtUnSubscribeReport((uint64_t)tid, s));
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
  pthread_join(tid, NULL);
  EXPECT_TRUE(log.count == 11);

  EXPECT_OK(aclrtFree(dev));
  EXPECT_OK(aclrtDestroyStream(s));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
  return Summary("acl_callback");
}

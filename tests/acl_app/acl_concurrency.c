/* One loaded model executed concurrently: several threads, each with its own
 * stream (sharing the process's context), run the same model many times and
 * every result must equal a reference computed once up front. Also checks
 * cross-stream ordering with events (a copy on stream B waits for a record on
 * stream A) and a model loaded with caller work memory (aclmdlLoadFromMem +
 * aclmdlLoadFromFileWithMem).
 *
 * Usage: acl_concurrency MODEL.om [THREADS] [ITERATIONS] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"

#define MAX_IO 16

typedef struct {
  uint32_t model_id;
  aclmdlDesc* desc;
  aclrtContext context;
  const void* host_in[MAX_IO];
  const void* ref_out[MAX_IO];
  int iterations;
  int mismatches;
  int errors;
} Job;

static size_t NumIn(aclmdlDesc* d) { return aclmdlGetNumInputs(d); }
static size_t NumOut(aclmdlDesc* d) { return aclmdlGetNumOutputs(d); }

/* Builds device buffers for every input (filled from host_in) and output. */
static int MakeDatasets(Job* job, aclmdlDataset** in, aclmdlDataset** out) {
  size_t i;
  *in = aclmdlCreateDataset();
  *out = aclmdlCreateDataset();
  for (i = 0; i < NumIn(job->desc); ++i) {
    size_t bytes = aclmdlGetInputSizeByIndex(job->desc, i);
    void* dev = NULL;
    if (aclrtMalloc(&dev, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 0;
    if (bytes && aclrtMemcpy(dev, bytes, job->host_in[i], bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) return 0;
    aclmdlAddDatasetBuffer(*in, aclCreateDataBuffer(dev, bytes));
  }
  for (i = 0; i < NumOut(job->desc); ++i) {
    size_t bytes = aclmdlGetOutputSizeByIndex(job->desc, i);
    void* dev = NULL;
    if (aclrtMalloc(&dev, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 0;
    aclmdlAddDatasetBuffer(*out, aclCreateDataBuffer(dev, bytes));
  }
  return 1;
}

static void FreeDataset(aclmdlDataset* ds) {
  size_t i;
  for (i = 0; i < aclmdlGetDatasetNumBuffers(ds); ++i) {
    aclDataBuffer* b = aclmdlGetDatasetBuffer(ds, i);
    aclrtFree(aclGetDataBufferAddr(b));
    aclDestroyDataBuffer(b);
  }
  aclmdlDestroyDataset(ds);
}

/* 1 when every output in `out` equals the reference. */
static int Matches(Job* job, aclmdlDataset* out) {
  size_t i;
  int ok = 1;
  for (i = 0; i < NumOut(job->desc); ++i) {
    size_t bytes = aclmdlGetOutputSizeByIndex(job->desc, i);
    void* host = malloc(bytes ? bytes : 1);
    aclDataBuffer* b = aclmdlGetDatasetBuffer(out, i);
    if (aclrtMemcpy(host, bytes, aclGetDataBufferAddr(b), bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS ||
        memcmp(host, job->ref_out[i], bytes) != 0)
      ok = 0;
    free(host);
  }
  return ok;
}

static void* Worker(void* arg) {
  Job* job = (Job*)arg;
  aclrtStream stream = NULL;
  aclmdlDataset *in = NULL, *out = NULL;
  int it;
  /* A new thread has no current context until it sets one. */
  if (aclrtSetCurrentContext(job->context) != ACL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS ||
      !MakeDatasets(job, &in, &out)) {
    fprintf(stderr, "worker setup failed: %s\n", aclGetRecentErrMsg());
    job->errors++;
    return NULL;
  }
  for (it = 0; it < job->iterations; ++it) {
    if (aclmdlExecuteAsync(job->model_id, in, out, stream) != ACL_SUCCESS ||
        aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
      fprintf(stderr, "worker execution failed: %s\n", aclGetRecentErrMsg());
      job->errors++;
      break;
    }
    if (!Matches(job, out)) job->mismatches++;
  }
  FreeDataset(in);
  FreeDataset(out);
  aclrtDestroyStream(stream);
  return NULL;
}

static int CrossStreamOrdering(void) {
  enum { N = 1 << 20 };
  aclrtStream a = NULL, b = NULL;
  aclrtEvent ev = NULL;
  void *d1 = NULL, *d2 = NULL;
  unsigned char* host = (unsigned char*)malloc(N);
  int round, ok = 1;
  REQUIRE_OK(aclrtCreateStream(&a));
  REQUIRE_OK(aclrtCreateStream(&b));
  REQUIRE_OK(aclrtCreateEvent(&ev));
  REQUIRE_OK(aclrtMalloc(&d1, N, ACL_MEM_MALLOC_HUGE_FIRST));
  REQUIRE_OK(aclrtMalloc(&d2, N, ACL_MEM_MALLOC_HUGE_FIRST));
  for (round = 1; round <= 20; ++round) {
    /* A: fill d1, record. B: wait for the record, then copy d1 -> d2 -> host. */
    memset(host, round, N);
    REQUIRE_OK(aclrtMemcpyAsync(d1, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, a));
    REQUIRE_OK(aclrtRecordEvent(ev, a));
    REQUIRE_OK(aclrtStreamWaitEvent(b, ev));
    REQUIRE_OK(aclrtMemcpyAsync(d2, N, d1, N, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    REQUIRE_OK(aclrtSynchronizeStream(b));
    REQUIRE_OK(aclrtSynchronizeStream(a));
    REQUIRE_OK(aclrtMemcpy(host, N, d2, N, ACL_MEMCPY_DEVICE_TO_HOST));
    if (host[0] != round || host[N - 1] != round) ok = 0;
  }
  EXPECT_TRUE(ok);
  EXPECT_OK(aclrtSynchronizeDevice());
  EXPECT_OK(aclrtDestroyEvent(ev));
  EXPECT_OK(aclrtFree(d1));
  EXPECT_OK(aclrtFree(d2));
  EXPECT_OK(aclrtDestroyStream(a));
  EXPECT_OK(aclrtDestroyStream(b));
  free(host);
  return 0;
}

/* Loads from memory and with caller work memory; results must match. */
static int AlternativeLoads(const char* path, Job* ref) {
  FILE* f = fopen(path, "rb");
  long size;
  void* bytes;
  uint32_t id_mem = 0, id_work = 0;
  size_t work = 0, weight = 0, work2 = 0, weight2 = 0;
  void* work_mem = NULL;
  Job job = *ref;
  aclmdlDataset *in = NULL, *out = NULL;
  if (!f) return 1;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = malloc((size_t)size);
  if (fread(bytes, 1, (size_t)size, f) != (size_t)size) { fclose(f); return 1; }
  fclose(f);
  REQUIRE_OK(aclmdlLoadFromMem(bytes, (size_t)size, &id_mem));
  EXPECT_OK(aclmdlQuerySizeFromMem(bytes, (size_t)size, &work2, &weight2));
  free(bytes); /* the library keeps its own copy */
  EXPECT_OK(aclmdlQuerySize(path, &work, &weight));
  EXPECT_TRUE(work == work2 && weight == weight2);
  REQUIRE_OK(aclrtMalloc(&work_mem, work ? work : 64, ACL_MEM_MALLOC_HUGE_FIRST));
  REQUIRE_OK(aclmdlLoadFromFileWithMem(path, &id_work, work_mem, work ? work : 64, NULL, 0));
  if (!MakeDatasets(&job, &in, &out)) return 1;
  job.model_id = id_mem;
  EXPECT_OK(aclmdlExecute(id_mem, in, out));
  EXPECT_TRUE(Matches(&job, out));
  EXPECT_OK(aclmdlExecute(id_work, in, out));
  EXPECT_TRUE(Matches(&job, out));
  FreeDataset(in);
  FreeDataset(out);
  EXPECT_OK(aclmdlUnload(id_mem));
  EXPECT_OK(aclmdlUnload(id_work));
  EXPECT_OK(aclrtFree(work_mem));
  return 0;
}

int main(int argc, char** argv) {
  int threads = argc > 2 ? atoi(argv[2]) : 4;
  int iterations = argc > 3 ? atoi(argv[3]) : 25;
  Job base;
  Job jobs[32];
  pthread_t tids[32];
  aclmdlDataset *in = NULL, *out = NULL;
  size_t i;
  int t;
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.om [THREADS] [ITERATIONS]\n", argv[0]);
    return 2;
  }
  if (threads < 1 || threads > 32) threads = 4;
  memset(&base, 0, sizeof base);
  base.iterations = iterations;
  REQUIRE_OK(aclInit(NULL));
  REQUIRE_OK(aclrtSetDevice(0));
  REQUIRE_OK(aclrtGetCurrentContext(&base.context));
  REQUIRE_OK(aclmdlLoadFromFile(argv[1], &base.model_id));
  base.desc = aclmdlCreateDesc();
  REQUIRE_OK(aclmdlGetDesc(base.desc, base.model_id));
  if (NumIn(base.desc) > MAX_IO || NumOut(base.desc) > MAX_IO) return 1;
  for (i = 0; i < NumIn(base.desc); ++i) {
    size_t bytes = aclmdlGetInputSizeByIndex(base.desc, i), k;
    unsigned char* h = (unsigned char*)malloc(bytes ? bytes : 1);
    aclDataType dt = aclmdlGetInputDataType(base.desc, i);
    if (dt == ACL_FLOAT)
      for (k = 0; k < bytes / 4; ++k) ((float*)h)[k] = (float)((int)(k % 13) - 6) * 0.5f;
    else
      memset(h, 0, bytes);
    base.host_in[i] = h;
  }
  /* Reference: one plain synchronous execution. */
  if (!MakeDatasets(&base, &in, &out)) return 1;
  REQUIRE_OK(aclmdlExecute(base.model_id, in, out));
  for (i = 0; i < NumOut(base.desc); ++i) {
    size_t bytes = aclmdlGetOutputSizeByIndex(base.desc, i);
    void* h = malloc(bytes ? bytes : 1);
    REQUIRE_OK(aclrtMemcpy(h, bytes, aclGetDataBufferAddr(aclmdlGetDatasetBuffer(out, i)), bytes,
                           ACL_MEMCPY_DEVICE_TO_HOST));
    base.ref_out[i] = h;
  }
  FreeDataset(in);
  FreeDataset(out);

  for (t = 0; t < threads; ++t) {
    jobs[t] = base;
    pthread_create(&tids[t], NULL, Worker, &jobs[t]);
  }
  for (t = 0; t < threads; ++t) {
    pthread_join(tids[t], NULL);
    EXPECT_TRUE(jobs[t].errors == 0);
    EXPECT_TRUE(jobs[t].mismatches == 0);
  }
  if (CrossStreamOrdering()) return 1;
  if (AlternativeLoads(argv[1], &base)) return 1;

  for (i = 0; i < NumIn(base.desc); ++i) free((void*)base.host_in[i]);
  for (i = 0; i < NumOut(base.desc); ++i) free((void*)base.ref_out[i]);
  EXPECT_OK(aclmdlDestroyDesc(base.desc));
  EXPECT_OK(aclmdlUnload(base.model_id));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
  return Summary("acl_concurrency");
}

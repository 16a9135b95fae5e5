/* API misuse: every entry point given NULL, out-of-range or destroyed
 * arguments, the wrong copy direction, or called before aclInit / after
 * aclFinalize must return its documented code and leave a non-empty
 * aclGetRecentErrMsg. Usage: acl_misuse [MODEL.om] (model checks need it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"

static void BeforeInit(void) {
  void* p = NULL;
  uint32_t id = 0;
  aclrtStream s = NULL;
  aclDataBuffer* b;
  EXPECT_CODE(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
  EXPECT_MSG_HAS("aclInit");
  EXPECT_MSG_HAS("aclrtSetDevice");
  EXPECT_CODE(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE);
  EXPECT_CODE(aclrtCreateStream(&s), ACL_ERROR_UNINITIALIZE);
  EXPECT_CODE(aclmdlLoadFromFile("model.om", &id), ACL_ERROR_UNINITIALIZE);
  EXPECT_CODE(aclFinalize(), ACL_ERROR_UNINITIALIZE);
  /* Host-only objects work without aclInit. */
  b = aclCreateDataBuffer(NULL, 0);
  EXPECT_TRUE(b != NULL);
  EXPECT_OK(aclDestroyDataBuffer(b));
}

static void Init(void) {
  const char* bad_json = "acl_misuse_bad.json";
  const char* good_json = "acl_misuse_good.json";
  FILE* f = fopen(bad_json, "w");
  fputs("{\"dump\": {\"dump_path\": \"x\",}", f);
  fclose(f);
  f = fopen(good_json, "w");
  fputs("{\"dump\": {\"dump_list\": [], \"dump_path\": \"/tmp\"}, \"n\": -1.5e3, \"t\": true}\n", f);
  fclose(f);
  EXPECT_CODE(aclInit("/nonexistent/dir/acl.json"), ACL_ERROR_INVALID_FILE);
  EXPECT_MSG_HAS("/nonexistent/dir/acl.json");
  EXPECT_CODE(aclInit(bad_json), ACL_ERROR_PARSE_FILE);
  EXPECT_MSG_HAS("byte");
  EXPECT_OK(aclInit(good_json));
  EXPECT_CODE(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
  remove(bad_json);
  remove(good_json);
}

static void Devices(void) {
  int32_t dev = -1;
  uint32_t count = 0;
  aclrtRunMode mode;
  aclrtStream s = NULL;
  void* p = NULL;
  /* 8 logical CPU devices unless OPENCANN_DEVICE_COUNT says otherwise. */
  const char* env_count = getenv("OPENCANN_DEVICE_COUNT");
  const uint32_t want_count = env_count ? (uint32_t)atoi(env_count) : 8;
  EXPECT_CODE(aclrtSetDevice((int32_t)want_count), ACL_ERROR_INVALID_DEVICE);
  EXPECT_MSG_HAS("out of range");
  EXPECT_CODE(aclrtSetDevice(-1), ACL_ERROR_INVALID_DEVICE);
  EXPECT_CODE(aclrtResetDevice(0), ACL_ERROR_INVALID_DEVICE);
  EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_CODE(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_CODE(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_CODE(aclrtSynchronizeStream(NULL), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_CODE(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("count");
  EXPECT_OK(aclrtGetDeviceCount(&count));
  EXPECT_TRUE(count == want_count);
  EXPECT_CODE(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtGetRunMode(&mode));
  EXPECT_TRUE(mode == ACL_HOST);
  /* Another logical device: its own default context, streams and memory. */
  if (count > 1) {
    void* d = NULL;
    char in[64] = "device one", out[64] = {0};
    EXPECT_OK(aclrtSetDevice(1));
    EXPECT_OK(aclrtGetDevice(&dev));
    EXPECT_TRUE(dev == 1);
    EXPECT_OK(aclrtCreateStream(&s));
    EXPECT_OK(aclrtMalloc(&d, sizeof in, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemcpyAsync(d, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE, s));
    EXPECT_OK(aclrtMemcpyAsync(out, sizeof out, d, sizeof in, ACL_MEMCPY_DEVICE_TO_HOST, s));
    EXPECT_OK(aclrtSynchronizeStream(s));
    EXPECT_TRUE(strcmp(out, "device one") == 0);
    EXPECT_OK(aclrtFree(d));
    EXPECT_OK(aclrtDestroyStream(s));
    s = NULL;
    EXPECT_OK(aclrtResetDevice(1));
    EXPECT_CODE(aclrtResetDevice(1), ACL_ERROR_INVALID_DEVICE);
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
  }
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtGetDevice(&dev));
  EXPECT_TRUE(dev == 0);
  EXPECT_CODE(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtSetOpExecuteThreads(0), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtSetOpExecuteThreads(2));
}

static void Contexts(void) {
  aclrtContext c = NULL, def = NULL, cur = NULL;
  EXPECT_OK(aclrtGetCurrentContext(&def));
  EXPECT_CODE(aclrtGetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtCreateContext(&c, 99), ACL_ERROR_INVALID_DEVICE);
  EXPECT_CODE(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtDestroyContext(def), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("aclrtResetDevice");
  EXPECT_OK(aclrtCreateContext(&c, 0));
  EXPECT_OK(aclrtGetCurrentContext(&cur));
  EXPECT_TRUE(cur == c);
  EXPECT_OK(aclrtDestroyContext(c));
  EXPECT_CODE(aclrtDestroyContext(c), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("already destroyed");
  EXPECT_CODE(aclrtSetCurrentContext(c), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_OK(aclrtSetCurrentContext(def));
}

static void Streams(void) {
  aclrtStream s = NULL;
  aclrtStreamStatus st;
  EXPECT_CODE(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtCreateStream(&s));
  EXPECT_CODE(aclrtStreamQuery(s, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtStreamQuery(s, &st));
  EXPECT_TRUE(st == ACL_STREAM_STATUS_COMPLETE);
  EXPECT_CODE(aclrtSynchronizeStreamWithTimeout(s, -5), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtSynchronizeStreamWithTimeout(s, 1000));
  EXPECT_OK(aclrtSynchronizeStreamWithTimeout(s, -1));
  EXPECT_OK(aclrtSynchronizeStream(NULL)); /* the default stream */
  EXPECT_OK(aclrtDestroyStream(s));
  EXPECT_CODE(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("not a live stream");
  EXPECT_CODE(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtStreamQuery(s, &st), ACL_ERROR_INVALID_PARAM);
}

static void Events(void) {
  aclrtEvent e = NULL, nt = NULL, e2 = NULL;
  aclrtStream s = NULL;
  aclrtEventStatus st;
  aclrtEventRecordedStatus rs;
  float ms = -1.f;
  EXPECT_CODE(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtCreateEventWithFlag(&e, 0x100), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtCreateEvent(&e));
  EXPECT_OK(aclrtCreateEvent(&e2));
  EXPECT_OK(aclrtCreateEventWithFlag(&nt, ACL_EVENT_SYNC));
  EXPECT_OK(aclrtCreateStream(&s));
  EXPECT_CODE(aclrtRecordEvent(NULL, s), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtQueryEvent(e, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtQueryEventStatus(NULL, &rs), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtQueryEvent(e, &st));
  EXPECT_TRUE(st == ACL_EVENT_STATUS_COMPLETE);
  EXPECT_OK(aclrtQueryEventStatus(e, &rs));
  EXPECT_TRUE(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  EXPECT_CODE(aclrtEventElapsedTime(&ms, e, e2), ACL_ERROR_RT_EVENT_NOT_COMPLETE);
  EXPECT_CODE(aclrtEventElapsedTime(NULL, e, e2), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtRecordEvent(e, s));
  EXPECT_OK(aclrtRecordEvent(nt, s));
  EXPECT_OK(aclrtRecordEvent(e2, s));
  EXPECT_OK(aclrtStreamWaitEvent(NULL, e2));
  EXPECT_OK(aclrtSynchronizeEvent(e2));
  EXPECT_OK(aclrtEventElapsedTime(&ms, e, e2));
  EXPECT_TRUE(ms >= 0.f);
  EXPECT_CODE(aclrtEventElapsedTime(&ms, e, nt), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
  EXPECT_OK(aclrtResetEvent(e, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtQueryEventStatus(e, &rs));
  EXPECT_TRUE(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  EXPECT_OK(aclrtDestroyEvent(e));
  EXPECT_CODE(aclrtDestroyEvent(e), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtRecordEvent(e, s), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtSynchronizeEvent(e), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtStreamWaitEvent(s, e), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtDestroyEvent(nt));
  EXPECT_OK(aclrtDestroyEvent(e2));
  EXPECT_OK(aclrtDestroyStream(s));
  EXPECT_CODE(aclrtRecordEvent(e2, s), ACL_ERROR_INVALID_PARAM);
}

static void Memory(void) {
  void* d = NULL;
  void* d2 = NULL;
  void* h = NULL;
  char stack[256];
  char back[256];
  size_t free_b = 0, total_b = 0;
  aclrtStream s = NULL;
  int i;
  EXPECT_CODE(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMalloc(&d, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMallocHost(NULL, 16), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtMalloc(&d2, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtMallocHost(&h, 256));
  EXPECT_TRUE(((uintptr_t)d % 64) == 0);
  for (i = 0; i < 256; ++i) stack[i] = (char)i;

  /* Wrong directions and bounds. */
  EXPECT_CODE(aclrtMemcpy(stack, 256, back, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("dst");
  EXPECT_CODE(aclrtMemcpy(d, 256, d2, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("src");
  EXPECT_CODE(aclrtMemcpy(back, 256, stack, 256, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemcpy(d, 256, stack, 256, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemcpy(d, 256, d2, 256, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemcpy(d, 128, stack, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("destMax");
  EXPECT_CODE(aclrtMemcpy((char*)d + 128, 256, stack, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemcpy(d, 256, stack, 256, (aclrtMemcpyKind)7), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemcpy(NULL, 256, stack, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemcpy(d, 256, NULL, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);

  /* Correct round trip through every kind. */
  EXPECT_OK(aclrtMemcpy(d, 256, stack, 256, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_OK(aclrtMemcpy(d2, 256, d, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
  EXPECT_OK(aclrtMemcpy(h, 256, d2, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_OK(aclrtMemcpy(back, 256, h, 256, ACL_MEMCPY_HOST_TO_HOST));
  EXPECT_TRUE(memcmp(back, stack, 256) == 0);
  EXPECT_OK(aclrtMemcpy(back, 256, d, 128, ACL_MEMCPY_DEFAULT));
  EXPECT_OK(aclrtMemcpy(d, 256, stack, 0, ACL_MEMCPY_HOST_TO_DEVICE));

  /* Async copies are checked when queued. */
  EXPECT_OK(aclrtCreateStream(&s));
  EXPECT_CODE(aclrtMemcpyAsync(stack, 256, back, 256, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtMemset(d, 256, 7, 256));
  EXPECT_OK(aclrtMemcpyAsync(back, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_TRUE(back[0] == 7 && back[255] == 7);
  EXPECT_OK(aclrtDestroyStream(s));
  EXPECT_CODE(aclrtMemcpyAsync(back, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_ERROR_INVALID_PARAM);

  EXPECT_CODE(aclrtMemset(NULL, 16, 0, 16), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemset(d, 16, 0, 32), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemset(stack, 256, 0, 256), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtMemset(d, 512, 0, 512), ACL_ERROR_INVALID_PARAM);

  EXPECT_CODE(aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total_b), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtGetMemInfo((aclrtMemAttr)99, &free_b, &total_b), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b));
  EXPECT_TRUE(total_b > 0 && free_b > 0 && free_b <= total_b);

  /* Frees. */
  EXPECT_CODE(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtFree((char*)d + 8), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("bytes into");
  EXPECT_CODE(aclrtFree(h), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtFreeHost(d), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclrtFree(stack), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtFree(d));
  EXPECT_CODE(aclrtFree(d), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtFree(d2));
  EXPECT_OK(aclrtFreeHost(h));
  EXPECT_CODE(aclrtFreeHost(h), ACL_ERROR_INVALID_PARAM);
}

static void Buffers(void) {
  aclDataBuffer* b;
  aclTensorDesc* t;
  int64_t dims[3] = {2, 3, 4};
  int64_t bad[2] = {2, -3};
  int64_t dim = 0;
  char data[16];
  b = aclCreateDataBuffer(NULL, 16);
  EXPECT_TRUE(b == NULL);
  EXPECT_MSG_HAS("data");
  b = aclCreateDataBuffer(data, sizeof data);
  EXPECT_TRUE(aclGetDataBufferAddr(b) == data);
  EXPECT_TRUE(aclGetDataBufferSizeV2(b) == 16 && aclGetDataBufferSize(b) == 16);
  EXPECT_CODE(aclUpdateDataBuffer(b, NULL, 4), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclUpdateDataBuffer(b, data + 8, 8));
  EXPECT_TRUE(aclGetDataBufferSizeV2(b) == 8);
  EXPECT_CODE(aclUpdateDataBuffer(NULL, data, 4), ACL_ERROR_INVALID_PARAM);
  EXPECT_TRUE(aclGetDataBufferSizeV2(NULL) == 0 && aclGetDataBufferAddr(NULL) == NULL);
  EXPECT_CODE(aclDestroyDataBuffer(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclDestroyDataBuffer(b));
  EXPECT_CODE(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);

  EXPECT_TRUE(aclDataTypeSize(ACL_FLOAT) == 4 && aclDataTypeSize(ACL_FLOAT16) == 2 &&
              aclDataTypeSize(ACL_INT64) == 8 && aclDataTypeSize(ACL_BOOL) == 1 &&
              aclDataTypeSize(ACL_BF16) == 2 && aclDataTypeSize(ACL_STRING) == 0 &&
              aclDataTypeSize((aclDataType)12345) == 0);
  EXPECT_TRUE(aclFloat16ToFloat(aclFloatToFloat16(1.5f)) == 1.5f);
  EXPECT_TRUE(aclFloatToFloat16(65504.f) == 0x7BFF && aclFloatToFloat16(1e6f) == 0x7C00);
  EXPECT_TRUE(aclFloat16ToFloat(0x0001) > 5.9e-8f && aclFloat16ToFloat(0x0001) < 6.0e-8f);

  EXPECT_TRUE(aclCreateTensorDesc(ACL_FLOAT, -1, dims, ACL_FORMAT_ND) == NULL);
  EXPECT_TRUE(aclCreateTensorDesc(ACL_FLOAT, 2, NULL, ACL_FORMAT_ND) == NULL);
  EXPECT_TRUE(aclCreateTensorDesc(ACL_FLOAT, 2, bad, ACL_FORMAT_ND) == NULL);
  EXPECT_MSG_HAS("dims[1]");
  t = aclCreateTensorDesc(ACL_FLOAT16, 3, dims, ACL_FORMAT_NCHW);
  EXPECT_TRUE(t != NULL);
  EXPECT_TRUE(aclGetTensorDescType(t) == ACL_FLOAT16 && aclGetTensorDescFormat(t) == ACL_FORMAT_NCHW);
  EXPECT_TRUE(aclGetTensorDescNumDims(t) == 3 && aclGetTensorDescElementCount(t) == 24 &&
              aclGetTensorDescSize(t) == 48);
  EXPECT_TRUE(aclGetTensorDescDim(t, 1) == 3 && aclGetTensorDescDim(t, 3) == -1);
  EXPECT_OK(aclGetTensorDescDimV2(t, 2, &dim));
  EXPECT_TRUE(dim == 4);
  EXPECT_CODE(aclGetTensorDescDimV2(t, 3, &dim), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclGetTensorDescDimV2(t, 0, NULL), ACL_ERROR_INVALID_PARAM);
  aclSetTensorDescName(t, "x");
  EXPECT_TRUE(strcmp(aclGetTensorDescName(t), "x") == 0);
  aclDestroyTensorDesc(t);
  EXPECT_TRUE(aclGetTensorDescType(NULL) == ACL_DT_UNDEFINED && aclGetTensorDescNumDims(NULL) == 0);
}

static void WriteGarbage(const char* path, size_t n) {
  FILE* f = fopen(path, "wb");
  size_t i;
  for (i = 0; i < n; ++i) fputc((int)((i * 131) & 0xFF), f);
  fclose(f);
}

static void ModelsWithoutFile(void) {
  uint32_t id = 0;
  size_t w = 0, wt = 0;
  aclmdlDesc* desc = aclmdlCreateDesc();
  aclmdlDataset* ds = aclmdlCreateDataset();
  char junk[256];
  memset(junk, 0x33, sizeof junk);
  WriteGarbage("acl_misuse_corrupt.om", 4096);
  EXPECT_CODE(aclmdlLoadFromFile(NULL, &id), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlLoadFromFile("acl_misuse_corrupt.om", NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlLoadFromFile("/nonexistent/model.om", &id), ACL_ERROR_READ_MODEL_FAILURE);
  EXPECT_MSG_HAS("/nonexistent/model.om");
  EXPECT_CODE(aclmdlLoadFromFile("acl_misuse_corrupt.om", &id), ACL_ERROR_PARSE_MODEL);
  EXPECT_CODE(aclmdlLoadFromMem(junk, sizeof junk, &id), ACL_ERROR_PARSE_MODEL);
  EXPECT_CODE(aclmdlLoadFromMem(NULL, 16, &id), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlLoadFromMem(junk, 0, &id), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlQuerySize("acl_misuse_corrupt.om", &w, &wt), ACL_ERROR_PARSE_MODEL);
  EXPECT_CODE(aclmdlQuerySize("acl_misuse_corrupt.om", NULL, &wt), ACL_ERROR_INVALID_PARAM);
  remove("acl_misuse_corrupt.om");
  EXPECT_CODE(aclmdlUnload(12345), ACL_ERROR_INVALID_MODEL_ID);
  EXPECT_MSG_HAS("12345");
  EXPECT_CODE(aclmdlGetDesc(desc, 12345), ACL_ERROR_INVALID_MODEL_ID);
  EXPECT_CODE(aclmdlGetDesc(NULL, 1), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlExecute(12345, ds, ds), ACL_ERROR_INVALID_MODEL_ID);
  EXPECT_CODE(aclmdlExecuteAsync(12345, ds, ds, NULL), ACL_ERROR_INVALID_MODEL_ID);
  EXPECT_TRUE(aclmdlGetNumInputs(NULL) == 0);
  EXPECT_TRUE(aclmdlGetInputSizeByIndex(desc, 0) == 0);
  EXPECT_MSG_HAS("index 0");
  EXPECT_TRUE(strcmp(aclmdlGetInputNameByIndex(desc, 3), "") == 0);
  EXPECT_TRUE(aclmdlGetInputDataType(desc, 0) == ACL_DT_UNDEFINED);
  EXPECT_TRUE(aclmdlGetOutputFormat(NULL, 0) == ACL_FORMAT_UNDEFINED);
  EXPECT_CODE(aclmdlAddDatasetBuffer(ds, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlAddDatasetBuffer(NULL, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_TRUE(aclmdlGetDatasetBuffer(ds, 0) == NULL && aclmdlGetDatasetNumBuffers(NULL) == 0);
  EXPECT_OK(aclmdlDestroyDataset(ds));
  EXPECT_CODE(aclmdlDestroyDataset(ds), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlDestroyDataset(NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclmdlDestroyDesc(desc));
  EXPECT_CODE(aclmdlDestroyDesc(desc), ACL_ERROR_INVALID_PARAM);
}

static void ModelsWithFile(const char* path) {
  uint32_t id = 0, id2 = 0;
  aclmdlDesc* desc = aclmdlCreateDesc();
  aclmdlDataset* in = aclmdlCreateDataset();
  aclmdlDataset* out = aclmdlCreateDataset();
  aclmdlDataset* empty = aclmdlCreateDataset();
  aclmdlIODims dims;
  size_t n_in, n_out, i, index = 0, work = 0, weight = 0;
  void* dev[32] = {0};
  void* host_mem = NULL;
  void* work_mem = NULL;
  aclDataBuffer* bad;
  char msg[64];

  EXPECT_OK(aclmdlLoadFromFile(path, &id));
  EXPECT_OK(aclmdlGetDesc(desc, id));
  n_in = aclmdlGetNumInputs(desc);
  n_out = aclmdlGetNumOutputs(desc);
  if (n_in + n_out > 32 || n_in == 0) return;
  EXPECT_CODE(aclmdlGetInputDims(desc, n_in, &dims), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlGetOutputDims(desc, 0, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlGetInputIndexByName(desc, "no_such_tensor", &index), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("no_such_tensor");
  EXPECT_CODE(aclmdlGetInputIndexByName(desc, NULL, &index), ACL_ERROR_INVALID_PARAM);

  for (i = 0; i < n_in + n_out; ++i) {
    size_t bytes = i < n_in ? aclmdlGetInputSizeByIndex(desc, i) : aclmdlGetOutputSizeByIndex(desc, i - n_in);
    EXPECT_OK(aclrtMalloc(&dev[i], bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclmdlAddDatasetBuffer(i < n_in ? in : out, aclCreateDataBuffer(dev[i], bytes)));
  }
  EXPECT_OK(aclmdlExecute(id, in, out));

  /* Wrong number of buffers. */
  EXPECT_CODE(aclmdlExecute(id, empty, out), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("buffers");
  EXPECT_CODE(aclmdlExecute(id, in, empty), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlExecute(id, NULL, out), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlExecuteAsync(id, in, NULL, NULL), ACL_ERROR_INVALID_PARAM);

  /* Wrong input size: the message names the index and both sizes. */
  bad = aclmdlGetDatasetBuffer(in, 0);
  EXPECT_OK(aclUpdateDataBuffer(bad, dev[0], aclmdlGetInputSizeByIndex(desc, 0) + 4));
  EXPECT_CODE(aclmdlExecute(id, in, out), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("input 0");
  snprintf(msg, sizeof msg, "%zu", aclmdlGetInputSizeByIndex(desc, 0) + 4);
  EXPECT_MSG_HAS(msg);
  snprintf(msg, sizeof msg, "%zu", aclmdlGetInputSizeByIndex(desc, 0));
  EXPECT_MSG_HAS(msg);

  /* Plain malloc memory is not device memory. */
  host_mem = malloc(aclmdlGetInputSizeByIndex(desc, 0) + 64);
  EXPECT_OK(aclUpdateDataBuffer(bad, host_mem, aclmdlGetInputSizeByIndex(desc, 0)));
  if (aclmdlGetInputSizeByIndex(desc, 0) > 0) {
    EXPECT_CODE(aclmdlExecute(id, in, out), ACL_ERROR_INVALID_PARAM);
    EXPECT_MSG_HAS("aclrtMalloc");
  }
  EXPECT_OK(aclUpdateDataBuffer(bad, dev[0], aclmdlGetInputSizeByIndex(desc, 0)));
  free(host_mem);
  EXPECT_OK(aclmdlExecute(id, in, out));

  /* Work memory checks of the *WithMem loader. */
  EXPECT_OK(aclmdlQuerySize(path, &work, &weight));
  if (work > 0) {
    EXPECT_OK(aclrtMalloc(&work_mem, work, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_CODE(aclmdlLoadFromFileWithMem(path, &id2, work_mem, work - 1, NULL, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_MSG_HAS("workSize");
    host_mem = malloc(work + 64);
    EXPECT_CODE(aclmdlLoadFromFileWithMem(path, &id2, host_mem, work, NULL, 0), ACL_ERROR_INVALID_PARAM);
    free(host_mem);
    EXPECT_OK(aclmdlLoadFromFileWithMem(path, &id2, work_mem, work, NULL, 0));
    EXPECT_OK(aclmdlExecute(id2, in, out));
    EXPECT_OK(aclmdlUnload(id2));
    EXPECT_OK(aclrtFree(work_mem));
  }

  /* Destroyed handles. */
  EXPECT_OK(aclmdlUnload(id));
  EXPECT_CODE(aclmdlUnload(id), ACL_ERROR_INVALID_MODEL_ID);
  EXPECT_CODE(aclmdlExecute(id, in, out), ACL_ERROR_INVALID_MODEL_ID);
  /* A desc stays readable after unload. */
  EXPECT_TRUE(aclmdlGetNumInputs(desc) == n_in);
  for (i = 0; i < n_in + n_out; ++i) {
    aclDataBuffer* b = aclmdlGetDatasetBuffer(i < n_in ? in : out, i < n_in ? i : i - n_in);
    EXPECT_OK(aclDestroyDataBuffer(b));
    EXPECT_OK(aclrtFree(dev[i]));
  }
  EXPECT_OK(aclmdlDestroyDataset(in));
  EXPECT_OK(aclmdlDestroyDataset(out));
  EXPECT_OK(aclmdlDestroyDataset(empty));
  EXPECT_OK(aclmdlDestroyDesc(desc));
}

static void Finalize(void) {
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
  EXPECT_CODE(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  EXPECT_CODE(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
  /* The library may be initialised again. */
  EXPECT_OK(aclInit(NULL));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
}

int main(int argc, char** argv) {
  BeforeInit();
  Init();
  Devices();
  Contexts();
  Streams();
  Events();
  Memory();
  Buffers();
  ModelsWithoutFile();
  if (argc > 1) ModelsWithFile(argv[1]);
  Finalize();
  return Summary("acl_misuse");
}

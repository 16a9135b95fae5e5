/* The canonical AscendCL inference flow, written as an application would:
 * init -> device -> context -> stream -> load -> desc -> device buffers ->
 * copy in -> aclmdlExecute and aclmdlExecuteAsync -> copy out -> compare ->
 * tear down in reverse order.
 *
 * Usage: acl_canonical MODEL.om [OUT_DIR]
 * Inputs are filled with a deterministic pattern. With OUT_DIR, the inputs and
 * outputs are written there as input_<i>.bin / output_<i>.bin so a test can
 * check them against an independent reference. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"

#define MAX_IO 16

static void FillPattern(void* host, size_t bytes, aclDataType dtype, size_t which) {
  size_t i;
  if (dtype == ACL_FLOAT) {
    float* f = (float*)host;
    for (i = 0; i < bytes / 4; ++i) f[i] = (float)((int)((i * 7 + which * 3) % 23) - 11) * 0.125f;
  } else if (dtype == ACL_INT64) {
    int64_t* v = (int64_t*)host;
    for (i = 0; i < bytes / 8; ++i) v[i] = (int64_t)((i + which) % 5);
  } else if (dtype == ACL_INT32) {
    int32_t* v = (int32_t*)host;
    for (i = 0; i < bytes / 4; ++i) v[i] = (int32_t)((i + which) % 5);
  } else {
    unsigned char* b = (unsigned char*)host;
    for (i = 0; i < bytes; ++i) b[i] = (unsigned char)((i + which) % 2);
  }
}

static int WriteFile(const char* dir, const char* kind, size_t i, const void* data, size_t bytes) {
  char path[4096];
  FILE* f;
  snprintf(path, sizeof path, "%s/%s_%zu.bin", dir, kind, i);
  f = fopen(path, "wb");
  if (!f) return 0;
  if (bytes && fwrite(data, 1, bytes, f) != bytes) { fclose(f); return 0; }
  return fclose(f) == 0;
}

int main(int argc, char** argv) {
  const char* model_path;
  const char* out_dir;
  aclrtContext context = NULL;
  aclrtStream stream = NULL;
  aclrtEvent done = NULL;
  uint32_t model_id = 0;
  aclmdlDesc* desc = NULL;
  aclmdlDataset* input = NULL;
  aclmdlDataset* out_sync = NULL;
  aclmdlDataset* out_async = NULL;
  size_t n_in, n_out, i;
  void* dev_in[MAX_IO] = {0};
  void* dev_out_a[MAX_IO] = {0};
  void* dev_out_b[MAX_IO] = {0};
  void* host_a[MAX_IO] = {0};
  void* host_b[MAX_IO] = {0};
  aclrtRunMode mode;
  int32_t device = -1;
  aclrtEventRecordedStatus ev_status;

  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.om [OUT_DIR]\n", argv[0]);
    return 2;
  }
  model_path = argv[1];
  out_dir = argc > 2 ? argv[2] : NULL;

  REQUIRE_OK(aclInit(NULL));
  REQUIRE_OK(aclrtSetDevice(0));
  REQUIRE_OK(aclrtCreateContext(&context, 0));
  REQUIRE_OK(aclrtCreateStream(&stream));
  EXPECT_OK(aclrtGetRunMode(&mode));
  EXPECT_TRUE(mode == ACL_HOST);
  EXPECT_OK(aclrtGetDevice(&device));
  EXPECT_TRUE(device == 0);

  REQUIRE_OK(aclmdlLoadFromFile(model_path, &model_id));
  desc = aclmdlCreateDesc();
  EXPECT_TRUE(desc != NULL);
  REQUIRE_OK(aclmdlGetDesc(desc, model_id));
  n_in = aclmdlGetNumInputs(desc);
  n_out = aclmdlGetNumOutputs(desc);
  if (n_in > MAX_IO || n_out > MAX_IO || n_out == 0) {
    fprintf(stderr, "model has %zu inputs / %zu outputs; this test handles 1..%d outputs\n", n_in, n_out, MAX_IO);
    return 1;
  }

  input = aclmdlCreateDataset();
  out_sync = aclmdlCreateDataset();
  out_async = aclmdlCreateDataset();
  for (i = 0; i < n_in; ++i) {
    size_t bytes = aclmdlGetInputSizeByIndex(desc, i);
    aclDataType dt = aclmdlGetInputDataType(desc, i);
    aclmdlIODims dims;
    size_t index = 99;
    void* host;
    EXPECT_OK(aclmdlGetInputDims(desc, i, &dims));
    EXPECT_OK(aclmdlGetInputIndexByName(desc, aclmdlGetInputNameByIndex(desc, i), &index));
    EXPECT_TRUE(index == i);
    EXPECT_TRUE(strcmp(dims.name, aclmdlGetInputNameByIndex(desc, i)) == 0);
    printf("input %zu: %s dtype %d rank %zu bytes %zu\n", i, dims.name, (int)dt, dims.dimCount, bytes);
    REQUIRE_OK(aclrtMalloc(&dev_in[i], bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    REQUIRE_OK(aclrtMallocHost(&host, bytes));
    FillPattern(host, bytes, dt, i);
    REQUIRE_OK(aclrtMemcpy(dev_in[i], bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    if (out_dir && !WriteFile(out_dir, "input", i, host, bytes)) {
      fprintf(stderr, "cannot write into %s\n", out_dir);
      return 1;
    }
    REQUIRE_OK(aclrtFreeHost(host));
    REQUIRE_OK(aclmdlAddDatasetBuffer(input, aclCreateDataBuffer(dev_in[i], bytes)));
  }
  for (i = 0; i < n_out; ++i) {
    size_t bytes = aclmdlGetOutputSizeByIndex(desc, i);
    REQUIRE_OK(aclrtMalloc(&dev_out_a[i], bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    REQUIRE_OK(aclrtMalloc(&dev_out_b[i], bytes, ACL_MEM_MALLOC_NORMAL_ONLY));
    REQUIRE_OK(aclrtMemset(dev_out_a[i], bytes, 0x5A, bytes));
    REQUIRE_OK(aclrtMemset(dev_out_b[i], bytes, 0xA5, bytes));
    REQUIRE_OK(aclmdlAddDatasetBuffer(out_sync, aclCreateDataBuffer(dev_out_a[i], bytes)));
    REQUIRE_OK(aclmdlAddDatasetBuffer(out_async, aclCreateDataBuffer(dev_out_b[i], bytes)));
    host_a[i] = malloc(bytes ? bytes : 1);
    host_b[i] = malloc(bytes ? bytes : 1);
  }
  EXPECT_TRUE(aclmdlGetDatasetNumBuffers(input) == n_in);

  /* Synchronous execution. */
  REQUIRE_OK(aclmdlExecute(model_id, input, out_sync));
  /* Asynchronous execution, results copied back on the same stream, completion
   * observed through an event. */
  REQUIRE_OK(aclrtCreateEvent(&done));
  REQUIRE_OK(aclmdlExecuteAsync(model_id, input, out_async, stream));
  for (i = 0; i < n_out; ++i) {
    size_t bytes = aclmdlGetOutputSizeByIndex(desc, i);
    REQUIRE_OK(aclrtMemcpyAsync(host_b[i], bytes, dev_out_b[i], bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream));
  }
  REQUIRE_OK(aclrtRecordEvent(done, stream));
  REQUIRE_OK(aclrtSynchronizeEvent(done));
  EXPECT_OK(aclrtQueryEventStatus(done, &ev_status));
  EXPECT_TRUE(ev_status == ACL_EVENT_RECORDED_STATUS_COMPLETE);
  REQUIRE_OK(aclrtSynchronizeStream(stream));

  for (i = 0; i < n_out; ++i) {
    size_t bytes = aclmdlGetOutputSizeByIndex(desc, i);
    REQUIRE_OK(aclrtMemcpy(host_a[i], bytes, dev_out_a[i], bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    if (memcmp(host_a[i], host_b[i], bytes) != 0) {
      ++g_failures;
      fprintf(stderr, "FAIL: output %zu differs between aclmdlExecute and aclmdlExecuteAsync\n", i);
    }
    if (out_dir && !WriteFile(out_dir, "output", i, host_a[i], bytes)) {
      fprintf(stderr, "cannot write into %s\n", out_dir);
      return 1;
    }
  }

  /* Tear down in reverse order. */
  EXPECT_OK(aclrtDestroyEvent(done));
  for (i = 0; i < n_out; ++i) {
    EXPECT_OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(out_sync, i)));
    EXPECT_OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(out_async, i)));
    EXPECT_OK(aclrtFree(dev_out_a[i]));
    EXPECT_OK(aclrtFree(dev_out_b[i]));
    free(host_a[i]);
    free(host_b[i]);
  }
  for (i = 0; i < n_in; ++i) {
    EXPECT_OK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(input, i)));
    EXPECT_OK(aclrtFree(dev_in[i]));
  }
  EXPECT_OK(aclmdlDestroyDataset(out_async));
  EXPECT_OK(aclmdlDestroyDataset(out_sync));
  EXPECT_OK(aclmdlDestroyDataset(input));
  EXPECT_OK(aclmdlDestroyDesc(desc));
  EXPECT_OK(aclmdlUnload(model_id));
  EXPECT_OK(aclrtDestroyStream(stream));
  EXPECT_OK(aclrtDestroyContext(context));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
  return Summary("acl_canonical");
}

/* Dynamic shapes through AscendCL, written as an application would.
 *
 * Usage: acl_dynamic gear MODEL.om DIR
 *   MODEL.om was compiled with --input_shape=<x>:-1,... --dynamic_batch_size=1,4,8
 *   (one data input, one output). Reads DIR/input_0.bin (batch 4), selects gear
 *   4 with aclmdlSetDynamicBatchSize, executes, writes DIR/output_0.bin with the
 *   bytes of the batch-4 output, and checks every new entry point's misuse.
 * Usage: acl_dynamic hw MODEL.om
 *   MODEL.om was compiled with --dynamic_image_size="16,16;24,40": checks the
 *   gear queries and the misuse of aclmdlSetDynamicHWSize.
 * Usage: acl_dynamic dims MODEL.om
 *   MODEL.om was compiled with --input_shape="data:1,-1,4;mask:-1,-1"
 *   --dynamic_dims="3,3,3;5,5,5": checks aclmdlGetInputDynamicGearCount /
 *   aclmdlGetInputDynamicDims and the misuse of aclmdlSetInputDynamicDims.
 * Usage: acl_dynamic shape MODEL.om DIR N1 N2
 *   MODEL.om has one input x[N, K] with N unknown (-1) and one output. Runs at
 *   N1 and then at N2 in this one process (shapes set with
 *   aclmdlSetDatasetTensorDesc), reading DIR/x_<N>.bin and writing
 *   DIR/out_<N>.bin, with the output shape read from the output dataset. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_check.h"

static size_t ReadFile(const char* path, void* dst, size_t cap) {
  FILE* f = fopen(path, "rb");
  size_t n;
  if (!f) return 0;
  n = fread(dst, 1, cap, f);
  fclose(f);
  return n;
}

static int WriteFile(const char* path, const void* data, size_t bytes) {
  FILE* f = fopen(path, "wb");
  if (!f) return 0;
  if (bytes && fwrite(data, 1, bytes, f) != bytes) { fclose(f); return 0; }
  return fclose(f) == 0;
}

static size_t Product(const int64_t* d, size_t n) {
  size_t p = 1, i;
  for (i = 0; i < n; ++i) p *= (size_t)d[i];
  return p;
}

static int Gear(const char* model_path, const char* dir) {
  uint32_t id = 0, other_id = 0;
  aclmdlDesc* desc = aclmdlCreateDesc();
  aclmdlDataset* in = aclmdlCreateDataset();
  aclmdlDataset* out = aclmdlCreateDataset();
  aclmdlBatch batch;
  aclmdlHW hw;
  aclmdlIODims dims, gear_dims[4];
  size_t dyn = 99, gears = 99, in_bytes, dyn_bytes, out_bytes, got;
  void *x_dev = NULL, *dyn_dev = NULL, *y_dev = NULL, *host = NULL;
  aclDataBuffer *xb, *db, *yb;
  aclTensorDesc* od;
  char path[4096];

  REQUIRE_OK(aclmdlLoadFromFile(model_path, &id));
  REQUIRE_OK(aclmdlGetDesc(desc, id));
  EXPECT_TRUE(aclmdlGetNumInputs(desc) == 2);
  EXPECT_OK(aclmdlGetDynamicBatch(desc, &batch));
  EXPECT_TRUE(batch.batchCount == 3 && batch.batch[0] == 1 && batch.batch[1] == 4 && batch.batch[2] == 8);
  EXPECT_OK(aclmdlGetDynamicHW(desc, (size_t)-1, &hw));
  EXPECT_TRUE(hw.hwCount == 0);
  EXPECT_OK(aclmdlGetInputDynamicGearCount(desc, (size_t)-1, &gears));
  EXPECT_TRUE(gears == 0);
  EXPECT_OK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &dyn));
  EXPECT_TRUE(dyn == 1);
  EXPECT_OK(aclmdlGetInputDims(desc, 0, &dims));
  EXPECT_TRUE(dims.dimCount >= 1 && dims.dims[0] == -1);

  /* Sizes are those of the largest gear (8). */
  in_bytes = aclmdlGetInputSizeByIndex(desc, 0);
  dyn_bytes = aclmdlGetInputSizeByIndex(desc, dyn);
  out_bytes = aclmdlGetOutputSizeByIndex(desc, 0);
  EXPECT_TRUE(in_bytes > 0 && in_bytes % 8 == 0 && dyn_bytes >= 8 && out_bytes > 0);
  REQUIRE_OK(aclrtMalloc(&x_dev, in_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  REQUIRE_OK(aclrtMalloc(&dyn_dev, dyn_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  REQUIRE_OK(aclrtMalloc(&y_dev, out_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  REQUIRE_OK(aclrtMemset(dyn_dev, dyn_bytes, 0, dyn_bytes));
  host = malloc(in_bytes);
  snprintf(path, sizeof path, "%s/input_0.bin", dir);
  got = ReadFile(path, host, in_bytes);
  EXPECT_TRUE(got == in_bytes / 2);  /* batch 4 of 8 */
  REQUIRE_OK(aclrtMemcpy(x_dev, in_bytes, host, got, ACL_MEMCPY_HOST_TO_DEVICE));
  xb = aclCreateDataBuffer(x_dev, in_bytes);
  db = aclCreateDataBuffer(dyn_dev, dyn_bytes);
  yb = aclCreateDataBuffer(y_dev, out_bytes);
  REQUIRE_OK(aclmdlAddDatasetBuffer(in, xb));

  /* Misuse before the dynamic tensor's buffer is in the dataset. */
  EXPECT_CODE(aclmdlSetDynamicBatchSize(id, in, dyn, 4), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("add the buffer");
  REQUIRE_OK(aclmdlAddDatasetBuffer(in, db));
  REQUIRE_OK(aclmdlAddDatasetBuffer(out, yb));
  /* Executing with no gear selected (the tensor holds 0). */
  EXPECT_CODE(aclmdlExecute(id, in, out), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("not a gear");
  EXPECT_CODE(aclmdlSetDynamicBatchSize(id, in, dyn, 3), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("not a gear");
  EXPECT_CODE(aclmdlSetDynamicBatchSize(id, in, 0, 4), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS(ACL_DYNAMIC_TENSOR_NAME);
  EXPECT_CODE(aclmdlSetDynamicBatchSize(id, NULL, dyn, 4), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlSetDynamicBatchSize(id + 1000, in, dyn, 4), ACL_ERROR_INVALID_MODEL_ID);
  EXPECT_CODE(aclmdlSetDynamicHWSize(id, in, dyn, 224, 224), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("aclmdlSetDynamicBatchSize");
  EXPECT_CODE(aclmdlSetInputDynamicDims(id, in, dyn, NULL), ACL_ERROR_INVALID_PARAM);
  memset(&dims, 0, sizeof dims);
  EXPECT_CODE(aclmdlSetInputDynamicDims(id, in, dyn, &dims), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlGetDynamicBatch(NULL, &batch), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlGetDynamicBatch(desc, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlGetDynamicHW(desc, 0, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlGetInputDynamicGearCount(desc, 0, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlGetInputDynamicDims(desc, (size_t)-1, gear_dims, 3), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("--dynamic_dims");
  EXPECT_CODE(aclmdlGetInputDynamicDims(desc, (size_t)-1, NULL, 0), ACL_ERROR_INVALID_PARAM);

  /* The real flow: gear 4, execute, read the output shape back. */
  EXPECT_OK(aclmdlSetDynamicBatchSize(id, in, dyn, 4));
  EXPECT_OK(aclmdlGetCurOutputDims(desc, 0, &dims));
  EXPECT_TRUE(dims.dimCount >= 1 && dims.dims[0] == 4);
  EXPECT_OK(aclmdlExecute(id, in, out));
  EXPECT_OK(aclmdlGetCurOutputDims(desc, 0, &dims));
  EXPECT_TRUE(dims.dimCount >= 1 && dims.dims[0] == 4);
  od = aclmdlGetDatasetTensorDesc(out, 0);
  EXPECT_TRUE(od != NULL && aclGetTensorDescNumDims(od) == dims.dimCount && aclGetTensorDescDim(od, 0) == 4);
  got = Product(dims.dims, dims.dimCount) * sizeof(float);
  EXPECT_TRUE(got == out_bytes / 2);
  host = realloc(host, out_bytes);
  REQUIRE_OK(aclrtMemcpy(host, out_bytes, y_dev, out_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  snprintf(path, sizeof path, "%s/output_0.bin", dir);
  EXPECT_TRUE(WriteFile(path, host, got));
  /* Gear 8 runs too (buffer sizes are those of gear 8). */
  EXPECT_OK(aclmdlSetDynamicBatchSize(id, in, dyn, 8));
  EXPECT_OK(aclmdlExecute(id, in, out));
  EXPECT_OK(aclmdlGetCurOutputDims(desc, 0, &dims));
  EXPECT_TRUE(dims.dims[0] == 8);

  EXPECT_CODE(aclmdlLoadFromFileWithMem(model_path, &other_id, NULL, 0, NULL, 0), ACL_ERROR_FEATURE_UNSUPPORTED);

  free(host);
  aclmdlDestroyDataset(in);
  aclmdlDestroyDataset(out);
  aclDestroyDataBuffer(xb);
  aclDestroyDataBuffer(db);
  aclDestroyDataBuffer(yb);
  aclrtFree(x_dev);
  aclrtFree(dyn_dev);
  aclrtFree(y_dev);
  aclmdlDestroyDesc(desc);
  EXPECT_OK(aclmdlUnload(id));
  return 0;
}

/* A dataset with one device buffer per model input (sizes from the desc). */
static aclmdlDataset* InputsFor(aclmdlDesc* desc, void** dev, size_t n) {
  aclmdlDataset* ds = aclmdlCreateDataset();
  size_t i;
  for (i = 0; i < n; ++i) {
    size_t bytes = aclmdlGetInputSizeByIndex(desc, i);
    if (aclrtMalloc(&dev[i], bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return NULL;
    aclrtMemset(dev[i], bytes, 0, bytes);
    aclmdlAddDatasetBuffer(ds, aclCreateDataBuffer(dev[i], bytes));
  }
  return ds;
}

static void FreeInputs(aclmdlDataset* ds, void** dev, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    aclDestroyDataBuffer(aclmdlGetDatasetBuffer(ds, i));
    aclrtFree(dev[i]);
  }
  aclmdlDestroyDataset(ds);
}

static int Hw(const char* model_path) {
  uint32_t id = 0;
  aclmdlDesc* desc = aclmdlCreateDesc();
  aclmdlHW hw;
  aclmdlBatch batch;
  aclmdlIODims dims;
  size_t dyn = 99, gears = 9;
  void* dev[2] = {0};
  aclmdlDataset* in;
  REQUIRE_OK(aclmdlLoadFromFile(model_path, &id));
  REQUIRE_OK(aclmdlGetDesc(desc, id));
  EXPECT_OK(aclmdlGetDynamicHW(desc, (size_t)-1, &hw));
  EXPECT_TRUE(hw.hwCount == 2 && hw.hw[0][0] == 16 && hw.hw[0][1] == 16 && hw.hw[1][0] == 24 && hw.hw[1][1] == 40);
  EXPECT_OK(aclmdlGetDynamicBatch(desc, &batch));
  EXPECT_TRUE(batch.batchCount == 0);
  EXPECT_OK(aclmdlGetInputDynamicGearCount(desc, (size_t)-1, &gears));
  EXPECT_TRUE(gears == 0);
  EXPECT_CODE(aclmdlGetDynamicHW(NULL, 0, &hw), ACL_ERROR_INVALID_PARAM);
  REQUIRE_OK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &dyn));
  in = InputsFor(desc, dev, 2);
  REQUIRE_OK(in ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC);
  EXPECT_CODE(aclmdlSetDynamicHWSize(id, in, dyn, 40, 24), ACL_ERROR_INVALID_PARAM);  /* h and w swapped */
  EXPECT_MSG_HAS("not a gear");
  EXPECT_CODE(aclmdlSetDynamicBatchSize(id, in, dyn, 1), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("aclmdlSetDynamicHWSize");
  EXPECT_OK(aclmdlSetDynamicHWSize(id, in, dyn, 24, 40));
  EXPECT_OK(aclmdlGetCurOutputDims(desc, 0, &dims));
  EXPECT_TRUE(dims.dimCount >= 1);
  FreeInputs(in, dev, 2);
  aclmdlDestroyDesc(desc);
  EXPECT_OK(aclmdlUnload(id));
  return 0;
}

static int Dims(const char* model_path) {
  uint32_t id = 0;
  aclmdlDesc* desc = aclmdlCreateDesc();
  aclmdlIODims gear[2], wrong;
  aclmdlHW hw;
  size_t dyn = 99, gears = 0, i;
  void* dev[3] = {0};
  aclmdlDataset* in;
  static const int64_t want0[] = {1, 3, 4, 3, 3};
  REQUIRE_OK(aclmdlLoadFromFile(model_path, &id));
  REQUIRE_OK(aclmdlGetDesc(desc, id));
  EXPECT_OK(aclmdlGetInputDynamicGearCount(desc, (size_t)-1, &gears));
  EXPECT_TRUE(gears == 2);
  EXPECT_CODE(aclmdlGetInputDynamicDims(desc, (size_t)-1, gear, 3), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("gearCount");
  EXPECT_OK(aclmdlGetInputDynamicDims(desc, (size_t)-1, gear, 2));
  /* Gear 0: data(1,3,4) + mask(3,3), one after another. */
  EXPECT_TRUE(gear[0].dimCount == 5);
  for (i = 0; i < 5 && i < gear[0].dimCount; ++i) EXPECT_TRUE(gear[0].dims[i] == want0[i]);
  EXPECT_TRUE(gear[1].dimCount == 5 && gear[1].dims[1] == 5 && gear[1].dims[4] == 5);
  EXPECT_OK(aclmdlGetDynamicHW(desc, 0, &hw));
  EXPECT_TRUE(hw.hwCount == 0);
  REQUIRE_OK(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &dyn));
  EXPECT_TRUE(dyn == 2);
  in = InputsFor(desc, dev, 3);
  REQUIRE_OK(in ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC);
  wrong = gear[0];
  wrong.dims[4] = 4;
  EXPECT_CODE(aclmdlSetInputDynamicDims(id, in, dyn, &wrong), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("not a gear");
  wrong.dimCount = ACL_MAX_DIM_CNT + 1;
  EXPECT_CODE(aclmdlSetInputDynamicDims(id, in, dyn, &wrong), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlSetDynamicHWSize(id, in, dyn, 3, 3), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("aclmdlSetInputDynamicDims");
  EXPECT_OK(aclmdlSetInputDynamicDims(id, in, dyn, &gear[1]));
  FreeInputs(in, dev, 3);
  aclmdlDestroyDesc(desc);
  EXPECT_OK(aclmdlUnload(id));
  return 0;
}

static int RunAt(uint32_t id, aclmdlDesc* desc, const char* dir, int64_t n) {
  aclmdlIODims in_dims, cur;
  aclmdlDataset* in = aclmdlCreateDataset();
  aclmdlDataset* out = aclmdlCreateDataset();
  aclTensorDesc *td, *od;
  int64_t shape[2];
  size_t k, x_bytes, y_bytes, i;
  void *x_dev = NULL, *y_dev = NULL, *host;
  aclDataBuffer *xb, *yb;
  char path[4096];

  REQUIRE_OK(aclmdlGetInputDims(desc, 0, &in_dims));
  EXPECT_TRUE(in_dims.dimCount == 2 && in_dims.dims[0] == -1);
  k = (size_t)in_dims.dims[1];
  x_bytes = (size_t)n * k * sizeof(float);
  y_bytes = 1 << 20;  /* the output's size depends on N: allocate enough */
  REQUIRE_OK(aclrtMalloc(&x_dev, x_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  REQUIRE_OK(aclrtMalloc(&y_dev, y_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  host = malloc(y_bytes);
  snprintf(path, sizeof path, "%s/x_%lld.bin", dir, (long long)n);
  EXPECT_TRUE(ReadFile(path, host, x_bytes) == x_bytes);
  REQUIRE_OK(aclrtMemcpy(x_dev, x_bytes, host, x_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  xb = aclCreateDataBuffer(x_dev, x_bytes);
  yb = aclCreateDataBuffer(y_dev, y_bytes);
  REQUIRE_OK(aclmdlAddDatasetBuffer(in, xb));
  REQUIRE_OK(aclmdlAddDatasetBuffer(out, yb));
  /* Without a desc the shape is unknown. */
  EXPECT_CODE(aclmdlExecute(id, in, out), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("aclmdlSetDatasetTensorDesc");
  shape[0] = n;
  shape[1] = (int64_t)k;
  td = aclCreateTensorDesc(ACL_FLOAT, 2, shape, ACL_FORMAT_ND);
  EXPECT_CODE(aclmdlSetDatasetTensorDesc(NULL, td, 0), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlSetDatasetTensorDesc(in, NULL, 0), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclmdlSetDatasetTensorDesc(in, td, 1), ACL_ERROR_INVALID_PARAM);
  EXPECT_TRUE(aclmdlGetDatasetTensorDesc(in, 5) == NULL);
  EXPECT_TRUE(aclmdlGetDatasetTensorDesc(NULL, 0) == NULL);
  EXPECT_OK(aclmdlSetDatasetTensorDesc(in, td, 0));
  aclDestroyTensorDesc(td);  /* the dataset keeps its own copy */
  EXPECT_TRUE(aclmdlGetDatasetTensorDesc(in, 0) != NULL);
  EXPECT_OK(aclmdlExecute(id, in, out));
  od = aclmdlGetDatasetTensorDesc(out, 0);
  EXPECT_TRUE(od != NULL);
  if (od) {
    size_t rank = aclGetTensorDescNumDims(od), elems = 1;
    int64_t d0 = -9;
    EXPECT_OK(aclGetTensorDescDimV2(od, 0, &d0));
    EXPECT_TRUE(d0 == n);
    for (i = 0; i < rank; ++i) elems *= (size_t)aclGetTensorDescDim(od, i);
    EXPECT_OK(aclmdlGetCurOutputDims(desc, 0, &cur));
    EXPECT_TRUE(cur.dimCount == rank && cur.dims[0] == n);
    REQUIRE_OK(aclrtMemcpy(host, y_bytes, y_dev, y_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    snprintf(path, sizeof path, "%s/out_%lld.bin", dir, (long long)n);
    EXPECT_TRUE(WriteFile(path, host, elems * sizeof(float)));
  }
  free(host);
  aclmdlDestroyDataset(in);
  aclmdlDestroyDataset(out);
  aclDestroyDataBuffer(xb);
  aclDestroyDataBuffer(yb);
  aclrtFree(x_dev);
  aclrtFree(y_dev);
  return 0;
}

static int Shape(const char* model_path, const char* dir, int64_t n1, int64_t n2) {
  uint32_t id = 0;
  aclmdlDesc* desc = aclmdlCreateDesc();
  size_t gears = 9;
  REQUIRE_OK(aclmdlLoadFromFile(model_path, &id));
  REQUIRE_OK(aclmdlGetDesc(desc, id));
  EXPECT_TRUE(aclmdlGetInputSizeByIndex(desc, 0) == 0);  /* depends on N */
  EXPECT_OK(aclmdlGetInputDynamicGearCount(desc, (size_t)-1, &gears));
  EXPECT_TRUE(gears == 0);
  {
    aclmdlDataset* ds = aclmdlCreateDataset();
    EXPECT_CODE(aclmdlSetDynamicBatchSize(id, ds, 0, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_MSG_HAS("no gears");
    aclmdlDestroyDataset(ds);
  }
  if (RunAt(id, desc, dir, n1) != 0) return 1;
  if (RunAt(id, desc, dir, n2) != 0) return 1;
  aclmdlDestroyDesc(desc);
  EXPECT_OK(aclmdlUnload(id));
  return 0;
}

int main(int argc, char** argv) {
  aclrtContext ctx = NULL;
  int rc;
  if (argc < 3 || (argc < 4 && strcmp(argv[1], "hw") != 0 && strcmp(argv[1], "dims") != 0)) {
    fprintf(stderr, "usage: acl_dynamic gear MODEL.om DIR | hw MODEL.om | dims MODEL.om | shape MODEL.om DIR N1 N2\n");
    return 2;
  }
  REQUIRE_OK(aclInit(NULL));
  REQUIRE_OK(aclrtSetDevice(0));
  REQUIRE_OK(aclrtCreateContext(&ctx, 0));
  if (strcmp(argv[1], "gear") == 0) rc = Gear(argv[2], argv[3]);
  else if (strcmp(argv[1], "hw") == 0) rc = Hw(argv[2]);
  else if (strcmp(argv[1], "dims") == 0) rc = Dims(argv[2]);
  else if (strcmp(argv[1], "shape") == 0 && argc >= 6) rc = Shape(argv[2], argv[3], atoll(argv[4]), atoll(argv[5]));
  else rc = 2;
  aclrtDestroyContext(ctx);
  aclrtResetDevice(0);
  aclFinalize();
  if (rc) return rc;
  return Summary("acl_dynamic");
}

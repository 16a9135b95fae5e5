/* Single-operator execution from C, built the way users build (headers +
 * -lascendcl): aclopExecuteV2 on a stream, a handle run many times, a CANN op
 * type with attributes, and misuse (NULL or stale arguments, wrong counts,
 * destroyed handles) getting codes and messages. Results are checked against
 * plain C loops. Usage: acl_single_op */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl_check.h"

enum { kRows = 3, kCols = 5 };

static void* Upload(const float* host, size_t bytes) {
  void* dev = NULL;
  if (aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return NULL;
  aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  return dev;
}

int main(void) {
  const int64_t dims[2] = {kRows, kCols};
  float a[kRows * kCols], b[kRows * kCols], y[kRows * kCols];
  const size_t bytes = sizeof a;
  aclrtStream stream = NULL;
  aclTensorDesc *desc, *desc_unknown, *descs[2], *out_descs[1];
  aclDataBuffer *ba, *bb, *by, *ins[2], *outs[1];
  aclopAttr* attr;
  aclopHandle* handle = NULL;
  void *da, *db, *dy;
  int64_t d0 = 0, d1 = 0;
  int i, run, bad = 0;

  for (i = 0; i < kRows * kCols; ++i) {
    a[i] = (float)(i % 7) - 3.0f;
    b[i] = 0.25f * (float)(i % 5) + 1.0f;
  }
  REQUIRE_OK(aclInit(NULL));
  REQUIRE_OK(aclrtSetDevice(0));
  REQUIRE_OK(aclrtCreateStream(&stream));
  desc = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
  da = Upload(a, bytes);
  db = Upload(b, bytes);
  REQUIRE_OK(aclrtMalloc(&dy, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  ba = aclCreateDataBuffer(da, bytes);
  bb = aclCreateDataBuffer(db, bytes);
  by = aclCreateDataBuffer(dy, bytes);
  descs[0] = desc;
  descs[1] = desc;
  ins[0] = ba;
  ins[1] = bb;
  outs[0] = by;

  /* Mul on a stream; the output desc's unknown dims are filled in. */
  {
    const int64_t unknown[2] = {-1, -1};
    desc_unknown = aclCreateTensorDesc(ACL_FLOAT, 2, unknown, ACL_FORMAT_ND);
    out_descs[0] = desc_unknown;
    EXPECT_OK(aclopExecuteV2("Mul", 2, descs, ins, 1, out_descs, outs, NULL, stream));
    EXPECT_OK(aclrtSynchronizeStream(stream));
    EXPECT_OK(aclGetTensorDescDimV2(desc_unknown, 0, &d0));
    EXPECT_OK(aclGetTensorDescDimV2(desc_unknown, 1, &d1));
    EXPECT_TRUE(d0 == kRows && d1 == kCols);
    EXPECT_OK(aclrtMemcpy(y, bytes, dy, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (i = 0; i < kRows * kCols; ++i) bad += y[i] != a[i] * b[i];
    EXPECT_TRUE(bad == 0);
  }

  /* LeakyRelu with CANN's attribute name, through a handle run 50 times. */
  attr = aclopCreateAttr();
  EXPECT_OK(aclopSetAttrFloat(attr, "negative_slope", 0.125f));
  out_descs[0] = desc;
  EXPECT_OK(aclopCreateHandle("LeakyRelu", 1, (const aclTensorDesc* const*)descs, 1,
                              (const aclTensorDesc* const*)out_descs, attr, &handle));
  for (run = 0; run < 50 && handle; ++run)
    EXPECT_OK(aclopExecWithHandle(handle, 1, (const aclDataBuffer* const*)ins, 1, outs, stream));
  EXPECT_OK(aclrtSynchronizeStream(stream));
  EXPECT_OK(aclrtMemcpy(y, bytes, dy, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  bad = 0;
  for (i = 0; i < kRows * kCols; ++i) bad += fabsf(y[i] - (a[i] > 0 ? a[i] : 0.125f * a[i])) > 1e-6f;
  EXPECT_TRUE(bad == 0);

  /* Misuse. */
  EXPECT_CODE(aclopExecuteV2(NULL, 2, descs, ins, 1, out_descs, outs, NULL, stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("opType");
  EXPECT_CODE(aclopExecuteV2("Mul", 2, NULL, ins, 1, out_descs, outs, NULL, stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclopExecuteV2("Mul", -1, descs, ins, 1, out_descs, outs, NULL, stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclopExecuteV2("Mul", 1, descs, ins, 1, out_descs, outs, NULL, stream), ACL_ERROR_OP_INPUT_NOT_MATCH);
  EXPECT_MSG_HAS("Mul");
  EXPECT_CODE(aclopExecuteV2("Frobnicate", 2, descs, ins, 1, out_descs, outs, NULL, stream), ACL_ERROR_OP_NOT_FOUND);
  EXPECT_MSG_HAS("Frobnicate");
  EXPECT_CODE(aclopSetAttrInt(NULL, "x", 1), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclopSetAttrInt(attr, NULL, 1), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclopSetAttrListInt(attr, "x", 2, NULL), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclopExecWithHandle(handle, 2, (const aclDataBuffer* const*)ins, 1, outs, stream),
              ACL_ERROR_INVALID_PARAM);
  EXPECT_MSG_HAS("compiled for 1 inputs");
  {
    /* A buffer smaller than its tensor. */
    aclDataBuffer* small = aclCreateDataBuffer(dy, bytes / 2);
    aclDataBuffer* small_outs[1];
    small_outs[0] = small;
    EXPECT_CODE(aclopExecWithHandle(handle, 1, (const aclDataBuffer* const*)ins, 1, small_outs, stream),
                ACL_ERROR_INVALID_PARAM);
    EXPECT_MSG_HAS("buffer size");
    aclDestroyDataBuffer(small);
  }
  aclopDestroyHandle(handle);
  EXPECT_CODE(aclopExecWithHandle(handle, 1, (const aclDataBuffer* const*)ins, 1, outs, stream),
              ACL_ERROR_INVALID_PARAM);
  aclopDestroyHandle(handle); /* a second destroy is ignored */
  aclopDestroyAttr(attr);
  EXPECT_CODE(aclopSetAttrInt(attr, "x", 1), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclSetTensorConst(desc, NULL, bytes), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclSetTensorConst(desc, a, bytes - 4), ACL_ERROR_INVALID_PARAM);
  EXPECT_CODE(aclopLoad(a, bytes), ACL_ERROR_READ_MODEL_FAILURE); /* not a single-op .om */
  EXPECT_MSG_HAS("magic");

  aclDestroyDataBuffer(ba);
  aclDestroyDataBuffer(bb);
  aclDestroyDataBuffer(by);
  aclDestroyTensorDesc(desc);
  aclDestroyTensorDesc(desc_unknown);
  aclrtFree(da);
  aclrtFree(db);
  aclrtFree(dy);
  EXPECT_OK(aclrtDestroyStream(stream));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclFinalize());
  return Summary("acl_single_op");
}

// aclopExecuteV2 on a custom operator found through ASCEND_CUSTOM_OPP_PATH
// (tests/python/test_ascendc.py): AddCustom from the add_custom_op package on
// half data, then the errors (a float input; the op type without packages is
// reported by the single-operator path).
//   op_by_type N x.bin y.bin z.bin
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  int64_t n = std::atoll(argv[1]);
  size_t bytes = size_t(n) * 2;
  std::vector<uint8_t> x(bytes), y(bytes), z(bytes);
  FILE* f = std::fopen(argv[2], "rb");
  if (!f || std::fread(x.data(), 1, bytes, f) != bytes) return 3;
  std::fclose(f);
  f = std::fopen(argv[3], "rb");
  if (!f || std::fread(y.data(), 1, bytes, f) != bytes) return 3;
  std::fclose(f);
  if (aclInit(nullptr) || aclrtSetDevice(0)) return 4;
  aclrtStream stream;
  aclrtCreateStream(&stream);
  void *xd, *yd, *zd;
  aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  int64_t dims[1] = {n};
  aclTensorDesc* in_desc[2] = {aclCreateTensorDesc(ACL_FLOAT16, 1, dims, ACL_FORMAT_ND),
                               aclCreateTensorDesc(ACL_FLOAT16, 1, dims, ACL_FORMAT_ND)};
  aclTensorDesc* out_desc[1] = {aclCreateTensorDesc(ACL_FLOAT16, 1, dims, ACL_FORMAT_ND)};
  aclDataBuffer* in_buf[2] = {aclCreateDataBuffer(xd, bytes), aclCreateDataBuffer(yd, bytes)};
  aclDataBuffer* out_buf[1] = {aclCreateDataBuffer(zd, bytes)};
  aclopAttr* attr = aclopCreateAttr();
  aclError rc = aclopExecuteV2("AddCustom", 2, in_desc, in_buf, 1, out_desc, out_buf, attr, stream);
  std::printf("execute=%d %s\n", (int)rc, rc ? aclGetRecentErrMsg() : "");
  rc = aclrtSynchronizeStream(stream);
  std::printf("sync=%d\n", (int)rc);
  aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  f = std::fopen(argv[4], "wb");
  std::fwrite(z.data(), 1, bytes, f);
  std::fclose(f);
  aclTensorDesc* bad[2] = {aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND), in_desc[1]};
  rc = aclopExecuteV2("AddCustom", 2, bad, in_buf, 1, out_desc, out_buf, attr, stream);
  std::printf("float_input=%d %s\n", (int)rc, aclGetRecentErrMsg());
  aclopDestroyAttr(attr);
  for (auto* d : {in_desc[0], in_desc[1], out_desc[0], bad[0]}) aclDestroyTensorDesc(d);
  for (auto* b : {in_buf[0], in_buf[1], out_buf[0]}) aclDestroyDataBuffer(b);
  aclrtFree(xd);
  aclrtFree(yd);
  aclrtFree(zd);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  std::printf("done\n");
  return 0;
}

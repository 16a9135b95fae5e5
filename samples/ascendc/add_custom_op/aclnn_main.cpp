/* Calls the packaged AddCustom through its generated two-phase API, as an
 * aclnn application does:
 *   ascendc-opp-build samples/ascendc/add_custom_op --out OPP
 *   ascendc++ aclnn_main.cpp -I OPP/vendors/customize/op_api/include \
 *       -L OPP/vendors/customize/op_api/lib -lcust_opapi -Wl,-rpath,OPP/vendors/customize/op_api/lib -o app
 * Usage: app N x.bin y.bin z.bin   (N halves); also reports what the API
 * refuses (a float input, a wrong output shape, a NULL input). */
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "aclnn_add_custom.h"

#define CHECK_RET(cond, ...)             \
  do {                                   \
    if (!(cond)) {                       \
      std::printf("FAIL: " __VA_ARGS__); \
      std::printf("\n");                 \
      return 1;                          \
    }                                    \
  } while (0)

static aclTensor* Tensor(void* data, int64_t n, aclDataType dt) {
  int64_t shape[1] = {n}, strides[1] = {1};
  return aclCreateTensor(shape, 1, dt, strides, 0, ACL_FORMAT_ND, shape, 1, data);
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  int64_t n = std::atoll(argv[1]);
  size_t bytes = size_t(n) * 2;
  std::vector<uint8_t> x(bytes), y(bytes), z(bytes);
  FILE* f = std::fopen(argv[2], "rb");
  CHECK_RET(f && std::fread(x.data(), 1, bytes, f) == bytes, "read x");
  std::fclose(f);
  f = std::fopen(argv[3], "rb");
  CHECK_RET(f && std::fread(y.data(), 1, bytes, f) == bytes, "read y");
  std::fclose(f);

  CHECK_RET(aclInit(nullptr) == ACL_SUCCESS, "aclInit");
  CHECK_RET(aclrtSetDevice(0) == ACL_SUCCESS, "aclrtSetDevice");
  aclrtStream stream;
  CHECK_RET(aclrtCreateStream(&stream) == ACL_SUCCESS, "aclrtCreateStream");
  void *xd, *yd, *zd;
  CHECK_RET(aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "malloc");
  CHECK_RET(aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "malloc");
  CHECK_RET(aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, "malloc");
  aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  aclTensor* xt = Tensor(xd, n, ACL_FLOAT16);
  aclTensor* yt = Tensor(yd, n, ACL_FLOAT16);
  aclTensor* zt = Tensor(zd, n, ACL_FLOAT16);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  aclnnStatus ret = aclnnAddCustomGetWorkspaceSize(xt, yt, zt, &workspaceSize, &executor);
  CHECK_RET(ret == ACLNN_SUCCESS, "aclnnAddCustomGetWorkspaceSize: %d", ret);
  void* workspace = nullptr;
  if (workspaceSize > 0) CHECK_RET(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST) == 0, "ws");
  ret = aclnnAddCustom(workspace, workspaceSize, executor, stream);
  CHECK_RET(ret == ACLNN_SUCCESS, "aclnnAddCustom: %d", ret);
  CHECK_RET(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "sync: %s", aclGetRecentErrMsg());
  aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  f = std::fopen(argv[4], "wb");
  std::fwrite(z.data(), 1, bytes, f);
  std::fclose(f);
  std::printf("workspace=%llu\n", (unsigned long long)workspaceSize);

  // What the definition refuses.
  aclTensor* xf = Tensor(xd, n / 2, ACL_FLOAT);
  std::printf("float_input=%d\n", aclnnAddCustomGetWorkspaceSize(xf, yt, zt, &workspaceSize, &executor));
  aclTensor* zs = Tensor(zd, n / 2, ACL_FLOAT16);
  std::printf("short_output=%d\n", aclnnAddCustomGetWorkspaceSize(xt, yt, zs, &workspaceSize, &executor));
  std::printf("null_input=%d\n", aclnnAddCustomGetWorkspaceSize(nullptr, yt, zt, &workspaceSize, &executor));
  std::printf("stale_executor=%d\n", aclnnAddCustom(nullptr, 0, executor, stream));

  for (aclTensor* t : {xt, yt, zt, xf, zs}) aclDestroyTensor(t);
  aclrtFree(xd);
  aclrtFree(yd);
  aclrtFree(zd);
  if (workspace) aclrtFree(workspace);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  std::printf("done\n");
  return 0;
}

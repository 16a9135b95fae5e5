// aclrtBinaryLoadFromFile / aclrtBinaryLoad + aclrtBinaryGetFunction +
// aclrtLaunchKernel on a kernel library built by `ascendc++ -shared -fPIC`
// (tests/python/test_ascendc.py): runs add_tiled from samples/ascendc through
// packed arguments, from the file and from its bytes, and checks the errors.
//   launch_binary LIBRARY N  -> prints "max_err=..." lines and the error checks
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "../../samples/ascendc/add_tiled/add_tiling.h"

#define CHECK(call)                                                                      \
  do {                                                                                   \
    aclError rc_ = (call);                                                               \
    if (rc_ != ACL_SUCCESS) {                                                            \
      std::printf("FAIL %s -> %d: %s\n", #call, (int)rc_, aclGetRecentErrMsg());        \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static int RunOnce(aclrtFuncHandle fn, aclrtStream stream, uint32_t n, const char* label) {
  size_t bytes = size_t{n} * 4;
  std::vector<float> x(n), y(n), z(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = 0.5f * i, y[i] = 3.0f - i;
  AddTiling tiling = ComputeAddTiling(n, 4, 256);
  void *xd, *yd, *zd, *td, *args;
  CHECK(aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&td, sizeof tiling, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&args, 4 * 8, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclrtMemcpy(td, sizeof tiling, &tiling, sizeof tiling, ACL_MEMCPY_HOST_TO_DEVICE));
  void* packed[4] = {xd, yd, zd, td};
  // The arguments are written by a copy queued on the stream before the launch:
  // the launch must read them when it runs, not when it is queued.
  CHECK(aclrtMemcpyAsync(args, sizeof packed, packed, sizeof packed, ACL_MEMCPY_HOST_TO_DEVICE, stream));
  CHECK(aclrtLaunchKernel(fn, 4, args, sizeof packed, stream));
  CHECK(aclrtSynchronizeStream(stream));
  CHECK(aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  double err = 0;
  for (uint32_t i = 0; i < n; ++i) err = std::fmax(err, std::fabs(double(z[i]) - (double(x[i]) + double(y[i]))));
  std::printf("%s max_err=%g\n", label, err);
  aclError bad = aclrtLaunchKernel(fn, 4, args, 3 * 8, stream);
  std::printf("%s short_args=%d\n", label, (int)bad);
  for (void* p : {xd, yd, zd, td, args}) CHECK(aclrtFree(p));
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const char* lib = argv[1];
  uint32_t n = std::strtoul(argv[2], nullptr, 10);
  CHECK(aclInit(nullptr));
  CHECK(aclrtSetDevice(0));
  aclrtStream stream;
  CHECK(aclrtCreateStream(&stream));

  aclrtBinHandle bin;
  CHECK(aclrtBinaryLoadFromFile(lib, nullptr, &bin));
  aclrtFuncHandle fn;
  CHECK(aclrtBinaryGetFunction(bin, "add_tiled", &fn));
  if (RunOnce(fn, stream, n, "file")) return 1;
  aclError rc = aclrtBinaryGetFunction(bin, "no_such_kernel", &fn);
  std::printf("unknown_kernel=%d %s\n", (int)rc, aclGetRecentErrMsg());
  CHECK(aclrtBinaryUnLoad(bin));
  rc = aclrtLaunchKernel(fn, 4, nullptr, 0, stream);
  std::printf("after_unload=%d\n", (int)rc);

  // The same library from its bytes.
  FILE* f = std::fopen(lib, "rb");
  std::vector<char> bytes;
  char buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + got);
  std::fclose(f);
  aclrtBinary binary = aclrtCreateBinary(bytes.data(), bytes.size());
  CHECK(aclrtBinaryLoad(binary, &bin));
  CHECK(aclrtBinaryGetFunction(bin, "add_tiled", &fn));
  if (RunOnce(fn, stream, n, "memory")) return 1;
  CHECK(aclrtBinaryUnLoad(bin));
  CHECK(aclrtDestroyBinary(binary));

  rc = aclrtBinaryLoadFromFile(argv[0], nullptr, &bin);  // an executable, not a kernel library
  std::printf("not_a_library=%d %s\n", (int)rc, aclGetRecentErrMsg());
  rc = aclrtBinaryLoadFromFile("/nonexistent/kernels.so", nullptr, &bin);
  std::printf("missing=%d %s\n", (int)rc, aclGetRecentErrMsg());

  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  std::printf("done\n");
  return 0;
}

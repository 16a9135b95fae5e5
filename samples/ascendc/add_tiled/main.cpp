/* Host side of add_tiled: z = x + y for float32 files of any length, launched
 * with ACLRT_LAUNCH_KERNEL (the header is written by ascendc++).
 *   ascendc++ main.cpp add_tiled.cpp -o add_tiled
 * Usage: add_tiled N blockDim tileLength x.bin y.bin z.bin [repeats]
 * With repeats > 1 it also prints the median time per launch and the
 * bandwidth it reached (bytes read + written / time). */
#include <algorithm>
#include <chrono>
#include <vector>

#include "../common/data_utils.h"
#include "aclrtlaunch_add_tiled.h"
#include "add_tiling.h"

int32_t main(int32_t argc, char* argv[]) {
  if (argc != 7 && argc != 8) {
    std::fprintf(stderr, "usage: %s N blockDim tileLength x.bin y.bin z.bin [repeats]\n", argv[0]);
    return 2;
  }
  uint32_t n = std::strtoul(argv[1], nullptr, 10), blockDim = std::strtoul(argv[2], nullptr, 10);
  AddTiling tiling = ComputeAddTiling(n, blockDim, std::strtoul(argv[3], nullptr, 10));
  size_t bytes = size_t{n} * sizeof(float);
  std::vector<float> x(n), y(n), z(n);
  if (!ReadFile(argv[4], x.data(), bytes) || !ReadFile(argv[5], y.data(), bytes)) return 1;
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  void *xd, *yd, *zd, *td;
  CHECK_ACL(aclrtMalloc(&xd, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&yd, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&zd, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&td, sizeof tiling, ACL_MEM_MALLOC_HUGE_FIRST));
  if (bytes) {
    CHECK_ACL(aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  }
  CHECK_ACL(aclrtMemcpy(td, sizeof tiling, &tiling, sizeof tiling, ACL_MEMCPY_HOST_TO_DEVICE));
  int repeats = argc == 8 ? std::atoi(argv[7]) : 1;
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    CHECK_ACL(ACLRT_LAUNCH_KERNEL(add_tiled)(blockDim, stream, xd, yd, zd, td));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (repeats > 1) {
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    std::printf("add_tiled: %u floats, median %.3f ms, %.2f GB/s\n", n, med, 3.0 * bytes / (med * 1e6));
  }
  if (bytes) CHECK_ACL(aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  WriteFile(argv[6], z.data(), bytes);
  for (void* p : {xd, yd, zd, td}) CHECK_ACL(aclrtFree(p));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return 0;
}

/* Host side of leaky_relu_custom over half data.
 *   ascendc++ main.cpp leaky_relu.cpp -o leaky_relu
 * Usage: leaky_relu N blockDim tileNum alpha x.bin y.bin [repeats]
 * With repeats > 1 it also prints the median time per launch and the
 * bandwidth it reached (bytes read + written / time). */
#include <algorithm>
#include <chrono>
#include <vector>

#include "../common/data_utils.h"
#include "aclrtlaunch_leaky_relu_custom.h"
#include "leaky_relu_tiling.h"

int32_t main(int32_t argc, char* argv[]) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s N blockDim tileNum alpha x.bin y.bin [repeats]\n", argv[0]);
    return 2;
  }
  uint32_t n = std::strtoul(argv[1], nullptr, 10), blockDim = std::strtoul(argv[2], nullptr, 10);
  optiling::LeakyReluTilingData tiling;
  tiling.set_totalLength(n);
  tiling.set_tileNum(static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)));
  tiling.set_alpha(static_cast<float>(std::atof(argv[4])));
  uint8_t tilingBuf[64];
  if (!tiling.SaveToBuffer(tilingBuf, sizeof tilingBuf)) return 1;
  int repeats = argc > 7 ? std::atoi(argv[7]) : 1;
  size_t bytes = size_t{n} * 2;
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  void *host, *xd, *yd, *td;
  CHECK_ACL(aclrtMallocHost(&host, bytes));
  CHECK_ACL(aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&td, tiling.GetDataSize(), ACL_MEM_MALLOC_HUGE_FIRST));
  if (!ReadFile(argv[5], host, bytes)) return 1;
  CHECK_ACL(aclrtMemcpy(xd, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(td, tiling.GetDataSize(), tilingBuf, tiling.GetDataSize(), ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    CHECK_ACL(ACLRT_LAUNCH_KERNEL(leaky_relu_custom)(blockDim, stream, xd, yd, td));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  CHECK_ACL(aclrtMemcpy(host, bytes, yd, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  WriteFile(argv[6], host, bytes);
  if (repeats > 1) {
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    std::printf("leaky_relu: %u halves, median %.3f ms, %.2f GB/s\n", n, med, 2.0 * bytes / (med * 1e6));
  }
  CHECK_ACL(aclrtFree(xd));
  CHECK_ACL(aclrtFree(yd));
  CHECK_ACL(aclrtFree(td));
  CHECK_ACL(aclrtFreeHost(host));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return 0;
}

/* Host side of the Matmul sample: C (M x N, float) = A (M x K) * B (K x N)
 * (+ bias, N floats), A and B half (or float / bfloat16 with --dtype).
 *   ascendc++ main.cpp matmul_custom.cpp -o matmul_custom
 * Usage: matmul_custom [--dtype half|float|bf16] M N K blockDim a.bin b.bin bias.bin|- c.bin [repeats]
 * The tiling comes from MultiCoreMatmulTiling for blockDim blocks; with
 * repeats > 1 it prints the median time per launch and the GFLOP/s. */
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "../common/data_utils.h"
#include "aclrtlaunch_matmul_custom.h"
#include "aclrtlaunch_matmul_custom_bf16.h"
#include "aclrtlaunch_matmul_custom_float.h"
#include "tiling/tiling_api.h"

int32_t main(int32_t argc, char* argv[]) {
  std::string dtype = "half";
  if (argc > 2 && std::strcmp(argv[1], "--dtype") == 0) {
    dtype = argv[2];
    argc -= 2, argv += 2;
  }
  if ((argc != 9 && argc != 10) || (dtype != "half" && dtype != "float" && dtype != "bf16")) {
    std::fprintf(stderr, "usage: matmul_custom [--dtype half|float|bf16] M N K blockDim a.bin b.bin bias.bin|- "
                         "c.bin [repeats]\n");
    return 2;
  }
  int32_t M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
  uint32_t blockDim = std::strtoul(argv[4], nullptr, 10);
  bool isBias = std::strcmp(argv[7], "-") != 0;
  int repeats = argc == 10 ? std::atoi(argv[9]) : 1;
  matmul_tiling::DataType inType = dtype == "half"    ? matmul_tiling::DataType::DT_FLOAT16
                                   : dtype == "float" ? matmul_tiling::DataType::DT_FLOAT
                                                      : matmul_tiling::DataType::DT_BF16;
  size_t inBytes = dtype == "float" ? 4 : 2;

  // Tiling on the host, as CANN's sample computes it.
  matmul_tiling::MultiCoreMatmulTiling tilingApi;
  tilingApi.SetDim(blockDim);
  tilingApi.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, inType);
  tilingApi.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, inType);
  tilingApi.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
  tilingApi.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT);
  tilingApi.SetShape(M, N, K);
  tilingApi.SetOrgShape(M, N, K);
  tilingApi.SetBias(isBias);
  tilingApi.SetBufferSpace(-1, -1, -1);
  optiling::TCubeTiling tilingData;
  if (tilingApi.GetTiling(tilingData) == -1) {
    std::fprintf(stderr, "matmul_custom: GetTiling failed\n");
    return 1;
  }
  std::vector<uint8_t> tilingHost(tilingData.GetDataSize());
  tilingData.SaveToBuffer(tilingHost.data(), tilingHost.size());

  size_t aBytes = size_t(M) * K * inBytes, bBytes = size_t(K) * N * inBytes;
  size_t biasBytes = size_t(N) * sizeof(float), cBytes = size_t(M) * N * sizeof(float);
  std::vector<uint8_t> a(aBytes), b(bBytes), bias(biasBytes), c(cBytes);
  if (!ReadFile(argv[5], a.data(), aBytes) || !ReadFile(argv[6], b.data(), bBytes)) return 1;
  if (isBias && !ReadFile(argv[7], bias.data(), biasBytes)) return 1;

  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  void *aDev, *bDev, *biasDev, *cDev, *tilingDev, *workspaceDev;
  CHECK_ACL(aclrtMalloc(&aDev, aBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&bDev, bBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&biasDev, biasBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&cDev, cBytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&tilingDev, tilingHost.size(), ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&workspaceDev, 16 << 20, ACL_MEM_MALLOC_HUGE_FIRST));  // the system workspace
  CHECK_ACL(aclrtMemcpy(aDev, aBytes, a.data(), aBytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(bDev, bBytes, b.data(), bBytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(biasDev, biasBytes, bias.data(), biasBytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(tilingDev, tilingHost.size(), tilingHost.data(), tilingHost.size(),
                        ACL_MEMCPY_HOST_TO_DEVICE));

  std::vector<double> ms;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (dtype == "half")
      CHECK_ACL(ACLRT_LAUNCH_KERNEL(matmul_custom)(blockDim, stream, aDev, bDev, biasDev, cDev, workspaceDev,
                                                   tilingDev));
    else if (dtype == "float")
      CHECK_ACL(ACLRT_LAUNCH_KERNEL(matmul_custom_float)(blockDim, stream, aDev, bDev, biasDev, cDev,
                                                         workspaceDev, tilingDev));
    else
      CHECK_ACL(ACLRT_LAUNCH_KERNEL(matmul_custom_bf16)(blockDim, stream, aDev, bDev, biasDev, cDev,
                                                        workspaceDev, tilingDev));
    CHECK_ACL(aclrtSynchronizeStream(stream));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (repeats > 1) {
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    std::printf("matmul_custom (%s): M %d N %d K %d, %u blocks, median %.3f ms, %.1f GFLOP/s\n", dtype.c_str(), M,
                N, K, blockDim, med, 2.0 * M * N * K / (med * 1e6));
  }
  CHECK_ACL(aclrtMemcpy(c.data(), cBytes, cDev, cBytes, ACL_MEMCPY_DEVICE_TO_HOST));
  WriteFile(argv[8], c.data(), cBytes);
  for (void* p : {aDev, bDev, biasDev, cDev, tilingDev, workspaceDev}) CHECK_ACL(aclrtFree(p));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return 0;
}

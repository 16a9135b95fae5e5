/* Host side of softmax_rows, in CANN's CPU-debug style (tikicpulib.h,
 * ICPU_RUN_KF, GmAlloc).
 *   ascendc++ main.cpp softmax_rows.cpp -o softmax_rows
 * Usage: softmax_rows rows cols blockDim x.bin y.bin */
#include <cstdlib>

#include "../common/data_utils.h"
#include "tikicpulib.h"

struct SoftmaxTiling {
  uint32_t rows;
  uint32_t cols;
};
extern "C" __global__ __aicore__ void softmax_rows(GM_ADDR x, GM_ADDR y, GM_ADDR tiling);

int32_t main(int32_t argc, char* argv[]) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s rows cols blockDim x.bin y.bin\n", argv[0]);
    return 2;
  }
  SoftmaxTiling t{static_cast<uint32_t>(std::atoi(argv[1])), static_cast<uint32_t>(std::atoi(argv[2]))};
  uint32_t blockDim = std::atoi(argv[3]);
  size_t bytes = size_t{t.rows} * t.cols * sizeof(float);
  uint8_t* x = static_cast<uint8_t*>(AscendC::GmAlloc(bytes));
  uint8_t* y = static_cast<uint8_t*>(AscendC::GmAlloc(bytes));
  uint8_t* tiling = static_cast<uint8_t*>(AscendC::GmAlloc(sizeof t));
  std::memcpy(tiling, &t, sizeof t);
  if (!ReadFile(argv[4], x, bytes)) return 1;
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(softmax_rows, blockDim, x, y, tiling);
  WriteFile(argv[5], y, bytes);
  AscendC::GmFree(x);
  AscendC::GmFree(y);
  AscendC::GmFree(tiling);
  return 0;
}

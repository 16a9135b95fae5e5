// TILING_KEY_IS on the CPU-debug entry (tests/python/test_ascendc.py): a kernel
// whose branches write which key it ran with; ICPU_SET_TILING_KEY sets the key
// of the next ICPU_RUN_KF only.
#include <cstdio>

#include "kernel_operator.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void which_key(GM_ADDR out) {
  AscendC::GlobalTensor<int32_t> o;
  o.SetGlobalBuffer((__gm__ int32_t*)out, 8);
  int32_t v = -1;
  if (TILING_KEY_IS(0)) v = 0;
  else if (TILING_KEY_IS(7)) v = 7;
  else if (TILING_KEY_IS(1000000000000ULL)) v = 1000;
  o.SetValue(AscendC::GetBlockIdx(), v);
}

int main() {
  auto* out = static_cast<uint8_t*>(AscendC::GmAlloc(32));
  auto* v = reinterpret_cast<int32_t*>(out);
  ICPU_SET_TILING_KEY(7);
  ICPU_RUN_KF(which_key, 2, out);
  std::printf("first=%d,%d", v[0], v[1]);
  ICPU_RUN_KF(which_key, 2, out);
  std::printf(" second=%d,%d", v[0], v[1]);
  ICPU_SET_TILING_KEY(1000000000000ULL);
  ICPU_RUN_KF(which_key, 1, out);
  std::printf(" big=%d\n", v[0]);
  AscendC::GmFree(out);
  return 0;
}

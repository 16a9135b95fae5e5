// Provokes each check of Ascend C on the CPU (tests/python/test_ascendc.py
// asserts the messages): `ascendc_misuse MODE` runs a one-block kernel that
// makes the mistake named MODE through ICPU_RUN_KF (which prints the message
// and exits 1); MODE=stream launches it on a stream and checks that
// aclrtSynchronizeStream reports it (prints the code and message, exits 0).
#include <cstdio>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "tikicpulib.h"

using namespace AscendC;

namespace {
std::string g_mode;
bool Is(const char* m) { return g_mode == m; }
}  // namespace

extern "C" __global__ __aicore__ void misuse_kernel(GM_ADDR in, GM_ADDR out) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qin;
  TQue<QuePosition::VECOUT, 1> qout;
  GlobalTensor<float> gin, gout;
  gin.SetGlobalBuffer((__gm__ float*)in, 1024);
  gout.SetGlobalBuffer((__gm__ float*)out, 1024);
  if (Is("ub_overflow")) {  // 256 KiB: more than an Ascend910B's Unified Buffer
    pipe.InitBuffer(qin, 2, 64 * 1024);
    pipe.InitBuffer(qout, 1, 128 * 1024 + 32);
    return;
  }
  if (Is("ub_200k")) {  // fits an Ascend310P's 256 KiB, not an Ascend910B's 192 KiB
    pipe.InitBuffer(qin, 2, 100 * 1024);
    return;
  }
  pipe.InitBuffer(qin, 2, 256 * sizeof(float));
  pipe.InitBuffer(qout, 2, 256 * sizeof(float));
  if (Is("alloc_exhausted")) {
    qin.AllocTensor<float>();
    qin.AllocTensor<float>();
    qin.AllocTensor<float>();
  }
  if (Is("deque_empty")) qin.DeQue<float>();
  if (Is("double_free")) {
    LocalTensor<float> t = qin.AllocTensor<float>();
    qin.FreeTensor(t);
    qin.FreeTensor(t);
  }
  if (Is("foreign")) {
    LocalTensor<float> t = qout.AllocTensor<float>();
    qin.EnQue(t);
  }
  if (Is("depth")) {
    LocalTensor<float> t = qout.AllocTensor<float>();
    LocalTensor<float> u = qout.AllocTensor<float>();
    qout.EnQue(t);
    qout.EnQue(u);
  }
  LocalTensor<float> x = qin.AllocTensor<float>();
  if (Is("gm_oob")) DataCopy(x, gin[1000], 64);
  if (Is("gm_alloc")) gin.SetGlobalBuffer((__gm__ float*)in, 4096);
  if (Is("copy_unaligned")) DataCopy(x, gin, 10);
  if (Is("local_unaligned")) Add(x[3], x, x, 16);
  if (Is("local_oob")) Add(x, x, x, 300);
  if (Is("mask_range")) Add(x, x, x, uint64_t{65}, 1, BinaryRepeatParams());
  if (Is("repeat_oob")) Add(x, x, x, uint64_t{64}, 5, BinaryRepeatParams());
  if (Is("two_pipes")) TPipe second;
  if (Is("get_value")) (void)x.GetValue(256);
  if (Is("events"))
    for (int i = 0; i < 9; ++i) pipe.AllocEventID<HardEvent::V_MTE3>();
  if (Is("gm_value")) gout.SetValue(1024, 1.0f);
  DataCopy(x, gin, 256);
  Muls(x, x, 2.0f, 256);
  DataCopy(gout, x, 256);
  qin.FreeTensor(x);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODE\n", argv[0]);
    return 2;
  }
  g_mode = argv[1];
  if (g_mode == "stream") {
    g_mode = "gm_oob";
    if (aclInit(nullptr) || aclrtSetDevice(0)) return 3;
    aclrtStream stream;
    void *in, *out;
    if (aclrtCreateStream(&stream) || aclrtMalloc(&in, 4096, ACL_MEM_MALLOC_HUGE_FIRST) ||
        aclrtMalloc(&out, 4096, ACL_MEM_MALLOC_HUGE_FIRST))
      return 3;
    uint32_t rc = AscendC::ocimpl::Launch("misuse_kernel", "in, out", misuse_kernel, 1, stream, in, out);
    aclError sync = aclrtSynchronizeStream(stream);
    std::printf("launch=%u sync=%d msg=%s\n", rc, static_cast<int>(sync), aclGetRecentErrMsg());
    // The stream stays usable: a correct launch afterwards succeeds.
    g_mode = "none";
    rc = AscendC::ocimpl::Launch("misuse_kernel", "in, out", misuse_kernel, 1, stream, in, out);
    std::printf("again launch=%u sync=%d\n", rc, static_cast<int>(aclrtSynchronizeStream(stream)));
    aclrtFree(in);
    aclrtFree(out);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
  }
  auto* in = static_cast<uint8_t*>(GmAlloc(1024 * sizeof(float)));
  auto* out = static_cast<uint8_t*>(GmAlloc(1024 * sizeof(float)));
  std::memset(in, 0, 4096);
  if (g_mode == "blockdim0") ICPU_RUN_KF(misuse_kernel, 0, in, out);
  ICPU_RUN_KF(misuse_kernel, 1, in, out);
  std::printf("ok\n");
  GmFree(in);
  GmFree(out);
  return 0;
}

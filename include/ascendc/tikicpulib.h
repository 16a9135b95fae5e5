/* OpenCANN: the CPU-debug entry of Ascend C (ICPU_RUN_KF, GmAlloc, GmFree), so
 * that debug harnesses written for CANN's CPU mode build unchanged. Blocks run
 * as threads of this process, not as forked processes. */
#ifndef OPENCANN_ASCENDC_TIKICPULIB_H_
#define OPENCANN_ASCENDC_TIKICPULIB_H_

#include "kernel_operator.h"

namespace AscendC {
/* Global memory for a kernel run on the CPU: 64-byte aligned, its extent known
 * to the checks. */
void* GmAlloc(size_t size);
void GmFree(void* ptr);
}  // namespace AscendC

#define ICPU_RUN_KF(func, blockdim, ...) \
  ::AscendC::ocimpl::RunCpuDebug(#func, func, static_cast<uint32_t>(blockdim), #__VA_ARGS__, ##__VA_ARGS__)

/* The tiling key (TILING_KEY_IS) of this thread's next ICPU_RUN_KF. */
#define ICPU_SET_TILING_KEY(key) ::AscendC::ocimpl::SetNextTilingKey(static_cast<uint64_t>(key))

#endif  // OPENCANN_ASCENDC_TIKICPULIB_H_

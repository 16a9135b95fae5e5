// NCHWc max/average and global average pools built for AVX2 (both block sizes).
#include "ops/cpu/nchwc/nchwc_pool_impl.h"

namespace oc::nchwc {

PoolKernels PoolKernelsAvx2() { return {PoolEntry, GlobalAverageEntry, "avx2"}; }

}  // namespace oc::nchwc

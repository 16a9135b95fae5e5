// NCHWc max/average and global average pools built for AVX512 (both block sizes).
#include "ops/cpu/nchwc/nchwc_pool_impl.h"

namespace oc::nchwc {

PoolKernels PoolKernelsAvx512() { return {PoolEntry, GlobalAverageEntry, "avx512"}; }

}  // namespace oc::nchwc

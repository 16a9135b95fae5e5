// NCHWc max/average pools built for AVX2 (both block sizes).
#include "ops/cpu/nchwc_pool_impl.h"

namespace oc::nchwc {

void PoolAvx2(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  if (s.block == 16) PoolEntry<16>(s, x, y, begin, end);
  else PoolEntry<8>(s, x, y, begin, end);
}

}  // namespace oc::nchwc

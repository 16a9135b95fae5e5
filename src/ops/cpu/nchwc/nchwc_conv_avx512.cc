// NCHWc conv built for AVX-512: c = 16 runs on zmm registers, c = 8 on ymm
// (AVX-512VL gives 32 of them). 4 output blocks x 6 pixels = 24 accumulators.
#include "ops/cpu/nchwc/nchwc_conv_impl.h"

namespace oc::nchwc {

ConvKernelChoice ConvKernelAvx512(int block) {
  if (block == 16) return {ConvEntry<16, 4, 6>, 4, "avx512"};
  if (block == 8) return {ConvEntry<8, 4, 6>, 4, "avx512"};
  return {};
}

}  // namespace oc::nchwc

// NCHWc conv built for AVX2 + FMA: c = 8 takes 2 output blocks x 6 pixels (12
// of the 16 ymm registers); c = 16 (a model compiled on an AVX-512 machine)
// splits each vector in two ymm halves, so 1 block x 6 pixels.
#include "ops/cpu/nchwc/nchwc_conv_impl.h"

namespace oc::nchwc {

ConvKernelChoice ConvKernelAvx2(int block) {
  if (block == 8) return {ConvEntry<8, 2, 6>, 2, "avx2"};
  if (block == 16) return {ConvEntry<16, 1, 6>, 1, "avx2"};
  return {};
}

}  // namespace oc::nchwc

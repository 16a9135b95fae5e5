// The Conv loops of conv_loops.h built with avx512 code generation (the build
// adds the target flags for *_avx512.cc); called only when SelectedIsa() allows.
#include "ops/cpu/conv/conv_loops.h"

namespace oc {

void PackIm2ColPanelsAvx512(const ConvGeometry& g, const float* x, int nr, int64_t k0, int64_t kc, int64_t n0,
                          int64_t nc, float* dst) {
  PackIm2ColImpl(g, x, nr, k0, kc, n0, nc, dst);
}

void DepthwiseConvAvx512(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                       const float* z, float* y, const Activation& act, int64_t c0, int64_t c1) {
  DepthwiseImpl(g, mg, x, w, bias, z, y, act, c0, c1);
}

void DepthwiseConvPaddedAvx512(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                          const float* z, float* y, const Activation& act, int64_t c0, int64_t c1, float* scratch) {
  DepthwisePaddedImpl(g, mg, x, w, bias, z, y, act, c0, c1, scratch);
}

}  // namespace oc

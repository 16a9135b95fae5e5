// The depthwise int8 sweeps of qlinear_depthwise.h built with AVX-512.
#include "ops/cpu/quant/qlinear_depthwise.h"

namespace oc::qlinear {

void DepthwisePhasedU8_avx512(const ConvGeometry& g, const DepthwisePhases& p, const uint8_t* xph, int32_t x_zp,
                              const int32_t* wz, int32_t* accw) {
  DepthwisePhased(g, p, xph, x_zp, wz, accw);
}

void DepthwisePhasedS8_avx512(const ConvGeometry& g, const DepthwisePhases& p, const int8_t* xph, int32_t x_zp,
                              const int32_t* wz, int32_t* accw) {
  DepthwisePhased(g, p, xph, x_zp, wz, accw);
}

}  // namespace oc::qlinear

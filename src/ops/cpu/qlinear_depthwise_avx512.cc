// The depthwise int8 plane loops of qlinear_depthwise.h built with AVX-512.
#include "ops/cpu/qlinear_depthwise.h"

namespace oc::qlinear {

void DepthwisePlaneU8_avx512(const ConvGeometry& g, const uint8_t* x, int32_t x_zp, const int32_t* wz,
                             int32_t* acc) {
  DepthwisePlane(g, x, x_zp, wz, acc);
}

void DepthwisePlaneS8_avx512(const ConvGeometry& g, const int8_t* x, int32_t x_zp, const int32_t* wz,
                             int32_t* acc) {
  DepthwisePlane(g, x, x_zp, wz, acc);
}

void DepthwisePlaneWideU8_avx512(const ConvGeometry& g, const uint8_t* xp, int64_t pw_width, int32_t x_zp,
                                 const int32_t* wz, int32_t* accw) {
  DepthwisePlaneWide(g, xp, pw_width, x_zp, wz, accw);
}

void DepthwisePlaneWideS8_avx512(const ConvGeometry& g, const int8_t* xp, int64_t pw_width, int32_t x_zp,
                                 const int32_t* wz, int32_t* accw) {
  DepthwisePlaneWide(g, xp, pw_width, x_zp, wz, accw);
}

}  // namespace oc::qlinear

// Baseline build of the Conv loops (conv_loops.h) and the per-ISA dispatch.
#include "base/cpu_features.h"
#include "ops/cpu/conv_loops.h"

namespace oc {

#if defined(__x86_64__) || defined(_M_X64)
void PackIm2ColPanelsAvx2(const ConvGeometry& g, const float* x, int nr, int64_t k0, int64_t kc, int64_t n0,
                          int64_t nc, float* dst);
void PackIm2ColPanelsAvx512(const ConvGeometry& g, const float* x, int nr, int64_t k0, int64_t kc, int64_t n0,
                            int64_t nc, float* dst);
void DepthwiseConvAvx2(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                       const float* z, float* y, const Activation& act, int64_t c0, int64_t c1);
void DepthwiseConvAvx512(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                         const float* z, float* y, const Activation& act, int64_t c0, int64_t c1);
void DepthwiseConvPaddedAvx2(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                             const float* z, float* y, const Activation& act, int64_t c0, int64_t c1, float* scratch);
void DepthwiseConvPaddedAvx512(const ConvGeometry& g, int64_t mg, const float* x, const float* w,
                               const float* bias, const float* z, float* y, const Activation& act, int64_t c0,
                               int64_t c1, float* scratch);
bool Depthwise3x3Avx512Fits(const ConvGeometry& g);
void Depthwise3x3Avx512(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                        const float* z, float* y, const Activation& act, int64_t c0, int64_t c1);

// The direct 3x3 kernel (conv_dw3x3_avx512.cc) except on small stride-1
// planes, where the whole-plane layout fills the vectors better.
inline bool UseDepthwise3x3Avx512(const ConvGeometry& g) {
  return Depthwise3x3Avx512Fits(g) && !DepthwisePlaneLayout(g).use;
}
#endif

void PackIm2ColPanels(const ConvGeometry& g, const float* x, int nr, int64_t k0, int64_t kc, int64_t n0,
                      int64_t nc, float* dst) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (SelectedIsa()) {
    case Isa::kAvx512: return PackIm2ColPanelsAvx512(g, x, nr, k0, kc, n0, nc, dst);
    case Isa::kAvx2: return PackIm2ColPanelsAvx2(g, x, nr, k0, kc, n0, nc, dst);
    default: break;
  }
#endif
  PackIm2ColImpl(g, x, nr, k0, kc, n0, nc, dst);
}

void DepthwiseConv(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                   const float* z, float* y, const Activation& act, int64_t c0, int64_t c1) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (SelectedIsa()) {
    case Isa::kAvx512:
      if (UseDepthwise3x3Avx512(g)) return Depthwise3x3Avx512(g, mg, x, w, bias, z, y, act, c0, c1);
      return DepthwiseConvAvx512(g, mg, x, w, bias, z, y, act, c0, c1);
    case Isa::kAvx2: return DepthwiseConvAvx2(g, mg, x, w, bias, z, y, act, c0, c1);
    default: break;
  }
#endif
  DepthwiseImpl(g, mg, x, w, bias, z, y, act, c0, c1);
}

void DepthwiseConvPadded(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                         const float* z, float* y, const Activation& act, int64_t c0, int64_t c1, float* scratch) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (SelectedIsa()) {
    case Isa::kAvx512:
      if (UseDepthwise3x3Avx512(g)) return Depthwise3x3Avx512(g, mg, x, w, bias, z, y, act, c0, c1);
      return DepthwiseConvPaddedAvx512(g, mg, x, w, bias, z, y, act, c0, c1, scratch);
    case Isa::kAvx2: return DepthwiseConvPaddedAvx2(g, mg, x, w, bias, z, y, act, c0, c1, scratch);
    default: break;
  }
#endif
  DepthwisePaddedImpl(g, mg, x, w, bias, z, y, act, c0, c1, scratch);
}

int64_t DepthwiseScratchFloats(const ConvGeometry& g) {
  if (g.KernelSize() > kDepthwiseMaxTaps || DepthwiseRingRows(g) > kDepthwiseMaxRing) return 0;
  const DwRowLayout l = DepthwiseRowLayout(g);
  const DwPlaneLayout pl = DepthwisePlaneLayout(g);
  return std::max((DepthwiseRingRows(g) + 1) * l.floats, pl.use ? pl.plane_floats + pl.out_floats : 0);
}

}  // namespace oc

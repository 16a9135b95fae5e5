// Baseline build of the Conv loops (conv_loops.h) and the per-ISA dispatch.
#include "base/cpu_features.h"
#include "ops/cpu/conv/conv_loops.h"

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
void Depthwise3x3Avx512(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                        const float* z, float* y, const Activation& act, int64_t c0, int64_t c1);
void Depthwise3x3Avx2(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                      const float* z, float* y, const Activation& act, int64_t c0, int64_t c1);

// The direct 3x3 kernels (conv_dw3x3_avx512.cc, conv_dw3x3_avx2.cc): 2-D,
// 3x3, no dilation, equal strides 1 or 2, begin pads 0..2 (end pads are
// implied by the output size: reads past the input are masked). With
// AVX-512, not on small stride-1 planes, where the whole-plane layout fills
// the 16-wide vectors better (measured: 7x7 planes 6% slower direct); the
// 8-wide AVX2 kernel beats the plane layout there too (1.2x at 14x14, 1.4x at
// 7x7). Decided here, in the baseline build: the per-ISA files may only run
// once the ISA is known to be there.
inline bool UseDepthwise3x3(const ConvGeometry& g, bool small_planes) {
  return g.kernel[0] == 1 && g.kernel[1] == 3 && g.kernel[2] == 3 && g.in[0] == 1 && g.out[0] == 1 &&
         g.pad_begin[0] == 0 && g.dilation[1] == 1 && g.dilation[2] == 1 && g.stride[1] == g.stride[2] &&
         (g.stride[1] == 1 || g.stride[1] == 2) && g.pad_begin[1] >= 0 && g.pad_begin[1] <= 2 &&
         g.pad_begin[2] >= 0 && g.pad_begin[2] <= 2 && g.in[1] > 0 && g.in[2] > 0 && g.out[1] > 0 &&
         g.out[2] > 0 && (small_planes || !DepthwisePlaneLayout(g).use);
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
      if (UseDepthwise3x3(g, false)) return Depthwise3x3Avx512(g, mg, x, w, bias, z, y, act, c0, c1);
      return DepthwiseConvAvx512(g, mg, x, w, bias, z, y, act, c0, c1);
    case Isa::kAvx2:
      if (UseDepthwise3x3(g, true)) return Depthwise3x3Avx2(g, mg, x, w, bias, z, y, act, c0, c1);
      return DepthwiseConvAvx2(g, mg, x, w, bias, z, y, act, c0, c1);
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
      if (UseDepthwise3x3(g, false)) return Depthwise3x3Avx512(g, mg, x, w, bias, z, y, act, c0, c1);
      return DepthwiseConvPaddedAvx512(g, mg, x, w, bias, z, y, act, c0, c1, scratch);
    case Isa::kAvx2:
      if (UseDepthwise3x3(g, true)) return Depthwise3x3Avx2(g, mg, x, w, bias, z, y, act, c0, c1);
      return DepthwiseConvPaddedAvx2(g, mg, x, w, bias, z, y, act, c0, c1, scratch);
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

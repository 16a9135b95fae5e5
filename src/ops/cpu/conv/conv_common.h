// Geometry shared by Conv, FusedConv and ConvTranspose: attributes resolved
// against the input shapes (auto_pad, kernel_shape from W, defaults), with
// errors that name the node and what was expected. Spatial ranks 1..3 are
// handled by padding the geometry to 3-D with leading size-1 dims, so the
// kernels have one code path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "ops/cpu/elementwise/activation.h"
#include "graph/graph.h"

namespace oc {

struct ConvGeometry {
  int nd = 0;                 // spatial rank of the node (1..3)
  int64_t batch = -1;         // N (may be -1 during inference)
  int64_t c_in = 0, c_out = 0, group = 1;
  // Spatial quantities padded to 3-D (index 0 = depth). in/out may be -1 when unknown.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, pad_begin{0, 0, 0}, pad_end{0, 0, 0};

  int64_t KernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t InSize() const { return in[0] * in[1] * in[2]; }
  int64_t OutSize() const { return out[0] * out[1] * out[2]; }
  // The node's output shape: [N, C_out, out...] in the node's rank.
  std::vector<int64_t> OutputShape() const;
};

// "[1,3,224,224]" ("?" for unknown dims), for messages.
std::string ShapeToString(const std::vector<int64_t>& shape);

// Conv / FusedConv: X [N, C, D...], W [M, C/group, k...].
Expected<ConvGeometry> ResolveConv(const Node& node, const std::vector<int64_t>& x,
                                   const std::vector<int64_t>& w);
// ConvTranspose: X [N, C, D...], W [C, M/group, k...].
Expected<ConvGeometry> ResolveConvTranspose(const Node& node, const std::vector<int64_t>& x,
                                            const std::vector<int64_t>& w);

// Packs the im2col block rows [k0, k0+kc) x output positions [n0, n0+nc) of
// one image group (x points at its first input channel) straight into GEMM B
// panels of width nr (panel stride kc*nr, missing columns zero), so the im2col
// matrix never exists in memory. Row r of im2col is (channel, kd, kh, kw).
// Picks the loop build for SelectedIsa().
void PackIm2ColPanels(const ConvGeometry& g, const float* x, int nr, int64_t k0, int64_t kc, int64_t n0,
                      int64_t nc, float* dst);
// Depthwise convolution (C/group == 1, at most 2 spatial dims, mg output
// channels per input channel) of image*channel planes [c0, c1): bias (may be
// null), residual z (may be null), then the activation.
void DepthwiseConv(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                   const float* z, float* y, const Activation& act, int64_t c0, int64_t c1);
// The same from padded copies of the input rows in `scratch` (at least
// DepthwiseScratchFloats(g) floats, 64-byte aligned, for this call alone):
// every output is one branch-free, unit-stride sum over the taps, strides
// included. DepthwiseScratchFloats is 0 where this path does not apply (more
// than kDepthwiseMaxTaps taps, or a dilated kernel taller than
// kDepthwiseMaxRing rows); use DepthwiseConv there.
constexpr int64_t kDepthwiseMaxTaps = 64;
constexpr int64_t kDepthwiseMaxRing = 64;
void DepthwiseConvPadded(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                         const float* z, float* y, const Activation& act, int64_t c0, int64_t c1, float* scratch);
int64_t DepthwiseScratchFloats(const ConvGeometry& g);
// The activations the depthwise loops apply on their vectors before storing:
// Relu and Clip clamp to [lo, hi], LeakyRelu scales negatives by lo. Any other
// activation gives kind kNone here, and the caller runs ApplyActivation after.
struct FusedClamp {
  enum Kind { kNone = 0, kClamp = 1, kLeaky = 2 };
  int kind = kNone;
  float lo = 0.f, hi = 0.f;
};
inline FusedClamp FusedClampOf(const Activation& act) {
  switch (act.kind) {
    case ActivationKind::kRelu: return {FusedClamp::kClamp, 0.f, __builtin_inff()};
    case ActivationKind::kClip: return {FusedClamp::kClamp, act.alpha, act.beta};
    case ActivationKind::kLeakyRelu: return {FusedClamp::kLeaky, act.alpha, 0.f};
    default: return {};
  }
}
// Scatter-adds col rows (output channel, kd, kh, kw) for input positions
// [p0, p0 + np) into y (one image group, `channels` output channels) - the
// adjoint of Im2Col, with in/out swapped as ConvTranspose needs.
void Col2ImAdd(const ConvGeometry& g, const float* col, int64_t ldcol, int64_t p0, int64_t np,
               float* y, int64_t channel_begin, int64_t channel_end);

}  // namespace oc

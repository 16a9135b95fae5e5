// GridSample (opset 16: 2-D, bilinear/nearest/bicubic mode names; opset 20+:
// N-d, linear/nearest/cubic) and AffineGrid (opset 20), float32 / float64.
//
// GridSample kernel layout: output positions of one batch item are processed in
// blocks. For each block the factory-free part of the work - turning grid
// coordinates into (plane offset, weight) taps, padding and reflection included -
// is done once, then every channel is interpolated from those taps. Threads split
// (batch, position-block) pairs, so the coordinate work is never repeated per
// channel and the output is written in channel-major runs.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

enum class GsMode { kNearest, kLinear, kCubic };
enum class GsPad { kZeros, kBorder, kReflection };

constexpr int kMaxSpatial = 8;
constexpr int kMaxTaps = 64;     // 4^3: tricubic
constexpr int kBlock = 32;       // output positions per tap block

Status InferGridSample(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& g = *node.input(1);
  if (x.shape.size() < 3)
    return InvalidArgument(node.Describe(), ": input X must have rank >= 3 (N, C, D1, ...), got ", x.ShapeString());
  if (g.shape.size() != x.shape.size())
    return InvalidArgument(node.Describe(), ": grid must have rank ", x.shape.size(), " (N, D1_out, ..., ",
                           x.shape.size() - 2, ") like X, got ", g.ShapeString());
  const int64_t r = static_cast<int64_t>(x.shape.size()) - 2;
  if (g.shape.back() >= 0 && g.shape.back() != r)
    return InvalidArgument(node.Describe(), ": grid's last dimension must be ", r, " (spatial rank of X), got ",
                           g.shape.back());
  if (node.opset < 20 && r != 2)
    return InvalidArgument(node.Describe(), ": GridSample-", node.opset, " takes 4-D input, got ", x.ShapeString());
  std::vector<int64_t> out = {x.shape[0], x.shape[1]};
  if (out[0] < 0) out[0] = g.shape[0];
  out.insert(out.end(), g.shape.begin() + 1, g.shape.end() - 1);
  SetOutput(node, 0, x.dtype, out);
  return Status::Ok();
}

// Folds a coordinate into [lo, hi] by mirroring at the borders as often as needed.
template <typename C>
C Reflect(C x, C lo, C hi) {
  C range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    C d = lo - x;
    int64_t flips = static_cast<int64_t>(d / range);
    C r = d - static_cast<C>(flips) * range;
    return flips % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    C d = x - hi;
    int64_t flips = static_cast<int64_t>(d / range);
    C r = d - static_cast<C>(flips) * range;
    return flips % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

template <typename C>
void CubicCoeffs(C t, C w[4]) {
  const C a = C(-0.75);
  C t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

struct GsParams {
  GsMode mode = GsMode::kLinear;
  GsPad pad = GsPad::kZeros;
  bool align = false;
  int r = 2;                       // spatial rank
  int64_t batch = 0, channels = 0;
  int64_t in_dims[kMaxSpatial] = {};
  int64_t in_strides[kMaxSpatial] = {};
  int64_t plane = 0;               // prod(in_dims)
  int64_t positions = 0;           // prod(out spatial dims)
  int taps = 1;                    // taps per output position
};

// T: element type of X/Y; C: coordinate type (the grid's).
template <typename T, typename C>
class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(GsParams p) : p_(p) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const C* grid = io.in<C>(1);
    T* y = io.out<T>(0);
    const int64_t blocks = (p_.positions + kBlock - 1) / kBlock;
    const int64_t work = p_.batch * blocks;
    const int64_t per_block = std::max<int64_t>(1, p_.channels * kBlock * p_.taps);
    io.pool->ParallelFor(work, std::max<int64_t>(1, 32768 / per_block), [&](int64_t b, int64_t e) {
      int64_t off[kBlock * kMaxTaps];
      T w[kBlock * kMaxTaps];
      for (int64_t item = b; item < e; ++item) {
        const int64_t n = item / blocks;
        const int64_t p0 = (item % blocks) * kBlock;
        const int64_t np = std::min<int64_t>(kBlock, p_.positions - p0);
        for (int64_t i = 0; i < np; ++i)
          Taps(grid + ((n * p_.positions) + p0 + i) * p_.r, &off[i * p_.taps], &w[i * p_.taps]);
        const T* xn = x + n * p_.channels * p_.plane;
        T* yn = y + n * p_.channels * p_.positions + p0;
        switch (p_.taps) {
          case 1: Channels<1>(xn, yn, off, w, np); break;
          case 4: Channels<4>(xn, yn, off, w, np); break;
          case 8: Channels<8>(xn, yn, off, w, np); break;
          case 16: Channels<16>(xn, yn, off, w, np); break;
          default: Channels<0>(xn, yn, off, w, np); break;
        }
      }
    });
    return Status::Ok();
  }

 private:
  // Every channel of one block of positions; kTaps > 0 fixes the tap count at
  // compile time (bilinear 4, trilinear 8, bicubic 16) so the sum unrolls.
  template <int kTaps>
  void Channels(const T* xn, T* yn, const int64_t* off, const T* w, int64_t np) const {
    const int taps = kTaps > 0 ? kTaps : p_.taps;
    for (int64_t c = 0; c < p_.channels; ++c) {
      const T* xc = xn + c * p_.plane;
      T* yc = yn + c * p_.positions;
      for (int64_t i = 0; i < np; ++i) {
        const int64_t* o = &off[i * taps];
        const T* wi = &w[i * taps];
        T acc = T(0);
        for (int k = 0; k < taps; ++k) acc += wi[k] * xc[o[k]];
        yc[i] = acc;
      }
    }
  }

  // Index `i` on spatial axis d after padding; -1 means "reads zero".
  int64_t PadIndex(int64_t i, int d, C lo, C hi) const {
    const int64_t size = p_.in_dims[d];
    if (i >= 0 && i < size) return i;
    switch (p_.pad) {
      case GsPad::kZeros: return -1;
      case GsPad::kBorder: return std::clamp<int64_t>(i, 0, size - 1);
      case GsPad::kReflection:
        return std::clamp<int64_t>(static_cast<int64_t>(Reflect<C>(static_cast<C>(i), lo, hi)), 0, size - 1);
    }
    return -1;
  }

  // Turns one grid vector (innermost axis first) into p_.taps (offset, weight)
  // pairs over the input plane; taps that read padding get weight 0.
  void Taps(const C* g, int64_t* off, T* w) const {
    int64_t idx[kMaxSpatial][4];
    C wt[kMaxSpatial][4];
    int per_axis = p_.mode == GsMode::kNearest ? 1 : p_.mode == GsMode::kLinear ? 2 : 4;
    for (int d = 0; d < p_.r; ++d) {
      const C size = static_cast<C>(p_.in_dims[d]);
      const C v = g[p_.r - 1 - d];
      C pos = p_.align ? (v + 1) / C(2) * (size - 1) : ((v + 1) * size - 1) / C(2);
      // Keep the index arithmetic below defined for any grid value: NaN reads
      // outside the axis, infinities and huge values stop at +-1e12.
      pos = std::isnan(pos) ? C(-6) : std::clamp<C>(pos, C(-1e12), C(1e12));
      const C lo = p_.align ? C(0) : C(-0.5);
      const C hi = p_.align ? size - 1 : size - C(0.5);
      if (p_.mode == GsMode::kNearest) pos = std::nearbyint(pos);  // ties to even, as the spec says
      // Cubic pads each tap index instead of the coordinate (as PyTorch and
      // onnxruntime do; the ONNX reference clamps the coordinate for border,
      // which only differs for cubic + border, a case no node test covers).
      if (p_.mode != GsMode::kCubic && (pos < lo || pos > hi)) {
        if (p_.pad == GsPad::kBorder) pos = std::clamp<C>(pos, C(0), size - 1);
        else if (p_.pad == GsPad::kReflection) pos = Reflect<C>(pos, lo, hi);
      }
      if (p_.mode == GsMode::kNearest) {
        idx[d][0] = PadIndex(static_cast<int64_t>(pos), d, lo, hi);
        wt[d][0] = 1;
      } else {
        C f = std::floor(pos);
        C t = pos - f;
        int64_t i0 = static_cast<int64_t>(f);
        if (p_.mode == GsMode::kLinear) {
          idx[d][0] = PadIndex(i0, d, lo, hi);
          idx[d][1] = PadIndex(i0 + 1, d, lo, hi);
          wt[d][0] = 1 - t;
          wt[d][1] = t;
        } else {
          CubicCoeffs<C>(t, wt[d]);
          for (int k = 0; k < 4; ++k) idx[d][k] = PadIndex(i0 - 1 + k, d, lo, hi);
        }
      }
    }
    // Cartesian product of the per-axis taps, outermost axis slowest.
    int sel[kMaxSpatial] = {};
    for (int t = 0; t < p_.taps; ++t) {
      int64_t o = 0;
      C weight = 1;
      bool zero = false;
      for (int d = 0; d < p_.r; ++d) {
        int64_t i = idx[d][sel[d]];
        if (i < 0) zero = true;
        o += i * p_.in_strides[d];
        weight *= wt[d][sel[d]];
      }
      off[t] = zero ? 0 : o;
      w[t] = zero ? T(0) : static_cast<T>(weight);
      for (int d = p_.r - 1; d >= 0; --d) {
        if (++sel[d] < per_axis) break;
        sel[d] = 0;
      }
    }
  }

  GsParams p_;
};

Expected<KernelPtr> MakeGridSample(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  const Value& g = *n.input(1);
  GsParams p;
  std::string mode = n.GetString("mode", n.opset >= 20 ? "linear" : "bilinear");
  if (mode == "nearest") p.mode = GsMode::kNearest;
  else if (mode == (n.opset >= 20 ? "linear" : "bilinear")) p.mode = GsMode::kLinear;
  else if (mode == (n.opset >= 20 ? "cubic" : "bicubic")) p.mode = GsMode::kCubic;
  else return InvalidArgument(n.Describe(), ": unknown mode '", mode, "'");
  std::string pad = n.GetString("padding_mode", "zeros");
  if (pad == "zeros") p.pad = GsPad::kZeros;
  else if (pad == "border") p.pad = GsPad::kBorder;
  else if (pad == "reflection") p.pad = GsPad::kReflection;
  else return InvalidArgument(n.Describe(), ": unknown padding_mode '", pad, "'");
  p.align = n.GetInt("align_corners", 0) != 0;
  p.r = static_cast<int>(x.shape.size()) - 2;
  if (p.r < 1 || p.r > kMaxSpatial)
    return NotSupported(n.Describe(), ": ", p.r, " spatial dimensions are not supported (1..", kMaxSpatial, ")");
  int per_axis = p.mode == GsMode::kNearest ? 1 : p.mode == GsMode::kLinear ? 2 : 4;
  int64_t taps = 1;
  for (int d = 0; d < p.r; ++d) taps *= per_axis;
  if (taps > kMaxTaps)
    return NotSupported(n.Describe(), ": mode '", mode, "' over ", p.r, " spatial dimensions needs ", taps,
                        " taps per sample (at most ", kMaxTaps, ")");
  p.taps = static_cast<int>(taps);
  if (x.shape[0] != g.shape[0])
    return InvalidArgument(n.Describe(), ": batch of X (", x.shape[0], ") and grid (", g.shape[0], ") differ");
  p.batch = x.shape[0];
  p.channels = x.shape[1];
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> strides = Strides(spatial);
  for (int d = 0; d < p.r; ++d) {
    p.in_dims[d] = spatial[d];
    p.in_strides[d] = strides[d];
    if (spatial[d] == 0 && ShapeProduct(n.output(0)->shape) > 0)
      return InvalidArgument(n.Describe(), ": X has an empty spatial axis ", d + 2, " to sample from");
  }
  p.plane = ShapeProduct(spatial);
  p.positions = ShapeProduct(g.shape, 1, g.shape.size() - 1);
  const DataType gt = g.dtype;
  if (x.dtype == DataType::kFloat32 && gt == DataType::kFloat32)
    return KernelPtr(new GridSampleKernel<float, float>(p));
  if (x.dtype == DataType::kFloat64 && gt == DataType::kFloat64)
    return KernelPtr(new GridSampleKernel<double, double>(p));
  if (x.dtype == DataType::kFloat64 && gt == DataType::kFloat32)
    return KernelPtr(new GridSampleKernel<double, float>(p));
  if (x.dtype == DataType::kFloat32 && gt == DataType::kFloat64)
    return KernelPtr(new GridSampleKernel<float, double>(p));
  return NotSupported(n.Describe(), ": X dtype ", DataTypeName(x.dtype), " with grid dtype ", DataTypeName(gt),
                      " is not supported (float32/float64 only)");
}

// ---- AffineGrid ----------------------------------------------------------------
//
// theta [N, r, r+1] and size (N, C, D1..Dr) -> grid [N, D1..Dr, r] where each
// grid vector is theta @ (x_r, ..., x_1, 1) over the normalised base coordinates
// (innermost axis first, as GridSample reads them).

Status InferAffineGrid(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& theta = *node.input(0);
  auto size = ConstInts(node.input(1));
  if (!size)
    return NotSupported(node.Describe(), ": input 1 (size) must be constant: the output shape depends on it");
  if (size->size() != 4 && size->size() != 5)
    return InvalidArgument(node.Describe(), ": size must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) values, got ",
                           size->size());
  const int64_t r = static_cast<int64_t>(size->size()) - 2;
  if (theta.shape.size() != 3 || (theta.shape[1] >= 0 && theta.shape[1] != r) ||
      (theta.shape[2] >= 0 && theta.shape[2] != r + 1))
    return InvalidArgument(node.Describe(), ": theta must have shape [N, ", r, ", ", r + 1, "], got ",
                           theta.ShapeString());
  std::vector<int64_t> out = {(*size)[0]};
  for (int64_t d = 0; d < r; ++d) out.push_back((*size)[2 + d]);
  out.push_back(r);
  SetOutput(node, 0, theta.dtype, out);
  return Status::Ok();
}

template <typename T>
class AffineGridKernel final : public Kernel {
 public:
  AffineGridKernel(int64_t n, std::vector<int64_t> dims, bool align) : n_(n), dims_(std::move(dims)) {
    // Base coordinates per axis: the centres of `dims` cells spread over [-1, 1].
    for (int64_t len : dims_) {
      std::vector<T> b(len);
      for (int64_t i = 0; i < len; ++i) {
        if (align) b[i] = len > 1 ? T(-1) + T(2) * static_cast<T>(i) / static_cast<T>(len - 1) : T(-1);
        else b[i] = (T(-1) + T(2) * static_cast<T>(i) / static_cast<T>(len) + T(1) / static_cast<T>(len));
      }
      base_.push_back(std::move(b));
    }
    positions_ = ShapeProduct(dims_);
  }

  Status Run(const KernelIO& io) override {
    const T* theta = io.in<T>(0);
    T* out = io.out<T>(0);
    const int r = static_cast<int>(dims_.size());
    io.pool->ParallelFor(n_ * positions_, 4096, [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t n = item / positions_;
        int64_t rem = item % positions_;
        T coord[3];  // innermost axis first
        for (int d = r - 1; d >= 0; --d) {
          coord[r - 1 - d] = base_[d][rem % dims_[d]];
          rem /= dims_[d];
        }
        const T* th = theta + n * r * (r + 1);
        T* o = out + item * r;
        for (int i = 0; i < r; ++i) {
          T acc = th[i * (r + 1) + r];
          for (int j = 0; j < r; ++j) acc += th[i * (r + 1) + j] * coord[j];
          o[i] = acc;
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
  std::vector<int64_t> dims_;
  std::vector<std::vector<T>> base_;
  int64_t positions_ = 0;
};

Expected<KernelPtr> MakeAffineGrid(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& theta = *n.input(0);
  const Value& out = *n.output(0);
  std::vector<int64_t> dims(out.shape.begin() + 1, out.shape.end() - 1);
  if (theta.shape[0] != out.shape[0])
    return InvalidArgument(n.Describe(), ": theta has batch ", theta.shape[0], " but size asks for ", out.shape[0]);
  bool align = n.GetInt("align_corners", 0) != 0;
  if (theta.dtype == DataType::kFloat32) return KernelPtr(new AffineGridKernel<float>(out.shape[0], dims, align));
  if (theta.dtype == DataType::kFloat64) return KernelPtr(new AffineGridKernel<double>(out.shape[0], dims, align));
  return NotSupported(n.Describe(), ": dtype ", DataTypeName(theta.dtype),
                      " is not supported (float32 and float64 only)");
}

}  // namespace

void RegisterGridSampleOps(OpRegistry& r) {
  r.Register({.op_type = "GridSample", .min_opset = 16, .infer = InferGridSample, .kernels = CpuKernel(MakeGridSample)});
  r.Register({.op_type = "AffineGrid", .min_opset = 20, .infer = InferAffineGrid, .kernels = CpuKernel(MakeAffineGrid)});
}

}  // namespace oc

// Resize (opsets 10-19) and Upsample (7-9), float32 / float64.
//
// The output shape depends on the scales/sizes inputs, so they must be
// constant (shape inference needs them). Upsample is canonicalised into
// Resize-10, which ONNX defines with the same semantics: asymmetric coordinates,
// and for nearest the "floor when enlarging, ceil when shrinking" rounding that
// onnxruntime implements for those versions.
//
// Interpolation is separable: the factory computes, per axis and output index,
// up to 4 (input offset, weight) taps (more for antialiased downscaling, whose
// kernel widens with 1/scale); taps with zero weight everywhere are
// collapsed, so untouched axes cost nothing. Run() walks output rows: the taps
// of the outer axes are combined once per row, then each output element of the
// innermost axis sums over (row combinations x inner taps).
//
// Enlarging the last two axes (segmentation heads, FPN/YOLO upsampling), with
// the outer axes single-tap and nothing extrapolated, takes a faster path per
// plane: each input row is interpolated along the last axis once and kept in
// a small ring while the output rows that blend it are written, so an output
// element costs one weighted sum over rows instead of rows x taps gathers.
// The arithmetic is the general path's, in the same order.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int kMaxRowCombos = 1024;

enum class Interp { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric,
                   kTfHalfPixelForNn, kTfCropAndResize };
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };

bool IsLegacy(const Node& n) { return n.op_type == "Upsample" || n.opset < 11; }

struct ResizeSpec {
  std::vector<int64_t> out;    // output shape
  std::vector<double> scales;  // per axis, as used by the coordinate transform
  std::vector<double> roi;     // 2*rank (start..., end...), tf_crop_and_resize only
  // Per axis: the resized length align_corners divides by. The operator text
  // (scale = length_resized / length_original) and the ONNX reference take
  // in * scale unrounded when scales are given; with sizes it is the output
  // length. onnxruntime and PyTorch divide by the integer output length, so
  // with scales whose in * scale is fractional (4 * 0.6) they give other values.
  std::vector<double> resized_len;
};

// Scales/sizes (and roi) resolved to the full rank. Needs them constant.
Expected<ResizeSpec> ResolveSpec(const Node& n, const std::vector<int64_t>& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  ResizeSpec s;
  s.scales.assign(rank, 1.0);
  s.out = in;
  s.roi.assign(2 * rank, 0.0);
  s.resized_len.resize(rank);
  for (int64_t i = 0; i < rank; ++i) s.resized_len[i] = static_cast<double>(in[i]);
  for (int64_t i = 0; i < rank; ++i) s.roi[rank + i] = 1.0;
  std::optional<std::vector<float>> scales;
  std::optional<std::vector<int64_t>> sizes;
  if (n.op_type == "Upsample" && n.HasAttr("scales")) {
    scales = n.GetFloats("scales");
  } else if (IsLegacy(n)) {
    if (!n.input(1)) return InvalidArgument(n.Describe(), ": input 1 (scales) is missing");
    scales = ConstFloats(n.input(1));
    if (!scales)
      return NotSupported(n.Describe(), ": input 1 (scales) must be constant: the output shape depends on it");
  } else {
    const Value* sv = n.input(2);
    const Value* zv = n.input(3);
    if (sv && sv->has_shape && sv->NumElements() == 0) sv = nullptr;  // empty = absent (opset 11)
    if (zv && zv->has_shape && zv->NumElements() == 0) zv = nullptr;
    if (sv && zv) return InvalidArgument(n.Describe(), ": only one of scales and sizes may be given");
    if (!sv && !zv) return InvalidArgument(n.Describe(), ": one of scales (input 2) or sizes (input 3) is required");
    if (sv) {
      scales = ConstFloats(sv);
      if (!scales)
        return NotSupported(n.Describe(), ": input 2 (scales) must be constant: the output shape depends on it");
    } else {
      sizes = ConstInts(zv);
      if (!sizes)
        return NotSupported(n.Describe(), ": input 3 (sizes) must be constant: the output shape depends on it");
    }
  }
  std::vector<int64_t> axes;
  if (n.HasAttr("axes") && !IsLegacy(n)) {
    for (int64_t a : n.GetInts("axes")) {
      OC_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(n, a, rank));
      axes.push_back(ax);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  size_t k = axes.size();
  std::string coord = n.GetString("coordinate_transformation_mode", "half_pixel");
  if (!IsLegacy(n) && coord == "tf_crop_and_resize") {
    auto roi = ConstFloats(n.input(1));
    if (!roi) return NotSupported(n.Describe(), ": input 1 (roi) must be constant for tf_crop_and_resize");
    if (roi->size() != 2 * k)
      return InvalidArgument(n.Describe(), ": roi has ", roi->size(), " values, expected ", 2 * k);
    for (size_t i = 0; i < k; ++i) {
      s.roi[axes[i]] = (*roi)[i];
      s.roi[rank + axes[i]] = (*roi)[k + i];
    }
  }
  if (scales) {
    if (scales->size() != k)
      return InvalidArgument(n.Describe(), ": scales has ", scales->size(), " values, expected ", k);
    for (size_t i = 0; i < k; ++i) {
      int64_t ax = axes[i];
      double sc = (*scales)[i];
      if (!(sc > 0)) return InvalidArgument(n.Describe(), ": scales must be positive, got ", sc, " for axis ", ax);
      s.scales[ax] = sc;
      if (in[ax] < 0) { s.out[ax] = -1; continue; }
      // The roi does not enter the size (onnxruntime and the ONNX reference
      // agree); the product is taken in float as onnxruntime does (5 * 1.4f = 7).
      s.out[ax] = static_cast<int64_t>(std::floor(static_cast<float>(in[ax]) * static_cast<float>(sc)));
      s.resized_len[ax] = static_cast<double>(in[ax]) * sc;
    }
  } else {
    if (sizes->size() != k)
      return InvalidArgument(n.Describe(), ": sizes has ", sizes->size(), " values, expected ", k);
    std::string policy = n.GetString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      return InvalidArgument(n.Describe(), ": unknown keep_aspect_ratio_policy '", policy, "'");
    if (policy == "stretch") {
      // A dynamic input axis still gets its size; its scale is only needed by
      // the kernel, which sees static shapes.
      for (size_t i = 0; i < k; ++i) {
        s.out[axes[i]] = (*sizes)[i];
        if (in[axes[i]] > 0)
          s.scales[axes[i]] = static_cast<float>((*sizes)[i]) / static_cast<float>(in[axes[i]]);
      }
    } else {
      for (size_t i = 0; i < k; ++i)
        if (in[axes[i]] < 0)
          return NotSupported(n.Describe(), ": keep_aspect_ratio_policy '", policy, "' needs static input dims");
      double sc = policy == "not_larger" ? 1e300 : 0;
      for (size_t i = 0; i < k; ++i) {
        double r = static_cast<float>((*sizes)[i]) / static_cast<float>(in[axes[i]]);
        sc = policy == "not_larger" ? std::min(sc, r) : std::max(sc, r);
      }
      for (size_t i = 0; i < k; ++i) {
        s.scales[axes[i]] = sc;
        s.out[axes[i]] = static_cast<int64_t>(std::floor(sc * static_cast<double>(in[axes[i]]) + 0.5));
      }
    }
    for (size_t i = 0; i < k; ++i)
      if (s.out[axes[i]] < 0) return InvalidArgument(n.Describe(), ": sizes must be >= 0");
    for (size_t i = 0; i < k; ++i) s.resized_len[axes[i]] = static_cast<double>(s.out[axes[i]]);
  }
  return s;
}

Status InferResize(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  OC_ASSIGN_OR_RETURN(ResizeSpec s, ResolveSpec(node, x.shape));
  SetOutput(node, 0, x.dtype, s.out);
  for (size_t i = 0; i < s.out.size() && i < x.dim_params.size(); ++i)
    if (s.out[i] == x.shape[i]) node.output(0)->dim_params[i] = x.dim_params[i];
  return Status::Ok();
}

// Upsample-7/9 -> Resize-10 (same semantics); the scales attribute of
// Upsample-7 becomes a constant input.
Status CanonicalizeUpsample(Node& node, Graph& graph) {
  if (!node.input(0)) return InvalidArgument(node.Describe(), ": input 0 (X) is missing");
  if (node.HasAttr("scales")) {
    std::vector<float> sc = node.GetFloats("scales");
    Value* v = graph.AddConstant(graph.UniqueName(node.name + "_scales"), DataType::kFloat32,
                                 {static_cast<int64_t>(sc.size())}, TensorData::Copy(sc.data(), sc.size() * 4));
    node.inputs.resize(1);
    node.inputs.push_back(v);
    node.attrs.erase("scales");
  }
  std::string mode = node.GetString("mode", "nearest");
  if (mode == "bilinear") node.SetString("mode", "linear");
  node.op_type = "Resize";
  node.opset = 10;
  return Status::Ok();
}

// ---- kernel ------------------------------------------------------------------

struct AxisTaps {
  int ntaps = 1;
  std::vector<int64_t> offset;  // [out * ntaps], input index * input stride
  std::vector<double> weight;   // [out * ntaps]
  std::vector<uint8_t> outside; // [out], tf_crop_and_resize extrapolation
  bool any_outside = false;
};

double CubicWeight(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

struct AxisParams {
  Interp interp;
  Coord coord;
  Rounding rounding;
  double cubic_a;
  bool exclude_outside;
  bool antialias;
};

// In float, as onnxruntime computes it, so that nearest-mode ties round alike.
double OriginalCoord(Coord c, double xd, double scale_d, int64_t in_i, int64_t out_i, double roi_start_d,
                     double roi_end_d, double resized_len) {
  const float x = static_cast<float>(xd), scale = static_cast<float>(scale_d);
  const float in = static_cast<float>(in_i), out = static_cast<float>(out_i);
  const float rs = static_cast<float>(roi_start_d), re = static_cast<float>(roi_end_d);
  switch (c) {
    case Coord::kHalfPixel: return (x + 0.5f) / scale - 0.5f;
    case Coord::kHalfPixelSymmetric: {
      float adj = out / (scale * in);
      float center = in / 2;
      return center * (1 - adj) + (x + 0.5f) / scale - 0.5f;
    }
    case Coord::kPytorchHalfPixel: return out_i > 1 ? (x + 0.5f) / scale - 0.5f : 0.f;
    case Coord::kAlignCorners:
      return resized_len == 1 ? 0.f : x * (in - 1) / (static_cast<float>(resized_len) - 1);
    case Coord::kAsymmetric: return x / scale;
    case Coord::kTfHalfPixelForNn: return (x + 0.5f) / scale;
    case Coord::kTfCropAndResize:
      return out_i > 1 ? rs * (in - 1) + x * (re - rs) * (in - 1) / (out - 1) : 0.5f * (rs + re) * (in - 1);
  }
  return x;
}

int64_t RoundNearest(Rounding r, double x, double scale) {
  switch (r) {
    case Rounding::kRoundPreferFloor:
      return x == std::floor(x) + 0.5 ? static_cast<int64_t>(std::floor(x)) : static_cast<int64_t>(std::round(x));
    case Rounding::kRoundPreferCeil: return static_cast<int64_t>(std::round(x));
    case Rounding::kFloor: return static_cast<int64_t>(std::floor(x));
    case Rounding::kCeil: return static_cast<int64_t>(std::ceil(x));
    case Rounding::kLegacy:
      return scale < 1 ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(std::floor(x));
  }
  return 0;
}

// Antialiased downscaling (antialias=1, scale < 1): the linear (triangle) or
// cubic kernel is stretched by 1/scale, so each output averages 2/scale
// (linear) or 4/scale (cubic) inputs; weights are normalised to sum 1. Tap i
// of output o reads input floor-ish(x) + i, with the ONNX reference's
// convention that an integral x counts as ratio 1 from the pixel to its left.
void AntialiasTaps(const AxisParams& p, int64_t in, double scale, double x, int64_t* off, double* w, int ntaps,
                   int64_t stride) {
  double base = std::floor(x);
  double ratio = x - base;
  if (ratio == 0) { ratio = 1; base -= 1; }
  const int64_t start = 1 - ntaps / 2;
  double sum = 0;
  for (int k = 0; k < ntaps; ++k) {
    const double d = scale * (static_cast<double>(start + k) - ratio);
    w[k] = p.interp == Interp::kLinear ? std::max(0.0, 1 - std::fabs(d)) : CubicWeight(d, p.cubic_a);
    sum += w[k];
  }
  if (sum != 0)
    for (int k = 0; k < ntaps; ++k) w[k] /= sum;
  const int64_t i0 = static_cast<int64_t>(base) + start;
  if (p.exclude_outside) {
    double kept = 0;
    for (int k = 0; k < ntaps; ++k) {
      if (i0 + k < 0 || i0 + k >= in) w[k] = 0;
      kept += w[k];
    }
    if (kept != 0)
      for (int k = 0; k < ntaps; ++k) w[k] /= kept;
  }
  for (int k = 0; k < ntaps; ++k) off[k] = std::clamp<int64_t>(i0 + k, 0, in - 1) * stride;
}

AxisTaps MakeTaps(const AxisParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end,
                  double resized_len, int64_t stride) {
  AxisTaps a;
  a.ntaps = p.interp == Interp::kNearest ? 1 : p.interp == Interp::kLinear ? 2 : 4;
  const bool antialias = p.antialias && p.interp != Interp::kNearest && scale < 1;
  if (antialias) {
    // Support of the stretched kernel: 2 * (1 - floor(-support/scale) - 1) taps.
    const double support = p.interp == Interp::kLinear ? 1 : 2;
    a.ntaps = static_cast<int>(2 - 2 * (static_cast<int64_t>(std::floor(-support / scale)) + 1));
  }
  a.offset.resize(out * a.ntaps);
  a.weight.resize(out * a.ntaps);
  a.outside.assign(out, 0);
  auto clamp_idx = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  // Nearest leaves an unscaled axis as it is (as onnxruntime does), whatever
  // the coordinate mode would make of it.
  if (p.interp == Interp::kNearest && scale == 1.0 && in == out && p.coord != Coord::kTfCropAndResize) {
    for (int64_t o = 0; o < out; ++o) { a.offset[o] = o * stride; a.weight[o] = 1; }
    return a;
  }
  for (int64_t o = 0; o < out; ++o) {
    double x = OriginalCoord(p.coord, static_cast<double>(o), scale, in, out, roi_start, roi_end, resized_len);
    if (p.coord == Coord::kTfCropAndResize && (x < 0 || x > static_cast<double>(in - 1))) {
      a.outside[o] = 1;
      a.any_outside = true;
    }
    int64_t* off = &a.offset[o * a.ntaps];
    double* w = &a.weight[o * a.ntaps];
    if (antialias) {
      AntialiasTaps(p, in, scale, x, off, w, a.ntaps, stride);
    } else if (p.interp == Interp::kNearest) {
      off[0] = clamp_idx(RoundNearest(p.rounding, x, scale)) * stride;
      w[0] = 1;
    } else if (p.interp == Interp::kLinear) {
      double f = std::floor(x);
      double t = x - f;
      int64_t i0 = static_cast<int64_t>(f);
      off[0] = clamp_idx(i0) * stride;
      off[1] = clamp_idx(i0 + 1) * stride;
      w[0] = 1 - t;
      w[1] = t;
    } else {
      double f = std::floor(x);
      double t = x - f;
      int64_t i0 = static_cast<int64_t>(f);
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        int64_t idx = i0 - 1 + k;
        double wk = CubicWeight(t - (k - 1), p.cubic_a);
        if (p.exclude_outside && (idx < 0 || idx >= in)) wk = 0;
        off[k] = clamp_idx(idx) * stride;
        w[k] = wk;
        sum += wk;
      }
      if (p.exclude_outside && sum != 0)
        for (int k = 0; k < 4; ++k) w[k] /= sum;
    }
  }
  // Collapse to one tap when every output has a single non-zero weight of 1
  // (untouched axes, integer-aligned nearest-like maps).
  if (a.ntaps > 1) {
    bool single = true;
    for (int64_t o = 0; o < out && single; ++o) {
      int nonzero = 0;
      for (int k = 0; k < a.ntaps; ++k)
        if (a.weight[o * a.ntaps + k] != 0) {
          ++nonzero;
          if (a.weight[o * a.ntaps + k] != 1) single = false;
        }
      if (nonzero != 1) single = false;
    }
    if (single) {
      AxisTaps b;
      b.ntaps = 1;
      b.outside = a.outside;
      b.any_outside = a.any_outside;
      for (int64_t o = 0; o < out; ++o)
        for (int k = 0; k < a.ntaps; ++k)
          if (a.weight[o * a.ntaps + k] != 0) {
            b.offset.push_back(a.offset[o * a.ntaps + k]);
            b.weight.push_back(1);
          }
      return b;
    }
  }
  return a;
}

// Input rows the plane path keeps interpolated at once (the most taps an
// output row blends, 4 for cubic, plus room for the next row).
constexpr int kRingRows = 8;

template <typename T>
class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(std::vector<AxisTaps> axes, std::vector<int64_t> out, std::vector<int64_t> in, T extrapolation,
               int max_threads)
      : axes_(std::move(axes)), out_(std::move(out)), extrapolation_(extrapolation) {
    for (const AxisTaps& a : axes_) weights_.emplace_back(a.weight.begin(), a.weight.end());
    rank_ = static_cast<int>(out_.size());
    cols_ = out_[rank_ - 1];
    rows_ = ShapeProduct(out_, 0, rank_ - 1);
    slots_ = std::max(1, max_threads);
    // The plane path: rank >= 2, outer axes single-tap, the row axis enlarged
    // (each input row serves several output rows), nothing outside.
    if (rank_ >= 2 && in[rank_ - 2] > 0 && out_[rank_ - 2] >= in[rank_ - 2] && axes_[rank_ - 2].ntaps <= 4) {
      bool ok = true;
      for (int d = 0; d < rank_; ++d) ok &= !axes_[d].any_outside && (d >= rank_ - 2 || axes_[d].ntaps == 1);
      if (ok) {
        plane_ = true;
        planes_ = ShapeProduct(out_, 0, rank_ - 2);
      }
    }
  }

  size_t ScratchBytes() const override {
    return plane_ ? static_cast<size_t>(slots_) * kRingRows * static_cast<size_t>(cols_) * sizeof(T) : 0;
  }

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    if (plane_ && io.scratch) {
      RunPlanes(x, y, io);
      return Status::Ok();
    }
    const AxisTaps& inner = axes_[rank_ - 1];
    const T* inner_w = weights_[rank_ - 1].data();
    const int nt = inner.ntaps;
    int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(cols_ * nt, 1));
    io.pool->ParallelFor(rows_, grain, [&](int64_t b, int64_t e) {
      int64_t combo_off[kMaxRowCombos];
      T combo_w[kMaxRowCombos];
      int64_t idx[16] = {0};
      // Decode the first row's multi-index.
      for (int64_t d = rank_ - 2, r = b; d >= 0; --d) { idx[d] = r % out_[d]; r /= out_[d]; }
      for (int64_t row = b; row < e; ++row) {
        T* yr = y + row * cols_;
        // Combine the taps of the outer axes for this row.
        int n = 1;
        combo_off[0] = 0;
        combo_w[0] = T(1);
        bool outside = false;
        for (int d = 0; d < rank_ - 1; ++d) {
          const AxisTaps& a = axes_[d];
          if (a.any_outside && a.outside[idx[d]]) outside = true;
          const int64_t* off = &a.offset[idx[d] * a.ntaps];
          const T* w = &weights_[d][idx[d] * a.ntaps];
          if (a.ntaps == 1) {
            for (int c = 0; c < n; ++c) combo_off[c] += off[0];
            continue;
          }
          for (int c = n - 1; c >= 0; --c)
            for (int k = a.ntaps - 1; k >= 0; --k) {
              combo_off[c * a.ntaps + k] = combo_off[c] + off[k];
              combo_w[c * a.ntaps + k] = combo_w[c] * w[k];
            }
          n *= a.ntaps;
        }
        if (outside) {
          std::fill(yr, yr + cols_, extrapolation_);
        } else {
          for (int64_t o = 0; o < cols_; ++o) {
            if (inner.any_outside && inner.outside[o]) { yr[o] = extrapolation_; continue; }
            const int64_t* off = &inner.offset[o * nt];
            const T* w = &inner_w[o * nt];
            T acc = T(0);
            if (nt == 1) {
              for (int c = 0; c < n; ++c) acc += combo_w[c] * x[combo_off[c] + off[0]];
            } else {
              for (int c = 0; c < n; ++c) {
                const T* xc = x + combo_off[c];
                T s = T(0);
                for (int k = 0; k < nt; ++k) s += w[k] * xc[off[k]];
                acc += combo_w[c] * s;
              }
            }
            yr[o] = acc;
          }
        }
        for (int d = rank_ - 2; d >= 0; --d) {
          if (++idx[d] < out_[d]) break;
          idx[d] = 0;
        }
      }
    });
    return Status::Ok();
  }

 private:
  // Output rows [r0, r1) of plane p (p: multi-index over the outer axes,
  // single-tap, so it maps to one input plane), with `ring` holding up to
  // kRingRows interpolated input rows.
  void PlaneRows(const T* x, T* y, int64_t p, int64_t r0, int64_t r1, T* ring) const {
    int64_t base = 0;
    for (int d = rank_ - 3; d >= 0; --d) {
      const int64_t o = p % out_[d];
      p /= out_[d];
      base += axes_[d].offset[o];
    }
    const AxisTaps& ya = axes_[rank_ - 2];
    const AxisTaps& xa = axes_[rank_ - 1];
    const T* yw = weights_[rank_ - 2].data();
    const T* xw = weights_[rank_ - 1].data();
    const int ny = ya.ntaps, nx = xa.ntaps;
    int64_t held[kRingRows];
    std::fill(held, held + kRingRows, int64_t{-1});
    // The input row at element offset `off` (row index * width), interpolated.
    // A miss replaces an empty slot or the held row farthest from `off`: rows
    // are asked for in monotone order and an output row blends at most 4
    // neighbouring ones, so the rows it already holds are never replaced.
    auto row = [&](int64_t off) -> const T* {
      int victim = 0;
      int64_t far = -1;
      for (int i = 0; i < kRingRows; ++i) {
        if (held[i] == off) return ring + i * cols_;
        const int64_t dist = held[i] < 0 ? std::numeric_limits<int64_t>::max() : std::abs(held[i] - off);
        if (dist > far) far = dist, victim = i;
      }
      T* dst = ring + victim * cols_;
      held[victim] = off;
      const T* src = x + base + off;
      for (int64_t o = 0; o < cols_; ++o) {
        const int64_t* xo = &xa.offset[o * nx];
        const T* w = &xw[o * nx];
        if (nx == 1) {
          dst[o] = src[xo[0]];
        } else {
          T s = T(0);
          for (int k = 0; k < nx; ++k) s += w[k] * src[xo[k]];
          dst[o] = s;
        }
      }
      return dst;
    };
    for (int64_t r = r0; r < r1; ++r) {
      T* yr = y + r * cols_;
      const int64_t* yo = &ya.offset[r * ny];
      const T* w = &yw[r * ny];
      if (ny == 1) {
        const T* a = row(yo[0]);
        std::memcpy(yr, a, static_cast<size_t>(cols_) * sizeof(T));
        continue;
      }
      const T* src[4];
      for (int k = 0; k < ny; ++k) src[k] = row(yo[k]);
      for (int64_t o = 0; o < cols_; ++o) {
        T acc = T(0);
        for (int k = 0; k < ny; ++k) acc += w[k] * src[k][o];
        yr[o] = acc;
      }
    }
  }

  void RunPlanes(const T* x, T* y, const KernelIO& io) const {
    const int64_t oh = out_[rank_ - 2];
    const int64_t threads = std::min<int64_t>(io.pool->num_threads(), slots_);
    // Units: whole planes, or row bands of a plane when there are few planes.
    const int64_t bands = planes_ >= 2 * threads ? 1 : std::min<int64_t>(oh, 2 * threads);
    const int64_t units = planes_ * bands;
    const size_t slot_bytes = static_cast<size_t>(kRingRows * cols_) * sizeof(T);
    const int64_t tasks = std::min<int64_t>(threads, units);
    io.pool->ParallelFor(tasks, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        T* ring = reinterpret_cast<T*>(static_cast<uint8_t*>(io.scratch) + static_cast<size_t>(t) * slot_bytes);
        for (int64_t u = units * t / tasks; u < units * (t + 1) / tasks; ++u) {
          const int64_t p = u / bands, b = u % bands;
          PlaneRows(x, y + p * oh * cols_, p, oh * b / bands, oh * (b + 1) / bands, ring);
        }
      }
    });
  }

  std::vector<AxisTaps> axes_;
  std::vector<std::vector<T>> weights_;  // axes_[d].weight in T
  std::vector<int64_t> out_;
  T extrapolation_;
  int rank_ = 0;
  int64_t rows_ = 0, cols_ = 0;
  bool plane_ = false;
  int64_t planes_ = 0;
  int slots_ = 1;
};

Expected<KernelPtr> MakeResize(const KernelInit& init) {
  const Node& n = init.node;
  const Value& x = *n.input(0);
  if (!x.IsStatic() || !n.output(0)->IsStatic())
    return NotSupported(n.Describe(), ": dynamic shapes are not supported (input ", x.ShapeString(), ")");
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
    return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype),
                        " is not supported (float32 and float64 only)");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank < 1 || rank > 16) return NotSupported(n.Describe(), ": rank ", rank, " is not supported (1..16)");
  OC_ASSIGN_OR_RETURN(ResizeSpec s, ResolveSpec(n, x.shape));
  if (s.out != n.output(0)->shape)
    return InvalidArgument(n.Describe(), ": output shape ", n.output(0)->ShapeString(),
                           " does not match the one computed from scales/sizes");
  AxisParams p;
  std::string mode = n.GetString("mode", "nearest");
  if (mode == "nearest") p.interp = Interp::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") p.interp = Interp::kLinear;
  else if (mode == "cubic" && !IsLegacy(n)) p.interp = Interp::kCubic;
  else return InvalidArgument(n.Describe(), ": unsupported mode '", mode, "'");
  if (IsLegacy(n)) {
    p.coord = Coord::kAsymmetric;
    p.rounding = Rounding::kLegacy;
  } else {
    std::string c = n.GetString("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") p.coord = Coord::kHalfPixel;
    else if (c == "half_pixel_symmetric" && n.opset >= 19) p.coord = Coord::kHalfPixelSymmetric;
    else if (c == "pytorch_half_pixel") p.coord = Coord::kPytorchHalfPixel;
    else if (c == "align_corners") p.coord = Coord::kAlignCorners;
    else if (c == "asymmetric") p.coord = Coord::kAsymmetric;
    else if (c == "tf_half_pixel_for_nn") p.coord = Coord::kTfHalfPixelForNn;
    else if (c == "tf_crop_and_resize") p.coord = Coord::kTfCropAndResize;
    else return InvalidArgument(n.Describe(), ": unknown coordinate_transformation_mode '", c, "'");
    std::string r = n.GetString("nearest_mode", "round_prefer_floor");
    if (r == "round_prefer_floor") p.rounding = Rounding::kRoundPreferFloor;
    else if (r == "round_prefer_ceil") p.rounding = Rounding::kRoundPreferCeil;
    else if (r == "floor") p.rounding = Rounding::kFloor;
    else if (r == "ceil") p.rounding = Rounding::kCeil;
    else return InvalidArgument(n.Describe(), ": unknown nearest_mode '", r, "'");
  }
  p.cubic_a = n.GetFloat("cubic_coeff_a", -0.75f);
  p.exclude_outside = n.GetInt("exclude_outside", 0) != 0;
  p.antialias = !IsLegacy(n) && n.GetInt("antialias", 0) != 0;
  for (int64_t d = 0; d < rank; ++d)
    if (x.shape[d] == 0 && s.out[d] > 0)
      return InvalidArgument(n.Describe(), ": cannot resize empty axis ", d, " to ", s.out[d]);
  if (ShapeProduct(s.out) == 0) {
    struct Nop final : Kernel { Status Run(const KernelIO&) override { return Status::Ok(); } };
    return KernelPtr(new Nop());
  }
  std::vector<int64_t> strides = Strides(x.shape);
  std::vector<AxisTaps> axes;
  int64_t combos = 1;
  for (int64_t d = 0; d < rank; ++d) {
    axes.push_back(MakeTaps(p, x.shape[d], s.out[d], s.scales[d], s.roi[d], s.roi[rank + d], s.resized_len[d],
                            strides[d]));
    if (d + 1 < rank) combos *= axes.back().ntaps;
  }
  if (combos > kMaxRowCombos)
    return NotSupported(n.Describe(), ": interpolating ", rank - 1, " outer axes at once needs ", combos,
                        " taps per output row (at most ", kMaxRowCombos, "; antialiased strong downscales "
                        "of several axes exceed it)");
  double extrapolation = n.GetFloat("extrapolation_value", 0.f);
  if (x.dtype == DataType::kFloat64)
    return KernelPtr(new ResizeKernel<double>(std::move(axes), s.out, x.shape, extrapolation, init.max_threads));
  return KernelPtr(
      new ResizeKernel<float>(std::move(axes), s.out, x.shape, static_cast<float>(extrapolation), init.max_threads));
}

}  // namespace

void RegisterResizeOps(OpRegistry& r) {
  r.Register({.op_type = "Resize", .min_opset = 10, .infer = InferResize, .kernels = CpuKernel(MakeResize)});
  r.Register({.op_type = "Upsample", .min_opset = 7, .max_opset = 9, .infer = InferResize, .kernels = CpuKernel(MakeResize),
              .canonicalize = CanonicalizeUpsample});
}

}  // namespace oc

// RoiAlign (opset 10; opset 16 adds coordinate_transformation_mode, default
// half_pixel), float32 / float64.
//
// Each output bin averages (or, for mode=max, takes the maximum over) a grid of
// bilinear samples. The sample positions separate into rows and columns: for
// one ROI the factory-free work is a table of row taps (pooled_h * grid_h) and
// column taps (pooled_w * grid_w), computed once per ROI and channel block and
// shared by the channels of that block. Work items are (ROI, channel block)
// pairs, handed out to thread slots that own a slice of the per-run scratch.
// Coordinates are computed in the element type, like the reference kernels.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int64_t kChannelBlock = 16;

Status InferRoiAlign(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& x = *node.input(0);
  const Value& rois = *node.input(1);
  const Value& idx = *node.input(2);
  if (x.shape.size() != 4)
    return InvalidArgument(node.Describe(), ": input X must be 4-D (N, C, H, W), got ", x.ShapeString());
  if (rois.shape.size() != 2 || (rois.shape[1] >= 0 && rois.shape[1] != 4))
    return InvalidArgument(node.Describe(), ": rois must have shape [num_rois, 4], got ", rois.ShapeString());
  if (idx.shape.size() != 1)
    return InvalidArgument(node.Describe(), ": batch_indices must be 1-D, got ", idx.ShapeString());
  int64_t num = rois.shape[0] >= 0 ? rois.shape[0] : idx.shape[0];
  SetOutput(node, 0, x.dtype,
            {num, x.shape[1], node.GetInt("output_height", 1), node.GetInt("output_width", 1)});
  return Status::Ok();
}

// Bilinear tap along one axis for coordinate v on an axis of `size` samples.
template <typename T>
struct Tap {
  int64_t lo = 0, hi = 0;
  T wlo = 0, whi = 0;
  bool valid = false;
};

template <typename T>
Tap<T> AxisTap(T v, int64_t size) {
  Tap<T> t;
  // Off the map (or NaN): the sample contributes 0.
  if (!(v >= T(-1) && v <= static_cast<T>(size))) return t;
  t.valid = true;
  if (v < 0) v = 0;
  t.lo = static_cast<int64_t>(v);
  if (t.lo >= size - 1) {
    t.lo = t.hi = size - 1;
    v = static_cast<T>(t.lo);
  } else {
    t.hi = t.lo + 1;
  }
  T l = v - static_cast<T>(t.lo);
  t.wlo = T(1) - l;
  t.whi = l;
  return t;
}

struct RoiParams {
  int64_t channels = 0, height = 0, width = 0, batch = 0;
  int64_t num_rois = 0, ph = 1, pw = 1;
  int64_t sampling = 0;
  double spatial_scale = 1;
  bool half_pixel = true;
  bool max_mode = false;
  int64_t grid_cap = 1;  // largest per-bin grid side the scratch tables hold
  int64_t sample_cap = 0;  // most bilinear samples per ROI the combined table holds
  int slots = 1;
};

// One bilinear sample: four corner offsets in the plane and their weights
// (all zero for a sample off the map).
template <typename T>
struct Sample {
  int64_t off[4];
  T w[4];
};

template <typename T>
class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(RoiParams p, std::string name) : p_(p), name_(std::move(name)) {}

  size_t ScratchBytes() const override {
    return static_cast<size_t>(p_.slots) * SlotBytes();
  }

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* rois = io.in<T>(1);
    const int64_t* batch_idx = io.in<int64_t>(2);
    T* y = io.out<T>(0);
    for (int64_t r = 0; r < p_.num_rois; ++r)
      if (batch_idx[r] < 0 || batch_idx[r] >= p_.batch)
        return OutOfRange(name_, ": batch_indices[", r, "] = ", batch_idx[r], " is outside [0, ", p_.batch, ")");
    const int64_t cblocks = (p_.channels + kChannelBlock - 1) / kChannelBlock;
    const int64_t items = p_.num_rois * cblocks;
    const int64_t per_slot = (items + p_.slots - 1) / p_.slots;
    uint8_t* scratch = static_cast<uint8_t*>(io.scratch);
    const int64_t cost = std::max<int64_t>(1, kChannelBlock * p_.ph * p_.pw * 4 * per_slot);
    io.pool->ParallelFor(p_.slots, std::max<int64_t>(1, 65536 / cost), [&](int64_t b, int64_t e) {
      for (int64_t s = b; s < e; ++s) {
        Tap<T>* table = reinterpret_cast<Tap<T>*>(scratch + s * SlotBytes());
        Sample<T>* samples = reinterpret_cast<Sample<T>*>(table + TableEntries());
        for (int64_t item = s * per_slot; item < std::min(items, (s + 1) * per_slot); ++item)
          RunItem(x, rois, batch_idx, y, item / cblocks, (item % cblocks) * kChannelBlock, table, samples);
      }
    });
    return Status::Ok();
  }

 private:
  size_t TableEntries() const { return static_cast<size_t>((p_.ph + p_.pw) * p_.grid_cap); }
  size_t SlotBytes() const {
    size_t b = TableEntries() * sizeof(Tap<T>) + static_cast<size_t>(p_.sample_cap) * sizeof(Sample<T>);
    return (b + 63) / 64 * 64;
  }

  // Channels [c0, c0 + block) of one ROI from the combined sample table: per
  // bin, gh * gw samples of four weighted corners each.
  void RunSamples(const T* x, T* y, int64_t r, int64_t c0, int64_t b, const Sample<T>* samples, int64_t per_bin,
                  T count) const {
    const int64_t plane = p_.height * p_.width;
    const int64_t bins = p_.ph * p_.pw;
    const int64_t c1 = std::min(p_.channels, c0 + kChannelBlock);
    for (int64_t c = c0; c < c1; ++c) {
      const T* xc = x + (b * p_.channels + c) * plane;
      T* yc = y + (r * p_.channels + c) * bins;
      const Sample<T>* sp = samples;
      for (int64_t bin = 0; bin < bins; ++bin) {
        T acc = 0;
        if (p_.max_mode) {
          for (int64_t k = 0; k < per_bin; ++k, ++sp) {
            T v = std::max(std::max(sp->w[0] * xc[sp->off[0]], sp->w[1] * xc[sp->off[1]]),
                           std::max(sp->w[2] * xc[sp->off[2]], sp->w[3] * xc[sp->off[3]]));
            acc = k == 0 ? v : std::max(acc, v);
          }
          yc[bin] = acc;
        } else {
          for (int64_t k = 0; k < per_bin; ++k, ++sp)
            acc += sp->w[0] * xc[sp->off[0]] + sp->w[1] * xc[sp->off[1]] + sp->w[2] * xc[sp->off[2]] +
                   sp->w[3] * xc[sp->off[3]];
          yc[bin] = acc / count;
        }
      }
    }
  }

  void RunItem(const T* x, const T* rois, const int64_t* batch_idx, T* y, int64_t r, int64_t c0,
               Tap<T>* table, Sample<T>* samples) const {
    const T* roi = rois + r * 4;
    const T scale = static_cast<T>(p_.spatial_scale);
    const T off = p_.half_pixel ? T(0.5) : T(0);
    const T x0 = roi[0] * scale - off, y0 = roi[1] * scale - off;
    const T x1 = roi[2] * scale - off, y1 = roi[3] * scale - off;
    T rw = x1 - x0, rh = y1 - y0;
    if (!p_.half_pixel) {  // malformed ROIs are forced to 1x1
      rw = std::max(rw, T(1));
      rh = std::max(rh, T(1));
    }
    const T bin_h = rh / static_cast<T>(p_.ph), bin_w = rw / static_cast<T>(p_.pw);
    auto grid_side = [&](T extent, int64_t pooled) -> int64_t {
      if (p_.sampling > 0) return p_.sampling;
      double g = std::ceil(static_cast<double>(extent) / static_cast<double>(pooled));
      return g > 0 ? static_cast<int64_t>(std::min(g, 1e9)) : 0;
    };
    const int64_t gh = grid_side(rh, p_.ph), gw = grid_side(rw, p_.pw);
    const T count = static_cast<T>(std::max<int64_t>(gh * gw, 1));
    const bool tabled = gh <= p_.grid_cap && gw <= p_.grid_cap;
    auto row_tap = [&](int64_t ph, int64_t iy) {
      return AxisTap<T>(y0 + static_cast<T>(ph) * bin_h + (static_cast<T>(iy) + T(0.5)) * bin_h / static_cast<T>(gh),
                        p_.height);
    };
    auto col_tap = [&](int64_t pw, int64_t ix) {
      return AxisTap<T>(x0 + static_cast<T>(pw) * bin_w + (static_cast<T>(ix) + T(0.5)) * bin_w / static_cast<T>(gw),
                        p_.width);
    };
    Tap<T>* rows = table;
    Tap<T>* cols = table + p_.ph * p_.grid_cap;
    if (tabled) {
      for (int64_t ph = 0; ph < p_.ph; ++ph)
        for (int64_t iy = 0; iy < gh; ++iy) rows[ph * gh + iy] = row_tap(ph, iy);
      for (int64_t pw = 0; pw < p_.pw; ++pw)
        for (int64_t ix = 0; ix < gw; ++ix) cols[pw * gw + ix] = col_tap(pw, ix);
      const int64_t per_bin = gh * gw;
      if (per_bin > 0 && p_.ph * p_.pw * per_bin <= p_.sample_cap) {
        Sample<T>* sp = samples;
        for (int64_t ph = 0; ph < p_.ph; ++ph)
          for (int64_t pw = 0; pw < p_.pw; ++pw)
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix, ++sp) {
                const Tap<T>& ty = rows[ph * gh + iy];
                const Tap<T>& tx = cols[pw * gw + ix];
                if (!ty.valid || !tx.valid) {
                  *sp = Sample<T>{{0, 0, 0, 0}, {0, 0, 0, 0}};
                  continue;
                }
                sp->off[0] = ty.lo * p_.width + tx.lo;
                sp->off[1] = ty.lo * p_.width + tx.hi;
                sp->off[2] = ty.hi * p_.width + tx.lo;
                sp->off[3] = ty.hi * p_.width + tx.hi;
                sp->w[0] = ty.wlo * tx.wlo;
                sp->w[1] = ty.wlo * tx.whi;
                sp->w[2] = ty.whi * tx.wlo;
                sp->w[3] = ty.whi * tx.whi;
              }
        RunSamples(x, y, r, c0, batch_idx[r], samples, per_bin, count);
        return;
      }
    }
    const int64_t plane = p_.height * p_.width;
    const int64_t c1 = std::min(p_.channels, c0 + kChannelBlock);
    for (int64_t c = c0; c < c1; ++c) {
      const T* xc = x + (batch_idx[r] * p_.channels + c) * plane;
      T* yc = y + (r * p_.channels + c) * p_.ph * p_.pw;
      for (int64_t ph = 0; ph < p_.ph; ++ph)
        for (int64_t pw = 0; pw < p_.pw; ++pw) {
          T acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const Tap<T> ty = tabled ? rows[ph * gh + iy] : row_tap(ph, iy);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const Tap<T> tx = tabled ? cols[pw * gw + ix] : col_tap(pw, ix);
              T v1 = 0, v2 = 0, v3 = 0, v4 = 0;
              if (ty.valid && tx.valid) {
                v1 = ty.wlo * tx.wlo * xc[ty.lo * p_.width + tx.lo];
                v2 = ty.wlo * tx.whi * xc[ty.lo * p_.width + tx.hi];
                v3 = ty.whi * tx.wlo * xc[ty.hi * p_.width + tx.lo];
                v4 = ty.whi * tx.whi * xc[ty.hi * p_.width + tx.hi];
              }
              if (p_.max_mode) {
                // As the reference kernels do: the largest weighted corner.
                T v = std::max(std::max(v1, v2), std::max(v3, v4));
                acc = first ? v : std::max(acc, v);
                first = false;
              } else {
                acc += v1 + v2 + v3 + v4;
              }
            }
          }
          yc[ph * p_.pw + pw] = p_.max_mode ? acc : acc / count;
        }
    }
  }

  RoiParams p_;
  std::string name_;
};

Expected<KernelPtr> MakeRoiAlign(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  const Value& rois = *n.input(1);
  const Value& idx = *n.input(2);
  RoiParams p;
  p.batch = x.shape[0];
  p.channels = x.shape[1];
  p.height = x.shape[2];
  p.width = x.shape[3];
  p.num_rois = rois.shape[0];
  if (idx.shape[0] != p.num_rois)
    return InvalidArgument(n.Describe(), ": batch_indices has ", idx.shape[0], " values for ", p.num_rois, " rois");
  if (idx.dtype != DataType::kInt64)
    return InvalidArgument(n.Describe(), ": batch_indices must be int64, got ", DataTypeName(idx.dtype));
  if (rois.dtype != x.dtype)
    return InvalidArgument(n.Describe(), ": rois has dtype ", DataTypeName(rois.dtype), ", expected ",
                           DataTypeName(x.dtype), " like X");
  p.ph = n.GetInt("output_height", 1);
  p.pw = n.GetInt("output_width", 1);
  if (p.ph < 1 || p.pw < 1)
    return InvalidArgument(n.Describe(), ": output_height and output_width must be >= 1");
  p.sampling = n.GetInt("sampling_ratio", 0);
  if (p.sampling < 0) return InvalidArgument(n.Describe(), ": sampling_ratio must be >= 0, got ", p.sampling);
  p.spatial_scale = n.GetFloat("spatial_scale", 1.f);
  std::string mode = n.GetString("mode", "avg");
  if (mode != "avg" && mode != "max") return InvalidArgument(n.Describe(), ": unknown mode '", mode, "'");
  p.max_mode = mode == "max";
  std::string coord = n.GetString("coordinate_transformation_mode", n.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (coord != "half_pixel" && coord != "output_half_pixel")
    return InvalidArgument(n.Describe(), ": unknown coordinate_transformation_mode '", coord, "'");
  p.half_pixel = coord == "half_pixel";
  if (p.num_rois > 0 && (p.height == 0 || p.width == 0))
    return InvalidArgument(n.Describe(), ": X has an empty spatial axis");
  // Adaptive grids of ROIs inside the (scaled) map fit the tables; larger ones
  // fall back to computing taps per sample.
  int64_t span = static_cast<int64_t>(std::ceil(std::max(p.height, p.width) + 2.0));
  p.grid_cap = p.sampling > 0 ? p.sampling : std::max<int64_t>(1, (span + std::min(p.ph, p.pw) - 1) / std::min(p.ph, p.pw));
  p.sample_cap = std::min<int64_t>(p.ph * p.pw * p.grid_cap * p.grid_cap, 16384);
  p.slots = std::max(1, init.max_threads);
  if (x.dtype == DataType::kFloat32) return KernelPtr(new RoiAlignKernel<float>(p, n.Describe()));
  if (x.dtype == DataType::kFloat64) return KernelPtr(new RoiAlignKernel<double>(p, n.Describe()));
  return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported (float32 and float64 only)");
}

}  // namespace

void RegisterRoiAlignOps(OpRegistry& r) {
  r.Register({.op_type = "RoiAlign", .min_opset = 10, .infer = InferRoiAlign, .kernels = CpuKernel(MakeRoiAlign)});
}

}  // namespace oc

// MaxRoiPool (opset 1): max pooling of each region of interest into a fixed
// pooled_shape grid, as in Fast R-CNN's ROI pooling layer. float32 / float64
// (float16 runs in float32 between Casts).
//
// A region [batch, x1, y1, x2, y2] is scaled by spatial_scale and rounded to
// whole pixels (half away from zero); its height and width count both end
// pixels and are at least 1. Bin i of P along an axis covers
// [floor(i * size / P), ceil((i + 1) * size / P)) from the region's start,
// clipped to the map; an empty bin gives 0. The bin arithmetic is done in
// float32, like the Caffe layer and onnxruntime, so that bins whose edge falls
// exactly on a pixel agree with theirs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferMaxRoiPool(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& rois = *node.input(1);
  if (x.shape.size() != 4)
    return InvalidArgument(node.Describe(), ": input X must be 4-D (N, C, H, W), got ", x.ShapeString());
  if (rois.shape.size() != 2 || (rois.shape[1] >= 0 && rois.shape[1] != 5))
    return InvalidArgument(node.Describe(), ": rois must have shape [num_rois, 5] (batch index, x1, y1, x2, y2), got ",
                           rois.ShapeString());
  if (rois.dtype != x.dtype)
    return InvalidArgument(node.Describe(), ": rois has dtype ", DataTypeName(rois.dtype), ", expected ",
                           DataTypeName(x.dtype), " like X");
  const std::vector<int64_t> pooled = node.GetInts("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1)
    return InvalidArgument(node.Describe(), ": attribute pooled_shape must be two values >= 1 (height, width)");
  SetOutput(node, 0, x.dtype, {rois.shape[0], x.shape[1], pooled[0], pooled[1]});
  return Status::Ok();
}

struct RoiPoolParams {
  int64_t batch = 0, channels = 0, height = 0, width = 0, num_rois = 0, ph = 1, pw = 1;
  float spatial_scale = 1.f;
};

// A region edge in pixels: round(v * scale) in float32, kept within +-2^30 so
// that a huge coordinate clips to the map instead of overflowing the integer
// (a float64 beyond float32's range is clamped before it is narrowed).
template <typename T>
int64_t ScaledEdge(T v, float scale) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  const float f = static_cast<float>(std::clamp(static_cast<double>(v), -kFloatMax, kFloatMax));
  const float s = std::round(f * scale);
  return static_cast<int64_t>(std::clamp(s, -1073741824.f, 1073741824.f));
}

// Bin [lo, hi) along an axis of `size` pixels for bin i of `bins` over a region
// of `extent` pixels starting at `start`.
void BinRange(int64_t i, int64_t bins, int64_t extent, int64_t start, int64_t size, int64_t* lo, int64_t* hi) {
  const float bin = static_cast<float>(extent) / static_cast<float>(bins);
  const int64_t a = static_cast<int64_t>(std::floor(static_cast<float>(i) * bin));
  const int64_t b = static_cast<int64_t>(std::ceil(static_cast<float>(i + 1) * bin));
  *lo = std::clamp<int64_t>(a + start, 0, size);
  *hi = std::clamp<int64_t>(b + start, 0, size);
}

template <typename T>
class MaxRoiPoolKernel final : public Kernel {
 public:
  MaxRoiPoolKernel(RoiPoolParams p, std::string name) : p_(p), name_(std::move(name)) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* rois = io.in<T>(1);
    T* y = io.out<T>(0);
    // The data decides what is valid: check every region before writing.
    for (int64_t r = 0; r < p_.num_rois; ++r) {
      const T* roi = rois + r * 5;
      for (int k = 0; k < 5; ++k)
        if (!std::isfinite(static_cast<double>(roi[k])))
          return InvalidArgument(name_, ": roi ", r, " has a non-finite value at position ", k);
      const double b = static_cast<double>(roi[0]);
      if (b < 0 || b >= static_cast<double>(p_.batch) || b != std::floor(b))
        return OutOfRange(name_, ": roi ", r, " has batch index ", b, ", expected an integer in [0, ", p_.batch,
                          ")");
    }
    const int64_t plane = p_.height * p_.width;
    const int64_t work_per_item = std::max<int64_t>(1, plane);
    io.pool->ParallelFor(p_.num_rois * p_.channels, std::max<int64_t>(1, 16384 / work_per_item),
                         [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t r = i / p_.channels, c = i % p_.channels;
        const T* roi = rois + r * 5;
        const int64_t n = static_cast<int64_t>(roi[0]);
        const int64_t x1 = ScaledEdge(roi[1], p_.spatial_scale);
        const int64_t y1 = ScaledEdge(roi[2], p_.spatial_scale);
        const int64_t x2 = ScaledEdge(roi[3], p_.spatial_scale);
        const int64_t y2 = ScaledEdge(roi[4], p_.spatial_scale);
        const int64_t rh = std::max<int64_t>(y2 - y1 + 1, 1), rw = std::max<int64_t>(x2 - x1 + 1, 1);
        const T* src = x + (n * p_.channels + c) * plane;
        T* dst = y + i * p_.ph * p_.pw;
        for (int64_t py = 0; py < p_.ph; ++py) {
          int64_t h0, h1;
          BinRange(py, p_.ph, rh, y1, p_.height, &h0, &h1);
          for (int64_t px = 0; px < p_.pw; ++px) {
            int64_t w0, w1;
            BinRange(px, p_.pw, rw, x1, p_.width, &w0, &w1);
            if (h1 <= h0 || w1 <= w0) {
              dst[py * p_.pw + px] = T(0);
              continue;
            }
            T m = -std::numeric_limits<T>::infinity();
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) m = std::max(m, src[h * p_.width + w]);
            dst[py * p_.pw + px] = m;
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  RoiPoolParams p_;
  std::string name_;
};

Expected<KernelPtr> MakeMaxRoiPool(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  RoiPoolParams p;
  p.batch = x.shape[0];
  p.channels = x.shape[1];
  p.height = x.shape[2];
  p.width = x.shape[3];
  p.num_rois = n.input(1)->shape[0];
  const std::vector<int64_t> pooled = n.GetInts("pooled_shape");
  p.ph = pooled[0];
  p.pw = pooled[1];
  p.spatial_scale = n.GetFloat("spatial_scale", 1.f);
  if (!std::isfinite(p.spatial_scale) || p.spatial_scale <= 0)
    return InvalidArgument(n.Describe(), ": spatial_scale must be a positive number, got ", p.spatial_scale);
  if (x.dtype == DataType::kFloat32) return KernelPtr(new MaxRoiPoolKernel<float>(p, n.Describe()));
  if (x.dtype == DataType::kFloat64) return KernelPtr(new MaxRoiPoolKernel<double>(p, n.Describe()));
  return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported (float32 and float64)");
}

}  // namespace

void RegisterMaxRoiPoolOps(OpRegistry& r) {
  r.Register({.op_type = "MaxRoiPool", .min_opset = 1, .infer = InferMaxRoiPool, .kernels = CpuKernel(MakeMaxRoiPool)});
}

}  // namespace oc

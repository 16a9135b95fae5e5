// Small normalisations along axes: Hardmax (one-hot of the first maximum),
// LpNormalization (x / ||x||_p with p in {1, 2}) and MeanVarianceNormalization
// ((x - mean) / (std + 1e-9) over a set of axes). Statistics are accumulated in
// double; float32 and float64 kernels.
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferSameFloat(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

// The tensor seen as [outer, len, inner] around one axis.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

template <typename T, typename Body>
void ForEachLine(const AxisView& v, ThreadPool* pool, Body&& body) {
  const int64_t lines = v.outer * v.inner;
  pool->ParallelFor(lines, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, v.len)), [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      const int64_t o = l / v.inner, i = l % v.inner;
      body(o * v.len * v.inner + i);  // offset of the line's first element; stride = inner
    }
  });
}

// ---- Hardmax --------------------------------------------------------------------------------

template <typename T>
class HardmaxKernel final : public Kernel {
 public:
  explicit HardmaxKernel(AxisView v) : v_(v) {}
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    const int64_t s = v_.inner, len = v_.len;
    ForEachLine<T>(v_, io.pool, [&](int64_t off) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; ++j)
        if (x[off + j * s] > x[off + best * s]) best = j;  // first maximum wins, like argmax
      for (int64_t j = 0; j < len; ++j) y[off + j * s] = j == best ? T(1) : T(0);
    });
    return Status::Ok();
  }

 private:
  AxisView v_;
};

// Opset 13 works along one axis; earlier opsets flatten the input to 2-D at
// `axis` (default 1) and work along the second dimension.
Expected<AxisView> HardmaxView(const Node& n, const std::vector<int64_t>& shape) {
  const int64_t r = static_cast<int64_t>(shape.size());
  if (n.opset >= 13) {
    OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", -1), r));
    return AxisView{ShapeProduct(shape, 0, axis), shape[axis], ShapeProduct(shape, axis + 1, r)};
  }
  int64_t axis = n.GetInt("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return InvalidArgument(n.Describe(), ": axis ", n.GetInt("axis", 1), " out of range for rank ", r);
  return AxisView{ShapeProduct(shape, 0, axis), ShapeProduct(shape, axis, r), 1};
}

template <template <typename> class K>
Expected<KernelPtr> MakeFloatKernel(const Node& n, AxisView v) {
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return KernelPtr(new K<float>(v));
    case DataType::kFloat64: return KernelPtr(new K<double>(v));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float32, float64)");
  }
}

Expected<KernelPtr> MakeHardmax(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(AxisView v, HardmaxView(n, n.input(0)->shape));
  return MakeFloatKernel<HardmaxKernel>(n, v);
}

// ---- LpNormalization ------------------------------------------------------------------------

template <typename T>
class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(AxisView v, bool l1) : v_(v), l1_(l1) {}
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    const int64_t s = v_.inner, len = v_.len;
    const bool l1 = l1_;
    ForEachLine<T>(v_, io.pool, [&](int64_t off) {
      double acc = 0.0;
      for (int64_t j = 0; j < len; ++j) {
        const double a = static_cast<double>(x[off + j * s]);
        acc += l1 ? std::fabs(a) : a * a;
      }
      const double norm = l1 ? acc : std::sqrt(acc);
      // A zero norm gives 0 rather than 0/0 (the reference's choice).
      for (int64_t j = 0; j < len; ++j)
        y[off + j * s] = norm == 0.0 ? T(0) : static_cast<T>(static_cast<double>(x[off + j * s]) / norm);
    });
    return Status::Ok();
  }

 private:
  AxisView v_;
  bool l1_;
};

Status InferLpNorm(Node& node) {
  const int64_t p = node.GetInt("p", 2);
  if (p != 1 && p != 2) return InvalidArgument(node.Describe(), ": p must be 1 or 2, got ", p);
  return InferSameFloat(node);
}

Expected<KernelPtr> MakeLpNorm(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& shape = n.input(0)->shape;
  const int64_t r = static_cast<int64_t>(shape.size());
  if (r == 0) return InvalidArgument(n.Describe(), ": input must have rank >= 1");
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", -1), r));
  const int64_t p = n.GetInt("p", 2);
  if (p != 1 && p != 2) return InvalidArgument(n.Describe(), ": p must be 1 or 2, got ", p);
  AxisView v{ShapeProduct(shape, 0, axis), shape[axis], ShapeProduct(shape, axis + 1, r)};
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return KernelPtr(new LpNormKernel<float>(v, p == 1));
    case DataType::kFloat64: return KernelPtr(new LpNormKernel<double>(v, p == 1));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float32, float64)");
  }
}

// ---- MeanVarianceNormalization --------------------------------------------------------------

// Each element belongs to the group given by its coordinates on the kept axes;
// group_of_ maps the element's multi-index to that group through per-dim
// strides (0 on reduced axes), walked like an odometer.
template <typename T>
class MvnKernel final : public Kernel {
 public:
  MvnKernel(std::vector<int64_t> shape, std::vector<int64_t> group_strides, int64_t groups, int64_t per_group)
      : shape_(std::move(shape)), gstride_(std::move(group_strides)), groups_(groups), per_group_(per_group) {}
  size_t ScratchBytes() const override { return static_cast<size_t>(groups_) * 2 * sizeof(double); }
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    double* mean = static_cast<double*>(io.scratch);
    double* scale = mean + groups_;
    std::fill(mean, mean + 2 * groups_, 0.0);
    Walk([&](int64_t i, int64_t g) { mean[g] += static_cast<double>(x[i]); });
    for (int64_t g = 0; g < groups_; ++g) mean[g] /= static_cast<double>(per_group_);
    Walk([&](int64_t i, int64_t g) {
      const double d = static_cast<double>(x[i]) - mean[g];
      scale[g] += d * d;
    });
    for (int64_t g = 0; g < groups_; ++g) scale[g] = 1.0 / (std::sqrt(scale[g] / static_cast<double>(per_group_)) + 1e-9);
    Walk([&](int64_t i, int64_t g) { y[i] = static_cast<T>((static_cast<double>(x[i]) - mean[g]) * scale[g]); });
    return Status::Ok();
  }

 private:
  template <typename F>
  void Walk(F&& f) const {
    const int r = static_cast<int>(shape_.size());
    int64_t total = ShapeProduct(shape_);
    if (total == 0) return;
    int64_t idx[32] = {};
    int64_t g = 0;
    for (int64_t i = 0; i < total; ++i) {
      f(i, g);
      for (int d = r - 1; d >= 0; --d) {
        g += gstride_[d];
        if (++idx[d] < shape_[d]) break;
        g -= gstride_[d] * idx[d];
        idx[d] = 0;
      }
    }
  }

  std::vector<int64_t> shape_, gstride_;
  int64_t groups_, per_group_;
};

Expected<KernelPtr> MakeMvn(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& shape = n.input(0)->shape;
  const int64_t r = static_cast<int64_t>(shape.size());
  if (r > 32) return NotSupported(n.Describe(), ": rank ", r, " above 32");
  std::vector<bool> reduced(r, false);
  for (int64_t a : n.GetInts("axes", {0, 2, 3})) {
    OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, a, r));
    reduced[axis] = true;
  }
  std::vector<int64_t> gstride(r, 0);
  int64_t groups = 1, per_group = 1;
  for (int64_t d = r - 1; d >= 0; --d) {
    if (reduced[d]) {
      per_group *= shape[d];
    } else {
      gstride[d] = groups;
      groups *= shape[d];
    }
  }
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return KernelPtr(new MvnKernel<float>(shape, gstride, groups, per_group));
    case DataType::kFloat64: return KernelPtr(new MvnKernel<double>(shape, gstride, groups, per_group));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float32, float64)");
  }
}

}  // namespace

void RegisterNormMiscOps(OpRegistry& r) {
  r.Register({.op_type = "Hardmax", .min_opset = 1, .infer = InferSameFloat, .kernels = CpuKernel(MakeHardmax)});
  r.Register({.op_type = "LpNormalization", .min_opset = 1, .infer = InferLpNorm, .kernels = CpuKernel(MakeLpNorm)});
  r.Register({.op_type = "MeanVarianceNormalization", .min_opset = 9, .infer = InferSameFloat, .kernels = CpuKernel(MakeMvn)});
}

}  // namespace oc

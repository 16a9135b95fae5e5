// LayerNormalization (opset 17): normalises over dims [axis, rank) of X, then
// Y = (X - mean) * inv_std_dev * Scale + B. Scale and B broadcast to the
// normalised shape; the optional Mean / InvStdDev outputs have X's shape with
// the normalised dims set to 1. Statistics are computed in float32 for float32
// inputs (stash_type = 1) and in double for double inputs, two-pass.
#include <cmath>
#include <vector>

#include "ops/cpu/norm/grads.h"
#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

template <typename T>
T LaneSum(const T* x, int64_t n, T shift) {
  constexpr int kL = 16;
  T s[kL] = {};
  int64_t i = 0;
  for (; i + kL <= n; i += kL)
    for (int l = 0; l < kL; ++l) s[l] += x[i + l] - shift;
  T r = 0;
  for (int l = 0; l < kL; ++l) r += s[l];
  for (; i < n; ++i) r += x[i] - shift;
  return r;
}

template <typename T>
T LaneSumSquares(const T* x, int64_t n, T mean) {
  constexpr int kL = 16;
  T s[kL] = {};
  int64_t i = 0;
  for (; i + kL <= n; i += kL)
    for (int l = 0; l < kL; ++l) {
      T d = x[i + l] - mean;
      s[l] += d * d;
    }
  T r = 0;
  for (int l = 0; l < kL; ++l) r += s[l];
  for (; i < n; ++i) {
    T d = x[i] - mean;
    r += d * d;
  }
  return r;
}

template <typename T>
class LayerNormKernel final : public Kernel {
 public:
  // scale_idx / bias_idx map a normalised element to its Scale / B element when
  // they are broadcast (empty when they already have the normalised size).
  LayerNormKernel(int64_t rows, int64_t cols, double eps, std::vector<int64_t> scale_idx,
                  std::vector<int64_t> bias_idx, bool has_bias)
      : rows_(rows), cols_(cols), eps_(static_cast<T>(eps)), scale_idx_(std::move(scale_idx)),
        bias_idx_(std::move(bias_idx)), has_bias_(has_bias) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* scale = io.in<T>(1);
    const T* bias = has_bias_ && io.num_inputs > 2 ? io.in<T>(2) : nullptr;
    T* y = io.out<T>(0);
    T* mean_out = io.num_outputs > 1 ? io.out<T>(1) : nullptr;
    T* inv_out = io.num_outputs > 2 ? io.out<T>(2) : nullptr;
    const int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(cols_, 1));
    io.pool->ParallelFor(rows_, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * cols_;
        T* yr = y + r * cols_;
        T mean = cols_ ? LaneSum(xr, cols_, T(0)) / static_cast<T>(cols_) : T(0);
        T var = cols_ ? LaneSumSquares(xr, cols_, mean) / static_cast<T>(cols_) : T(0);
        T inv = T(1) / std::sqrt(var + eps_);
        if (mean_out) mean_out[r] = mean;
        if (inv_out) inv_out[r] = inv;
        if (scale_idx_.empty() && bias_idx_.empty()) {
          if (bias) {
            for (int64_t i = 0; i < cols_; ++i) yr[i] = (xr[i] - mean) * inv * scale[i] + bias[i];
          } else {
            for (int64_t i = 0; i < cols_; ++i) yr[i] = (xr[i] - mean) * inv * scale[i];
          }
        } else {
          for (int64_t i = 0; i < cols_; ++i) {
            T s = scale[scale_idx_.empty() ? i : scale_idx_[i]];
            T v = (xr[i] - mean) * inv * s;
            if (bias) v += bias[bias_idx_.empty() ? i : bias_idx_[i]];
            yr[i] = v;
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t rows_, cols_;
  T eps_;
  std::vector<int64_t> scale_idx_, bias_idx_;
  bool has_bias_;
};

// Checks that `v` broadcasts to `norm` (the normalised dims) one way.
Status CheckBroadcastTo(const Node& node, const Value& v, const std::vector<int64_t>& norm, const char* what) {
  if (!v.has_shape) return Status::Ok();
  if (v.shape.size() > norm.size())
    return InvalidArgument(node.Describe(), ": ", what, " shape ", v.ShapeString(),
                           " has more dims than the normalised shape");
  for (size_t i = 0; i < v.shape.size(); ++i) {
    int64_t d = v.shape[i], t = norm[norm.size() - v.shape.size() + i];
    if (d != 1 && d >= 0 && t >= 0 && d != t)
      return InvalidArgument(node.Describe(), ": ", what, " shape ", v.ShapeString(),
                             " does not broadcast to the normalised dims of X");
  }
  return Status::Ok();
}

Status InferLayerNorm(Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3)
    return InvalidArgument(node.Describe(), ": expects 2 or 3 inputs (X, Scale, [B])");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  OC_RETURN_IF_ERROR(ew::RequireSameDtype(node));
  const Value& x = *node.input(0);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return InvalidArgument(node.Describe(), ": X must have rank >= 1");
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", -1), rank));
  std::vector<int64_t> norm(x.shape.begin() + axis, x.shape.end());
  OC_RETURN_IF_ERROR(CheckBroadcastTo(node, *node.input(1), norm, "Scale"));
  if (node.input(2)) OC_RETURN_IF_ERROR(CheckBroadcastTo(node, *node.input(2), norm, "B"));
  SetOutputLike(node, 0, x);
  std::vector<int64_t> stat_shape = x.shape;
  for (int64_t i = axis; i < rank; ++i) stat_shape[i] = 1;
  DataType stat_type = x.dtype == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32;
  SetOutput(node, 1, stat_type, stat_shape);
  SetOutput(node, 2, stat_type, stat_shape);
  return Status::Ok();
}

std::vector<int64_t> IndexMap(const std::vector<int64_t>& param, const std::vector<int64_t>& norm) {
  int64_t cols = ShapeProduct(norm);
  if (ShapeProduct(param) == cols) return {};  // same elements in the same order
  std::vector<int64_t> idx(cols);
  for (int64_t i = 0; i < cols; ++i) {
    int64_t flat = i, off = 0, stride = 1;
    for (size_t d = norm.size(); d-- > 0;) {
      int64_t c = flat % norm[d];
      flat /= norm[d];
      size_t back = norm.size() - d;
      if (back <= param.size()) {
        int64_t pd = param[param.size() - back];
        if (pd != 1) off += c * stride;
        stride *= pd;
      }
    }
    idx[i] = off;
  }
  return idx;
}

Expected<KernelPtr> MakeLayerNorm(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& xs = n.input(0)->shape;
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", -1), static_cast<int64_t>(xs.size())));
  std::vector<int64_t> norm(xs.begin() + axis, xs.end());
  int64_t rows = ShapeProduct(xs, 0, axis), cols = ShapeProduct(norm);
  auto scale_idx = IndexMap(n.input(1)->shape, norm);
  std::vector<int64_t> bias_idx;
  if (n.input(2)) bias_idx = IndexMap(n.input(2)->shape, norm);
  // One map for both keeps the fast path only when neither is broadcast.
  if (scale_idx.empty() != bias_idx.empty() && n.input(2)) {
    std::vector<int64_t> ident(cols);
    for (int64_t i = 0; i < cols; ++i) ident[i] = i;
    if (scale_idx.empty()) scale_idx = ident;
    else bias_idx = ident;
  }
  double eps = n.GetFloat("epsilon", 1e-5f);
  switch (n.input(0)->dtype) {
    case DataType::kFloat32:
      return KernelPtr(new LayerNormKernel<float>(rows, cols, eps, std::move(scale_idx), std::move(bias_idx),
                                                  n.input(2) != nullptr));
    case DataType::kFloat64:
      return KernelPtr(new LayerNormKernel<double>(rows, cols, eps, std::move(scale_idx), std::move(bias_idx),
                                                   n.input(2) != nullptr));
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
}

}  // namespace

void RegisterLayerNormOps(OpRegistry& r) {
  r.Register({.op_type = "LayerNormalization", .min_opset = 17, .infer = InferLayerNorm, .kernels = CpuKernel(MakeLayerNorm),
              .grad = norm::GradLayerNorm});
}

}  // namespace oc

// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over dims [axis, rank)) +
// epsilon) * scale, with scale broadcast (numpy, right-aligned) to the
// normalised dims. Statistics in float for float32 (stash_type 1) and in double
// for float64.
#include <cmath>
#include <vector>

#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/cpu/norm/grads.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

template <typename T>
T SumSquares(const T* x, int64_t n) {
  constexpr int kL = 16;  // independent lanes: vectorises without reassociation
  T s[kL] = {};
  int64_t i = 0;
  for (; i + kL <= n; i += kL)
    for (int l = 0; l < kL; ++l) s[l] += x[i + l] * x[i + l];
  T r = 0;
  for (int l = 0; l < kL; ++l) r += s[l];
  for (; i < n; ++i) r += x[i] * x[i];
  return r;
}

template <typename T>
class RmsNormKernel final : public Kernel {
 public:
  // scale_idx maps a normalised element to its scale element (empty: same layout).
  RmsNormKernel(int64_t rows, int64_t cols, double eps, std::vector<int64_t> scale_idx)
      : rows_(rows), cols_(cols), eps_(static_cast<T>(eps)), scale_idx_(std::move(scale_idx)) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* scale = io.in<T>(1);
    T* y = io.out<T>(0);
    const int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(cols_, 1));
    io.pool->ParallelFor(rows_, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * cols_;
        T* yr = y + r * cols_;
        const T mean_sq = cols_ ? SumSquares(xr, cols_) / static_cast<T>(cols_) : T(0);
        const T inv = T(1) / std::sqrt(mean_sq + eps_);
        if (scale_idx_.empty()) {
          for (int64_t i = 0; i < cols_; ++i) yr[i] = xr[i] * inv * scale[i];
        } else {
          for (int64_t i = 0; i < cols_; ++i) yr[i] = xr[i] * inv * scale[scale_idx_[i]];
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t rows_, cols_;
  T eps_;
  std::vector<int64_t> scale_idx_;
};

Status InferRmsNorm(Node& node) {
  if (node.inputs.size() != 2) return InvalidArgument(node.Describe(), ": expects 2 inputs (X, scale)");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return InvalidArgument(node.Describe(), ": X must have rank >= 1");
  OC_RETURN_IF_ERROR(NormalizeAxis(node, node.GetInt("axis", -1), rank).status());
  SetOutputLike(node, 0, x);
  node.output(0)->dtype = node.input(1)->dtype;
  return Status::Ok();
}

Expected<KernelPtr> MakeRmsNorm(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& xs = n.input(0)->shape;
  const auto& ss = n.input(1)->shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", -1), rank));
  if (n.GetInt("stash_type", 1) != 1)
    return NotSupported(n.Describe(), ": stash_type ", n.GetInt("stash_type", 1), " is not supported (only 1)");
  std::vector<int64_t> norm(xs.begin() + axis, xs.end());
  if (ss.size() > norm.size())
    return InvalidArgument(n.Describe(), ": scale shape ", n.input(1)->ShapeString(),
                           " has more dims than the normalised dims of X");
  for (size_t i = 0; i < ss.size(); ++i) {
    const int64_t t = norm[norm.size() - ss.size() + i];
    if (ss[i] != 1 && ss[i] != t)
      return InvalidArgument(n.Describe(), ": scale shape ", n.input(1)->ShapeString(),
                             " does not broadcast to the normalised dims of X ", n.input(0)->ShapeString());
  }
  const int64_t cols = ShapeProduct(norm);
  std::vector<int64_t> idx;
  if (ShapeProduct(ss) != cols) {
    idx.resize(cols);
    const std::vector<int64_t> sst = Strides(ss);
    for (int64_t i = 0; i < cols; ++i) {
      int64_t flat = i, off = 0;
      for (size_t d = norm.size(); d-- > 0;) {
        const int64_t c = flat % norm[d];
        flat /= norm[d];
        const size_t back = norm.size() - d;
        if (back <= ss.size() && ss[ss.size() - back] != 1) off += c * sst[ss.size() - back];
      }
      idx[i] = off;
    }
  }
  const int64_t rows = ShapeProduct(xs, 0, axis);
  const double eps = n.GetFloat("epsilon", 1e-5f);
  const DataType t = n.input(0)->dtype;
  if (n.input(1)->dtype != t)
    return NotSupported(n.Describe(), ": X (", DataTypeName(t), ") and scale (", DataTypeName(n.input(1)->dtype),
                        ") of different types are not supported");
  switch (t) {
    case DataType::kFloat32: return KernelPtr(new RmsNormKernel<float>(rows, cols, eps, std::move(idx)));
    case DataType::kFloat64: return KernelPtr(new RmsNormKernel<double>(rows, cols, eps, std::move(idx)));
    default: return ew::UnsupportedDtype(n, t);
  }
}

}  // namespace

void RegisterRmsNormOps(OpRegistry& r) {
  r.Register({.op_type = "RMSNormalization", .min_opset = 23, .infer = InferRmsNorm, .kernels = CpuKernel(MakeRmsNorm),
              .grad = norm::GradRmsNorm});
}

}  // namespace oc

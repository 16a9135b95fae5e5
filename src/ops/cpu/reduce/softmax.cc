// Softmax and LogSoftmax, numerically stable (max subtracted first).
// Opset < 13 flattens the input to 2-D at `axis` (default 1) and normalises each
// row; opset >= 13 normalises along the single dim `axis` (default -1). Both are
// expressed as [outer, n, inner] with inner = 1 for the old form.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/cpu/reduce/grads.h"
#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/cpu/elementwise/elementwise_math.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int64_t kTile = 64;  // inner columns handled together when inner > 1

void ExpArray(const float* x, float* y, int64_t n) { ew::MathKernels().exp(x, y, n); }
void ExpArray(const double* x, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

// Max of a row with independent lanes (vectorisable without reassociation).
template <typename T>
T RowMax(const T* x, int64_t n) {
  constexpr int kL = 16;
  T m[kL];
  for (int l = 0; l < kL; ++l) m[l] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + kL <= n; i += kL)
    for (int l = 0; l < kL; ++l) m[l] = x[i + l] > m[l] ? x[i + l] : m[l];
  T r = -std::numeric_limits<T>::infinity();
  for (int l = 0; l < kL; ++l) r = m[l] > r ? m[l] : r;
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

template <typename T>
T RowSum(const T* x, int64_t n) {
  constexpr int kL = 16;
  T s[kL] = {};
  int64_t i = 0;
  for (; i + kL <= n; i += kL)
    for (int l = 0; l < kL; ++l) s[l] += x[i + l];
  T r = 0;
  for (int l = 0; l < kL; ++l) r += s[l];
  for (; i < n; ++i) r += x[i];
  return r;
}

template <typename T, bool kLog>
void SoftmaxRow(const T* x, T* y, int64_t n) {
  const auto& mk = ew::MathKernels();
  T m;
  if constexpr (std::is_same_v<T, float>) m = mk.row_max(x, n);
  else m = RowMax(x, n);
  if (std::isinf(m) && m < 0) {
    // All -inf: every exp is 0; the quotient is NaN as in the formula.
    for (int64_t i = 0; i < n; ++i) y[i] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (kLog) {
      const float shift = m + std::log(mk.exp_sum(x, nullptr, n, m));
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
    } else {
      const float inv = 1.f / mk.exp_sum(x, y, n, m);
      for (int64_t i = 0; i < n; ++i) y[i] *= inv;
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  if constexpr (kLog) {
    T s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(y[i]);
    const T ls = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] -= ls;
  } else {
    ExpArray(y, y, n);
    const T inv = T(1) / RowSum(y, n);
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

// One [n, inner] block, columns [j0, j0 + w).
template <typename T, bool kLog>
void SoftmaxColumns(const T* x, T* y, int64_t n, int64_t inner, int64_t j0, int64_t w) {
  T m[kTile], s[kTile];
  for (int64_t j = 0; j < w; ++j) {
    m[j] = -std::numeric_limits<T>::infinity();
    s[j] = 0;
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* xr = x + k * inner + j0;
    for (int64_t j = 0; j < w; ++j) m[j] = xr[j] > m[j] ? xr[j] : m[j];
  }
  T tmp[kTile];
  for (int64_t k = 0; k < n; ++k) {
    const T* xr = x + k * inner + j0;
    T* yr = y + k * inner + j0;
    for (int64_t j = 0; j < w; ++j) tmp[j] = xr[j] - m[j];
    if constexpr (kLog) {
      for (int64_t j = 0; j < w; ++j) yr[j] = tmp[j];
      ExpArray(tmp, tmp, w);
    } else {
      ExpArray(tmp, yr, w);
      for (int64_t j = 0; j < w; ++j) tmp[j] = yr[j];
    }
    for (int64_t j = 0; j < w; ++j) s[j] += tmp[j];
  }
  for (int64_t j = 0; j < w; ++j) {
    bool all_neg_inf = std::isinf(m[j]) && m[j] < 0;
    s[j] = all_neg_inf ? std::numeric_limits<T>::quiet_NaN() : (kLog ? std::log(s[j]) : T(1) / s[j]);
  }
  for (int64_t k = 0; k < n; ++k) {
    T* yr = y + k * inner + j0;
    if constexpr (kLog) {
      for (int64_t j = 0; j < w; ++j) yr[j] -= s[j];
    } else {
      for (int64_t j = 0; j < w; ++j) yr[j] *= s[j];
    }
  }
}

template <typename T, bool kLog>
class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(int64_t outer, int64_t n, int64_t inner) : outer_(outer), n_(n), inner_(inner) {}
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    if (n_ == 0 || outer_ == 0 || inner_ == 0) return Status::Ok();
    if (inner_ == 1) {
      int64_t grain = std::max<int64_t>(1, ew::kGrain / n_);
      io.pool->ParallelFor(outer_, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) SoftmaxRow<T, kLog>(x + r * n_, y + r * n_, n_);
      });
      return Status::Ok();
    }
    const int64_t tiles = (inner_ + kTile - 1) / kTile;
    const int64_t units = outer_ * tiles;
    int64_t grain = std::max<int64_t>(1, ew::kGrain / (n_ * std::min(inner_, kTile)));
    io.pool->ParallelFor(units, grain, [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) {
        int64_t o = u / tiles, j0 = (u % tiles) * kTile;
        const int64_t base = o * n_ * inner_;
        SoftmaxColumns<T, kLog>(x + base, y + base, n_, inner_, j0, std::min(kTile, inner_ - j0));
      }
    });
    return Status::Ok();
  }

 private:
  int64_t outer_, n_, inner_;
};

Status InferSoftmax(Node& node) {
  if (node.inputs.size() != 1) return InvalidArgument(node.Describe(), ": expects 1 input");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t def = node.opset < 13 ? 1 : -1;
  int64_t axis = node.GetInt("axis", def);
  if (rank == 0) return InvalidArgument(node.Describe(), ": input must have rank >= 1");
  OC_RETURN_IF_ERROR(NormalizeAxis(node, axis, rank).status());
  SetOutputLike(node, 0, x);
  return Status::Ok();
}

template <bool kLog>
Expected<KernelPtr> MakeSoftmax(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& shape = n.input(0)->shape;
  int64_t rank = static_cast<int64_t>(shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", n.opset < 13 ? 1 : -1), rank));
  int64_t outer = ShapeProduct(shape, 0, axis), len, inner;
  if (n.opset < 13) {
    len = ShapeProduct(shape, axis, shape.size());
    inner = 1;
  } else {
    len = shape[axis];
    inner = ShapeProduct(shape, axis + 1, shape.size());
  }
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return KernelPtr(new SoftmaxKernel<float, kLog>(outer, len, inner));
    case DataType::kFloat64: return KernelPtr(new SoftmaxKernel<double, kLog>(outer, len, inner));
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry& r) {
  r.Register({.op_type = "Softmax", .min_opset = 1, .infer = InferSoftmax, .kernels = CpuKernel(MakeSoftmax<false>),
              .grad = reduce::GradSoftmax});
  r.Register({.op_type = "LogSoftmax", .min_opset = 1, .infer = InferSoftmax, .kernels = CpuKernel(MakeSoftmax<true>),
              .grad = reduce::GradLogSoftmax});
}

}  // namespace oc

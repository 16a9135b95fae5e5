// Statistics-based normalisations over part of an NC... tensor:
//   InstanceNormalization  per (n, c) over the spatial axes, then scale[c], B[c]
//   GroupNormalization     per (n, group) over the group's channels and spatial
//                          axes, then scale/bias per group (opset 18) or per
//                          channel (opset 21)
//   LRN                    across neighbouring channels at each position
// float32 / float64. Statistics accumulate in double so that large planes keep
// their precision.
#include <algorithm>
#include <cmath>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status CheckFloat(const Node& n, const Value& x) {
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
    return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype),
                        " is not supported (float32 and float64 only)");
  return Status::Ok();
}

Status InferLikeX(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  if (x.shape.size() < 2)
    return InvalidArgument(node.Describe(), ": input X must have rank >= 2 (N, C, ...), got ", x.ShapeString());
  SetOutputLike(node, 0, x);
  return Status::Ok();
}

// Mean and 1/sqrt(var + eps) of `count` values.
template <typename T>
void Moments(const T* x, int64_t count, double eps, double* mean, double* inv_std) {
  double s = 0;
  for (int64_t i = 0; i < count; ++i) s += x[i];
  double m = count ? s / static_cast<double>(count) : 0;
  double v = 0;
  for (int64_t i = 0; i < count; ++i) { double d = x[i] - m; v += d * d; }
  v = count ? v / static_cast<double>(count) : 0;
  *mean = m;
  *inv_std = 1.0 / std::sqrt(v + eps);
}

// Normalises groups of `channels_per_group` consecutive planes of `inner` values.
// Scale/bias index: per group (param_per_channel=false) or per channel.
template <typename T>
class GroupStatsKernel final : public Kernel {
 public:
  GroupStatsKernel(int64_t groups_total, int64_t groups_per_sample, int64_t channels_per_group, int64_t inner,
                   bool param_per_channel, double eps)
      : groups_total_(groups_total), groups_per_sample_(groups_per_sample), cpg_(channels_per_group),
        inner_(inner), per_channel_(param_per_channel), eps_(eps) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* scale = io.in<T>(1);
    const T* bias = io.in<T>(2);
    T* y = io.out<T>(0);
    const int64_t group_size = cpg_ * inner_;
    int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(group_size, 1));
    io.pool->ParallelFor(groups_total_, grain, [&](int64_t b, int64_t e) {
      for (int64_t gi = b; gi < e; ++gi) {
        const T* xg = x + gi * group_size;
        T* yg = y + gi * group_size;
        double mean, inv_std;
        Moments(xg, group_size, eps_, &mean, &inv_std);
        int64_t g = gi % groups_per_sample_;
        for (int64_t c = 0; c < cpg_; ++c) {
          int64_t p = per_channel_ ? g * cpg_ + c : g;
          T a = static_cast<T>(inv_std * static_cast<double>(scale[p]));
          T off = static_cast<T>(static_cast<double>(bias[p]) - mean * inv_std * static_cast<double>(scale[p]));
          const T* xc = xg + c * inner_;
          T* yc = yg + c * inner_;
          for (int64_t i = 0; i < inner_; ++i) yc[i] = xc[i] * a + off;
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t groups_total_, groups_per_sample_, cpg_, inner_;
  bool per_channel_;
  double eps_;
};

KernelPtr NewGroupStats(DataType dt, int64_t total, int64_t per_sample, int64_t cpg, int64_t inner,
                        bool per_channel, double eps) {
  if (dt == DataType::kFloat64)
    return KernelPtr(new GroupStatsKernel<double>(total, per_sample, cpg, inner, per_channel, eps));
  return KernelPtr(new GroupStatsKernel<float>(total, per_sample, cpg, inner, per_channel, eps));
}

Status CheckParam(const Node& n, size_t i, int64_t expected, const char* what) {
  const Value* v = n.input(i);
  if (!v) return InvalidArgument(n.Describe(), ": required input ", i, " (", what, ") is missing");
  if (v->dtype != n.input(0)->dtype)
    return InvalidArgument(n.Describe(), ": input ", i, " (", what, ") has dtype ", DataTypeName(v->dtype),
                           ", expected ", DataTypeName(n.input(0)->dtype));
  if (v->NumElements() != expected)
    return InvalidArgument(n.Describe(), ": input ", i, " (", what, ") has shape ", v->ShapeString(),
                           ", expected ", expected, " values");
  return Status::Ok();
}

Expected<KernelPtr> MakeInstanceNorm(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(CheckFloat(n, x));
  int64_t c = x.shape[1];
  OC_RETURN_IF_ERROR(CheckParam(n, 1, c, "scale"));
  OC_RETURN_IF_ERROR(CheckParam(n, 2, c, "B"));
  int64_t inner = ShapeProduct(x.shape, 2, x.shape.size());
  double eps = n.GetFloat("epsilon", 1e-5f);
  return NewGroupStats(x.dtype, x.shape[0] * c, c, 1, inner, true, eps);
}

Expected<KernelPtr> MakeGroupNorm(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(CheckFloat(n, x));
  int64_t c = x.shape[1];
  int64_t groups = n.GetInt("num_groups", 0);
  if (groups < 1 || c % groups != 0)
    return InvalidArgument(n.Describe(), ": num_groups (", groups, ") must be >= 1 and divide C (", c, ")");
  // Opset 18 scales per group; opset 21 per channel.
  bool per_channel = n.opset >= 21;
  int64_t params = per_channel ? c : groups;
  OC_RETURN_IF_ERROR(CheckParam(n, 1, params, "scale"));
  OC_RETURN_IF_ERROR(CheckParam(n, 2, params, "bias"));
  int64_t inner = ShapeProduct(x.shape, 2, x.shape.size());
  double eps = n.GetFloat("epsilon", 1e-5f);
  return NewGroupStats(x.dtype, x.shape[0] * groups, groups, c / groups, inner, per_channel, eps);
}

template <typename T>
class LrnKernel final : public Kernel {
 public:
  LrnKernel(int64_t n, int64_t c, int64_t inner, int64_t size, double alpha, double beta, double bias)
      : n_(n), c_(c), inner_(inner), size_(size), alpha_over_size_(alpha / static_cast<double>(size)),
        beta_(beta), bias_(bias) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(inner_ * size_, 1));
    io.pool->ParallelFor(n_ * c_, grain, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        int64_t ch = plane % c_;
        const T* xs = x + (plane - ch) * inner_;
        int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min<int64_t>(c_ - 1, ch + after);
        for (int64_t i = 0; i < inner_; ++i) {
          double sq = 0;
          for (int64_t k = lo; k <= hi; ++k) { double v = xs[k * inner_ + i]; sq += v * v; }
          double denom = std::pow(bias_ + alpha_over_size_ * sq, beta_);
          y[plane * inner_ + i] = static_cast<T>(static_cast<double>(x[plane * inner_ + i]) / denom);
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_, c_, inner_, size_;
  double alpha_over_size_, beta_, bias_;
};

Expected<KernelPtr> MakeLrn(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(CheckFloat(n, x));
  int64_t size = n.GetInt("size", 0);
  if (size < 1) return InvalidArgument(n.Describe(), ": attribute size must be >= 1, got ", size);
  double alpha = n.GetFloat("alpha", 1e-4f), beta = n.GetFloat("beta", 0.75f), bias = n.GetFloat("bias", 1.f);
  int64_t inner = ShapeProduct(x.shape, 2, x.shape.size());
  if (x.dtype == DataType::kFloat64)
    return KernelPtr(new LrnKernel<double>(x.shape[0], x.shape[1], inner, size, alpha, beta, bias));
  return KernelPtr(new LrnKernel<float>(x.shape[0], x.shape[1], inner, size, alpha, beta, bias));
}

}  // namespace

void RegisterInstanceNormOps(OpRegistry& r) {
  r.Register({.op_type = "InstanceNormalization", .infer = InferLikeX, .kernels = CpuKernel(MakeInstanceNorm)});
  r.Register({.op_type = "GroupNormalization", .min_opset = 18, .infer = InferLikeX, .kernels = CpuKernel(MakeGroupNorm)});
  r.Register({.op_type = "LRN", .infer = InferLikeX, .kernels = CpuKernel(MakeLrn)});
}

}  // namespace oc

// BatchNormTrainGrad (com.opencann): the gradient of BatchNormalization in
// training mode (batch statistics) in three passes over each channel, instead
// of the dozen element-wise and reduce nodes of the rule written in IR ops.
//   inputs dY, X [N, C, ...], scale [C]; attribute epsilon
//   outputs dX [N, C, ...], dScale [C], dBias [C]
// With m = N * (spatial size), per channel: mean, var = the batch's (biased),
// r = 1 / sqrt(var + eps), x^ = (x - mean) r,
//   dBias = sum dY, dScale = sum dY x^, dX = scale r / m * (m dY - dBias - x^ dScale).
#include <cmath>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferBatchNormTrainGrad(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& dy = *node.input(0);
  const Value& x = *node.input(1);
  const Value& scale = *node.input(2);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
    return NotSupported(node.Describe(), ": element type ", DataTypeName(x.dtype), " (supported: float32, float64)");
  if (dy.dtype != x.dtype || scale.dtype != x.dtype)
    return InvalidArgument(node.Describe(), ": dY, X and scale must share one element type");
  if (x.has_shape && (x.shape.size() < 2 || (dy.has_shape && dy.shape != x.shape)))
    return InvalidArgument(node.Describe(), ": X ", x.ShapeString(), " and dY ", dy.ShapeString(),
                           " must be one shape of rank >= 2");
  if (node.outputs.size() != 3) return InvalidArgument(node.Describe(), ": expects 3 outputs (dX, dScale, dBias)");
  SetOutputLike(node, 0, x);
  SetOutputLike(node, 1, scale);
  SetOutputLike(node, 2, scale);
  return Status::Ok();
}

template <typename T>
class BatchNormTrainGradKernel final : public Kernel {
 public:
  BatchNormTrainGradKernel(int64_t n, int64_t c, int64_t inner, double eps) : n_(n), c_(c), inner_(inner), eps_(eps) {}
  Status Run(const KernelIO& io) override {
    const T* dy = io.in<T>(0);
    const T* x = io.in<T>(1);
    const T* scale = io.in<T>(2);
    T* dx = io.out<T>(0);
    T* dscale = io.out<T>(1);
    T* dbias = io.out<T>(2);
    const double m = static_cast<double>(n_ * inner_);
    io.pool->ParallelFor(c_, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        double sum = 0;
        for (int64_t b = 0; b < n_; ++b) {
          const T* xp = x + (b * c_ + ch) * inner_;
          for (int64_t i = 0; i < inner_; ++i) sum += xp[i];
        }
        const double mean = sum / m;
        double sq = 0, sdy = 0, sdyx = 0;
        for (int64_t b = 0; b < n_; ++b) {
          const T* xp = x + (b * c_ + ch) * inner_;
          const T* gp = dy + (b * c_ + ch) * inner_;
          for (int64_t i = 0; i < inner_; ++i) {
            const double xc = static_cast<double>(xp[i]) - mean;
            sq += xc * xc;
            sdy += gp[i];
            sdyx += gp[i] * xc;
          }
        }
        const double r = 1.0 / std::sqrt(sq / m + eps_);
        const double ds = sdyx * r;  // sum dY x^
        dscale[ch] = static_cast<T>(ds);
        dbias[ch] = static_cast<T>(sdy);
        const double k = static_cast<double>(scale[ch]) * r / m;
        const double a = k * m, c0v = -k * sdy, c1v = -k * ds * r;  // dX = a dY + c0 + c1 (x - mean)
        for (int64_t b = 0; b < n_; ++b) {
          const T* xp = x + (b * c_ + ch) * inner_;
          const T* gp = dy + (b * c_ + ch) * inner_;
          T* op = dx + (b * c_ + ch) * inner_;
          for (int64_t i = 0; i < inner_; ++i)
            op[i] = static_cast<T>(a * gp[i] + c0v + c1v * (static_cast<double>(xp[i]) - mean));
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_, c_, inner_;
  double eps_;
};

Expected<KernelPtr> MakeBatchNormTrainGrad(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(1);
  int64_t inner = 1;
  for (size_t i = 2; i < x.shape.size(); ++i) inner *= x.shape[i];
  if (n.input(2)->NumElements() != x.shape[1])
    return InvalidArgument(n.Describe(), ": scale has ", n.input(2)->NumElements(), " values for ", x.shape[1],
                           " channels");
  const double eps = n.GetFloat("epsilon", 1e-5f);
  if (x.dtype == DataType::kFloat64)
    return KernelPtr(new BatchNormTrainGradKernel<double>(x.shape[0], x.shape[1], inner, eps));
  return KernelPtr(new BatchNormTrainGradKernel<float>(x.shape[0], x.shape[1], inner, eps));
}

}  // namespace

void RegisterBatchNormTrainGradOps(OpRegistry& r) {
  r.Register({.domain = kOpenCannDomain, .op_type = "BatchNormTrainGrad", .infer = InferBatchNormTrainGrad,
              .kernels = CpuKernel(MakeBatchNormTrainGrad)});
}

}  // namespace oc

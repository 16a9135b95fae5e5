// Training losses that exported models keep for evaluation: NegativeLogLikelihoodLoss
// and SoftmaxCrossEntropyLoss (NLL over a log-softmax of the scores, with the
// log-probabilities as an optional second output). Both view the input as
// [N, C, D] with D the product of the trailing dims and the target as [N, D].
//
// Reduction follows the ONNX reference: every element gets a weight (the class
// weight, or 1; 0 where the target equals ignore_index); "none" returns the
// weighted per-element losses, "sum" their sum, "mean" their sum divided by the
// sum of the weights (so ignored elements count in neither).
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/cpu/reduce/grads.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

enum class Reduction { kNone, kSum, kMean };

Expected<Reduction> ParseReduction(const Node& node) {
  const std::string r = node.GetString("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  return InvalidArgument(node.Describe(), ": reduction must be \"none\", \"sum\" or \"mean\", got \"", r, "\"");
}

bool IsIndexType(DataType t) { return t == DataType::kInt32 || t == DataType::kInt64; }

Status InferLoss(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  OC_ASSIGN_OR_RETURN(Reduction red, ParseReduction(node));
  const Value& x = *node.input(0);
  const Value& t = *node.input(1);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64 && x.dtype != DataType::kFloat16 &&
      x.dtype != DataType::kBFloat16)
    return InvalidArgument(node.Describe(), ": input 0 must be floating point, got ", DataTypeName(x.dtype));
  if (!IsIndexType(t.dtype))
    return InvalidArgument(node.Describe(), ": target (input 1) must be int32 or int64, got ", DataTypeName(t.dtype));
  if (x.shape.size() < 2)
    return InvalidArgument(node.Describe(), ": input 0 must have shape [N, C, d1, ...], got ", x.ShapeString());
  if (t.shape.size() + 1 != x.shape.size())
    return InvalidArgument(node.Describe(), ": target must have rank ", x.shape.size() - 1, " ([N, d1, ...]), got ",
                           t.ShapeString());
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const int64_t xd = x.shape[i == 0 ? 0 : i + 1], td = t.shape[i];
    if (xd >= 0 && td >= 0 && xd != td)
      return InvalidArgument(node.Describe(), ": target shape ", t.ShapeString(), " does not match input shape ",
                             x.ShapeString(), " (expected [N, d1, ...] of [N, C, d1, ...])");
  }
  if (const Value* w = node.input(2)) {
    if (w->has_shape && (w->shape.size() != 1 || (w->shape[0] >= 0 && x.shape[1] >= 0 && w->shape[0] != x.shape[1])))
      return InvalidArgument(node.Describe(), ": weight must have shape [C] = [", x.shape[1], "], got ",
                             w->ShapeString());
  }
  if (red == Reduction::kNone) {
    std::vector<int64_t> shape = t.shape;
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] < 0) shape[i] = x.shape[i == 0 ? 0 : i + 1];
    SetOutput(node, 0, x.dtype, shape);
  } else {
    SetOutput(node, 0, x.dtype, {});
  }
  if (node.output(1)) SetOutputLike(node, 1, x);
  return Status::Ok();
}

struct LossShape {
  int64_t n = 0, c = 0, d = 0;
};

template <typename T>
class LossKernel final : public Kernel {
 public:
  LossKernel(std::string who, LossShape s, Reduction red, bool softmax, bool has_ignore, int64_t ignore_index,
             bool target64, bool has_log_prob_output)
      : who_(std::move(who)), s_(s), red_(red), softmax_(softmax), has_ignore_(has_ignore),
        ignore_index_(ignore_index), target64_(target64), has_log_prob_output_(has_log_prob_output) {}

  size_t ScratchBytes() const override {
    return softmax_ && !has_log_prob_output_ ? static_cast<size_t>(s_.n * s_.c * s_.d) * sizeof(T) : 0;
  }

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const void* target = io.inputs[1];
    const T* weight = io.num_inputs > 2 ? io.in<T>(2) : nullptr;
    const T* lp = x;
    if (softmax_) {
      T* log_prob = has_log_prob_output_ && io.num_outputs > 1 && io.outputs[1] ? io.out<T>(1)
                                                                                 : static_cast<T*>(io.scratch);
      LogSoftmax(x, log_prob, io.pool);
      lp = log_prob;
    }
    T* out = io.out<T>(0);
    const int64_t nd = s_.n * s_.d;
    double loss_sum = 0.0, weight_sum = 0.0;
    for (int64_t i = 0; i < nd; ++i) {
      const int64_t b = i / s_.d, k = i % s_.d;
      const int64_t cls = target64_ ? static_cast<const int64_t*>(target)[i] : static_cast<const int32_t*>(target)[i];
      double l = 0.0, w = 0.0;
      if (!(has_ignore_ && cls == ignore_index_)) {
        if (cls < 0 || cls >= s_.c)
          return OutOfRange(who_, ": target value ", cls, " at flat index ", i, " is outside [0, ", s_.c, ")",
                            has_ignore_ ? " and is not ignore_index" : "");
        w = weight ? static_cast<double>(weight[cls]) : 1.0;
        l = -static_cast<double>(lp[(b * s_.c + cls) * s_.d + k]) * w;
      }
      if (red_ == Reduction::kNone) out[i] = static_cast<T>(l);
      loss_sum += l;
      weight_sum += w;
    }
    if (red_ == Reduction::kSum) out[0] = static_cast<T>(loss_sum);
    if (red_ == Reduction::kMean) out[0] = static_cast<T>(loss_sum / weight_sum);  // 0/0 = NaN like the reference
    return Status::Ok();
  }

 private:
  // Log-softmax over the class axis (stride d) for each (n, d) position.
  void LogSoftmax(const T* x, T* y, ThreadPool* pool) const {
    const int64_t c = s_.c, d = s_.d;
    pool->ParallelFor(s_.n, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, c * d)), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const T* xs = x + b * c * d;
        T* ys = y + b * c * d;
        for (int64_t k = 0; k < d; ++k) {
          T mx = xs[k];
          for (int64_t j = 1; j < c; ++j) mx = std::max(mx, xs[j * d + k]);
          double sum = 0.0;
          for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(xs[j * d + k] - mx));
          const T lse = static_cast<T>(std::log(sum));
          for (int64_t j = 0; j < c; ++j) ys[j * d + k] = xs[j * d + k] - mx - lse;
        }
      }
    });
  }

  std::string who_;
  LossShape s_;
  Reduction red_;
  bool softmax_, has_ignore_;
  int64_t ignore_index_;
  bool target64_, has_log_prob_output_;
};

Expected<KernelPtr> MakeLoss(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(Reduction red, ParseReduction(n));
  const Value& x = *n.input(0);
  if (x.shape.size() < 2) return InvalidArgument(n.Describe(), ": input 0 must have rank >= 2, got ", x.ShapeString());
  if (!IsIndexType(n.input(1)->dtype))
    return InvalidArgument(n.Describe(), ": target must be int32 or int64, got ", DataTypeName(n.input(1)->dtype));
  if (n.input(2) && n.input(2)->dtype != x.dtype)
    return InvalidArgument(n.Describe(), ": weight must have the input's dtype ", DataTypeName(x.dtype), ", got ",
                           DataTypeName(n.input(2)->dtype));
  LossShape s{x.shape[0], x.shape[1], ShapeProduct(x.shape, 2, x.shape.size())};
  const bool softmax = n.op_type == "SoftmaxCrossEntropyLoss";
  const bool has_ignore = n.HasAttr("ignore_index");
  const int64_t ignore = n.GetInt("ignore_index", 0);
  const bool t64 = n.input(1)->dtype == DataType::kInt64;
  const bool lp_out = softmax && n.output(1) != nullptr;
  switch (x.dtype) {
    case DataType::kFloat32:
      return KernelPtr(new LossKernel<float>(n.Describe(), s, red, softmax, has_ignore, ignore, t64, lp_out));
    case DataType::kFloat64:
      return KernelPtr(new LossKernel<double>(n.Describe(), s, red, softmax, has_ignore, ignore, t64, lp_out));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(x.dtype), " (supported: float32, float64)");
  }
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  r.Register({.op_type = "NegativeLogLikelihoodLoss", .min_opset = 12, .infer = InferLoss, .kernels = CpuKernel(MakeLoss),
              .grad = reduce::GradNegativeLogLikelihoodLoss});
  r.Register({.op_type = "SoftmaxCrossEntropyLoss", .min_opset = 12, .infer = InferLoss, .kernels = CpuKernel(MakeLoss),
              .grad = reduce::GradSoftmaxCrossEntropyLoss});
}

}  // namespace oc

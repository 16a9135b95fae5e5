// ai.onnx.preview.training optimiser steps: Momentum (standard / nesterov),
// Adagrad and Adam. Inputs are R (learning rate scalar), T (int64 step count
// scalar) and n groups of same-shaped tensors: X..., G... and the optimiser
// state (V... and/or H...); outputs are the updated X... then each state.
// Every update is element-wise and computed in double.
#include <cmath>
#include <string>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

enum class Optimizer { kMomentum, kNesterov, kAdagrad, kAdam };

// Tensors per group in the inputs (X, G and state) and in the outputs.
int InputsPerGroup(const std::string& op) { return op == "Adam" ? 4 : 3; }
int OutputsPerGroup(const std::string& op) { return op == "Adam" ? 3 : 2; }

Expected<int64_t> GroupCount(const Node& n) {
  const int k = InputsPerGroup(n.op_type);
  const int64_t rest = static_cast<int64_t>(n.inputs.size()) - 2;
  if (rest <= 0 || rest % k != 0)
    return InvalidArgument(n.Describe(), ": expects R, T and ", k, " tensors per optimised tensor, got ",
                           n.inputs.size(), " inputs");
  const int64_t groups = rest / k;
  if (static_cast<int64_t>(n.outputs.size()) != groups * OutputsPerGroup(n.op_type))
    return InvalidArgument(n.Describe(), ": expects ", groups * OutputsPerGroup(n.op_type), " outputs for ", groups,
                           " optimised tensors, got ", n.outputs.size());
  return groups;
}

Status InferTraining(Node& node) {
  OC_ASSIGN_OR_RETURN(int64_t groups, GroupCount(node));
  for (size_t i = 0; i < node.inputs.size(); ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  if (node.input(1)->dtype != DataType::kInt64)
    return InvalidArgument(node.Describe(), ": T (input 1) must be int64, got ", DataTypeName(node.input(1)->dtype));
  const int outs = OutputsPerGroup(node.op_type);
  // Output j*groups + g is the update of input (j + (j > 0 ? 1 : 0)) * groups + g: X, then the states after G.
  for (int j = 0; j < outs; ++j)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t in = 2 + (j == 0 ? 0 : j + 1) * groups + g;
      if (node.output(j * groups + g)) SetOutputLike(node, j * groups + g, *node.input(in));
    }
  return Status::Ok();
}

struct Hyper {
  double alpha = 0, beta = 0, epsilon = 0, norm = 0, norm_post = 0, decay = 0;
};

template <typename T>
class OptimizerKernel final : public Kernel {
 public:
  OptimizerKernel(Optimizer opt, Hyper h, DataType r_type, std::vector<int64_t> counts)
      : opt_(opt), h_(h), r_type_(r_type), counts_(std::move(counts)) {}
  Status Run(const KernelIO& io) override {
    const double r = r_type_ == DataType::kFloat64 ? *io.in<double>(0) : static_cast<double>(*io.in<float>(0));
    const int64_t t = *io.in<int64_t>(1);
    const int64_t n = static_cast<int64_t>(counts_.size());
    const Hyper& h = h_;
    for (int64_t g = 0; g < n; ++g) {
      const T* x = io.in<T>(2 + g);
      const T* grad = io.in<T>(2 + n + g);
      const T* s1 = io.in<T>(2 + 2 * n + g);
      T* x_out = io.out<T>(g);
      T* s1_out = io.out<T>(n + g);
      const int64_t cnt = counts_[g];
      switch (opt_) {
        case Optimizer::kMomentum:
        case Optimizer::kNesterov: {
          const double b = t > 0 ? h.beta : 1.0;  // the first step takes the whole gradient
          for (int64_t i = 0; i < cnt; ++i) {
            const double gr = h.norm * x[i] + grad[i];
            const double v = h.alpha * s1[i] + b * gr;
            x_out[i] = static_cast<T>(opt_ == Optimizer::kMomentum ? x[i] - r * v : x[i] - r * (gr + h.alpha * v));
            s1_out[i] = static_cast<T>(v);
          }
          break;
        }
        case Optimizer::kAdagrad: {
          const double rate = r / (1.0 + static_cast<double>(t) * h.decay);
          for (int64_t i = 0; i < cnt; ++i) {
            const double gr = h.norm * x[i] + grad[i];
            const double acc = s1[i] + gr * gr;
            x_out[i] = static_cast<T>(x[i] - rate * gr / (std::sqrt(acc) + h.epsilon));
            s1_out[i] = static_cast<T>(acc);
          }
          break;
        }
        case Optimizer::kAdam: {
          const T* s2 = io.in<T>(2 + 3 * n + g);
          T* s2_out = io.out<T>(2 * n + g);
          const double td = static_cast<double>(t);
          // Bias correction of both moments from the second step on.
          const double rate = t > 0 ? r * std::sqrt(1.0 - std::pow(h.beta, td)) / (1.0 - std::pow(h.alpha, td)) : r;
          for (int64_t i = 0; i < cnt; ++i) {
            const double gr = h.norm * x[i] + grad[i];
            const double v = h.alpha * s1[i] + (1.0 - h.alpha) * gr;
            const double sq = h.beta * s2[i] + (1.0 - h.beta) * gr * gr;
            const double xn = x[i] - rate * (v / (std::sqrt(sq) + h.epsilon));
            x_out[i] = static_cast<T>((1.0 - h.norm_post) * xn);
            s1_out[i] = static_cast<T>(v);
            s2_out[i] = static_cast<T>(sq);
          }
          break;
        }
      }
    }
    return Status::Ok();
  }

 private:
  Optimizer opt_;
  Hyper h_;
  DataType r_type_;
  std::vector<int64_t> counts_;
};

Expected<KernelPtr> MakeOptimizer(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(int64_t groups, GroupCount(n));
  const DataType rt = n.input(0)->dtype;
  if ((rt != DataType::kFloat32 && rt != DataType::kFloat64) || n.input(0)->NumElements() != 1)
    return InvalidArgument(n.Describe(), ": R must be a float32 or float64 scalar");
  if (n.input(1)->dtype != DataType::kInt64 || n.input(1)->NumElements() != 1)
    return InvalidArgument(n.Describe(), ": T must be an int64 scalar");
  const DataType dt = n.input(2)->dtype;
  const int k = InputsPerGroup(n.op_type);
  std::vector<int64_t> counts;
  for (int64_t g = 0; g < groups; ++g) {
    const Value& x = *n.input(2 + g);
    for (int j = 1; j < k; ++j) {
      const Value& o = *n.input(2 + j * groups + g);
      if (o.dtype != dt || o.shape != x.shape)
        return InvalidArgument(n.Describe(), ": input ", 2 + j * groups + g, " must match X", g + 1, " (",
                               DataTypeName(dt), " ", x.ShapeString(), "), got ", DataTypeName(o.dtype), " ",
                               o.ShapeString());
    }
    counts.push_back(x.NumElements());
  }
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.output(i)) return NotSupported(n.Describe(), ": omitted output ", i, " is not supported");
  Hyper h;
  Optimizer opt;
  if (n.op_type == "Momentum") {
    for (const char* a : {"alpha", "beta", "mode", "norm_coefficient"})
      if (!n.HasAttr(a)) return InvalidArgument(n.Describe(), ": required attribute '", a, "' is missing");
    const std::string mode = n.GetString("mode", "standard");
    if (mode != "standard" && mode != "nesterov")
      return InvalidArgument(n.Describe(), ": mode must be \"standard\" or \"nesterov\", got \"", mode, "\"");
    opt = mode == "standard" ? Optimizer::kMomentum : Optimizer::kNesterov;
    h.alpha = n.GetFloat("alpha", 0.f);
    h.beta = n.GetFloat("beta", 0.f);
    h.norm = n.GetFloat("norm_coefficient", 0.f);
  } else if (n.op_type == "Adagrad") {
    opt = Optimizer::kAdagrad;
    h.decay = n.GetFloat("decay_factor", 0.f);
    h.epsilon = n.GetFloat("epsilon", 1e-6f);
    h.norm = n.GetFloat("norm_coefficient", 0.f);
  } else {
    opt = Optimizer::kAdam;
    h.alpha = n.GetFloat("alpha", 0.9f);
    h.beta = n.GetFloat("beta", 0.999f);
    h.epsilon = n.GetFloat("epsilon", 1e-6f);
    h.norm = n.GetFloat("norm_coefficient", 0.f);
    h.norm_post = n.GetFloat("norm_coefficient_post", 0.f);
  }
  switch (dt) {
    case DataType::kFloat32: return KernelPtr(new OptimizerKernel<float>(opt, h, rt, std::move(counts)));
    case DataType::kFloat64: return KernelPtr(new OptimizerKernel<double>(opt, h, rt, std::move(counts)));
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(dt), " (supported: float32, float64)");
  }
}

}  // namespace

void RegisterTrainingOps(OpRegistry& r) {
  for (const char* op : {"Momentum", "Adagrad", "Adam"})
    r.Register({.domain = "ai.onnx.preview.training", .op_type = op, .infer = InferTraining, .kernels = CpuKernel(MakeOptimizer)});
}

}  // namespace oc

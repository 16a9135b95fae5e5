// The training engine's optimiser steps (com.opencann), one node per
// parameter, written for in-place use: the outputs may be the very buffers of
// the inputs they update (X' over X, the states over theirs), since every
// element is read before it is written.
//
//   SGDUpdate(lr, step, X, G[, V]) -> X'[, V']
//     g = G + weight_decay * X
//     V' = step == 1 ? g : momentum * V + (1 - dampening) * g   (with momentum != 0; V omitted otherwise)
//     X' = X - lr * (nesterov ? g + momentum * V' : V')          (X - lr * g without momentum)
//   That is torch.optim.SGD's rule and MindSpore's nn.SGD; MindSpore's
//   nn.Momentum is dampening 0 (its accumulator starts at zero, so its first
//   step also takes the whole gradient).
//
//   AdamUpdate(lr, step, X, G, M, V) -> X', M', V'
//     g = G + weight_decay * X                      (decoupled = 0: L2, as Adam's weight_decay)
//     X <- X * (1 - lr * weight_decay)              (decoupled = 1: AdamW / AdamWeightDecay)
//     M' = beta1 * M + (1 - beta1) * g,  V' = beta2 * V + (1 - beta2) * g^2
//     with bias_correction (c1 = 1 - beta1^step, c2 = 1 - beta2^step, else both 1):
//       epsilon_mode "corrected" (torch):      X' = X - lr / c1 * M' / (sqrt(V' / c2) + epsilon)
//       epsilon_mode "raw" (MindSpore, TF):     X' = X - lr * sqrt(c2) / c1 * M' / (sqrt(V') + epsilon)
//
// lr is a float32 scalar and step an int64 scalar (1 for the first update), so
// that a learning-rate schedule or a resumed run changes inputs, not the graph.
#include <cmath>
#include <string>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int64_t kGrain = 16384;

bool IsSgd(const Node& n) { return n.op_type == "SGDUpdate"; }

Status CheckScalars(const Node& n) {
  const Value* lr = n.input(0);
  const Value* step = n.input(1);
  if (!lr || lr->dtype != DataType::kFloat32 || (lr->IsStatic() && lr->NumElements() != 1))
    return InvalidArgument(n.Describe(), ": input 0 (lr) must be a float32 scalar");
  if (!step || step->dtype != DataType::kInt64 || (step->IsStatic() && step->NumElements() != 1))
    return InvalidArgument(n.Describe(), ": input 1 (step) must be an int64 scalar");
  return Status::Ok();
}

Status InferUpdate(Node& node) {
  OC_RETURN_IF_ERROR(CheckScalars(node));
  const size_t states = IsSgd(node) ? node.inputs.size() - 4 : 2;  // SGD: V only with momentum
  if ((IsSgd(node) && node.inputs.size() != 4 && node.inputs.size() != 5) ||
      (!IsSgd(node) && node.inputs.size() != 6))
    return InvalidArgument(node.Describe(), ": expects lr, step, X, G", IsSgd(node) ? " and optionally V" : ", M and V",
                           ", got ", node.inputs.size(), " inputs");
  if (node.outputs.size() != 1 + states)
    return InvalidArgument(node.Describe(), ": expects ", 1 + states, " outputs (X and its states), got ",
                           node.outputs.size());
  const Value& x = *node.input(2);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
    return NotSupported(node.Describe(), ": parameter type ", DataTypeName(x.dtype), " (supported: float32, float64)");
  for (size_t i = 3; i < node.inputs.size(); ++i) {
    OC_RETURN_IF_ERROR(RequireInput(node, i));
    const Value& o = *node.input(i);
    if (o.dtype != x.dtype || (x.has_shape && o.has_shape && o.shape != x.shape))
      return InvalidArgument(node.Describe(), ": input ", i, " must match X (", DataTypeName(x.dtype), " ",
                             x.ShapeString(), "), got ", DataTypeName(o.dtype), " ", o.ShapeString());
  }
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.output(i)) SetOutputLike(node, i, x);
  return Status::Ok();
}

struct Hyper {
  double momentum = 0, dampening = 0, weight_decay = 0, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  bool nesterov = false, decoupled = false, bias_correction = true, raw_epsilon = false;
};

template <typename T>
class SgdKernel final : public Kernel {
 public:
  SgdKernel(Hyper h, int64_t n) : h_(h), n_(n) {}
  Status Run(const KernelIO& io) override {
    const double lr = *io.in<float>(0);
    const bool first = *io.in<int64_t>(1) <= 1;
    const T* x = io.in<T>(2);
    const T* g = io.in<T>(3);
    T* xo = io.out<T>(0);
    const Hyper h = h_;
    if (h.momentum == 0) {
      io.pool->ParallelFor(n_, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) xo[i] = static_cast<T>(x[i] - lr * (g[i] + h.weight_decay * x[i]));
      });
      return Status::Ok();
    }
    const T* v = io.in<T>(4);
    T* vo = io.out<T>(1);
    const double keep = first ? 0.0 : h.momentum, take = first ? 1.0 : 1.0 - h.dampening;
    io.pool->ParallelFor(n_, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double gi = g[i] + h.weight_decay * x[i];
        const double vi = keep * v[i] + take * gi;
        xo[i] = static_cast<T>(x[i] - lr * (h.nesterov ? gi + h.momentum * vi : vi));
        vo[i] = static_cast<T>(vi);
      }
    });
    return Status::Ok();
  }

 private:
  Hyper h_;
  int64_t n_;
};

template <typename T>
class AdamKernel final : public Kernel {
 public:
  AdamKernel(Hyper h, int64_t n) : h_(h), n_(n) {}
  Status Run(const KernelIO& io) override {
    const double lr = *io.in<float>(0);
    const int64_t step = *io.in<int64_t>(1);
    if (step < 1) return InvalidArgument("AdamUpdate: step must be 1 or more, got ", step);
    const Hyper h = h_;
    double c1 = 1, c2 = 1;
    if (h.bias_correction) {
      c1 = 1 - std::pow(h.beta1, static_cast<double>(step));
      c2 = 1 - std::pow(h.beta2, static_cast<double>(step));
    }
    // X' = X * shrink - rate * M' / (sqrt(V') * scale + eps)
    const double shrink = h.decoupled ? 1 - lr * h.weight_decay : 1.0;
    const double l2 = h.decoupled ? 0.0 : h.weight_decay;
    const double rate = h.raw_epsilon ? lr * std::sqrt(c2) / c1 : lr / c1;
    const double scale = h.raw_epsilon ? 1.0 : 1.0 / std::sqrt(c2);
    const double eps = h.epsilon, b1 = h.beta1, b2 = h.beta2;
    const T* x = io.in<T>(2);
    const T* g = io.in<T>(3);
    const T* m = io.in<T>(4);
    const T* v = io.in<T>(5);
    T* xo = io.out<T>(0);
    T* mo = io.out<T>(1);
    T* vo = io.out<T>(2);
    io.pool->ParallelFor(n_, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double gi = g[i] + l2 * x[i];
        const double mi = b1 * m[i] + (1 - b1) * gi;
        const double vi = b2 * v[i] + (1 - b2) * gi * gi;
        xo[i] = static_cast<T>(x[i] * shrink - rate * mi / (std::sqrt(vi) * scale + eps));
        mo[i] = static_cast<T>(mi);
        vo[i] = static_cast<T>(vi);
      }
    });
    return Status::Ok();
  }

 private:
  Hyper h_;
  int64_t n_;
};

Expected<KernelPtr> MakeUpdate(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(CheckScalars(n));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (!n.output(i)) return NotSupported(n.Describe(), ": omitted output ", i, " is not supported");
  Hyper h;
  h.weight_decay = n.GetFloat("weight_decay", 0.f);
  const int64_t count = n.input(2)->NumElements();
  const DataType dt = n.input(2)->dtype;
  if (IsSgd(n)) {
    h.momentum = n.GetFloat("momentum", 0.f);
    h.dampening = n.GetFloat("dampening", 0.f);
    h.nesterov = n.GetInt("nesterov", 0) != 0;
    if ((h.momentum != 0) != (n.inputs.size() == 5))
      return InvalidArgument(n.Describe(), ": a momentum buffer V is needed exactly when momentum is not 0");
    if (h.nesterov && (h.momentum <= 0 || h.dampening != 0))
      return InvalidArgument(n.Describe(), ": Nesterov momentum requires momentum > 0 and dampening 0");
    if (dt == DataType::kFloat32) return KernelPtr(new SgdKernel<float>(h, count));
    return KernelPtr(new SgdKernel<double>(h, count));
  }
  h.beta1 = n.GetFloat("beta1", 0.9f);
  h.beta2 = n.GetFloat("beta2", 0.999f);
  h.epsilon = n.GetFloat("epsilon", 1e-8f);
  h.decoupled = n.GetInt("decoupled", 0) != 0;
  h.bias_correction = n.GetInt("bias_correction", 1) != 0;
  const std::string mode = n.GetString("epsilon_mode", "corrected");
  if (mode != "corrected" && mode != "raw")
    return InvalidArgument(n.Describe(), ": epsilon_mode must be \"corrected\" or \"raw\", got \"", mode, "\"");
  h.raw_epsilon = mode == "raw";
  if (!(h.beta1 >= 0 && h.beta1 < 1) || !(h.beta2 >= 0 && h.beta2 < 1))
    return InvalidArgument(n.Describe(), ": beta1 and beta2 must be in [0, 1), got ", h.beta1, " and ", h.beta2);
  if (dt == DataType::kFloat32) return KernelPtr(new AdamKernel<float>(h, count));
  return KernelPtr(new AdamKernel<double>(h, count));
}

}  // namespace

void RegisterOptimizerUpdateOps(OpRegistry& r) {
  for (const char* op : {"SGDUpdate", "AdamUpdate"})
    r.Register({.domain = kOpenCannDomain, .op_type = op, .infer = InferUpdate, .kernels = CpuKernel(MakeUpdate),
                .foldable = false});
}

}  // namespace oc

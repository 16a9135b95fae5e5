// Gradient rules of the losses (see grads.h and ops/grad.h). Both view the
// input as [N, C, d...] and the target as [N, d...]. Each element has a
// weight w (the class weight of its target, or 1; 0 where the target is
// ignore_index); for the NLL of log-probabilities p,
//   d loss / d p[n, c] = -w[n] [c == target[n]] * (dY[n] for "none",
//                        dY for "sum", dY / sum(w) for "mean"),
// and the softmax cross-entropy of scores s (loss = NLL(LogSoftmax(s)))
// chains that through the log-softmax: d/ds = -g + softmax(s) sum_c g.
#include "ops/cpu/reduce/grads.h"

namespace oc::reduce {
namespace {

// -d loss / d logp, shaped like the input: onehot(target) * w * scale.
Expected<Value*> NegGradOfLogProbs(GradBuilder& b, const Node& n, Value* dy) {
  Value* input = n.input(0);
  Value* target = n.input(1);
  Value* weight = n.input(2);
  const DataType t = input->dtype;
  const int64_t classes = input->shape.size() >= 2 ? input->shape[1] : 0;
  if (classes <= 0) return InvalidArgument(n.Describe(), ": the input must be [N, C, ...]");
  const std::string reduction = n.GetString("reduction", "mean");
  // Which elements count (not ignore_index), and the targets made safe to index with.
  Value* tgt = target;
  Value* keep = nullptr;
  if (n.HasAttr("ignore_index")) {
    Value* ignore = b.Int64s({n.GetInt("ignore_index", 0)});
    Value* t64 = target->dtype == DataType::kInt64 ? target
                                                  : b.Op("Cast", {target}, {{"to", GradBuilder::Int(7)}});
    Value* is_ignored = b.Op("Equal", {t64, b.Op("Reshape", {ignore, b.Int64s({})})});
    keep = b.Op("Not", {is_ignored});
    tgt = b.Op("Where", {is_ignored, b.Op("Reshape", {b.Int64s({0}), b.Int64s({})}), t64});
  }
  // w per element [N, d...]
  Value* w = nullptr;
  if (weight) w = b.Op("Gather", {weight, tgt}, {{"axis", GradBuilder::Int(0)}});
  if (keep) {
    Value* k = b.Op("Cast", {keep}, {{"to", GradBuilder::Int(static_cast<int64_t>(t))}});
    w = w ? b.Op("Mul", {w, k}) : k;
  }
  // the scale per element: dY, or dY / sum(w) for "mean"
  Value* scale = dy;
  if (reduction == "mean") {
    Value* denom = w ? b.Op("ReduceSum", {w}, {{"keepdims", GradBuilder::Int(0)}})
                     : b.Scalar(static_cast<double>(target->NumElements()), t);
    scale = b.Op("Div", {dy, denom});
  } else if (reduction != "sum" && reduction != "none") {
    return InvalidArgument(n.Describe(), ": reduction '", reduction, "'");
  }
  Value* per = w ? b.Op("Mul", {w, scale}) : (reduction == "none" ? scale : nullptr);
  // onehot [N, C, d...]
  Value* values = b.Op("Cast", {b.Int64s({0, 1})}, {{"to", GradBuilder::Int(static_cast<int64_t>(t))}});
  Value* onehot = b.Op("OneHot", {tgt, b.Int64s({classes}), values}, {{"axis", GradBuilder::Int(1)}});
  if (!per) return b.Op("Mul", {onehot, scale});  // a scalar scale
  return b.Op("Mul", {onehot, b.Op("Unsqueeze", {per, b.Int64s({1})})});
}

}  // namespace

Status GradNegativeLogLikelihoodLoss(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0] || !a.dy[0]) return Status::Ok();
  OC_ASSIGN_OR_RETURN(Value* g, NegGradOfLogProbs(b, a.node, a.dy[0]));
  a.dx[0] = b.Op("Neg", {g});
  return Status::Ok();
}

Status GradSoftmaxCrossEntropyLoss(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  Value* scores = n.input(0);
  // d loss / d logp = -g, plus the log-probabilities output's own gradient.
  Value* dlogp = nullptr;
  if (a.dy[0]) {
    OC_ASSIGN_OR_RETURN(Value* g, NegGradOfLogProbs(b, n, a.dy[0]));
    dlogp = b.Op("Neg", {g});
  }
  if (a.dy.size() > 1 && a.dy[1]) dlogp = dlogp ? b.Op("Add", {dlogp, a.dy[1]}) : a.dy[1];
  if (!dlogp) return Status::Ok();
  // Through logp = LogSoftmax(scores, axis 1): dlogp - softmax * sum_c dlogp.
  Value* sm = b.Op("Softmax", {scores}, {{"axis", GradBuilder::Int(1)}});
  Value* s = b.Op("ReduceSum", {dlogp, b.Int64s({1})}, {{"keepdims", GradBuilder::Int(1)}});
  a.dx[0] = b.Op("Sub", {dlogp, b.Op("Mul", {sm, s})});
  return Status::Ok();
}

}  // namespace oc::reduce

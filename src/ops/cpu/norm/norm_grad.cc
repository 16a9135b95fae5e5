// Gradient rules of the normalisations (see grads.h and ops/grad.h). With
// batch statistics, for x^ = (x - mean) r, r = 1 / sqrt(var + eps), and
// g = dY * scale over the normalised dims:
//   dX = r (g - mean(g) - x^ mean(g x^)),  dScale = sum(dY x^),  dB = sum(dY).
// The statistics are recomputed in the backward nodes from X.
#include "ops/cpu/norm/grads.h"

#include "ops/op_registry.h"

namespace oc::norm {
namespace {

std::map<std::string, Attribute> Keep() { return {{"keepdims", GradBuilder::Int(1)}}; }

// mean over `axes` (kept), r and x^ of x.
struct Stats {
  Value* r;
  Value* xhat;
};
Stats Normalise(GradBuilder& b, Value* x, Value* axes, float eps) {
  Value* mean = b.Op("ReduceMean", {x, axes}, Keep());
  Value* xc = b.Op("Sub", {x, mean});
  Value* var = b.Op("ReduceMean", {b.Op("Mul", {xc, xc}), axes}, Keep());
  Value* r = b.Op("Reciprocal", {b.Op("Sqrt", {b.Op("Add", {var, b.Scalar(eps, x->dtype)})})});
  return {r, b.Op("Mul", {xc, r})};
}

// The normalised dims of a LayerNorm / RMSNorm node: [axis, rank), as a constant.
Expected<Value*> TrailingAxes(GradBuilder& b, const Node& n, size_t rank_u) {
  const int64_t rank = static_cast<int64_t>(rank_u);
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return InvalidArgument(n.Describe(), ": axis out of range");
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i) axes.push_back(i);
  return b.Int64s(axes);
}

Value* CenteredInput(GradBuilder& b, Value* g, Value* xhat, Value* r, Value* axes) {
  Value* mg = b.Op("ReduceMean", {g, axes}, Keep());
  Value* mgx = b.Op("ReduceMean", {b.Op("Mul", {g, xhat}), axes}, Keep());
  return b.Op("Mul", {r, b.Op("Sub", {b.Op("Sub", {g, mg}), b.Op("Mul", {xhat, mgx})})});
}

}  // namespace

Status GradBatchNorm(GradBuilder& b, const GradArgs& a) {
  const Node& n = a.node;
  Value* x = n.input(0);
  Value* scale = n.input(1);
  const size_t rank = x->shape.size();
  const float eps = n.GetFloat("epsilon", 1e-5f);
  const bool training = n.opset >= 14 && n.GetInt("training_mode", 0) != 0;
  if (n.opset < 9 && n.GetInt("spatial", 1) == 0)
    return NotSupported("the gradient of ", n.Describe(), " with spatial=0");
  // Per-channel tensors as [1, C, 1, ...], and the axes of a channel's statistics.
  std::vector<int64_t> cshape(rank, 1), axes = {0};
  cshape[1] = x->shape[1];
  for (size_t i = 2; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  Value* ax = b.Int64s(axes);
  const std::vector<int64_t> chan = {x->shape[1]};
  Value* dy = a.dy[0];
  if (!dy) return Status::Ok();  // only the running statistics are used
  Value* scale_c = b.ReshapeTo(scale, chan, cshape);
  const std::map<std::string, Attribute> drop{{"keepdims", GradBuilder::Int(0)}};
  if (training) {
    // One com.opencann BatchNormTrainGrad node (batch_norm_grad.cc) gives all three.
    const bool same_type = scale->dtype == x->dtype;  // (dy has no type until the graph is inferred)
    if (same_type && (x->dtype == DataType::kFloat32 || x->dtype == DataType::kFloat64)) {
      Graph& g = b.graph();
      std::vector<Value*> outs;
      for (const char* what : {"dX", "dScale", "dBias"})
        outs.push_back(g.AddValue(g.UniqueName(std::string("grad/BN_") + what)));
      Node* node = g.AddNode("BatchNormTrainGrad", g.UniqueName("grad/BatchNormTrainGrad"), {dy, x, scale}, outs,
                             kOpenCannDomain);
      node->opset = 1;
      node->SetFloat("epsilon", eps);
      g.opset_imports.emplace(kOpenCannDomain, 1);
      for (size_t i = 0; i < 3; ++i)
        if (a.needs[i]) a.dx[i] = outs[i];
      return Status::Ok();
    }
    Stats s = Normalise(b, x, ax, eps);
    if (a.needs[0]) a.dx[0] = CenteredInput(b, b.Op("Mul", {dy, scale_c}), s.xhat, s.r, ax);
    if (a.needs[1]) a.dx[1] = b.Op("ReduceSum", {b.Op("Mul", {dy, s.xhat}), ax}, drop);
    if (a.needs[2]) a.dx[2] = b.Op("ReduceSum", {dy, ax}, drop);
    return Status::Ok();  // the running statistics' inputs only update outputs 1 and 2
  }
  // Running statistics: y = (x - mean) r scale + B, r = 1 / sqrt(var + eps).
  Value* mean_c = b.ReshapeTo(n.input(3), chan, cshape);
  Value* var_c = b.ReshapeTo(n.input(4), chan, cshape);
  Value* r = b.Op("Reciprocal", {b.Op("Sqrt", {b.Op("Add", {var_c, b.Scalar(eps, x->dtype)})})});
  Value* xc = b.Op("Sub", {x, mean_c});
  if (a.needs[0]) a.dx[0] = b.Op("Mul", {dy, b.Op("Mul", {scale_c, r})});
  if (a.needs[1]) a.dx[1] = b.Op("ReduceSum", {b.Op("Mul", {dy, b.Op("Mul", {xc, r})}), ax}, drop);
  if (a.needs[2]) a.dx[2] = b.Op("ReduceSum", {dy, ax}, drop);
  Value* sdy = b.Op("ReduceSum", {b.Op("Mul", {dy, scale_c}), ax}, Keep());  // [1, C, 1, ...]
  if (a.needs[3]) a.dx[3] = b.ReshapeTo(b.Op("Neg", {b.Op("Mul", {sdy, r})}), cshape, chan);
  if (a.needs[4]) {
    // d/dvar of (x - mean) r = -(x - mean) r^3 / 2
    Value* r3 = b.Op("Mul", {r, b.Op("Mul", {r, r})});
    Value* t = b.Op("ReduceSum", {b.Op("Mul", {b.Op("Mul", {dy, scale_c}), xc}), ax}, Keep());
    a.dx[4] = b.ReshapeTo(b.Op("Mul", {t, b.Op("Mul", {r3, b.Scalar(-0.5, x->dtype)})}), cshape, chan);
  }
  return Status::Ok();
}

Status GradLayerNorm(GradBuilder& b, const GradArgs& a) {
  const Node& n = a.node;
  Value* x = n.input(0);
  Value* scale = n.input(1);
  Value* bias = n.input(2);
  OC_ASSIGN_OR_RETURN(Value* ax, TrailingAxes(b, n, x->shape.size()));
  Value* dy = a.dy[0];
  if (!dy) return NotSupported("the gradient of ", n.Describe(), " through its Mean / InvStdDev outputs");
  Stats s = Normalise(b, x, ax, n.GetFloat("epsilon", 1e-5f));
  if (a.needs[0]) a.dx[0] = CenteredInput(b, b.Op("Mul", {dy, scale}), s.xhat, s.r, ax);
  if (a.needs[1]) a.dx[1] = b.SumTo(b.Op("Mul", {dy, s.xhat}), x->shape, scale->shape);
  if (bias && a.needs[2]) a.dx[2] = b.SumTo(dy, x->shape, bias->shape);
  return Status::Ok();
}

// y = x r scale, r = 1 / sqrt(mean(x^2) + eps): with x^ = x r and g = dY scale,
// dX = r (g - x^ mean(g x^)).
Status GradRmsNorm(GradBuilder& b, const GradArgs& a) {
  const Node& n = a.node;
  Value* x = n.input(0);
  Value* scale = n.input(1);
  OC_ASSIGN_OR_RETURN(Value* ax, TrailingAxes(b, n, x->shape.size()));
  Value* dy = a.dy[0];
  Value* ms = b.Op("ReduceMean", {b.Op("Mul", {x, x}), ax}, Keep());
  Value* r = b.Op("Reciprocal", {b.Op("Sqrt", {b.Op("Add", {ms, b.Scalar(n.GetFloat("epsilon", 1e-5f), x->dtype)})})});
  Value* xhat = b.Op("Mul", {x, r});
  if (a.needs[0]) {
    Value* g = b.Op("Mul", {dy, scale});
    Value* m = b.Op("ReduceMean", {b.Op("Mul", {g, xhat}), ax}, Keep());
    a.dx[0] = b.Op("Mul", {r, b.Op("Sub", {g, b.Op("Mul", {xhat, m})})});
  }
  if (a.needs[1]) a.dx[1] = b.SumTo(b.Op("Mul", {dy, xhat}), x->shape, scale->shape);
  return Status::Ok();
}

}  // namespace oc::norm

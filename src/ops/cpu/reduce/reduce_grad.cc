// Gradient rules of the reductions and softmaxes (see grads.h and ops/grad.h).
#include "ops/cpu/reduce/grads.h"

namespace oc::reduce {
namespace {

// The input's shape with the reduced dims set to 1 (what keepdims=1 gives),
// from the node's axes (attribute, or constant second input).
Expected<std::vector<int64_t>> KeptShape(const Node& n) {
  const std::vector<int64_t>& in = n.input(0)->shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (n.HasAttr("axes")) {
    axes = n.GetInts("axes");
  } else if (const Value* v = n.input(1)) {
    if (!v->IsConstant() || v->dtype != DataType::kInt64)
      return NotSupported("the gradient of ", n.Describe(), " needs constant int64 axes");
    const int64_t k = v->NumElements();
    axes.assign(v->constant->as<int64_t>(), v->constant->as<int64_t>() + k);
  }
  std::vector<int64_t> kept = in;
  if (axes.empty()) {
    if (n.GetInt("noop_with_empty_axes", 0)) return kept;
    std::fill(kept.begin(), kept.end(), 1);
    return kept;
  }
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return InvalidArgument(n.Describe(), ": axis out of range");
    kept[static_cast<size_t>(a)] = 1;
  }
  return kept;
}

// dy reshaped to the kept shape and broadcast back over the input.
Expected<Value*> Spread(GradBuilder& b, const GradArgs& a, Value* g) {
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> kept, KeptShape(a.node));
  Value* k = b.ReshapeTo(g, a.node.output(0)->shape, kept);
  return b.Op("Expand", {k, b.Int64s(a.node.input(0)->shape)});
}

// The result reshaped to the kept shape (it broadcasts against the input).
Expected<Value*> KeptResult(GradBuilder& b, const GradArgs& a) {
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> kept, KeptShape(a.node));
  return b.ReshapeTo(a.node.output(0), a.node.output(0)->shape, kept);
}

}  // namespace

Status GradReduceSum(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  OC_ASSIGN_OR_RETURN(a.dx[0], Spread(b, a, a.dy[0]));
  return Status::Ok();
}

Status GradReduceMean(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const double count = static_cast<double>(a.node.input(0)->NumElements()) /
                       static_cast<double>(std::max<int64_t>(a.node.output(0)->NumElements(), 1));
  Value* scaled = b.Op("Mul", {a.dy[0], b.Scalar(1.0 / count, a.node.input(0)->dtype)});
  OC_ASSIGN_OR_RETURN(a.dx[0], Spread(b, a, scaled));
  return Status::Ok();
}

Status GradReduceMaxMin(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  Value* x = a.node.input(0);
  OC_ASSIGN_OR_RETURN(Value* y, KeptResult(b, a));
  OC_ASSIGN_OR_RETURN(Value* g, Spread(b, a, a.dy[0]));
  a.dx[0] = b.Op("Where", {b.Op("Equal", {x, y}), g, b.Scalar(0, x->dtype)});
  return Status::Ok();
}

Status GradReduceSumSquare(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  Value* x = a.node.input(0);
  OC_ASSIGN_OR_RETURN(Value* g, Spread(b, a, a.dy[0]));
  a.dx[0] = b.Op("Mul", {g, b.Op("Mul", {x, b.Scalar(2, x->dtype)})});
  return Status::Ok();
}

// d |x| / dx = x / |x| (0/0 where the norm is 0, as torch gives NaN; callers
// normally add an epsilon).
Status GradReduceL2(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  Value* x = a.node.input(0);
  OC_ASSIGN_OR_RETURN(Value* y, KeptResult(b, a));
  OC_ASSIGN_OR_RETURN(Value* g, Spread(b, a, a.dy[0]));
  a.dx[0] = b.Op("Mul", {g, b.Op("Div", {x, y})});
  return Status::Ok();
}

Status GradReduceLogSumExp(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  Value* x = a.node.input(0);
  OC_ASSIGN_OR_RETURN(Value* y, KeptResult(b, a));
  OC_ASSIGN_OR_RETURN(Value* g, Spread(b, a, a.dy[0]));
  a.dx[0] = b.Op("Mul", {g, b.Op("Exp", {b.Op("Sub", {x, y})})});
  return Status::Ok();
}

namespace {

// Softmax and LogSoftmax along one axis; opset < 13 normalises the 2-D view
// [dims before axis, dims from axis on], so the rule runs on that view.
template <bool kLog>
Status GradSoftmaxImpl(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  const std::vector<int64_t>& shape = n.input(0)->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = n.GetInt("axis", n.opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return InvalidArgument(n.Describe(), ": axis out of range");
  Value* y = n.output(0);
  Value* dy = a.dy[0];
  std::vector<int64_t> view = shape;
  int64_t red_axis = axis;
  if (n.opset < 13 && axis != rank - 1) {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= shape[static_cast<size_t>(i)];
    view = {outer, inner};
    red_axis = 1;
    y = b.ReshapeTo(y, shape, view);
    dy = b.ReshapeTo(dy, shape, view);
  }
  const std::map<std::string, Attribute> keep{{"keepdims", GradBuilder::Int(1)}};
  Value* axes = b.Int64s({red_axis});
  Value* g;
  if (kLog) {
    // dy - exp(y) * sum(dy)
    Value* s = b.Op("ReduceSum", {dy, axes}, keep);
    g = b.Op("Sub", {dy, b.Op("Mul", {b.Op("Exp", {y}), s})});
  } else {
    // y * (dy - sum(dy * y))
    Value* s = b.Op("ReduceSum", {b.Op("Mul", {dy, y}), axes}, keep);
    g = b.Op("Mul", {y, b.Op("Sub", {dy, s})});
  }
  a.dx[0] = b.ReshapeTo(g, view, shape);
  return Status::Ok();
}

}  // namespace

Status GradSoftmax(GradBuilder& b, const GradArgs& a) { return GradSoftmaxImpl<false>(b, a); }
Status GradLogSoftmax(GradBuilder& b, const GradArgs& a) { return GradSoftmaxImpl<true>(b, a); }

}  // namespace oc::reduce

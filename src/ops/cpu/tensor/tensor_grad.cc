// Gradient rules of the shape and data-movement ops (see grads.h and ops/grad.h).
#include "ops/cpu/tensor/grads.h"

#include <algorithm>

namespace oc::tensor {
namespace {

int64_t NormalAxis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

}  // namespace

Status GradReshapeLike(GradBuilder& b, const GradArgs& a) {
  if (a.needs[0]) a.dx[0] = b.ReshapeTo(a.dy[0], a.node.output(0)->shape, a.node.input(0)->shape);
  return Status::Ok();
}

Status GradTranspose(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const size_t rank = a.node.input(0)->shape.size();
  std::vector<int64_t> perm = a.node.GetInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  std::vector<int64_t> inverse(rank);
  for (size_t i = 0; i < rank; ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  a.dx[0] = b.Op("Transpose", {a.dy[0]}, {{"perm", GradBuilder::Ints(inverse)}});
  return Status::Ok();
}

// The gradient split back into the inputs' extents along the axis.
Status GradConcat(GradBuilder& b, const GradArgs& a) {
  const Node& n = a.node;
  const size_t k = n.inputs.size();
  const int64_t axis = NormalAxis(n.GetInt("axis", 0), n.output(0)->shape.size());
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < k; ++i) sizes.push_back(n.input(i)->shape[static_cast<size_t>(axis)]);
  if (k == 1) {
    if (a.needs[0]) a.dx[0] = a.dy[0];
    return Status::Ok();
  }
  std::vector<Value*> parts = b.OpN("Split", {a.dy[0], b.Int64s(sizes)}, k, {{"axis", GradBuilder::Int(axis)}});
  for (size_t i = 0; i < k; ++i)
    if (a.needs[i]) a.dx[i] = parts[i];
  return Status::Ok();
}

// The outputs' gradients concatenated (zeros for an output without one).
Status GradSplit(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  const int64_t axis = NormalAxis(n.GetInt("axis", 0), n.input(0)->shape.size());
  std::vector<Value*> parts;
  for (size_t i = 0; i < n.outputs.size(); ++i) parts.push_back(a.dy[i] ? a.dy[i] : b.ZerosLike(*n.output(i)));
  a.dx[0] = parts.size() == 1 ? parts[0] : b.Op("Concat", parts, {{"axis", GradBuilder::Int(axis)}});
  return Status::Ok();
}

Status GradExpand(GradBuilder& b, const GradArgs& a) {
  if (a.needs[0]) a.dx[0] = b.SumTo(a.dy[0], a.node.output(0)->shape, a.node.input(0)->shape);
  return Status::Ok();
}

Status GradGather(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  Value* data = n.input(0);
  Value* idx = n.input(1);
  const size_t r = data->shape.size(), q = idx->shape.size();
  const int64_t axis = NormalAxis(n.GetInt("axis", 0), r);
  const size_t ax = static_cast<size_t>(axis);
  // Negative indices count from the end.
  Value* i64 = idx->dtype == DataType::kInt64 ? idx : b.Op("Cast", {idx}, {{"to", GradBuilder::Int(7)}});
  Value* zero = b.Op("Reshape", {b.Int64s({0}), b.Int64s({})});
  Value* dim = b.Op("Reshape", {b.Int64s({data->shape[ax]}), b.Int64s({})});
  Value* fixed = b.Op("Where", {b.Op("Less", {i64, zero}), b.Op("Add", {i64, dim}), i64});
  Value* where = b.Op("Unsqueeze", {fixed, b.Int64s({-1})});
  // dY is [pre, idx..., post]: bring idx... to the front, scatter-add into
  // [data[axis], pre, post], and put axis back in its place.
  Value* dy = a.dy[0];
  std::vector<int64_t> zshape = {data->shape[ax]};
  for (size_t i = 0; i < r; ++i)
    if (i != ax) zshape.push_back(data->shape[i]);
  if (axis != 0) {
    std::vector<int64_t> perm;
    for (size_t i = 0; i < q; ++i) perm.push_back(static_cast<int64_t>(ax + i));
    for (size_t i = 0; i < ax; ++i) perm.push_back(static_cast<int64_t>(i));
    for (size_t i = ax + q; i < r - 1 + q; ++i) perm.push_back(static_cast<int64_t>(i));
    dy = b.Op("Transpose", {dy}, {{"perm", GradBuilder::Ints(perm)}});
  }
  Value zeros_like;
  zeros_like.dtype = data->dtype;
  zeros_like.has_shape = true;
  zeros_like.shape = zshape;
  Value* scattered = b.Op("ScatterND", {b.ZerosLike(zeros_like), where, dy}, {{"reduction", GradBuilder::String("add")}});
  if (axis == 0) {
    a.dx[0] = scattered;
    return Status::Ok();
  }
  std::vector<int64_t> back;  // scattered dims: [axis, 0..axis-1, axis+1..]
  for (size_t i = 0; i < r; ++i) back.push_back(i < ax ? static_cast<int64_t>(i + 1) : i == ax ? 0 : static_cast<int64_t>(i));
  a.dx[0] = b.Op("Transpose", {scattered}, {{"perm", GradBuilder::Ints(back)}});
  return Status::Ok();
}

Status GradSlice(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  Value* x = n.input(0);
  const size_t r = x->shape.size();
  auto ints = [&](size_t i) -> Expected<std::vector<int64_t>> {
    const Value* v = n.input(i);
    if (!v) return std::vector<int64_t>{};
    if (!v->IsConstant()) return NotSupported("the gradient of ", n.Describe(), " needs constant starts/ends/axes/steps");
    std::vector<int64_t> out(static_cast<size_t>(v->NumElements()));
    for (size_t k = 0; k < out.size(); ++k)
      out[k] = v->dtype == DataType::kInt32 ? v->constant->as<int32_t>()[k] : v->constant->as<int64_t>()[k];
    return out;
  };
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ints(1));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ints(2));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ints(3));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> steps, ints(4));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> pads(2 * r, 0);
  for (size_t i = 0; i < starts.size(); ++i) {
    if (!steps.empty() && steps[i] != 1)
      return NotSupported("the gradient of ", n.Describe(), " with a step other than 1");
    const size_t d = static_cast<size_t>(NormalAxis(axes[i], r));
    const int64_t dim = x->shape[d];
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    s = std::clamp<int64_t>(s, 0, dim);
    pads[d] = s;
    pads[d + r] = dim - s - n.output(0)->shape[d];
  }
  a.dx[0] = b.Op("Pad", {a.dy[0], b.Int64s(pads)});
  return Status::Ok();
}

Status GradDropout(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  const Value* mode = n.input(2);
  bool training = false;
  if (mode) {
    if (!mode->IsConstant())
      return NotSupported("the gradient of ", n.Describe(), " with a training_mode that is not a constant");
    training = mode->constant->data()[0] != 0;
  }
  if (!training) {
    a.dx[0] = a.dy[0];
    return Status::Ok();
  }
  Value* mask = n.output(1);
  if (!mask) return NotSupported("the gradient of ", n.Describe(), " in training mode needs its mask output");
  double ratio = 0.5;
  if (const Value* rv = n.input(1)) {
    if (!rv->IsConstant()) return NotSupported("the gradient of ", n.Describe(), " with a ratio that is not a constant");
    ratio = rv->dtype == DataType::kFloat64 ? rv->constant->as<double>()[0] : rv->constant->as<float>()[0];
  }
  const DataType t = n.input(0)->dtype;
  Value* m = b.Op("Cast", {mask}, {{"to", GradBuilder::Int(static_cast<int64_t>(t))}});
  a.dx[0] = b.Op("Mul", {a.dy[0], b.Op("Mul", {m, b.Scalar(1.0 / (1.0 - ratio), t)})});
  return Status::Ok();
}

}  // namespace oc::tensor

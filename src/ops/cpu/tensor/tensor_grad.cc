// Gradient rules of the shape and data-movement ops (see grads.h and ops/grad.h).
#include "ops/cpu/tensor/grads.h"

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

}  // namespace oc::tensor

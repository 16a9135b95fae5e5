// The gradient rule of Conv (see grads.h and ops/grad.h), in IR ops:
//   dX = ConvTranspose(dY, W) with the forward's strides, pads, dilations and
//        group, and the output padding that gives back X's extent;
//   dW = per group, Conv(X^T, dY^T) with strides and dilations swapped
//        (batch as the channel dim, dY as the kernel), cut to the kernel and
//        transposed back;
//   dB = dY summed over the batch and spatial dims.
#include "ops/cpu/conv/grads.h"

namespace oc::conv {

Expected<std::vector<int64_t>> EffectivePads(const Node& n, const std::vector<int64_t>& in,
                                             const std::vector<int64_t>& k) {
  const size_t sp = in.size();
  std::vector<int64_t> strides = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  const std::string autopad = n.GetString("auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * sp, 0);
  if (autopad == "NOTSET") {
    pads = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
  } else if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      const int64_t out = (in[i] + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - in[i]);
      const int64_t small = total / 2, big = total - small;
      pads[i] = autopad == "SAME_UPPER" ? small : big;
      pads[i + sp] = autopad == "SAME_UPPER" ? big : small;
    }
  } else if (autopad != "VALID") {
    return InvalidArgument(n.Describe(), ": auto_pad '", autopad, "'");
  }
  if (pads.size() != 2 * sp || strides.size() != sp || dil.size() != sp)
    return InvalidArgument(n.Describe(), ": pads, strides or dilations do not match the spatial rank");
  return pads;
}

std::vector<int64_t> OutputPadding(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                   const std::vector<int64_t>& k, const std::vector<int64_t>& strides,
                                   const std::vector<int64_t>& dil, const std::vector<int64_t>& pads) {
  const size_t sp = in.size();
  std::vector<int64_t> op(sp);
  for (size_t i = 0; i < sp; ++i)
    op[i] = in[i] - (strides[i] * (out[i] - 1) + (k[i] - 1) * dil[i] + 1 - pads[i] - pads[i + sp]);
  return op;
}

namespace {

std::vector<int64_t> SwapFirstTwo(size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[0], perm[1]);
  return perm;
}

// Splits `v` into `g` equal parts along dim 1 (or returns it alone).
std::vector<Value*> Groups(GradBuilder& b, Value* v, int64_t channels, int64_t g) {
  if (g == 1) return {v};
  return b.OpN("Split", {v, b.Int64s(std::vector<int64_t>(static_cast<size_t>(g), channels / g))},
               static_cast<size_t>(g), {{"axis", GradBuilder::Int(1)}});
}

// The weight gradient of y = Conv(x, w): dW[m, c, k] = sum dy[n, m, o] x[n, c, o s + k d - p],
// per group a Conv of x^T with dy^T (strides and dilations swapped), cut to
// the kernel's extent `k` and transposed back to [M, C/g, k...].
Value* WeightGrad(GradBuilder& b, Value* x, Value* dy, int64_t x_channels, int64_t y_channels,
                  const std::vector<int64_t>& k, const std::vector<int64_t>& strides, const std::vector<int64_t>& dil,
                  const std::vector<int64_t>& pads, int64_t group) {
  const size_t sp = k.size(), rank = sp + 2;
  const std::vector<int64_t> perm = SwapFirstTwo(rank);
  std::vector<Value*> xs = Groups(b, x, x_channels, group), ds = Groups(b, dy, y_channels, group);
  std::vector<Value*> parts;
  for (size_t j = 0; j < xs.size(); ++j) {
    Value* xt = b.Op("Transpose", {xs[j]}, {{"perm", GradBuilder::Ints(perm)}});
    Value* dt = b.Op("Transpose", {ds[j]}, {{"perm", GradBuilder::Ints(perm)}});
    // [C/g, M/g, K'...] with K' >= K: the taps past the kernel are cut off.
    Value* c = b.Op("Conv", {xt, dt},
                    {{"strides", GradBuilder::Ints(dil)}, {"dilations", GradBuilder::Ints(strides)},
                     {"pads", GradBuilder::Ints(pads)}});
    std::vector<int64_t> starts(sp, 0), axes(sp);
    for (size_t i = 0; i < sp; ++i) axes[i] = static_cast<int64_t>(i + 2);
    c = b.Op("Slice", {c, b.Int64s(starts), b.Int64s(k), b.Int64s(axes)});
    parts.push_back(b.Op("Transpose", {c}, {{"perm", GradBuilder::Ints(perm)}}));
  }
  return parts.size() == 1 ? parts[0] : b.Op("Concat", parts, {{"axis", GradBuilder::Int(0)}});
}

Value* BiasGrad(GradBuilder& b, Value* dy, size_t rank) {
  std::vector<int64_t> axes = {0};
  for (size_t i = 2; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return b.Op("ReduceSum", {dy, b.Int64s(axes)}, {{"keepdims", GradBuilder::Int(0)}});
}

}  // namespace

Status GradConv(GradBuilder& b, const GradArgs& a) {
  const Node& n = a.node;
  Value* x = n.input(0);
  Value* w = n.input(1);
  Value* y = n.output(0);
  const size_t rank = x->shape.size();
  if (rank < 3) return InvalidArgument(n.Describe(), ": Conv input of rank ", rank);
  const size_t sp = rank - 2;
  const std::vector<int64_t> in(x->shape.begin() + 2, x->shape.end());
  const std::vector<int64_t> k(w->shape.begin() + 2, w->shape.end());
  const std::vector<int64_t> out(y->shape.begin() + 2, y->shape.end());
  const std::vector<int64_t> strides = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> dil = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  const int64_t group = n.GetInt("group", 1);
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, EffectivePads(n, in, k));
  Value* dy = a.dy[0];

  if (a.needs[0]) {
    const std::vector<int64_t> out_pad = OutputPadding(in, out, k, strides, dil, pads);
    a.dx[0] = b.Op("ConvTranspose", {dy, w},
                   {{"strides", GradBuilder::Ints(strides)}, {"dilations", GradBuilder::Ints(dil)},
                    {"pads", GradBuilder::Ints(pads)}, {"group", GradBuilder::Int(group)},
                    {"output_padding", GradBuilder::Ints(out_pad)}});
  }
  if (a.needs[1]) a.dx[1] = WeightGrad(b, x, dy, x->shape[1], y->shape[1], k, strides, dil, pads, group);
  if (n.inputs.size() > 2 && n.input(2) && a.needs[2]) a.dx[2] = BiasGrad(b, dy, rank);
  return Status::Ok();
}

// Y = ConvTranspose(X, W) is the adjoint of Conv(., W): dX = Conv(dY, W) with
// the same geometry, and dW is Conv's weight gradient with the roles of X and
// dY exchanged (dY as the convolved input, X as the output gradient).
Status GradConvTranspose(GradBuilder& b, const GradArgs& a) {
  const Node& n = a.node;
  Value* x = n.input(0);
  Value* w = n.input(1);
  Value* y = n.output(0);
  const size_t rank = x->shape.size();
  if (rank < 3) return InvalidArgument(n.Describe(), ": ConvTranspose input of rank ", rank);
  if (n.HasAttr("output_shape") || n.GetString("auto_pad", "NOTSET") != "NOTSET")
    return NotSupported("the gradient of ", n.Describe(), " with output_shape or auto_pad (give pads)");
  const size_t sp = rank - 2;
  const std::vector<int64_t> k(w->shape.begin() + 2, w->shape.end());
  const std::vector<int64_t> strides = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> dil = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> pads = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
  const int64_t group = n.GetInt("group", 1);
  Value* dy = a.dy[0];
  if (a.needs[0])
    a.dx[0] = b.Op("Conv", {dy, w},
                   {{"strides", GradBuilder::Ints(strides)}, {"dilations", GradBuilder::Ints(dil)},
                    {"pads", GradBuilder::Ints(pads)}, {"group", GradBuilder::Int(group)}});
  if (a.needs[1]) a.dx[1] = WeightGrad(b, dy, x, y->shape[1], x->shape[1], k, strides, dil, pads, group);
  if (n.inputs.size() > 2 && n.input(2) && a.needs[2]) a.dx[2] = BiasGrad(b, dy, rank);
  return Status::Ok();
}

}  // namespace oc::conv

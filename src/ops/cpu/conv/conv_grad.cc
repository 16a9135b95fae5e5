// The gradient rule of Conv (see grads.h and ops/grad.h), in IR ops:
//   dX = ConvTranspose(dY, W) with the forward's strides, pads, dilations and
//        group, and the output padding that gives back X's extent;
//   dW = ConvWeightGrad(X, dY) (com.opencann, conv_weight_grad.cc);
//   dB = dY summed over the batch and spatial dims.
#include "ops/cpu/conv/grads.h"

#include <algorithm>
#include <climits>

#include "ops/op_registry.h"

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

// The weight gradient of y = Conv(x, w): dW[m, c, k] = sum dy[n, m, o] x[n, c, o s + k d - p],
// one com.opencann ConvWeightGrad node (conv_weight_grad.cc: a GEMM per image
// and group over x's im2col).
Value* WeightGrad(GradBuilder& b, Value* x, Value* dy, const std::vector<int64_t>& k,
                  const std::vector<int64_t>& strides, const std::vector<int64_t>& dil,
                  const std::vector<int64_t>& pads, int64_t group) {
  Graph& g = b.graph();
  Value* dw = g.AddValue(g.UniqueName("grad/ConvWeightGrad_out"));
  Node* n = g.AddNode("ConvWeightGrad", g.UniqueName("grad/ConvWeightGrad"), {x, dy}, {dw}, kOpenCannDomain);
  n->opset = 1;
  n->SetInts("kernel_shape", k);
  n->SetInts("strides", strides);
  n->SetInts("dilations", dil);
  n->SetInts("pads", pads);
  n->SetInt("group", group);
  g.opset_imports.emplace(kOpenCannDomain, 1);
  return dw;
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

  const bool unit_strides = std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; });
  if (a.needs[0] && unit_strides && group == 1) {
    // With unit strides the transposed convolution is a convolution of dY with
    // W's channels exchanged and its taps reversed, padded by (k - 1) d - p
    // (plus the output padding at the end): the forward kernels' speed.
    const std::vector<int64_t> out_pad = OutputPadding(in, out, k, strides, dil, pads);
    std::vector<int64_t> starts, ends, axes, steps, flipped_pads(2 * sp);
    for (size_t i = 0; i < sp; ++i) {
      starts.push_back(-1);
      ends.push_back(INT64_MIN);
      axes.push_back(static_cast<int64_t>(i + 2));
      steps.push_back(-1);
      flipped_pads[i] = (k[i] - 1) * dil[i] - pads[i];
      flipped_pads[i + sp] = (k[i] - 1) * dil[i] - pads[i + sp] + out_pad[i];
    }
    const bool pads_ok = std::all_of(flipped_pads.begin(), flipped_pads.end(), [](int64_t p) { return p >= 0; });
    if (pads_ok) {
      std::vector<int64_t> perm(sp + 2);
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
      std::swap(perm[0], perm[1]);
      Value* wt = b.Op("Transpose", {w}, {{"perm", GradBuilder::Ints(perm)}});
      Value* wf = b.Op("Slice", {wt, b.Int64s(starts), b.Int64s(ends), b.Int64s(axes), b.Int64s(steps)});
      a.dx[0] = b.Op("Conv", {dy, wf},
                     {{"dilations", GradBuilder::Ints(dil)}, {"pads", GradBuilder::Ints(flipped_pads)}});
    }
  }
  if (a.needs[0] && !a.dx[0]) {
    const std::vector<int64_t> out_pad = OutputPadding(in, out, k, strides, dil, pads);
    a.dx[0] = b.Op("ConvTranspose", {dy, w},
                   {{"strides", GradBuilder::Ints(strides)}, {"dilations", GradBuilder::Ints(dil)},
                    {"pads", GradBuilder::Ints(pads)}, {"group", GradBuilder::Int(group)},
                    {"output_padding", GradBuilder::Ints(out_pad)}});
  }
  if (a.needs[1]) a.dx[1] = WeightGrad(b, x, dy, k, strides, dil, pads, group);
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
  if (a.needs[1]) a.dx[1] = WeightGrad(b, dy, x, k, strides, dil, pads, group);
  if (n.inputs.size() > 2 && n.input(2) && a.needs[2]) a.dx[2] = BiasGrad(b, dy, rank);
  return Status::Ok();
}

}  // namespace oc::conv

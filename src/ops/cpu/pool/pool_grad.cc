// Gradient rules of the pools (see grads.h and ops/grad.h), in IR ops:
//   MaxPool: the pool again with its Indices output; dY scattered (added) to
//            the input elements those name (the first maximum of a window);
//   AveragePool: dY divided by each window's count, spread over the window by
//            a depthwise ConvTranspose with a kernel of ones;
//   the global pools: dY broadcast back (the mean's share, or the maxima).
#include "ops/cpu/pool/grads.h"

#include "ops/cpu/conv/grads.h"

namespace oc::pool {
namespace {

std::vector<int64_t> Spatial(const Value* v) { return std::vector<int64_t>(v->shape.begin() + 2, v->shape.end()); }

Status RefuseCeilMode(const Node& n) {
  if (n.GetInt("ceil_mode", 0))
    return NotSupported("the gradient of ", n.Describe(), " with ceil_mode=1 (windows past the padded input)");
  return Status::Ok();
}

}  // namespace

Status GradMaxPool(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  OC_RETURN_IF_ERROR(RefuseCeilMode(n));
  Value* x = n.input(0);
  std::map<std::string, Attribute> attrs = n.attrs;
  // Row-major indices; set only when the forward asks otherwise, so that the
  // pool stays identical to the forward one (common-subexpressions merges them).
  if (n.GetInt("storage_order", 0) != 0) attrs["storage_order"] = GradBuilder::Int(0);
  Value* indices = b.OpN("MaxPool", {x}, 2, attrs)[1];
  Value* flat_dy = b.Op("Reshape", {a.dy[0], b.Int64s({-1})});
  Value* flat_idx = b.Op("Reshape", {indices, b.Int64s({-1})});
  Value* zeros = b.Op("Reshape", {b.ZerosLike(*x), b.Int64s({-1})});
  Value* dx = b.Op("ScatterElements", {zeros, flat_idx, flat_dy},
                   {{"axis", GradBuilder::Int(0)}, {"reduction", GradBuilder::String("add")}});
  a.dx[0] = b.Op("Reshape", {dx, b.Int64s(x->shape)});
  return Status::Ok();
}

Status GradAveragePool(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  const Node& n = a.node;
  OC_RETURN_IF_ERROR(RefuseCeilMode(n));
  Value* x = n.input(0);
  Value* y = n.output(0);
  const std::vector<int64_t> in = Spatial(x), out = Spatial(y);
  const std::vector<int64_t> k = n.GetInts("kernel_shape");
  const size_t sp = in.size();
  if (k.size() != sp) return InvalidArgument(n.Describe(), ": kernel_shape does not match the spatial rank");
  const std::vector<int64_t> strides = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> dil = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, conv::EffectivePads(n, in, k));
  const bool include_pad = n.GetInt("count_include_pad", 0) != 0;
  // Each window's divisor, [1, 1, out...]: the kernel's size, or the taps
  // inside the input (separable: a product over the dims).
  int64_t outs = 1;
  for (int64_t o : out) outs *= o;
  std::vector<double> count(static_cast<size_t>(outs), 1.0);
  for (int64_t idx = 0; idx < outs; ++idx) {
    int64_t rest = idx;
    for (size_t d = sp; d-- > 0;) {
      const int64_t o = rest % out[d];
      rest /= out[d];
      int64_t taps = 0;
      for (int64_t t = 0; t < k[d]; ++t) {
        const int64_t pos = o * strides[d] - pads[d] + t * dil[d];
        taps += include_pad || (pos >= 0 && pos < in[d]);
      }
      count[static_cast<size_t>(idx)] *= static_cast<double>(taps);
    }
  }
  std::vector<int64_t> cshape = {1, 1};
  cshape.insert(cshape.end(), out.begin(), out.end());
  const DataType t = x->dtype;
  TensorData data = TensorData::Allocate(count.size() * DataTypeSize(t));
  for (size_t i = 0; i < count.size(); ++i) {
    if (t == DataType::kFloat64) reinterpret_cast<double*>(data.mutable_data())[i] = 1.0 / count[i];
    else reinterpret_cast<float*>(data.mutable_data())[i] = static_cast<float>(1.0 / count[i]);
  }
  Value* inv = b.graph().AddConstant(b.graph().UniqueName("grad/pool_divisor"), t, cshape, std::move(data));
  // A depthwise kernel of ones: [C, 1, k...].
  const int64_t channels = x->shape[1];
  int64_t kn = channels;
  for (int64_t v : k) kn *= v;
  std::vector<int64_t> kshape = {channels, 1};
  kshape.insert(kshape.end(), k.begin(), k.end());
  TensorData ones = TensorData::Allocate(static_cast<size_t>(kn) * DataTypeSize(t));
  for (int64_t i = 0; i < kn; ++i) {
    if (t == DataType::kFloat64) reinterpret_cast<double*>(ones.mutable_data())[i] = 1.0;
    else reinterpret_cast<float*>(ones.mutable_data())[i] = 1.f;
  }
  Value* kernel = b.graph().AddConstant(b.graph().UniqueName("grad/pool_ones"), t, kshape, std::move(ones));
  const std::vector<int64_t> out_pad = conv::OutputPadding(in, out, k, strides, dil, pads);
  a.dx[0] = b.Op("ConvTranspose", {b.Op("Mul", {a.dy[0], inv}), kernel},
                 {{"strides", GradBuilder::Ints(strides)}, {"dilations", GradBuilder::Ints(dil)},
                  {"pads", GradBuilder::Ints(pads)}, {"group", GradBuilder::Int(channels)},
                  {"output_padding", GradBuilder::Ints(out_pad)}});
  return Status::Ok();
}

Status GradGlobalAveragePool(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  Value* x = a.node.input(0);
  int64_t area = 1;
  for (int64_t d : Spatial(x)) area *= d;
  Value* g = b.Op("Mul", {a.dy[0], b.Scalar(1.0 / static_cast<double>(area), x->dtype)});
  a.dx[0] = b.Op("Expand", {g, b.Int64s(x->shape)});
  return Status::Ok();
}

Status GradGlobalMaxPool(GradBuilder& b, const GradArgs& a) {
  if (!a.needs[0]) return Status::Ok();
  Value* x = a.node.input(0);
  Value* mask = b.Op("Equal", {x, a.node.output(0)});
  a.dx[0] = b.Op("Where", {mask, b.Op("Expand", {a.dy[0], b.Int64s(x->shape)}), b.Scalar(0, x->dtype)});
  return Status::Ok();
}

}  // namespace oc::pool

// fold-conv-batchnorm: inference BatchNormalization after a Conv is an affine map
// per output channel, y = s * (conv + b - mean) + beta with s = scale/sqrt(var+eps),
// so it folds into the Conv: W'[m] = s[m] * W[m], B'[m] = s[m] * (B[m] - mean[m]) + beta[m].
// New weights are new constants: the originals may be shared with another node
// and are dropped by Compact when they are not.
#include <cmath>
#include <vector>

#include "passes/passes.h"

namespace oc {
namespace {

const float* ConstF32(const Value* v, int64_t count) {
  if (!v || !v->constant || v->dtype != DataType::kFloat32 || !v->IsStatic()) return nullptr;
  if (v->NumElements() != count) return nullptr;
  return v->constant->as<float>();
}

bool TrainingMode(const Node& bn) {
  if (bn.GetInt("training_mode", 0) != 0) return true;
  // Outputs past the first (running mean/var) exist only in training graphs.
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i]) return true;
  return false;
}

bool TryFold(Graph& graph, Node& conv, Node& bn) {
  Value* w = conv.input(1);
  Value* y = conv.output(0);
  if (!w || !w->constant || w->dtype != DataType::kFloat32 || !w->IsStatic() || w->shape.empty())
    return false;
  if (!y || y->dtype != DataType::kFloat32 || graph.IsGraphOutput(y) || CountUses(graph, y) != 1)
    return false;
  if (bn.input(0) != y || TrainingMode(bn) || !bn.output(0)) return false;
  const int64_t m = w->shape[0];
  const float* b = nullptr;
  if (Value* bv = conv.input(2)) {
    b = ConstF32(bv, m);
    if (!b) return false;
  }
  const float* scale = ConstF32(bn.input(1), m);
  const float* beta = ConstF32(bn.input(2), m);
  const float* mean = ConstF32(bn.input(3), m);
  const float* var = ConstF32(bn.input(4), m);
  if (!scale || !beta || !mean || !var) return false;
  const float eps = bn.GetFloat("epsilon", 1e-5f);

  const int64_t per_channel = w->NumElements() / m;
  TensorData new_w = TensorData::Allocate(static_cast<size_t>(w->ByteSize()));
  TensorData new_b = TensorData::Allocate(static_cast<size_t>(m) * sizeof(float));
  const float* src = w->constant->as<float>();
  float* dst_w = reinterpret_cast<float*>(new_w.mutable_data());
  float* dst_b = reinterpret_cast<float*>(new_b.mutable_data());
  for (int64_t c = 0; c < m; ++c) {
    // Double for the factor: var + eps may be tiny and scale large.
    const double s = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
    for (int64_t k = 0; k < per_channel; ++k)
      dst_w[c * per_channel + k] = static_cast<float>(src[c * per_channel + k] * s);
    const double bias = b ? b[c] : 0.0;
    dst_b[c] = static_cast<float>((bias - mean[c]) * s + beta[c]);
  }
  Value* w2 = graph.AddConstant(graph.UniqueName(w->name + "_bnfolded"), DataType::kFloat32,
                                w->shape, std::move(new_w));
  Value* b2 = graph.AddConstant(graph.UniqueName(conv.name + "_bias_bnfolded"), DataType::kFloat32,
                                {m}, std::move(new_b));
  conv.inputs.resize(std::max<size_t>(conv.inputs.size(), 3));
  conv.inputs[1] = w2;
  conv.inputs[2] = b2;
  Value* out = bn.output(0);
  graph.RemoveNode(&bn);
  conv.outputs[0] = out;
  out->producer = &conv;
  y->producer = nullptr;
  return true;
}

}  // namespace

Status RunFoldConvBatchNorm(Graph& graph, const CompileOptions& options) {
  if (!options.fuse) return Status::Ok();
  std::vector<std::pair<Node*, Node*>> pairs;
  for (auto& up : graph.nodes()) {
    Node& bn = *up;
    if (!bn.domain.empty() || bn.op_type != "BatchNormalization") continue;
    Value* x = bn.input(0);
    if (!x || !x->producer) continue;
    Node& conv = *x->producer;
    if (conv.domain.empty() && conv.op_type == "Conv") pairs.emplace_back(&conv, &bn);
  }
  for (auto [conv, bn] : pairs) TryFold(graph, *conv, *bn);
  return Status::Ok();
}

}  // namespace oc

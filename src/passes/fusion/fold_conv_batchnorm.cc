// fold-conv-batchnorm: inference BatchNormalization after a Conv is an affine map
// per output channel, y = s * (conv + b - mean) + beta with s = scale/sqrt(var+eps),
// so it folds into the Conv: W'[m] = s[m] * W[m], B'[m] = s[m] * (B[m] - mean[m]) + beta[m].
// A per-output-channel Mul or Add by a constant (how frozen BatchNorm layers
// export, e.g. DETR's backbone, or TF graphs' BN) folds the same way:
// y * s -> W'[m] = s[m] W[m], B'[m] = s[m] B[m]; y + a (or y - a) -> B'[m] =
// B[m] + a[m] (- a[m]); a chain of them folds one node at a time.
// New weights are new constants: the originals may be shared with another node
// and are dropped by Compact when they are not.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "passes/passes.h"

namespace oc {
namespace {

bool TrainingMode(const Node& bn) {
  if (bn.GetInt("training_mode", 0) != 0) return true;
  // Outputs past the first (running mean/var) exist only in training graphs.
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i]) return true;
  return false;
}

// What a fold needs of the conv: constant float32 weights W [m, ...] and bias
// (nullptr: none), and an output y read by one node only, not a graph output.
struct FoldableConv {
  Value* w = nullptr;
  Value* y = nullptr;
  const float* b = nullptr;
  int64_t m = 0;
};

std::optional<FoldableConv> Foldable(Graph& graph, Node& conv) {
  FoldableConv f;
  f.w = conv.input(1);
  f.y = conv.output(0);
  if (!f.w || !f.w->constant || f.w->dtype != DataType::kFloat32 || !f.w->IsStatic() || f.w->shape.empty())
    return std::nullopt;
  if (!f.y || f.y->dtype != DataType::kFloat32 || graph.IsGraphOutput(f.y) || CountUses(graph, f.y) != 1)
    return std::nullopt;
  f.m = f.w->shape[0];
  if (f.m <= 0) return std::nullopt;
  if (Value* bv = conv.input(2)) {
    f.b = ConstantFloats(bv, f.m);
    if (!f.b) return std::nullopt;
  }
  return f;
}

// Gives the conv its new weights (w2) and bias (b2) and `folded`'s output;
// `folded` goes away.
void Replace(Graph& graph, Node& conv, Node& folded, Value* w2, Value* b2) {
  conv.inputs.resize(std::max<size_t>(conv.inputs.size(), 3));
  conv.inputs[1] = w2;
  conv.inputs[2] = b2;
  Value* y = conv.output(0);
  Value* out = folded.output(0);
  graph.RemoveNode(&folded);
  conv.outputs[0] = out;
  out->producer = &conv;
  y->producer = nullptr;
}

bool TryFold(Graph& graph, Node& conv, Node& bn) {
  const auto f = Foldable(graph, conv);
  if (!f || bn.input(0) != f->y || TrainingMode(bn) || !bn.output(0)) return false;
  Value* w = f->w;
  const int64_t m = f->m;
  const float* b = f->b;
  const float* scale = ConstantFloats(bn.input(1), m);
  const float* beta = ConstantFloats(bn.input(2), m);
  const float* mean = ConstantFloats(bn.input(3), m);
  const float* var = ConstantFloats(bn.input(4), m);
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
  Replace(graph, conv, bn, w2, b2);
  return true;
}

// The per-channel values of constant `c` applied element-wise to the conv
// output y ([N, M, spatial...]): `c` broadcasts to y without growing it and
// varies along the channel axis at most. Fills m values (a scalar repeats).
bool PerChannel(const Value* c, const Value& y, int64_t m, std::vector<float>* out) {
  if (!c || !c->constant || c->dtype != DataType::kFloat32 || !c->IsStatic() || !y.IsStatic()) return false;
  if (c->shape.size() > y.shape.size() || y.shape.size() < 2) return false;
  const float* v = c->constant->as<float>();
  const int64_t n = c->NumElements();
  if (n == 1) {
    out->assign(static_cast<size_t>(m), v[0]);
    return true;
  }
  // Right-aligned: every dim 1 except the one over y's channel axis, which is m.
  const size_t lead = y.shape.size() - c->shape.size();
  for (size_t d = 0; d < c->shape.size(); ++d) {
    const bool channel = lead + d == 1;
    if (c->shape[d] != (channel ? m : 1)) return false;
  }
  out->assign(v, v + m);
  return true;
}

// Folds `op` (Mul, Add or Sub reading the conv output y as its first input for
// Sub) into the conv's weights and bias.
bool TryFoldAffine(Graph& graph, Node& conv, Node& op) {
  const auto f = Foldable(graph, conv);
  if (!f) return false;
  Value* w = f->w;
  const Value* y = f->y;
  if (op.inputs.size() != 2 || !op.output(0) || !op.output(0)->IsStatic() || op.output(0)->shape != y->shape)
    return false;
  const bool first = op.input(0) == y;
  if (!first && op.input(1) != y) return false;
  if (op.op_type == "Sub" && !first) return false;
  const int64_t m = f->m;
  const float* b = f->b;
  std::vector<float> k;
  if (!PerChannel(op.input(first ? 1 : 0), *y, m, &k)) return false;
  const bool mul = op.op_type == "Mul";
  const int64_t per_channel = w->NumElements() / m;
  TensorData new_b = TensorData::Allocate(static_cast<size_t>(m) * sizeof(float));
  float* dst_b = reinterpret_cast<float*>(new_b.mutable_data());
  for (int64_t c = 0; c < m; ++c) {
    const float bias = b ? b[c] : 0.f;
    dst_b[c] = mul ? bias * k[c] : op.op_type == "Add" ? bias + k[c] : bias - k[c];
  }
  Value* w2 = w;
  if (mul) {
    TensorData new_w = TensorData::Allocate(static_cast<size_t>(w->ByteSize()));
    const float* src = w->constant->as<float>();
    float* dst_w = reinterpret_cast<float*>(new_w.mutable_data());
    for (int64_t c = 0; c < m; ++c)
      for (int64_t i = 0; i < per_channel; ++i) dst_w[c * per_channel + i] = src[c * per_channel + i] * k[c];
    w2 = graph.AddConstant(graph.UniqueName(w->name + "_scaled"), DataType::kFloat32, w->shape, std::move(new_w));
  }
  Value* b2 = graph.AddConstant(graph.UniqueName(conv.name + "_bias_folded"), DataType::kFloat32, {m},
                                std::move(new_b));
  Replace(graph, conv, op, w2, b2);
  return true;
}

// The node reading the conv's output, when there is exactly one.
Node* SoleConsumer(Graph& graph, const Value* y) {
  if (!y || graph.IsGraphOutput(y) || CountUses(graph, y) != 1) return nullptr;
  for (auto& up : graph.nodes())
    for (const Value* in : up->inputs)
      if (in == y) return up.get();
  return nullptr;
}

}  // namespace

Status RunFoldConvBatchNorm(Graph& graph, const CompileOptions& options) {
  if (!options.fuse) return Status::Ok();
  std::vector<Node*> convs;
  for (auto& up : graph.nodes())
    if (up->domain.empty() && up->op_type == "Conv") convs.push_back(up.get());
  for (Node* conv : convs) {
    for (;;) {
      Node* next = SoleConsumer(graph, conv->output(0));
      if (!next || !next->domain.empty()) break;
      bool folded = false;
      if (next->op_type == "BatchNormalization") folded = TryFold(graph, *conv, *next);
      else if (next->op_type == "Mul" || next->op_type == "Add" || next->op_type == "Sub")
        folded = TryFoldAffine(graph, *conv, *next);
      if (!folded) break;
    }
  }
  return Status::Ok();
}

}  // namespace oc

// fuse-layernorm: normalisations over the last axis as exporters before
// opset 17 / 23 spell them, into one LayerNormalization / RMSNormalization node
// whose kernel makes two passes over each row instead of nine full tensors.
//   LayerNorm: d = x - ReduceMean(x); v = ReduceMean(d^2) (Pow(d,2) or d*d);
//              n = d / Sqrt(v + eps)  or  d * Reciprocal(Sqrt(v + eps))
//              (Reciprocal also as 1 / Sqrt(..), torch's rsqrt at opset 17)
//   RMSNorm:   v = ReduceMean(x^2);  n = x / Sqrt(v + eps)  or  x * Reciprocal(...)
//   then optionally n * gamma (+ beta) with constant gamma / beta along the last dim.
// Reductions must be over exactly the last axis with keepdims; every
// intermediate must be read only inside the pattern.
#include <optional>
#include <string>
#include <vector>

#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using fusion::IsF32Static;
using fusion::IsOp;
using fusion::Other;
using fusion::ProducedBy;
using fusion::Scalar;

struct NormFuser {
  Graph& graph;
  fusion::Uses uses{graph};

  // ReduceMean(x) over the last axis only, keeping dims (axes as attribute
  // before opset 18, as a constant input since).
  static bool IsLastAxisMean(const Node* n) {
    if (!IsOp(n, "ReduceMean") || !n->input(0) || !n->input(0)->IsStatic()) return false;
    if (n->GetInt("keepdims", 1) != 1) return false;
    std::vector<int64_t> axes = n->GetInts("axes");
    if (n->input(1)) {
      auto c = ConstInts(n->input(1));
      if (!c) return false;
      axes = *c;
    }
    const int64_t rank = static_cast<int64_t>(n->input(0)->shape.size());
    return rank >= 1 && axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
  }

  // `sq` is t^2 written as Pow(t, 2) or Mul(t, t); returns t.
  static Value* SquareOf(const Value* sq) {
    Node* p = sq ? sq->producer : nullptr;
    if (IsOp(p, "Pow") && p->inputs.size() == 2 && fusion::IsScalar(p->inputs[1], 2.f, 1e-6f)) return p->inputs[0];
    if (IsOp(p, "Mul") && p->inputs.size() == 2 && p->inputs[0] == p->inputs[1]) return p->inputs[0];
    return nullptr;
  }

  // A constant of shape [..1.., C] as the 1-D [C] the fused ops take.
  Value* LastDimParam(Value* c, int64_t channels) {
    if (!IsF32Static(c) || !c->constant || c->shape.empty() || c->shape.back() != channels) return nullptr;
    for (size_t i = 0; i + 1 < c->shape.size(); ++i)
      if (c->shape[i] != 1) return nullptr;
    if (c->shape.size() == 1) return c;
    return graph.AddConstant(graph.UniqueName(c->name + "_1d"), DataType::kFloat32, {channels}, *c->constant);
  }

  bool TryFuse(Node* sqrt) {
    if (!IsOp(sqrt, "Sqrt") || !sqrt->input(0)) return false;
    std::vector<Node*> nodes = {sqrt};
    // v + eps
    Node* add_eps = ProducedBy(sqrt->input(0), "Add");
    if (!add_eps || !uses.OnlyBy(sqrt->input(0), sqrt)) return false;
    Value* var = nullptr;
    std::optional<float> eps;
    for (int i = 0; i < 2 && !eps; ++i)
      if ((eps = Scalar(add_eps->inputs[1 - i]))) var = add_eps->inputs[i];
    if (!eps || !(*eps >= 0.f)) return false;
    Node* var_mean = var ? var->producer : nullptr;
    if (!IsLastAxisMean(var_mean) || !uses.OnlyBy(var, add_eps)) return false;
    Value* sq = var_mean->input(0);
    Value* t = SquareOf(sq);
    if (!t || !uses.OnlyBy(sq, var_mean)) return false;
    nodes.insert(nodes.end(), {add_eps, var_mean, sq->producer});

    // d = x - mean(x) makes it a LayerNorm, else t is x itself (RMSNorm).
    Value* x = t;
    bool layer_norm = false;
    Node* sub = ProducedBy(t, "Sub");
    if (sub && sub->inputs.size() == 2 && IsLastAxisMean(sub->input(1)->producer) &&
        sub->input(1)->producer->input(0) == sub->input(0) && uses.OnlyBy(sub->input(1), sub)) {
      x = sub->input(0);
      layer_norm = true;
      nodes.insert(nodes.end(), {sub, sub->input(1)->producer});
    }
    if (!IsF32Static(x) || x->shape.empty() || t->shape != x->shape) return false;
    const int64_t channels = x->shape.back();

    // n = t / std  or  t * Reciprocal(std)
    Value* std_v = sqrt->output(0);
    Node* norm = uses.Sole(std_v);
    if (IsOp(norm, "Div") && norm->inputs.size() == 2 && norm->inputs[0] == t && norm->inputs[1] == std_v) {
    } else if (IsOp(norm, "Reciprocal") ||
               (IsOp(norm, "Div") && norm->inputs.size() == 2 && norm->inputs[1] == std_v &&
                fusion::IsScalar(norm->inputs[0], 1.f, 0.f))) {
      nodes.push_back(norm);
      Node* mul = uses.Sole(norm->output(0));
      if (Other(mul, "Mul", norm->output(0)) != t) return false;
      norm = mul;
    } else {
      return false;
    }
    nodes.push_back(norm);
    // d = x - mean goes away, so only the square and the normalising node may
    // read it (x itself, in RMSNorm, stays and may have other readers).
    if (layer_norm) {
      if (graph.IsGraphOutput(t)) return false;
      for (Node* r : uses.Of(t))
        if (r != norm && r != sq->producer) return false;
    }
    Value* out = norm->output(0);
    if (!IsF32Static(out) || out->shape != x->shape) return false;

    Value* gamma = nullptr;
    Value* beta = nullptr;
    if (Node* mul = uses.Sole(out); mul && IsOp(mul, "Mul")) {
      if ((gamma = LastDimParam(Other(mul, "Mul", out), channels)) && mul->output(0)->shape == x->shape) {
        nodes.push_back(mul);
        out = mul->output(0);
        if (Node* add = uses.Sole(out); layer_norm && add && IsOp(add, "Add")) {
          if ((beta = LastDimParam(Other(add, "Add", out), channels)) && add->output(0)->shape == x->shape) {
            nodes.push_back(add);
            out = add->output(0);
          }
        }
      } else {
        gamma = nullptr;
      }
    }
    if (!gamma) {
      std::vector<float> ones(static_cast<size_t>(channels), 1.f);
      gamma = graph.AddConstant(graph.UniqueName(x->name + "_norm_scale"), DataType::kFloat32, {channels},
                                TensorData::Copy(ones.data(), ones.size() * sizeof(float)));
    }

    const std::string name = sqrt->name.empty() ? "norm" : sqrt->name + "_norm";
    for (Node* n : nodes) graph.RemoveNode(n);
    std::vector<Value*> inputs = {x, gamma};
    if (beta) inputs.push_back(beta);
    Node* fused = layer_norm
                      ? fusion::AddOnnxNode(graph, "LayerNormalization", 17, name, std::move(inputs), {out})
                      : fusion::AddOnnxNode(graph, "RMSNormalization", 23, name, std::move(inputs), {out});
    fused->SetInt("axis", -1);
    fused->SetFloat("epsilon", *eps);
    uses.Rebuild();
    return true;
  }
};

}  // namespace

Status RunFuseLayerNorm(Graph& graph, const CompileOptions& options) {
  if (!options.fuse) return Status::Ok();
  NormFuser f{graph};
  std::vector<Value*> anchors;  // Sqrt outputs: values outlive removed nodes
  for (auto& n : graph.nodes())
    if (IsOp(n.get(), "Sqrt") && n->output(0)) anchors.push_back(n->output(0));
  bool changed = false;
  for (Value* a : anchors)
    if (a->producer && IsOp(a->producer, "Sqrt")) changed |= f.TryFuse(a->producer);
  if (!changed) return Status::Ok();
  return graph.TopologicalSort();
}

}  // namespace oc

// fuse-gelu: GELU as exporters before opset 20 spell it, into one Gelu node
// (opset 20) that fuse-bias-activation can then fold into a GEMM epilogue.
//   exact: 0.5 * x * (1 + Erf(x / sqrt(2)))                 (or x * (1/sqrt(2)))
//   tanh:  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//          with x^3 as Pow(x, 3) or x * x * x
// The product 0.5 * x * (1 + f) may be associated any of the three ways
// exporters use. x itself may have other readers; the rest may not.
// A Gelu behind a Reshape of a Gemm/MatMul result moves before the Reshape.
#include <string>
#include <vector>

#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using fusion::IsF32Static;
using fusion::IsOp;
using fusion::IsScalar;
using fusion::Other;

struct GeluFuser {
  Graph& graph;
  fusion::Uses uses{graph};

  // Given `x` and `one_plus` = 1 + f(x), finds 0.5 * x * one_plus; appends the
  // product nodes and returns the result.
  Value* MatchHalfProduct(Value* x, Value* one_plus, std::vector<Node*>* nodes) const {
    Node* r = uses.Sole(one_plus);
    if (!r || !IsOp(r, "Mul")) return nullptr;
    Value* other = Other(r, "Mul", one_plus);
    if (other == x) {
      // (x * one_plus) * 0.5
      Node* last = uses.Sole(r->output(0));
      if (!IsScalar(Other(last, "Mul", r->output(0)), 0.5f)) return nullptr;
      nodes->insert(nodes->end(), {r, last});
      return last->output(0);
    }
    if (IsScalar(other, 0.5f)) {
      // x * (one_plus * 0.5)
      Node* last = uses.Sole(r->output(0));
      if (Other(last, "Mul", r->output(0)) != x) return nullptr;
      nodes->insert(nodes->end(), {r, last});
      return last->output(0);
    }
    // (x * 0.5) * one_plus
    Node* half = other ? other->producer : nullptr;
    if (!IsScalar(Other(half, "Mul", x), 0.5f) || !uses.OnlyBy(other, r)) return nullptr;
    nodes->insert(nodes->end(), {half, r});
    return r->output(0);
  }

  // 1 + `f`, with f read only by that Add.
  Value* OnePlus(Value* f) const {
    Node* add = uses.Sole(f);
    return IsScalar(Other(add, "Add", f), 1.f) ? add->output(0) : nullptr;
  }

  // x^3 as Pow(x, 3), x * (x * x) or (x * x) * x; returns x.
  Value* CubeBase(Value* c, std::vector<Node*>* nodes) const {
    Node* p = c ? c->producer : nullptr;
    if (IsOp(p, "Pow") && p->inputs.size() == 2 && IsScalar(p->inputs[1], 3.f, 1e-6f)) {
      nodes->push_back(p);
      return p->inputs[0];
    }
    if (!IsOp(p, "Mul") || p->inputs.size() != 2) return nullptr;
    for (int i = 0; i < 2; ++i) {
      Value* x = p->inputs[i];
      Value* sq = p->inputs[1 - i];
      Node* s = sq->producer;
      if (IsOp(s, "Mul") && s->inputs.size() == 2 && s->inputs[0] == x && s->inputs[1] == x &&
          uses.OnlyBy(sq, p)) {
        nodes->insert(nodes->end(), {s, p});
        return x;
      }
    }
    return nullptr;
  }

  bool Replace(std::vector<Node*> nodes, Value* x, Value* out, const char* approximate, const std::string& name) {
    if (!IsF32Static(x) || !IsF32Static(out) || out->shape != x->shape) return false;
    for (Node* n : nodes) graph.RemoveNode(n);
    Node* g = fusion::AddOnnxNode(graph, "Gelu", 20, name, {x}, {out});
    g->SetString("approximate", approximate);
    uses.Rebuild();
    return true;
  }

  bool TryErf(Node* erf) {
    Value* scaled = erf->input(0);
    Node* s = scaled ? scaled->producer : nullptr;
    if (!uses.OnlyBy(scaled, erf) || !s || s->inputs.size() != 2) return false;
    Value* x = nullptr;
    if (IsOp(s, "Div") && IsScalar(s->inputs[1], 1.41421356f)) x = s->inputs[0];
    for (int i = 0; i < 2 && !x; ++i)
      if (IsOp(s, "Mul") && IsScalar(s->inputs[1 - i], 0.70710678f)) x = s->inputs[i];
    if (!x) return false;
    Value* one_plus = OnePlus(erf->output(0));
    if (!one_plus) return false;
    std::vector<Node*> nodes = {s, erf, one_plus->producer};
    Value* out = MatchHalfProduct(x, one_plus, &nodes);
    return out && Replace(std::move(nodes), x, out, "none", erf->name + "_gelu");
  }

  bool TryTanh(Node* tanh) {
    // sqrt(2/pi) * (x + 0.044715 * x^3)
    Value* arg = tanh->input(0);
    Node* outer = arg ? arg->producer : nullptr;
    if (!uses.OnlyBy(arg, tanh) || !IsOp(outer, "Mul") || outer->inputs.size() != 2) return false;
    Value* inner = nullptr;
    for (int i = 0; i < 2 && !inner; ++i)
      if (IsScalar(outer->inputs[1 - i], 0.7978845608f)) inner = outer->inputs[i];
    Node* add = inner ? inner->producer : nullptr;
    if (!IsOp(add, "Add") || add->inputs.size() != 2 || !uses.OnlyBy(inner, outer)) return false;
    std::vector<Node*> nodes = {tanh, outer, add};
    for (int i = 0; i < 2; ++i) {
      Value* x = add->inputs[i];
      Value* term = add->inputs[1 - i];  // 0.044715 * x^3
      Node* m = term->producer;
      if (!IsOp(m, "Mul") || m->inputs.size() != 2 || !uses.OnlyBy(term, add)) continue;
      for (int j = 0; j < 2; ++j) {
        if (!IsScalar(m->inputs[1 - j], 0.044715f)) continue;
        std::vector<Node*> cube_nodes;
        Value* cube = m->inputs[j];
        if (CubeBase(cube, &cube_nodes) != x || !uses.OnlyBy(cube, m)) continue;
        Value* one_plus = OnePlus(tanh->output(0));
        if (!one_plus) return false;
        std::vector<Node*> all = nodes;
        all.push_back(m);
        all.insert(all.end(), cube_nodes.begin(), cube_nodes.end());
        all.push_back(one_plus->producer);
        Value* out = MatchHalfProduct(x, one_plus, &all);
        return out && Replace(std::move(all), x, out, "tanh", tanh->name + "_gelu");
      }
    }
    return false;
  }

  // Gemm/MatMul -> Reshape -> Gelu (GPT-2's Conv1D flattens the batch for a
  // Gemm and restores it after) becomes Gemm/MatMul -> Gelu -> Reshape, so
  // that fuse-bias-activation can move the Gelu into the GEMM epilogue. An
  // elementwise op commutes with a Reshape.
  bool SinkBelowReshape(Node* gelu) {
    Value* r = gelu->input(0);
    Node* reshape = r ? r->producer : nullptr;
    if (!IsOp(reshape, "Reshape") || !uses.OnlyBy(r, gelu) || !reshape->input(0)) return false;
    Value* y = reshape->input(0);
    if (!IsF32Static(y) || !IsF32Static(r) || !uses.OnlyBy(y, reshape) || !y->producer) return false;
    if (!IsOp(y->producer, "Gemm") && !IsOp(y->producer, "MatMul")) return false;
    Value* out = gelu->output(0);
    Value* act = fusion::NewValue(graph, y->name + "_gelu", DataType::kFloat32, y->shape);
    gelu->inputs[0] = y;
    gelu->outputs[0] = act;
    act->producer = gelu;
    reshape->inputs[0] = act;
    reshape->outputs[0] = out;
    out->producer = reshape;
    // r is no longer produced or read; dead-code-elimination drops it.
    r->producer = nullptr;
    uses.Rebuild();
    return true;
  }
};

}  // namespace

Status RunFuseGelu(Graph& graph, const CompileOptions& options) {
  if (!options.fuse) return Status::Ok();
  GeluFuser f{graph};
  std::vector<Value*> anchors;  // Erf / Tanh outputs: values outlive removed nodes
  for (auto& n : graph.nodes())
    if ((IsOp(n.get(), "Erf") || IsOp(n.get(), "Tanh")) && n->output(0)) anchors.push_back(n->output(0));
  bool changed = false;
  for (Value* a : anchors) {
    Node* p = a->producer;
    if (IsOp(p, "Erf")) changed |= f.TryErf(p);
    else if (IsOp(p, "Tanh")) changed |= f.TryTanh(p);
  }
  anchors.clear();
  for (auto& n : graph.nodes())
    if (IsOp(n.get(), "Gelu")) anchors.push_back(n->output(0));
  for (Value* a : anchors)
    if (IsOp(a->producer, "Gelu")) changed |= f.SinkBelowReshape(a->producer);
  if (!changed) return Status::Ok();
  return graph.TopologicalSort();
}

}  // namespace oc

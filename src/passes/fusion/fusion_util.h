// Small matching helpers shared by the transformer fusion passes (fuse-layernorm,
// fuse-gelu, fuse-attention, pack-qkv). They match exporter subgraphs after
// shape inference, so every value they rewrite has a static shape and dtype.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "ops/infer_util.h"

namespace oc::fusion {

// Readers of each value, one entry per use. Rebuilt after each rewrite: the
// rewrites are few (a handful per layer) so this stays cheap and always exact.
class Uses {
 public:
  explicit Uses(const Graph& g) : graph_(g) { Rebuild(); }
  void Rebuild() {
    readers_.clear();
    for (auto& n : graph_.nodes())
      for (const Value* in : n->inputs)
        if (in) readers_[in].push_back(n.get());
  }
  const std::vector<Node*>& Of(const Value* v) const {
    static const std::vector<Node*> kNone;
    auto it = readers_.find(v);
    return it == readers_.end() ? kNone : it->second;
  }
  // The node that alone reads `v` (once), when `v` is not a graph output: only
  // then may a fusion make `v` disappear.
  Node* Sole(const Value* v) const {
    if (!v || graph_.IsGraphOutput(v)) return nullptr;
    const auto& r = Of(v);
    return r.size() == 1 ? r[0] : nullptr;
  }
  // True when `v` is read only by `n` (any number of times) and is no graph output.
  bool OnlyBy(const Value* v, const Node* n) const {
    if (!v || graph_.IsGraphOutput(v)) return false;
    const auto& r = Of(v);
    if (r.empty()) return false;
    for (const Node* x : r)
      if (x != n) return false;
    return true;
  }

 private:
  const Graph& graph_;
  std::unordered_map<const Value*, std::vector<Node*>> readers_;
};

inline bool IsOp(const Node* n, const char* op) { return n && n->domain.empty() && n->op_type == op; }

inline bool IsF32Static(const Value* v) { return v && v->dtype == DataType::kFloat32 && v->IsStatic(); }

// The value of a one-element float constant.
inline std::optional<float> Scalar(const Value* v) {
  if (!v || !v->constant) return std::nullopt;
  auto f = ConstFloats(v);
  if (!f || f->size() != 1) return std::nullopt;
  return (*f)[0];
}
inline bool IsScalar(const Value* v, float want, float rel = 1e-3f) {
  auto s = Scalar(v);
  return s && std::fabs(*s - want) <= rel * std::fabs(want);
}

// For a binary node `op`(v, other) or `op`(other, v): `other`. Non-commutative
// ops (Div, Sub, Pow) only match with `v` first unless `either` says so.
inline Value* Other(const Node* n, const char* op, const Value* v) {
  if (!IsOp(n, op) || n->inputs.size() != 2 || n->inputs[0] == n->inputs[1]) return nullptr;
  const std::string o = op;
  const bool commutes = o == "Add" || o == "Mul";
  if (n->inputs[0] == v) return n->inputs[1];
  if (n->inputs[1] == v && commutes) return n->inputs[0];
  return nullptr;
}

// The producer of `v` when it is `op`.
inline Node* ProducedBy(const Value* v, const char* op) {
  return v && IsOp(v->producer, op) ? v->producer : nullptr;
}

// A value the rewrite adds, shaped and typed like an existing one.
inline Value* NewValue(Graph& g, const std::string& prefix, DataType dtype, std::vector<int64_t> shape) {
  Value* v = g.AddValue(g.UniqueName(prefix));
  v->dtype = dtype;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  return v;
}

// Adds a node that runs at a fixed opset of the default domain (newer than the
// model's import when the fused op appeared later, e.g. Attention-23).
inline Node* AddOnnxNode(Graph& g, const char* op, int opset, const std::string& name,
                         std::vector<Value*> inputs, std::vector<Value*> outputs) {
  Node* n = g.AddNode(op, g.UniqueName(name), std::move(inputs), std::move(outputs));
  n->opset = opset;
  return n;
}

}  // namespace oc::fusion

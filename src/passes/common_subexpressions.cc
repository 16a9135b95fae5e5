// common-subexpressions: a node computing the same op, at the same opset, on
// the same input values with the same attributes as an earlier node is
// removed and its outputs read from the earlier one. Gradient rules recompute
// what the forward already has (MaxPool's rule runs the pool again for its
// Indices; several rules transpose the same weight), so backward graphs carry
// such duplicates. Only pure ops merge: no random op, no Dropout, nothing with
// a subgraph, nothing the registry marks unfoldable (stateful). A MaxPool that
// also asks for Indices merges into an earlier one without them, which then
// produces both (its first output is the same either way).
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

// The attributes as a comparable string; false for kinds never compared (tensors, graphs).
bool AttrKey(const Node& n, std::string& key) {
  for (const auto& [name, a] : n.attrs) {
    key += name;
    key += '=';
    switch (a.kind) {
      case Attribute::Kind::kInt: key += std::to_string(a.i); break;
      case Attribute::Kind::kFloat: key += std::to_string(a.f); break;
      case Attribute::Kind::kString: key += '"' + a.s + '"'; break;
      case Attribute::Kind::kInts:
        for (int64_t v : a.ints) key += std::to_string(v) + ',';
        break;
      case Attribute::Kind::kFloats:
        for (float v : a.floats) key += std::to_string(v) + ',';
        break;
      case Attribute::Kind::kStrings:
        for (const std::string& v : a.strings) key += '"' + v + "\",";
        break;
      default: return false;
    }
    key += ';';
  }
  return true;
}

bool Mergeable(const Node& n) {
  if (n.op_type == "Dropout" || n.op_type.rfind("Random", 0) == 0 || n.op_type == "Multinomial" ||
      n.op_type == "Bernoulli" || !n.Subgraphs().empty())
    return false;
  const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, n.opset);
  return def != nullptr && def->foldable;
}

}  // namespace

Status RunCommonSubexpressions(Graph& graph, const CompileOptions& options) {
  // (domain, op, opset, input ids, attributes) -> the first node computing it
  std::map<std::tuple<std::string, std::string, int, std::vector<int>, std::string>, Node*> seen;
  std::vector<Node*> order;
  for (auto& up : graph.nodes()) order.push_back(up.get());
  std::vector<Node*> removed;
  for (Node* n : order) {
    if (!Mergeable(*n)) continue;
    std::string attrs;
    if (!AttrKey(*n, attrs)) continue;
    std::vector<int> ins;
    for (const Value* v : n->inputs) ins.push_back(v ? v->id : -1);
    auto key = std::make_tuple(n->domain, n->op_type, n->opset, ins, attrs);
    auto [it, fresh] = seen.emplace(key, n);
    if (fresh) continue;
    Node* first = it->second;
    const bool pool_indices = n->op_type == "MaxPool" && n->domain.empty() && first->outputs.size() == 1 &&
                              n->outputs.size() == 2;
    if (first->outputs.size() != n->outputs.size() && !pool_indices) continue;
    bool ok = true;
    for (size_t i = 0; i < first->outputs.size() && ok; ++i)
      ok = (first->outputs[i] == nullptr) == (n->outputs[i] == nullptr);
    if (!ok) continue;
    if (pool_indices) {  // the first pool takes over the Indices output
      Value* idx = n->outputs[1];
      n->outputs[1] = nullptr;
      first->outputs.push_back(idx);
      if (idx) idx->producer = first;
    }
    for (size_t i = 0; i < first->outputs.size() && i < n->outputs.size(); ++i) {
      Value* dup = n->outputs[i];
      if (!dup) continue;
      if (graph.IsGraphOutput(dup) && graph.IsGraphOutput(first->outputs[i])) {
        ok = false;  // both are outputs by name: keep the node
        break;
      }
      graph.ReplaceAllUsesWith(dup, first->outputs[i]);
    }
    if (ok) removed.push_back(n);
  }
  for (Node* n : removed) graph.RemoveNode(n);
  (void)options;
  return Status::Ok();
}

}  // namespace oc

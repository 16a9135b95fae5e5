// dead-code-elimination: a node is live when one of its outputs is a graph output
// or is read by a live node. One backward walk over the topological order finds
// them all; then Compact drops values nothing refers to any more (folded-away
// initializers, fused intermediates).
#include <unordered_set>
#include <vector>

#include "passes/passes.h"

namespace oc {

Status RunDeadCodeElimination(Graph& graph, const CompileOptions& options) {
  std::unordered_set<const Value*> needed(graph.outputs.begin(), graph.outputs.end());
  std::vector<Node*> dead;
  const auto& nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node& node = **it;
    bool live = false;
    for (const Value* out : node.outputs) live |= out && needed.count(out);
    if (!live) {
      dead.push_back(&node);
      continue;
    }
    for (const Value* in : node.inputs)
      if (in) needed.insert(in);
  }
  for (Node* node : dead) graph.RemoveNode(node);
  graph.Compact();
  return Status::Ok();
}

}  // namespace oc

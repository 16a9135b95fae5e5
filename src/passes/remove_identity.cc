// remove-identity: Identity and inference-mode Dropout copy their input; the
// copy is removed by rewiring consumers. When the copy's output is a graph
// output we keep the output's name by moving it onto the producer instead, and
// keep the node only where that is impossible (the input is a graph input, a
// constant or another graph output, each of which must stay as it is).
#include <vector>

#include "passes/passes.h"

namespace oc {
namespace {

// Dropout is a copy unless it is asked to train, or its mask is read.
bool IsRemovableCopy(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || !node.input(0) || !node.output(0)) return false;
  if (node.op_type == "Identity") return true;
  if (node.op_type != "Dropout") return false;
  if (const Value* training = node.input(2)) {
    if (!training->constant) return false;
    const TensorData& t = *training->constant;
    for (size_t i = 0; i < t.size(); ++i)
      if (t.data()[i]) return false;
  }
  if (const Value* mask = node.output(1)) {
    if (graph.IsGraphOutput(mask) || !graph.Consumers(mask).empty()) return false;
  }
  return true;
}

}  // namespace

Status RunRemoveIdentity(Graph& graph, const CompileOptions& options) {
  std::vector<Node*> candidates;
  for (auto& up : graph.nodes())
    if (IsRemovableCopy(graph, *up)) candidates.push_back(up.get());
  for (Node* node : candidates) {
    Value* in = node->input(0);
    Value* out = node->output(0);
    if (!graph.IsGraphOutput(out)) {
      graph.ReplaceAllUsesWith(out, in);
      graph.RemoveNode(node);
      continue;
    }
    Node* producer = in->producer;
    if (!producer || in->constant || graph.IsGraphInput(in) || graph.IsGraphOutput(in)) continue;
    // The producer writes the graph output directly; other readers of `in`
    // read `out` instead (same data, same shape).
    graph.RemoveNode(node);
    graph.ReplaceAllUsesWith(in, out);
    for (Value*& o : producer->outputs)
      if (o == in) o = out;
    out->producer = producer;
    in->producer = nullptr;
  }
  return Status::Ok();
}

}  // namespace oc

// constant-folding: nodes whose inputs are all constant become constants.
// shape-inference already evaluated the small ones; this pass evaluates what is
// left (weight transforms such as Transpose of an initializer) and removes every
// node whose outputs are now all constant, so no kernel ever writes into
// constant memory at run time.
#include <vector>

#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

// Folding trades .om size for run time and per-context memory: an unfolded
// constant subgraph is recomputed on every run into every context's arena, and
// hides weights from the fusion passes. So large outputs are folded too
// (weights built by ConstantOfShape reach 400 MB in VGG-style test models); the
// cap only keeps compile-time memory sane.
constexpr int64_t kMaxFoldBytes = 2ll << 30;

bool WorthFolding(const Node& node) {
  int64_t out_bytes = 0;
  for (const Value* v : node.outputs) {
    if (!v) continue;
    if (!v->IsStatic() || DataTypeBits(v->dtype) == 0) return false;
    out_bytes += v->ByteSize();
  }
  return out_bytes <= kMaxFoldBytes;
}

bool AllOutputsConstant(const Node& node) {
  bool any = false;
  for (const Value* v : node.outputs) {
    if (!v) continue;
    if (!v->constant) return false;
    any = true;
  }
  return any;
}

}  // namespace

Status RunConstantFolding(Graph& graph, const CompileOptions& options) {
  const OpRegistry& registry = OpRegistry::Global();
  std::vector<Node*> folded;
  for (auto& up : graph.nodes()) {
    Node& node = *up;
    if (!AllOutputsConstant(node)) {
      // With folding off, only what shape-inference already evaluated is removed.
      if (!options.fold_constants || !AllInputsConstant(node)) continue;
      const OpDef* def = registry.Find(node.domain, node.op_type, node.opset);
      if (!def || !def->foldable || !CpuKernelOf(*def) || !WorthFolding(node)) continue;
      OC_RETURN_IF_ERROR(EvaluateIntoConstants(node));
    }
    folded.push_back(&node);
  }
  for (Node* node : folded) graph.RemoveNode(node);
  return Status::Ok();
}

}  // namespace oc

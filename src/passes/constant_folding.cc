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

// A fold that multiplies the data (Expand, Tile, ConstantOfShape of a big shape)
// would bloat the .om with bytes that are cheap to compute at run time; folds
// that do not grow the data (weight transposes, casts, reshapes) always pay.
constexpr int64_t kMaxGrowingFoldBytes = 64ll << 20;

bool WorthFolding(const Node& node) {
  int64_t in_bytes = 0, out_bytes = 0;
  for (const Value* v : node.inputs)
    if (v && v->constant) in_bytes += static_cast<int64_t>(v->constant->size());
  for (const Value* v : node.outputs) {
    if (!v) continue;
    if (!v->IsStatic() || DataTypeSize(v->dtype) == 0) return false;
    out_bytes += v->ByteSize();
  }
  return out_bytes <= kMaxGrowingFoldBytes || out_bytes <= in_bytes;
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
      if (!def || !def->foldable || !def->cpu || !WorthFolding(node)) continue;
      OC_RETURN_IF_ERROR(EvaluateIntoConstants(node));
    }
    folded.push_back(&node);
  }
  for (Node* node : folded) graph.RemoveNode(node);
  return Status::Ok();
}

}  // namespace oc

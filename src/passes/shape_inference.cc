// shape-inference: one sweep in topological order that runs each op's infer
// function and, where a node's inputs are all constant, evaluates it on the spot.
// Evaluating during the sweep (rather than in a later pass) is what lets
// Shape -> Gather -> Concat -> Reshape chains resolve: the Reshape's target shape
// is a constant by the time its infer function runs.
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

// Folding during the sweep only serves shape resolution; large tensors are left
// to the constant-folding pass, which has its own size rule.
constexpr int64_t kMaxSweepFoldBytes = 64ll << 20;

Status CheckGraphInputs(const Graph& graph) {
  for (const Value* v : graph.inputs) {
    if (v->dtype == DataType::kUndefined)
      return InvalidArgument("graph input '", v->name, "' has no element type");
    if (!IsKnownDataType(static_cast<int32_t>(v->dtype)))
      return NotSupported("graph input '", v->name, "' has element type ", DataTypeName(v->dtype),
                          ", which is not supported");
    if (!v->IsStatic())
      return NotSupported("graph input '", v->name, "' has shape ", v->ShapeString(),
                          ": dynamic shapes are not supported yet; pass --input_shape");
  }
  return Status::Ok();
}

bool ShouldFoldDuringSweep(const Node& node, const OpDef& def) {
  if (!def.foldable || !def.cpu || !AllInputsConstant(node)) return false;
  if (NeedsTypeLegalization(node, def)) return false;  // evaluated after legalize-types
  int64_t bytes = 0;
  bool any_output = false;
  bool all_constant = true;
  for (const Value* out : node.outputs) {
    if (!out) continue;
    any_output = true;
    if (!out->IsStatic() || DataTypeBits(out->dtype) == 0) return false;
    all_constant &= out->IsConstant();
    bytes += out->ByteSize();
  }
  // Outputs already set by the infer function itself (Shape, Size) need no kernel.
  return any_output && !all_constant && bytes <= kMaxSweepFoldBytes;
}

Status CheckAllStatic(const Graph& graph) {
  for (auto& node : graph.nodes()) {
    for (const Value* out : node->outputs) {
      if (!out) continue;
      if (!out->IsStatic())
        return NotSupported("value '", out->name, "' produced by ", node->Describe(), " has shape ",
                            out->ShapeString(),
                            ": dynamic shapes are not supported yet; pass --input_shape");
      if (out->dtype == DataType::kUndefined)
        return Internal("value '", out->name, "' produced by ", node->Describe(),
                        " has no element type after shape inference");
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunShapeInference(Graph& graph, const CompileOptions& options) {
  OC_RETURN_IF_ERROR(CheckGraphInputs(graph));
  const OpRegistry& registry = OpRegistry::Global();
  for (auto& up : graph.nodes()) {
    Node& node = *up;
    const OpDef* def = registry.Find(node.domain, node.op_type, node.opset);
    if (!def) {
      if (registry.FindAnyVersion(node.domain, node.op_type))
        return NotSupported(node.Describe(), ": op ", node.op_type, " is not supported at opset ",
                            node.opset);
      return NotSupported(node.Describe(), ": op ", node.op_type, " is not supported");
    }
    if (!def->infer)
      return Internal(node.Describe(), ": op has no shape-inference function");
    OC_RETURN_IF_ERROR(def->infer(node));
    if (ShouldFoldDuringSweep(node, *def)) OC_RETURN_IF_ERROR(EvaluateIntoConstants(node));
  }
  return CheckAllStatic(graph);
}

}  // namespace oc

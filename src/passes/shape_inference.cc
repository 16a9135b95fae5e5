// shape-inference: one sweep in topological order that runs each op's infer
// function and, where a node's inputs are all constant, evaluates it on the spot.
// Evaluating during the sweep (rather than in a later pass) is what lets
// Shape -> Gather -> Concat -> Reshape chains resolve: the Reshape's target shape
// is a constant by the time its infer function runs.
//
// Dynamic mode (CompileOptions::allow_dynamic): graph inputs may have unknown
// dims. A node that reads a non-static value gets its outputs' dtypes from its
// infer function but every output dim set to unknown (its rank kept when the
// function gave one), and if the function fails the outputs stay of unknown
// rank. Infer functions compute dims with arithmetic that does not expect -1
// (a Conv over an unknown height of -1 can come out as a plausible positive
// size), so their dims are not trusted downstream of an unknown one; the graph
// is inferred again, exactly, once the input shapes are known (runtime/
// shape_specializer.h).
//
// What the compiled model reports (aclmdlGetOutputDims, atc --mode=6) is then
// refined by probing: the graph is inferred again, on clones, with every
// unknown input dim set to 1, 3, 1009 and then 2003; a dim that comes out the
// same in all four is taken as fixed, one that follows the probe value is
// given the inputs' dim name when they share one. The refined dims are only
// information: values downstream of an unknown dim never become constants at
// compile time, so a dim that merely happens to agree across the probes (a
// slice clamped to a bound below 1) cannot be folded into the graph.
#include <iterator>

#include "graph/graph_clone.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

// Folding during the sweep only serves shape resolution; large tensors are left
// to the constant-folding pass, which has its own size rule.
constexpr int64_t kMaxSweepFoldBytes = 64ll << 20;

Status CheckGraphInputs(const Graph& graph, bool allow_dynamic) {
  for (const Value* v : graph.inputs) {
    if (v->dtype == DataType::kUndefined)
      return InvalidArgument("graph input '", v->name, "' has no element type");
    if (!IsKnownDataType(static_cast<int32_t>(v->dtype)))
      return NotSupported("graph input '", v->name, "' has element type ", DataTypeName(v->dtype),
                          ", which is not supported");
    if (v->SizeOverflows())
      return InvalidArgument("graph input '", v->name, "' has shape ", v->ShapeString(),
                             ": more elements or bytes than 64 bits can count");
    if (allow_dynamic && v->has_shape) continue;
    if (!v->IsStatic())
      return NotSupported("graph input '", v->name, "' has shape ", v->ShapeString(),
                          allow_dynamic ? ": an input of unknown rank is not supported; pass --input_shape"
                                        : ": dynamic shapes are not supported yet; pass --input_shape");
  }
  return Status::Ok();
}

bool ShouldFoldDuringSweep(const Node& node, const OpDef& def) {
  if (!def.foldable || !CpuKernelOf(def) || !AllInputsConstant(node)) return false;
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

bool ReadsNonStatic(const Node& node) {
  for (const Value* in : node.inputs)
    if (in && !in->IsStatic()) return true;
  return false;
}

// Dynamic mode, for a node reading a non-static value: keep the dtypes (and the
// ranks) the infer function found, forget its dims and any constant it set.
void ForgetDims(Node& node, bool inferred) {
  for (Value* out : node.outputs) {
    if (!out) continue;
    out->constant.reset();
    if (!inferred) {
      out->has_shape = false;
      out->shape.clear();
      out->dim_params.clear();
      continue;
    }
    for (int64_t& d : out->shape) d = -1;
    out->dim_params.assign(out->shape.size(), "");
  }
}

constexpr int64_t kProbes[] = {1, 3, 1009, 2003};

void RefineDimsByProbing(Graph& graph) {
  // Subgraph bodies are shared between clones; leave such graphs as they are.
  if (graph.HasSubgraphs() || graph.HasNonTensorValues()) return;
  std::string symbol;  // the one name of the unknown input dims, if they share one
  bool one_symbol = true;
  for (const Value* in : graph.inputs)
    for (size_t d = 0; d < in->shape.size(); ++d) {
      if (in->shape[d] >= 0) continue;
      const std::string name = d < in->dim_params.size() ? in->dim_params[d] : "";
      if (name.empty() || (!symbol.empty() && name != symbol)) one_symbol = false;
      symbol = name;
    }
  if (!one_symbol) symbol.clear();
  // Element counts of the largest probe stay far below int64's range, so that
  // infer functions multiplying dims cannot overflow (UBSan: a 7-D input at
  // 1009 or 2003 per dim overflowed Value::NumElements in Reshape's inference);
  // inputs that would exceed it are not probed.
  constexpr int64_t kMaxProbeElements = int64_t{1} << 40;
  for (const Value* in : graph.inputs) {
    int64_t n = 1;
    for (int64_t d : in->shape)
      if (__builtin_mul_overflow(n, d < 0 ? kProbes[std::size(kProbes) - 1] : d, &n) || n > kMaxProbeElements)
        return;
  }
  std::vector<std::unique_ptr<Graph>> probes;
  for (int64_t p : kProbes) {
    std::unique_ptr<Graph> c = CloneGraph(graph);
    for (Value* in : c->inputs)
      for (int64_t& d : in->shape)
        if (d < 0) d = p;
    // A probe the model cannot take (a squeezed batch of 1, a kernel larger
    // than the image) leaves the dims unknown.
    if (!RunShapeInference(*c, CompileOptions{}).ok()) return;
    probes.push_back(std::move(c));
  }
  for (auto& up : graph.values()) {
    Value& v = *up;
    if (!v.producer || v.constant || v.IsStatic() || v.kind != ValueKind::kTensor) continue;
    const Value& first = *probes[0]->values()[static_cast<size_t>(v.id)];
    if (!first.has_shape || (v.has_shape && v.shape.size() != first.shape.size())) continue;
    bool usable = true;
    for (auto& pg : probes) {
      const Value& pv = *pg->values()[static_cast<size_t>(v.id)];
      usable &= pv.has_shape && pv.shape.size() == first.shape.size() && pv.dtype == first.dtype;
    }
    if (!usable) continue;
    std::vector<int64_t> dims(first.shape.size());
    std::vector<std::string> names(first.shape.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      bool same = true, follows = true;
      for (size_t k = 0; k < probes.size(); ++k) {
        const int64_t got = probes[k]->values()[static_cast<size_t>(v.id)]->shape[d];
        same &= got == first.shape[d];
        follows &= got == kProbes[k];
      }
      dims[d] = same ? first.shape[d] : -1;
      if (!same && follows) names[d] = symbol;
    }
    if (v.dtype == DataType::kUndefined) v.dtype = first.dtype;
    v.has_shape = true;
    v.shape = std::move(dims);
    v.dim_params = std::move(names);
  }
}

}  // namespace

Status RunShapeInference(Graph& graph, const CompileOptions& options) {
  OC_RETURN_IF_ERROR(CheckGraphInputs(graph, options.allow_dynamic));
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
    if (options.allow_dynamic && ReadsNonStatic(node)) {
      // Inputs of unknown rank would make some infer functions index past the
      // end of a shape: do not call them.
      bool ranked = true;
      // (A sequence or optional has no rank of its own; the ops that take them
      // read only their kind and element type.)
      for (const Value* in : node.inputs) ranked &= !in || in->has_shape || in->kind != ValueKind::kTensor;
      const bool inferred = ranked && def->infer(node).ok();
      if (inferred) OC_RETURN_IF_ERROR(CheckOutputSizes(node));
      ForgetDims(node, inferred);
      continue;
    }
    Status inferred = def->infer(node);
    if (!inferred.ok() && options.allow_dynamic && !AllInputsConstant(node)) {
      // A static input whose data is only known at run time (a shape computed
      // from an input's Shape, say) can make the output's shape unknowable here.
      ForgetDims(node, false);
      continue;
    }
    OC_RETURN_IF_ERROR(inferred);
    OC_RETURN_IF_ERROR(CheckOutputSizes(node));
    if (ShouldFoldDuringSweep(node, *def)) OC_RETURN_IF_ERROR(EvaluateIntoConstants(node));
  }
  if (options.allow_dynamic) {
    bool unknown_inputs = false;
    for (const Value* in : graph.inputs) unknown_inputs |= !in->IsStatic();
    if (unknown_inputs) RefineDimsByProbing(graph);
    return Status::Ok();
  }
  return CheckAllStatic(graph);
}

}  // namespace oc

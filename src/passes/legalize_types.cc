// legalize-types: runs nodes whose CPU kernel has no float16 / bfloat16 path in
// float32 between Casts, as onnxruntime's InsertCastTransformer does for its CPU
// provider.
//
// Decision: a kernel states what it computes natively in OpDef::native_types;
// by default float16 and bfloat16 are not in it. For a node with such a half
// input or output, each half input gets a Cast to float32 in front, each half
// output becomes a float32 value followed by a Cast back to the original type
// (round to nearest even, the rounding the reference applies after computing
// in float32 too). The rewrite is kept only when the op's own type inference,
// re-run on the float32 inputs, gives float32 for exactly those outputs; ops
// whose output type comes from an attribute (ConstantOfShape, EyeLike, random
// generators) therefore stay as they are, and their factories report the type.
// float64 is never rewritten: kernels compute double natively or refuse it, so
// nothing is silently computed in lower precision.
//
// Runs after shape-inference (dtypes are known; the sweep there does not fold
// nodes this pass will rewrite) and before constant-folding, which folds the
// Casts of constant inputs and the nodes behind them.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

// Rewires `node` onto float32; false (node unchanged) when its inference does
// not confirm float32 outputs. `f32_of` holds the float32 copies made so far
// (one Cast per half value, however many nodes read it).
Expected<bool> Legalize(Graph& graph, Node& node, const OpDef& def, std::map<Value*, Value*>& f32_of) {
  const std::vector<Value*> old_inputs = node.inputs, old_outputs = node.outputs;
  std::map<Value*, Value*> cast_of;  // half input -> its new float32 copy
  for (Value*& in : node.inputs) {
    if (!in || !IsHalf(in->dtype) || KernelTakesType(def, in->dtype)) continue;
    if (auto it = f32_of.find(in); it != f32_of.end()) {
      in = it->second;
      continue;
    }
    Value*& f = cast_of[in];
    if (!f) f = NewValueLike(graph, *in, in->name + "_f32", DataType::kFloat32);
    in = f;
  }
  std::vector<size_t> moved;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Value* out = node.outputs[i];
    if (!out || !IsHalf(out->dtype) || KernelTakesType(def, out->dtype)) continue;
    node.outputs[i] = NewValueLike(graph, *out, out->name + "_f32", DataType::kFloat32);
    moved.push_back(i);
  }
  // Outputs that stay (non-half) are re-inferred in place: keep what they were,
  // since shape-inference may have deliberately left dims unknown (dynamic mode).
  struct Saved { DataType dtype; bool has_shape; std::vector<int64_t> shape; std::vector<std::string> dims; };
  std::vector<Saved> saved;
  for (Value* out : old_outputs)
    saved.push_back(out ? Saved{out->dtype, out->has_shape, out->shape, out->dim_params} : Saved{});
  // Only the types decide: an infer function computing shapes from unknown dims
  // is not trusted here, the shapes are the ones shape-inference gave.
  const bool inferred = def.infer(node).ok();
  bool ok = inferred;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Value* out = node.outputs[i];
    if (!out) continue;
    const bool was_moved = std::find(moved.begin(), moved.end(), i) != moved.end();
    ok = ok && out->dtype == (was_moved ? DataType::kFloat32 : saved[i].dtype);
    out->dtype = was_moved ? DataType::kFloat32 : saved[i].dtype;
    out->has_shape = saved[i].has_shape;
    out->shape = saved[i].shape;
    out->dim_params = saved[i].dims;
  }
  if (!ok) {
    // Restore the node; the new values are unreferenced and Compact drops them.
    node.inputs = old_inputs;
    node.outputs = old_outputs;
    return false;
  }
  for (auto& [half, f32] : cast_of) {
    AddCast(graph, half, f32, DataType::kFloat32, node.name + "_to_f32");
    f32_of[half] = f32;
  }
  for (size_t i : moved) {
    Value* f32 = node.outputs[i];
    f32->producer = &node;
    f32->constant.reset();
    Value* orig = old_outputs[i];
    orig->producer = nullptr;
    AddCast(graph, f32, orig, orig->dtype, node.name + "_from_f32");
  }
  return true;
}

}  // namespace

int CastOpset(const Graph& graph) {
  auto it = graph.opset_imports.find("");
  return it == graph.opset_imports.end() ? 21 : std::max(it->second, 6);
}

Value* NewValueLike(Graph& graph, const Value& like, const std::string& prefix, DataType dtype) {
  Value* v = graph.AddValue(graph.UniqueName(prefix));
  v->dtype = dtype;
  v->has_shape = like.has_shape;
  v->shape = like.shape;
  v->dim_params = like.dim_params;
  return v;
}

Node* AddCast(Graph& graph, Value* in, Value* out, DataType to, const std::string& name) {
  Node* cast = graph.AddNode("Cast", graph.UniqueName(name), {in}, {out});
  cast->opset = CastOpset(graph);
  cast->SetInt("to", static_cast<int64_t>(to));
  return cast;
}

bool NeedsTypeLegalization(const Node& node, const OpDef& def) {
  for (const auto* list : {&node.inputs, &node.outputs})
    for (const Value* v : *list)
      if (v && !KernelTakesType(def, v->dtype)) return true;
  return false;
}

Status RunLegalizeTypes(Graph& graph, const CompileOptions& options) {
  const OpRegistry& registry = OpRegistry::Global();
  std::vector<Node*> todo;
  for (auto& up : graph.nodes()) {
    const OpDef* def = registry.Find(up->domain, up->op_type, up->opset);
    // Nodes already folded by shape-inference need no kernel.
    bool all_constant = true;
    for (const Value* o : up->outputs) all_constant &= !o || o->IsConstant();
    if (def && def->infer && !all_constant && NeedsTypeLegalization(*up, *def)) todo.push_back(up.get());
  }
  if (todo.empty()) return Status::Ok();
  bool changed = false;
  std::map<Value*, Value*> f32_of;
  for (Node* node : todo) {
    const OpDef* def = registry.Find(node->domain, node->op_type, node->opset);
    OC_ASSIGN_OR_RETURN(bool done, Legalize(graph, *node, *def, f32_of));
    changed |= done;
  }
  if (changed) OC_RETURN_IF_ERROR(graph.TopologicalSort());
  return Status::Ok();
}

}  // namespace oc

// inline-constant-if: an If whose condition is known at compile time is
// replaced by the nodes of the branch it takes. Exported models often branch
// on shapes (an If on `Shape(x)[1] == 1`), which shape inference resolves; once
// inlined, the branch's nodes are shape-inferred, folded and fused with the
// rest of the graph, and a model that looked dynamic becomes static.
//
// Conditions often become constant only during the shape-inference sweep (a
// Shape -> Gather -> Equal chain), so this pass runs that sweep itself, in its
// dynamic mode (which never fails on unknown dims), inlines what became
// constant, and repeats until no If is left to inline. The regular
// shape-inference pass runs next with the caller's options. Graphs without an
// If at the top level are left untouched.
#include <map>
#include <unordered_map>

#include "passes/passes.h"

namespace oc {
namespace {

bool IsIf(const Node& n) { return n.domain.empty() && n.op_type == "If"; }

// The If's condition when it is a constant one-element bool, else nullopt.
std::optional<bool> ConstantCondition(const Node& n) {
  const Value* c = n.input(0);
  if (!c || !c->constant || c->dtype != DataType::kBool || c->constant->size() != 1) return std::nullopt;
  return c->constant->data()[0] != 0;
}

Status Inline(Graph& graph, Node* node, bool take_then) {
  const char* attr = take_then ? "then_branch" : "else_branch";
  const Attribute* a = node->FindAttr(attr);
  if (!a || a->kind != Attribute::Kind::kGraph || !a->graph)
    return InvalidArgument(node->Describe(), ": attribute '", attr, "' is missing");
  const std::shared_ptr<Graph> branch = a->graph;  // keeps it alive past RemoveNode
  if (branch->outputs.size() != node->outputs.size())
    return InvalidArgument(node->Describe(), ": ", attr, " has ", branch->outputs.size(), " outputs, the node ",
                           node->outputs.size());
  // Captures are bound to the trailing inputs (graph.h): find this branch's slice.
  const size_t offset = node->CaptureOffset(attr);
  std::unordered_map<const Value*, Value*> map;
  for (size_t k = 0; k < branch->captures.size(); ++k) map[branch->captures[k]] = node->input(offset + k);
  for (const auto& v : branch->values())
    if (v->constant && !map.count(v.get()))
      map[v.get()] = graph.AddConstant(graph.UniqueName(node->name + "/" + v->name), v->dtype, v->shape,
                                       *v->constant);
  // Branch outputs produced inside the branch become the If's own outputs.
  std::vector<Value*> outs = node->outputs;
  std::vector<bool> bound(outs.size(), false);
  for (size_t k = 0; k < outs.size(); ++k) {
    const Value* bo = branch->outputs[k];
    if (outs[k] && bo->producer && !map.count(bo)) {
      map[bo] = outs[k];
      bound[k] = true;
    }
  }
  const std::string prefix = node->name;
  graph.RemoveNode(node);
  for (const auto& up : branch->nodes()) {
    const Node& bn = *up;
    std::vector<Value*> ins, os;
    for (const Value* v : bn.inputs) {
      if (!v) { ins.push_back(nullptr); continue; }
      auto it = map.find(v);
      if (it == map.end()) return Internal("inline ", prefix, ": branch value '", v->name, "' is not bound");
      ins.push_back(it->second);
    }
    for (const Value* v : bn.outputs) {
      if (!v) { os.push_back(nullptr); continue; }
      auto it = map.find(v);
      Value* nv = it != map.end() ? it->second : nullptr;
      if (!nv) {
        nv = graph.AddValue(graph.UniqueName(prefix + "/" + v->name));
        nv->kind = v->kind;
        nv->dtype = v->dtype;
        nv->has_shape = v->has_shape;
        nv->shape = v->shape;
        nv->dim_params = v->dim_params;
        map[v] = nv;
      }
      os.push_back(nv);
    }
    Node* n = graph.AddNode(bn.op_type, graph.UniqueName(prefix + "/" + bn.name), std::move(ins), std::move(os),
                            bn.domain);
    n->opset = bn.opset;
    n->attrs = bn.attrs;
  }
  // Outputs that are branch inputs, captures, constants or repeats: copied.
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k] || bound[k]) continue;
    auto it = map.find(branch->outputs[k]);
    if (it == map.end()) return Internal("inline ", prefix, ": branch output ", k, " is not bound");
    Node* n = graph.AddNode("Identity", graph.UniqueName(prefix + "/output"), {it->second}, {outs[k]});
    auto op = graph.opset_imports.find("");
    n->opset = op == graph.opset_imports.end() ? 13 : op->second;
  }
  return graph.TopologicalSort();
}

bool HasTopLevelIf(const Graph& graph) {
  for (const auto& n : graph.nodes())
    if (IsIf(*n)) return true;
  return false;
}

}  // namespace

Status RunInlineConstantIf(Graph& graph, const CompileOptions& options) {
  // Each round inlines at least one If, and inlined branches add Ifs only as
  // deep as the model nests them: the bound is a guard against a bug, not a limit.
  for (int round = 0; round < 1000 && HasTopLevelIf(graph); ++round) {
    CompileOptions sweep = options;
    sweep.allow_dynamic = true;
    if (!RunShapeInference(graph, sweep).ok()) return Status::Ok();  // the real pass reports it
    std::vector<std::pair<Node*, bool>> todo;
    for (const auto& n : graph.nodes())
      if (IsIf(*n))
        if (auto c = ConstantCondition(*n)) todo.emplace_back(n.get(), *c);
    if (todo.empty()) return Status::Ok();
    for (auto [node, take_then] : todo) OC_RETURN_IF_ERROR(Inline(graph, node, take_then));
    graph.Compact();
  }
  return Status::Ok();
}

}  // namespace oc

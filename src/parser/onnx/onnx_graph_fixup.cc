#include "parser/onnx/onnx_graph_fixup.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <set>
#include <unordered_set>

#include "ops/custom_op.h"
#include "ops/op_registry.h"

namespace oc::onnx_parser {
namespace {

std::string InputNames(const Graph& graph) {
  std::string s;
  for (const Value* v : graph.inputs) {
    if (!s.empty()) s += ", ";
    s += v->name;
  }
  return s.empty() ? "(none)" : s;
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s;
}

// "node:index" (a node's output) first, then a plain tensor name.
Expected<Value*> ResolveOutNode(const Graph& graph, const std::string& spec) {
  size_t colon = spec.rfind(':');
  if (colon != std::string::npos && colon + 1 < spec.size()) {
    std::string node_name = spec.substr(0, colon);
    std::string index = spec.substr(colon + 1);
    bool digits = index.size() <= 9 && index.find_first_not_of("0123456789") == std::string::npos;
    if (digits) {
      for (const auto& n : graph.nodes()) {
        if (n->name != node_name) continue;
        size_t i = std::stoul(index);
        if (i >= n->outputs.size() || !n->outputs[i])
          return InvalidArgument("--out_nodes '", spec, "': ", n->Describe(), " has ", n->outputs.size(),
                                 " outputs, no output ", i);
        return n->outputs[i];
      }
    }
  }
  if (Value* v = graph.FindValue(spec)) return v;
  return InvalidArgument("--out_nodes '", spec,
                         "' is neither an existing 'node_name:output_index' nor a tensor name in the model");
}

// Removes nodes that feed no graph output (dead branches, or everything past
// the --out_nodes cut), so they are neither checked nor compiled.
void PruneDeadNodes(Graph& graph) {
  std::unordered_set<const Value*> needed(graph.outputs.begin(), graph.outputs.end());
  std::vector<Node*> dead;
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend(); ++it) {
    Node* n = it->get();
    bool live = false;
    for (Value* o : n->outputs) live = live || (o && needed.count(o));
    if (!live) { dead.push_back(n); continue; }
    for (Value* in : n->inputs) if (in) needed.insert(in);
  }
  if (dead.empty()) return;
  for (Node* n : dead) graph.RemoveNode(n);
  graph.Compact();
}

// Every (node, owning graph) pair, subgraphs included, outer nodes first.
// keep_alive holds a reference to every subgraph visited: a canonicalize hook
// may drop its node's graph attributes (FlexAttention inlines score_mod and
// prob_mod), which would free nodes still in the snapshot.
void CollectNodes(Graph& graph, std::vector<std::pair<Node*, Graph*>>& out,
                  std::vector<std::shared_ptr<Graph>>& keep_alive) {
  for (const auto& n : graph.nodes()) {
    out.emplace_back(n.get(), &graph);
    for (auto& [name, a] : n->attrs) {
      if (a.kind == Attribute::Kind::kGraph && a.graph) {
        keep_alive.push_back(a.graph);
        CollectNodes(*a.graph, out, keep_alive);
      }
      if (a.kind == Attribute::Kind::kGraphs)
        for (auto& g : a.graphs)
          if (g) {
            keep_alive.push_back(g);
            CollectNodes(*g, out, keep_alive);
          }
    }
  }
}

// Subgraphs are ordered like the main graph (file order need not be topological).
Status SortSubgraphs(Graph& graph) {
  for (const auto& n : graph.nodes()) {
    for (auto& [name, a] : n->attrs) {
      std::vector<Graph*> gs;
      if (a.kind == Attribute::Kind::kGraph && a.graph) gs.push_back(a.graph.get());
      if (a.kind == Attribute::Kind::kGraphs) for (auto& g : a.graphs) if (g) gs.push_back(g.get());
      for (Graph* g : gs) {
        OC_RETURN_IF_ERROR(g->TopologicalSort().WithContext(StrCat(n->Describe(), " attribute '", name, "'")));
        OC_RETURN_IF_ERROR(SortSubgraphs(*g));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status ApplyInputShapes(Graph& graph, const OnnxParseOptions& options) {
  for (const auto& [name, dims] : options.input_shapes) {
    Value* v = nullptr;
    for (Value* in : graph.inputs) if (in->name == name) v = in;
    if (!v)
      return InvalidArgument("--input_shape names '", name, "', which is not an input of the model; its inputs are: ",
                             InputNames(graph));
    if (v->has_shape && v->shape.size() != dims.size())
      return InvalidArgument("--input_shape for '", name, "' has rank ", dims.size(), " (", DimsString(dims),
                             ") but the model declares rank ", v->shape.size(), " ", v->ShapeString());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0)
        return InvalidArgument("--input_shape for '", name, "': dim ", i, " is ", dims[i],
                               "; every dim must be a fixed size >= 0");
      if (v->has_shape && v->shape[i] >= 0 && v->shape[i] != dims[i])
        return InvalidArgument("--input_shape for '", name, "': dim ", i, " is ", dims[i],
                               " but the model fixes it to ", v->shape[i], " ", v->ShapeString());
    }
    v->has_shape = true;
    v->shape = dims;
    v->dim_params.assign(dims.size(), "");
  }
  return Status::Ok();
}

Status ApplyOutNodes(Graph& graph, const OnnxParseOptions& options) {
  if (options.out_nodes.empty()) return Status::Ok();
  std::vector<Value*> outputs;
  for (const std::string& spec : options.out_nodes) {
    OC_ASSIGN_OR_RETURN(Value* v, ResolveOutNode(graph, spec));
    outputs.push_back(v);
  }
  graph.outputs = std::move(outputs);
  return Status::Ok();
}

Status CheckAndCanonicalize(Graph& graph) {
  struct Unsupported {
    std::string domain, op_type;
    int opset;
    std::vector<std::string> nodes;
  };
  std::vector<Unsupported> missing;
  const OpRegistry& reg = OpRegistry::Global();
  // Canonicalize may add values or nodes: iterate over a snapshot.
  std::vector<std::pair<Node*, Graph*>> nodes;
  std::vector<std::shared_ptr<Graph>> keep_alive;
  CollectNodes(graph, nodes, keep_alive);
  // n is a copy: clang before 16 cannot capture a structured binding in a lambda (make fuzz uses clang-14).
  for (const auto& [node, owner] : nodes) {
    Node* n = node;
    const OpDef* def = reg.Find(n->domain, n->op_type, n->opset);
    // A type no built-in op has, defined by a loaded custom-operator package.
    if (!def && !reg.FindAnyVersion(n->domain, n->op_type))
      if (const CustomOpPackage* package = CustomOpPackageOf(n->op_type); package && IsCustomOpType(n->op_type)) {
        MakeAscendCustomNode(*n, *package);
        owner->opset_imports[kOpenCannDomain] = std::max(owner->opset_imports[kOpenCannDomain], 1);
        def = reg.Find(n->domain, n->op_type, n->opset);
      }
    if (!def) {
      auto it = std::find_if(missing.begin(), missing.end(), [&](const Unsupported& u) {
        return u.domain == n->domain && u.op_type == n->op_type && u.opset == n->opset;
      });
      if (it == missing.end()) it = missing.insert(missing.end(), {n->domain, n->op_type, n->opset, {}});
      it->nodes.push_back(n->name);
      continue;
    }
    if (def->canonicalize) OC_RETURN_IF_ERROR(def->canonicalize(*n, *owner));
  }
  if (missing.empty()) return Status::Ok();
  std::string msg = StrCat(missing.size(), " unsupported operator", missing.size() == 1 ? "" : "s", ": ");
  for (size_t i = 0; i < missing.size(); ++i) {
    const Unsupported& u = missing[i];
    msg += StrCat(i ? "; " : "", u.domain.empty() ? "ai.onnx" : u.domain, "::", u.op_type, "(opset ", u.opset, ")");
    if (const OpDef* any = reg.FindAnyVersion(u.domain, u.op_type)) {
      msg += StrCat(" [implemented for opset ", any->min_opset,
                    any->max_opset == INT_MAX ? std::string("+") : StrCat("-", any->max_opset), " only]");
    }
    msg += " nodes [";
    constexpr size_t kMaxNames = 8;
    for (size_t k = 0; k < u.nodes.size() && k < kMaxNames; ++k) {
      if (k) msg += ", ";
      msg += u.nodes[k];
    }
    if (u.nodes.size() > kMaxNames) msg += StrCat(", ... ", u.nodes.size() - kMaxNames, " more");
    msg += "]";
  }
  return NotSupported(msg);
}

Status FinishGraph(Graph& graph, const OnnxParseOptions& options) {
  OC_RETURN_IF_ERROR(ApplyInputShapes(graph, options));
  OC_RETURN_IF_ERROR(ApplyOutNodes(graph, options));
  OC_RETURN_IF_ERROR(graph.TopologicalSort().WithContext("the model's graph cannot be ordered"));
  PruneDeadNodes(graph);
  OC_RETURN_IF_ERROR(CheckAndCanonicalize(graph));
  OC_RETURN_IF_ERROR(graph.TopologicalSort());
  OC_RETURN_IF_ERROR(SortSubgraphs(graph));
  Status verify = graph.Verify();
  if (!verify.ok()) return InvalidFile("the model's graph is malformed: ", verify.message());
  return Status::Ok();
}

}  // namespace oc::onnx_parser

#include "graph/graph_clone.h"

#include <unordered_map>

namespace oc {

std::unique_ptr<Graph> CloneGraph(const Graph& src) {
  auto g = std::make_unique<Graph>();
  g->name = src.name;
  g->producer_name = src.producer_name;
  g->ir_version = src.ir_version;
  g->opset_imports = src.opset_imports;
  g->arena_size = src.arena_size;
  g->arena_size_no_reuse = src.arena_size_no_reuse;
  g->metadata = src.metadata;
  std::unordered_map<const Value*, Value*> map;
  map.reserve(src.values().size());
  for (const auto& v : src.values()) {
    Value* nv = g->AddValue(v->name);
    const int id = nv->id;
    *nv = *v;  // every field, including ones added to Value later
    nv->id = id;
    nv->producer = nullptr;
    map[v.get()] = nv;
  }
  auto remap = [&](const std::vector<Value*>& vs) {
    std::vector<Value*> out;
    out.reserve(vs.size());
    for (Value* v : vs) out.push_back(v ? map.at(v) : nullptr);
    return out;
  };
  for (const auto& n : src.nodes()) {
    Node* nn = g->AddNode(n->op_type, n->name, {}, {}, n->domain);
    *nn = *n;  // attributes, opset and any later fields
    nn->inputs = remap(n->inputs);
    nn->outputs = remap(n->outputs);
    for (Value* o : nn->outputs) if (o) o->producer = nn;
  }
  g->inputs = remap(src.inputs);
  g->outputs = remap(src.outputs);
  if constexpr (requires(Graph& x) { x.captures; }) g->captures = remap(src.captures);
  return g;
}

}  // namespace oc

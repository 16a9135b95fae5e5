#include "train/autodiff.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "ops/cpu/common/cast_util.h"
#include "ops/grad.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc::train {
namespace {

bool InGraph(const Graph& g, const Value* v) {
  for (const auto& p : g.values())
    if (p.get() == v) return true;
  return false;
}

// A constant of `like`'s shape and type filled with ones.
Value* OnesLike(Graph& g, const Value& like, const std::string& prefix) {
  const int64_t n = like.NumElements();
  const size_t elem = DataTypeSize(like.dtype);
  TensorData data = TensorData::Allocate(static_cast<size_t>(n) * elem);
  uint8_t* p = data.mutable_data();
  for (int64_t i = 0; i < n; ++i, p += elem) {
    switch (like.dtype) {
      case DataType::kFloat64: {
        const double one = 1;
        std::memcpy(p, &one, sizeof one);
        break;
      }
      case DataType::kFloat16: {
        const uint16_t one = ew::FloatToHalf(1.f);
        std::memcpy(p, &one, sizeof one);
        break;
      }
      case DataType::kBFloat16: {
        const uint16_t one = ew::FloatToBFloat16(1.f);
        std::memcpy(p, &one, sizeof one);
        break;
      }
      default: {
        const float one = 1;
        std::memcpy(p, &one, sizeof one);
        break;
      }
    }
  }
  return g.AddConstant(g.UniqueName(prefix + "seed"), like.dtype, like.shape, std::move(data));
}

std::string Names(const std::vector<Value*>& vs) {
  std::string s;
  for (size_t i = 0; i < vs.size() && i < 4; ++i) s += (i ? ", '" : "'") + vs[i]->name + "'";
  if (vs.size() > 4) s += StrCat(" and ", vs.size() - 4, " more");
  return s;
}

}  // namespace

Expected<std::vector<Value*>> AppendGradients(Graph& graph, Value* loss, const std::vector<Value*>& wrt,
                                              const GradientOptions& options) {
  if (!loss || !InGraph(graph, loss)) return InvalidArgument("the loss is not a value of graph '", graph.name, "'");
  for (Value* w : wrt)
    if (!w || !InGraph(graph, w)) return InvalidArgument("a value to differentiate by is not in graph '", graph.name, "'");
  if (graph.HasSubgraphs()) return NotSupported("differentiating a graph with subgraphs (If, Loop, Scan)");
  CompileOptions infer;
  OC_RETURN_IF_ERROR(RunShapeInference(graph, infer).WithContext("before differentiating"));
  OC_RETURN_IF_ERROR(graph.TopologicalSort());
  if (!IsFloatingPoint(loss->dtype))
    return InvalidArgument("the loss '", loss->name, "' is ", DataTypeName(loss->dtype),
                           ": gradients need a floating-point loss");
  if (!loss->IsStatic()) return InvalidArgument("the loss '", loss->name, "' has no static shape");
  for (Value* w : wrt)
    if (!IsFloatingPoint(w->dtype) || !w->IsStatic())
      return InvalidArgument("cannot differentiate by '", w->name, "' (", DataTypeName(w->dtype), " ",
                             w->ShapeString(), "): it must be a floating-point tensor of static shape");

  // The nodes on a path from a w to the loss: forward from the ws (through
  // floating-point values only: an index or a shape carries no gradient),
  // backward from the loss.
  std::vector<Node*> order;
  for (const auto& n : graph.nodes()) order.push_back(n.get());
  std::unordered_set<const Value*> depends(wrt.begin(), wrt.end());
  for (Node* n : order) {
    bool any = false;
    for (Value* in : n->inputs) any = any || (in && depends.count(in));
    if (!any) continue;
    for (Value* out : n->outputs)
      if (out && IsFloatingPoint(out->dtype)) depends.insert(out);
  }
  std::unordered_set<const Value*> reaches{loss};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    bool any = false;
    for (Value* out : (*it)->outputs) any = any || (out && reaches.count(out));
    if (!any) continue;
    for (Value* in : (*it)->inputs)
      if (in) reaches.insert(in);
  }
  auto on_path = [&](const Value* v) { return v && depends.count(v) && reaches.count(v); };

  GradBuilder b(graph, options.prefix);
  // Each value's gradient contributions, summed when read.
  std::unordered_map<const Value*, std::vector<Value*>> parts;
  auto total = [&](const Value* v) -> Value* {
    auto it = parts.find(v);
    if (it == parts.end() || it->second.empty()) return nullptr;
    if (it->second.size() > 1) it->second = {b.Op("Sum", it->second)};
    return it->second[0];
  };
  if (options.seed) {
    if (!InGraph(graph, options.seed)) return InvalidArgument("the gradient seed is not a value of the graph");
    parts[loss].push_back(options.seed);
  } else {
    if (loss->NumElements() != 1)
      return InvalidArgument("the loss '", loss->name, "' has shape ", loss->ShapeString(),
                             ": without a seed gradient it must have one element");
    parts[loss].push_back(OnesLike(graph, *loss, options.prefix));
  }

  const OpRegistry& registry = OpRegistry::Global();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& node = **it;
    bool relevant = false;
    for (Value* out : node.outputs) relevant = relevant || on_path(out);
    if (!relevant) continue;
    std::vector<Value*> dy;
    bool any = false;
    for (Value* out : node.outputs) {
      dy.push_back(out && on_path(out) ? total(out) : nullptr);
      any = any || dy.back();
    }
    if (!any) continue;
    std::vector<bool> needs;
    for (Value* in : node.inputs) needs.push_back(on_path(in));
    const OpDef* def = registry.Find(CanonicalDomain(node.domain), node.op_type, node.opset);
    if (!def || !def->grad)
      return NotSupported("no gradient rule for ", node.Describe(), " (", node.op_type, "): the gradient of '",
                          loss->name, "' with respect to ", Names(wrt), " goes through it");
    std::vector<Value*> dx(node.inputs.size(), nullptr);
    OC_RETURN_IF_ERROR(def->grad(b, GradArgs{node, dy, needs, dx}).WithContext(
        StrCat("the gradient of ", node.Describe())));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!needs[i]) continue;
      if (!dx[i])
        return NotSupported(node.Describe(), " has no gradient with respect to its input ", i, " ('",
                            node.inputs[i]->name, "'), which the loss depends on");
      parts[node.inputs[i]].push_back(dx[i]);
    }
  }

  std::vector<Value*> grads;
  for (Value* w : wrt) {
    Value* g = total(w);
    grads.push_back(g ? g : b.ZerosLike(*w));
  }
  OC_RETURN_IF_ERROR(graph.TopologicalSort());
  return grads;
}

}  // namespace oc::train

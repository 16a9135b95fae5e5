// FlexAttention with score_mod / prob_mod subgraphs, expanded at parse time
// into ai.onnx nodes: the mods are arbitrary graphs over the full score (or
// probability) tensor, so the fused kernel cannot run them; the graph computes
//   scores = (Q * sqrt(scale)) (K * sqrt(scale))^T   (K, V heads repeated for GQA)
//   scores = score_mod(scores); probs = Softmax(scores); probs = prob_mod(probs)
//   Y = probs V
// and the FlexAttention node itself becomes an Identity of Y. The mods' nodes are
// copied into the graph with fresh value names; their initializers become
// constants. Mods that read outer-scope values are not supported.
#include "ops/cpu/attention/attention_flex.h"

#include <cmath>
#include <cstring>
#include <map>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

class Expander {
 public:
  Expander(Node& node, Graph& graph) : node_(node), g_(graph) {
    auto it = graph.opset_imports.find("");
    opset_ = it == graph.opset_imports.end() || it->second < 13 ? 21 : it->second;
  }

  Node* Add(const std::string& op, std::vector<Value*> ins, const std::string& what) {
    Value* out = g_.AddValue(g_.UniqueName(node_.name + "/" + what));
    Node* n = g_.AddNode(op, g_.UniqueName(node_.name + "/" + op), std::move(ins), {out});
    n->opset = opset_;
    added_.push_back(n);
    return n;
  }
  Value* Out(Node* n) { return n->outputs[0]; }

  Value* Int64s(const std::vector<int64_t>& v, const std::string& what) {
    TensorData d = TensorData::Copy(v.data(), v.size() * sizeof(int64_t));
    return g_.AddConstant(g_.UniqueName(node_.name + "/" + what), DataType::kInt64,
                          {static_cast<int64_t>(v.size())}, std::move(d));
  }

  Value* Scalar(DataType t, double x, const std::string& what) {
    if (t == DataType::kFloat64) {
      return g_.AddConstant(g_.UniqueName(node_.name + "/" + what), t, {}, TensorData::Copy(&x, sizeof x));
    }
    const float f = static_cast<float>(x);
    return g_.AddConstant(g_.UniqueName(node_.name + "/" + what), t, {}, TensorData::Copy(&f, sizeof f));
  }

  // [B, Hkv, S, D] -> [B, Hkv * rep, S, D], each head repeated rep times in place.
  Value* RepeatHeads(Value* x, int64_t rep, int64_t heads_out, int64_t dim, const std::string& what) {
    if (rep == 1) return x;
    Value* u = Out(Add("Unsqueeze", {x, Int64s({2}, what + "_axes")}, what + "_unsq"));
    Value* e = Out(Add("Expand", {u, Int64s({1, 1, rep, 1, 1}, what + "_rep")}, what + "_expanded"));
    return Out(Add("Reshape", {e, Int64s({0, heads_out, -1, dim}, what + "_shape")}, what + "_repeated"));
  }

  // Copies the single-input, single-output graph `body` applied to `x`; returns its output.
  Expected<Value*> Inline(const Graph& body, Value* x, const char* attr) {
    if (!body.captures.empty())
      return NotSupported(node_.Describe(), ": ", attr, " reads outer-scope values, which is not supported");
    std::vector<const Value*> real_inputs;
    for (const Value* in : body.inputs)
      if (!in->IsConstant()) real_inputs.push_back(in);
    if (real_inputs.size() != 1 || body.outputs.size() != 1)
      return InvalidArgument(node_.Describe(), ": ", attr, " must have one input and one output, got ",
                             real_inputs.size(), " and ", body.outputs.size());
    std::map<const Value*, Value*> map{{real_inputs[0], x}};
    auto lookup = [&](const Value* v) -> Expected<Value*> {
      if (!v) return static_cast<Value*>(nullptr);
      auto it = map.find(v);
      if (it != map.end()) return it->second;
      if (v->IsConstant()) {
        Value* c = g_.AddConstant(g_.UniqueName(node_.name + "/" + attr + "/" + v->name), v->dtype, v->shape,
                                  TensorData::Copy(v->constant->data(), v->constant->size()));
        map[v] = c;
        return c;
      }
      return InvalidArgument(node_.Describe(), ": ", attr, " value '", v->name, "' has no producer");
    };
    for (const auto& bn : body.nodes()) {
      if (!bn->Subgraphs().empty())
        return NotSupported(node_.Describe(), ": ", attr, " nodes with subgraphs are not supported");
      std::vector<Value*> ins;
      for (const Value* in : bn->inputs) {
        OC_ASSIGN_OR_RETURN(Value* v, lookup(in));
        ins.push_back(v);
      }
      std::vector<Value*> outs;
      for (const Value* o : bn->outputs) {
        Value* nv = o ? g_.AddValue(g_.UniqueName(node_.name + "/" + attr + "/" + o->name)) : nullptr;
        if (o) map[o] = nv;
        outs.push_back(nv);
      }
      Node* n = g_.AddNode(bn->op_type, g_.UniqueName(node_.name + "/" + attr + "/" + bn->name), ins, outs,
                           bn->domain);
      n->opset = bn->opset;
      n->attrs = bn->attrs;
      added_.push_back(n);
    }
    return lookup(body.outputs[0]);
  }

  // Older-opset forms of the added nodes into their kernels' forms.
  Status CanonicalizeAdded() {
    for (Node* n : added_) {
      const OpDef* def = OpRegistry::Global().Find(n->domain, n->op_type, n->opset);
      if (!def)
        return NotSupported(node_.Describe(), ": its expansion needs ", n->op_type, " (opset ", n->opset,
                            "), which is not implemented");
      if (def->canonicalize) OC_RETURN_IF_ERROR(def->canonicalize(*n, g_));
    }
    return Status::Ok();
  }

  int opset() const { return opset_; }

 private:
  Node& node_;
  Graph& g_;
  int opset_ = 21;
  std::vector<Node*> added_;
};

}  // namespace

Status ExpandFlexAttentionMods(Node& node, Graph& graph) {
  const Attribute* score_mod = node.FindAttr("score_mod");
  const Attribute* prob_mod = node.FindAttr("prob_mod");
  if (!score_mod && !prob_mod) return Status::Ok();  // the fused kernel runs it
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  Value* q = node.input(0);
  Value* k = node.input(1);
  Value* v = node.input(2);
  if (q->shape.size() != 4 || k->shape.size() != 4 || v->shape.size() != 4)
    return InvalidArgument(node.Describe(), ": Q, K and V must be 4-D");
  const int64_t hq = q->shape[1], hkv = k->shape[1], e = q->shape[3], ev = v->shape[3];
  if (hq <= 0 || hkv <= 0 || e <= 0 || ev <= 0)
    return NotSupported(node.Describe(), ": score_mod / prob_mod need static head counts and head sizes");
  if (hq % hkv != 0)
    return InvalidArgument(node.Describe(), ": q heads (", hq, ") must be a multiple of kv heads (", hkv, ")");
  const DataType t = q->dtype;
  if (t != DataType::kFloat32)
    return NotSupported(node.Describe(), ": score_mod / prob_mod are supported for float32 only, got ",
                        DataTypeName(t));
  Expander x(node, graph);
  const double scale = node.HasAttr("scale") ? node.GetFloat("scale", 1.f) : 1.0 / std::sqrt(static_cast<double>(e));
  Value* c = x.Scalar(t, std::sqrt(static_cast<float>(scale)), "sqrt_scale");
  Value* qs = x.Out(x.Add("Mul", {q, c}, "q_scaled"));
  Value* ks = x.Out(x.Add("Mul", {k, c}, "k_scaled"));
  ks = x.RepeatHeads(ks, hq / hkv, hq, e, "k");
  Value* vr = x.RepeatHeads(v, hq / hkv, hq, ev, "v");
  Node* kt = x.Add("Transpose", {ks}, "k_t");
  kt->SetInts("perm", {0, 1, 3, 2});
  Value* scores = x.Out(x.Add("MatMul", {qs, x.Out(kt)}, "scores"));
  if (score_mod) {
    if (!score_mod->graph) return InvalidArgument(node.Describe(), ": score_mod is not a graph");
    OC_ASSIGN_OR_RETURN(scores, x.Inline(*score_mod->graph, scores, "score_mod"));
  }
  Node* sm = x.Add("Softmax", {scores}, "probs");
  sm->SetInt("axis", -1);
  Value* probs = x.Out(sm);
  if (prob_mod) {
    if (!prob_mod->graph) return InvalidArgument(node.Describe(), ": prob_mod is not a graph");
    OC_ASSIGN_OR_RETURN(probs, x.Inline(*prob_mod->graph, probs, "prob_mod"));
  }
  Value* y = x.Out(x.Add("MatMul", {probs, vr}, "y"));
  OC_RETURN_IF_ERROR(x.CanonicalizeAdded());
  // The node itself now forwards Y (its outputs keep their names and consumers).
  node.domain = "";
  node.op_type = "Identity";
  node.opset = x.opset();
  node.attrs.clear();
  node.inputs = {y};
  return Status::Ok();
}

}  // namespace oc

// fuse-bias-activation: produce the com.opencann Fused* ops (contract at the top
// of src/ops/cpu/elementwise/activation.h) so that bias, residual add and activation run in
// the GEMM/conv epilogue while the output tile is still in cache.
//   MatMul + Add(constant bias along the last dim)   -> FusedMatMul(A, B, bias)
//   Conv + Add(tensor of the output's shape)         -> FusedConv(X, W, B, Z)
//   MatMul/Gemm (+ bias) [-> Reshape] + Add(tensor)  -> FusedMatMul/FusedGemm(.., Z)
//   Conv/Gemm/MatMul/Fused* + activation             -> Fused* with "activation"
//     (activation ops, exact GELU spelled with Erf as pre-opset-20 exporters do,
//     SiLU spelled y * Sigmoid(y): EfficientNet, LLaMA-style MLPs; hard-swish and
//     hard-sigmoid spelled with relu6(y + 3) / 6: PaddlePaddle exports)
// A value is fused away only when the fused node is its sole reader and it is not
// a graph output, so no one else can observe the intermediate.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ops/infer_util.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

// Activation attributes as the Fused* contract spells them.
struct FusedActivation {
  const char* name;
  std::optional<float> alpha;
  std::optional<float> beta;
};

struct Fuser {
  Graph& graph;
  bool only_registered;
  bool changed = false;

  bool Available(const char* op) const {
    return !only_registered || OpRegistry::Global().Find(kOpenCannDomain, op, 1) != nullptr;
  }

  // Readers of each value, one entry per use. Built per phase and kept exact by
  // AbsorbAll, so that the pass stays linear on graphs with thousands of nodes.
  std::unordered_map<const Value*, std::vector<Node*>> readers;

  void IndexReaders() {
    readers.clear();
    for (auto& n : graph.nodes())
      for (const Value* in : n->inputs)
        if (in) readers[in].push_back(n.get());
  }
  const std::vector<Node*>& ReadersOf(const Value* v) const {
    static const std::vector<Node*> kNone;
    auto it = readers.find(v);
    return it == readers.end() ? kNone : it->second;
  }

  // The node that alone reads `v` (once), or nullptr.
  Node* SoleReader(const Value* v) const {
    if (!v || graph.IsGraphOutput(v)) return nullptr;
    const auto& r = ReadersOf(v);
    return r.size() == 1 ? r[0] : nullptr;
  }

  void MakeFused(Node& node, const char* op) {
    node.op_type = op;
    node.domain = kOpenCannDomain;
    node.opset = 1;
    changed = true;
  }

  // `node` takes over `absorbed`'s output; `absorbed` goes away.
  void Absorb(Node& node, Node& absorbed) { AbsorbAll(node, {&absorbed}, absorbed.output(0)); }

  // `node` now writes `new_out`, which the removed `absorbed` nodes computed.
  void AbsorbAll(Node& node, const std::vector<Node*>& absorbed, Value* new_out) {
    Value* old_out = node.outputs[0];
    for (Node* n : absorbed) {
      // Uses by a removed node move to `node` where it took the input over.
      for (const Value* in : n->inputs) {
        if (!in) continue;
        auto& r = readers[in];
        auto it = std::find(r.begin(), r.end(), n);
        if (it == r.end()) continue;
        const bool taken_over = std::find(node.inputs.begin(), node.inputs.end(), in) != node.inputs.end();
        if (taken_over && std::find(r.begin(), r.end(), &node) == r.end()) *it = &node;
        else r.erase(it);
      }
      graph.RemoveNode(n);
    }
    node.outputs[0] = new_out;
    new_out->producer = &node;
    old_out->producer = nullptr;
  }

  static bool IsScalar(const Value* v, float want) {
    auto f = ConstFloats(v);
    return f && f->size() == 1 && std::fabs((*f)[0] - want) <= 1e-3f * std::fabs(want);
  }
  // The operand of binary `n` that is not `v` when `n` is `op`(v, other) in
  // either order (for Div only the first position is allowed for `v`).
  static Value* BinaryOther(const Node* n, const char* op, const Value* v) {
    if (!n || !IsOnnx(*n, op) || n->inputs.size() != 2) return nullptr;
    if (n->inputs[0] == v) return n->inputs[1];
    if (n->inputs[1] == v && std::string(op) != "Div") return n->inputs[0];
    return nullptr;
  }

  // True when `v` is the float constant `want` exactly (a scalar or one value).
  static bool IsExactly(const Value* v, float want) {
    auto f = ConstFloats(v);
    return f && f->size() == 1 && (*f)[0] == want;
  }
  // `n` divides `v` by 6 or multiplies it by 1/6 (as a float).
  static bool DividesBy6(const Node* n, const Value* v) {
    return IsExactly(BinaryOther(n, "Div", v), 6.f) || IsExactly(BinaryOther(n, "Mul", v), 1.f / 6.f);
  }
  // relu6(y + 3): Add(y, 3) read only by Clip(0, 6); returns the Clip or nullptr.
  Node* Relu6OfYPlus3(Node* add, const Value* y) const {
    if (!IsExactly(BinaryOther(add, "Add", y), 3.f)) return nullptr;
    Node* clip = SoleReader(add->output(0));
    if (!clip || !IsOnnx(*clip, "Clip") || clip->input(0) != add->output(0)) return nullptr;
    auto a = ActivationOf(*clip);
    return a && a->alpha && a->beta && *a->alpha == 0.f && *a->beta == 6.f ? clip : nullptr;
  }

  // Hard-swish spelled y * relu6(y + 3) / 6, the multiplication by y before or
  // after the division; and hard-sigmoid spelled relu6(y + 3) / 6 (the same
  // functions up to rounding: HardSwish is y * clip(y / 6 + 0.5, 0, 1)).
  bool MatchHardSwishOrSigmoid(Value* y, std::vector<Node*>* nodes, Value** result, bool* swish) const {
    if (graph.IsGraphOutput(y)) return false;
    const auto& r = ReadersOf(y);
    if (r.size() == 1) {
      Node* clip = Relu6OfYPlus3(r[0], y);
      Node* div = clip ? SoleReader(clip->output(0)) : nullptr;
      if (!div || !DividesBy6(div, clip->output(0)) || !IsF32(div->output(0))) return false;
      *nodes = {r[0], clip, div};
      *result = div->output(0);
      *swish = false;
      return true;
    }
    if (r.size() != 2 || r[0] == r[1]) return false;
    for (int i = 0; i < 2; ++i) {
      Node* add = r[i];
      Node* mul = r[1 - i];
      Node* clip = Relu6OfYPlus3(add, y);
      if (!clip) continue;
      const Value* c = clip->output(0);
      Node* next = SoleReader(c);
      if (next == mul && BinaryOther(mul, "Mul", y) == c) {  // (y * c) / 6
        Node* div = SoleReader(mul->output(0));
        if (!div || !DividesBy6(div, mul->output(0)) || !IsF32(div->output(0))) return false;
        *nodes = {add, clip, mul, div};
        *result = div->output(0);
      } else if (next && DividesBy6(next, c) && SoleReader(next->output(0)) == mul &&
                 BinaryOther(mul, "Mul", y) == next->output(0) && IsF32(mul->output(0))) {  // y * (c / 6)
        *nodes = {add, clip, next, mul};
        *result = mul->output(0);
      } else {
        return false;
      }
      *swish = true;
      return true;
    }
    return false;
  }

  // y * Sigmoid(y) (either operand order): y read by exactly the Sigmoid and
  // the Mul, the Sigmoid's output only by the Mul.
  bool MatchSilu(Value* y, std::vector<Node*>* nodes, Value** result) const {
    if (graph.IsGraphOutput(y)) return false;
    const auto& r = ReadersOf(y);
    if (r.size() != 2 || r[0] == r[1]) return false;
    for (int s = 0; s < 2; ++s) {
      Node* sig = r[s];
      Node* mul = r[1 - s];
      if (!IsOnnx(*sig, "Sigmoid") || sig->input(0) != y || graph.IsGraphOutput(sig->output(0))) continue;
      if (SoleReader(sig->output(0)) != mul || BinaryOther(mul, "Mul", y) != sig->output(0)) continue;
      if (!IsF32(mul->output(0))) return false;
      *nodes = {sig, mul};
      *result = mul->output(0);
      return true;
    }
    return false;
  }

  // Exporters before opset 20 write exact GELU as 0.5 * y * (1 + erf(y / sqrt2))
  // in one of three association orders. Returns the nodes of the pattern and
  // its result when `y` feeds exactly that pattern and nothing else.
  bool MatchErfGelu(Value* y, std::vector<Node*>* nodes, Value** result) const {
    if (graph.IsGraphOutput(y)) return false;
    const auto& r = ReadersOf(y);
    if (r.size() != 2 || r[0] == r[1]) return false;
    for (int scale_idx = 0; scale_idx < 2; ++scale_idx) {
      Node* scale = r[scale_idx];
      Node* mul_y = r[1 - scale_idx];
      const bool by_div = IsScalar(BinaryOther(scale, "Div", y), 1.41421356f);
      const bool by_mul = IsScalar(BinaryOther(scale, "Mul", y), 0.70710678f);
      if (!by_div && !by_mul) continue;
      Node* erf = SoleReader(scale->output(0));
      if (!erf || !IsOnnx(*erf, "Erf")) return false;
      Node* plus1 = SoleReader(erf->output(0));
      if (!plus1 || !IsScalar(BinaryOther(plus1, "Add", erf->output(0)), 1.f)) return false;
      Value* t = plus1->output(0);  // 1 + erf(y / sqrt2)
      Node* next = SoleReader(t);
      Node* last = nullptr;
      if (BinaryOther(mul_y, "Mul", y) == t) {
        // (y * t) * 0.5
        last = SoleReader(mul_y->output(0));
        if (!IsScalar(BinaryOther(last, "Mul", mul_y->output(0)), 0.5f)) return false;
      } else if (IsScalar(BinaryOther(mul_y, "Mul", y), 0.5f)) {
        // (y * 0.5) * t
        if (next != SoleReader(mul_y->output(0)) || BinaryOther(next, "Mul", t) != mul_y->output(0))
          return false;
        last = next;
      } else if (next && IsScalar(BinaryOther(next, "Mul", t), 0.5f)) {
        // y * (t * 0.5)
        if (BinaryOther(mul_y, "Mul", y) != next->output(0) || SoleReader(next->output(0)) != mul_y)
          return false;
        last = mul_y;
        mul_y = next;
      } else {
        return false;
      }
      if (!last || !IsF32(last->output(0))) return false;
      *nodes = {scale, erf, plus1, mul_y, last};
      *result = last->output(0);
      return true;
    }
    return false;
  }

  static bool IsOnnx(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op; }
  static bool IsOurs(const Node& n, const char* op) {
    return n.domain == kOpenCannDomain && n.op_type == op;
  }
  static bool IsF32(const Value* v) { return v && v->dtype == DataType::kFloat32; }

  // The Add operand that is not `v`, or nullptr (also when both operands are `v`).
  static Value* OtherAddend(const Node& add, const Value* v) {
    if (add.inputs.size() != 2) return nullptr;
    if (add.inputs[0] == v && add.inputs[1] != v) return add.inputs[1];
    if (add.inputs[1] == v && add.inputs[0] != v) return add.inputs[0];
    return nullptr;
  }

  void FuseMatMulBias(Node& mm) {
    if (!IsOnnx(mm, "MatMul") || !Available("FusedMatMul")) return;
    Value* y = mm.output(0);
    Node* add = SoleReader(y);
    if (!add || !IsOnnx(*add, "Add") || !IsF32(y) || !y->IsStatic() || y->shape.empty()) return;
    Value* bias = OtherAddend(*add, y);
    if (!IsF32(bias) || !bias->constant || !bias->IsStatic() || bias->shape.empty()) return;
    // Only a bias that broadcasts along the last dim without changing the shape.
    if (bias->shape.size() > y->shape.size() || bias->shape.back() != y->shape.back()) return;
    for (size_t i = 0; i + 1 < bias->shape.size(); ++i)
      if (bias->shape[i] != 1) return;
    if (bias->shape.size() != 1)
      bias = graph.AddConstant(graph.UniqueName(bias->name + "_1d"), DataType::kFloat32,
                               {y->shape.back()}, *bias->constant);
    MakeFused(mm, "FusedMatMul");
    mm.inputs.resize(2);
    mm.inputs.push_back(bias);
    Absorb(mm, *add);
  }

  // MatMul/Gemm (+ bias) -> [Reshape] -> Add(Z) with Z of the Add's output
  // shape: Z becomes the fused node's residual input (added in the GEMM
  // epilogue while the tile is in registers) and the Add goes away. A Reshape in
  // between (GPT-2's Conv1D: [S, D] Gemm, then back to [1, S, D]) stays, now
  // producing the Add's output; Z is read in row-major order either way.
  void FuseGemmResidual(Node& mm) {
    const char* fused = nullptr;
    if (IsOnnx(mm, "MatMul") || IsOurs(mm, "FusedMatMul")) fused = "FusedMatMul";
    else if (IsOnnx(mm, "Gemm") || IsOurs(mm, "FusedGemm")) fused = "FusedGemm";
    if (!fused || !Available(fused) || !mm.GetString("activation", "").empty() || mm.inputs.size() > 3) return;
    Value* y = mm.output(0);
    if (!IsF32(y) || !y->IsStatic()) return;
    Node* next = SoleReader(y);
    Node* view = nullptr;
    if (next && IsOnnx(*next, "Reshape") && next->input(0) == y && next->output(0)->IsStatic() &&
        next->output(0)->NumElements() == y->NumElements()) {
      view = next;
      next = SoleReader(view->output(0));
    }
    const Value* added = view ? view->output(0) : y;
    if (!next || !IsOnnx(*next, "Add")) return;
    Value* z = OtherAddend(*next, added);
    Value* out = next->output(0);
    if (!IsF32(z) || !z->IsStatic() || !IsF32(out) || z->shape != out->shape || added->shape != out->shape ||
        z->NumElements() != y->NumElements())
      return;
    MakeFused(mm, fused);
    mm.inputs.resize(3, nullptr);
    mm.inputs.push_back(z);
    if (!view) {
      Absorb(mm, *next);
      return;
    }
    auto& zr = readers[z];
    if (auto it = std::find(zr.begin(), zr.end(), next); it != zr.end()) *it = &mm;
    readers.erase(view->output(0));
    view->output(0)->producer = nullptr;
    graph.RemoveNode(next);
    view->outputs[0] = out;
    out->producer = view;
  }

  void FuseConvResidual(Node& conv) {
    const bool plain = IsOnnx(conv, "Conv");
    const bool fused_bare = IsOurs(conv, "FusedConv") && conv.GetString("activation", "").empty() &&
                            !conv.input(3);
    if ((!plain && !fused_bare) || !Available("FusedConv")) return;
    Value* y = conv.output(0);
    Node* add = SoleReader(y);
    if (!add || !IsOnnx(*add, "Add") || !IsF32(y) || !y->IsStatic()) return;
    Value* z = OtherAddend(*add, y);
    if (!IsF32(z) || !z->IsStatic() || z->shape != y->shape) return;
    MakeFused(conv, "FusedConv");
    conv.inputs.resize(3, nullptr);
    conv.inputs.push_back(z);
    Absorb(conv, *add);
  }

  // Reads an activation node into the Fused* attributes; nullopt when the node
  // is not an activation we can fuse.
  static std::optional<FusedActivation> ActivationOf(const Node& act) {
    if (!act.domain.empty()) return std::nullopt;
    const std::string& t = act.op_type;
    for (const char* simple : {"Relu", "Sigmoid", "Tanh", "HardSwish"})
      if (t == simple) return FusedActivation{simple};
    if (t == "LeakyRelu") return FusedActivation{"LeakyRelu", act.GetFloat("alpha", 0.01f)};
    if (t == "Swish") return FusedActivation{"Swish", act.GetFloat("alpha", 1.f)};
    if (t == "HardSigmoid")
      return FusedActivation{"HardSigmoid", act.GetFloat("alpha", 0.2f), act.GetFloat("beta", 0.5f)};
    if (t == "Gelu") {
      std::string approx = act.GetString("approximate", "none");
      if (approx == "none") return FusedActivation{"Gelu"};
      if (approx == "tanh") return FusedActivation{"GeluTanh"};
      return std::nullopt;
    }
    if (t != "Clip") return std::nullopt;
    // Clip-6 has min/max attributes, Clip-11+ optional scalar inputs.
    float lo = act.GetFloat("min", std::numeric_limits<float>::lowest());
    float hi = act.GetFloat("max", std::numeric_limits<float>::max());
    for (size_t i = 1; i <= 2; ++i) {
      const Value* bound = act.input(i);
      if (!bound) continue;
      auto v = ConstFloats(bound);
      if (!v || v->size() != 1) return std::nullopt;
      (i == 1 ? lo : hi) = (*v)[0];
    }
    return FusedActivation{"Clip", lo, hi};
  }

  static const char* FusedNameFor(const Node& n) {
    if (IsOnnx(n, "Conv") || IsOurs(n, "FusedConv")) return "FusedConv";
    if (IsOnnx(n, "Gemm") || IsOurs(n, "FusedGemm")) return "FusedGemm";
    if (IsOnnx(n, "MatMul") || IsOurs(n, "FusedMatMul")) return "FusedMatMul";
    return nullptr;
  }

  void FuseActivation(Node& node) {
    const char* fused = FusedNameFor(node);
    if (!fused || !Available(fused) || !node.GetString("activation", "").empty()) return;
    Value* y = node.output(0);
    if (!IsF32(y)) return;
    std::vector<Node*> gelu_nodes;
    Value* gelu_out = nullptr;
    if (MatchErfGelu(y, &gelu_nodes, &gelu_out)) {
      MakeFused(node, fused);
      node.SetString("activation", "Gelu");
      AbsorbAll(node, gelu_nodes, gelu_out);
      return;
    }
    std::vector<Node*> silu_nodes;
    Value* silu_out = nullptr;
    if (MatchSilu(y, &silu_nodes, &silu_out)) {
      MakeFused(node, fused);
      node.SetString("activation", "Swish");
      AbsorbAll(node, silu_nodes, silu_out);
      return;
    }
    std::vector<Node*> hard_nodes;
    Value* hard_out = nullptr;
    bool hard_swish = false;
    if (MatchHardSwishOrSigmoid(y, &hard_nodes, &hard_out, &hard_swish)) {
      MakeFused(node, fused);
      if (hard_swish) {
        node.SetString("activation", "HardSwish");
      } else {
        node.SetString("activation", "HardSigmoid");
        node.SetFloat("activation_alpha", 1.f / 6.f);
        node.SetFloat("activation_beta", 0.5f);
      }
      AbsorbAll(node, hard_nodes, hard_out);
      return;
    }
    Node* act = SoleReader(y);
    if (!act || act->input(0) != y || !IsF32(act->output(0))) return;
    auto a = ActivationOf(*act);
    if (!a) return;
    MakeFused(node, fused);
    node.SetString("activation", a->name);
    if (a->alpha) node.SetFloat("activation_alpha", *a->alpha);
    if (a->beta) node.SetFloat("activation_beta", *a->beta);
    Absorb(node, *act);
  }

  // An absorbed node reads `n`'s output, so it comes after `n` in topological
  // order: removing it leaves index i on `n` and the walk continues correctly.
  template <typename F>
  void ForEachNode(F f) {
    IndexReaders();
    for (size_t i = 0; i < graph.nodes().size(); ++i) f(*graph.nodes()[i]);
  }
};

}  // namespace

Status FuseBiasActivation(Graph& graph, bool only_registered) {
  Fuser f{graph, only_registered};
  f.ForEachNode([&](Node& n) { f.FuseMatMulBias(n); });
  f.ForEachNode([&](Node& n) { f.FuseGemmResidual(n); });
  f.ForEachNode([&](Node& n) { f.FuseConvResidual(n); });
  f.ForEachNode([&](Node& n) { f.FuseActivation(n); });
  if (!f.changed) return Status::Ok();
  graph.opset_imports[kOpenCannDomain] = 1;
  // A residual input may be produced after the Conv that now reads it.
  return graph.TopologicalSort();
}

Status RunFuseBiasActivation(Graph& graph, const CompileOptions& options) {
  if (!options.fuse) return Status::Ok();
  return FuseBiasActivation(graph, /*only_registered=*/true);
}

}  // namespace oc

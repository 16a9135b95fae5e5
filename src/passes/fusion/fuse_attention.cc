// fuse-attention: scaled dot-product attention as exporters before opset 23
// spell it, on 4-D [batch, heads, seq, head_dim] operands:
//   S = MatMul(Q, Kt)                  Kt = [B, H, D, Skv] (K transposed)
//   S = S / c  or  S * c               any number of scalar scales, also on Q / Kt
//   S = Where(causal, S, -big)         GPT-2's constant lower-triangular bool mask
//   S = S + M                          one additive mask, broadcast to S
//   Y = MatMul(Softmax(S, axis=-1), V)
// becomes one Attention-23 node (scale attribute, attn_mask, is_causal), whose
// kernel never materialises the [Sq, Skv] score matrix for long sequences.
// When Q/K/V come from the usual Reshape + Transpose head split of [B, S, H*D]
// projections and the result is merged back likewise, the node takes the 3-D
// form and those Transposes disappear.
// Every intermediate must be read only by the next node of the chain.
#include <cmath>
#include <string>
#include <vector>

#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace oc {
namespace {

using fusion::IsF32Static;
using fusion::IsOp;
using fusion::Scalar;

struct Match {
  Node* qk = nullptr;          // MatMul(Q, Kt)
  Value* q = nullptr;
  Value* kt = nullptr;
  Value* mask = nullptr;       // additive float mask or nullptr
  bool causal = false;
  double scale = 1.0;
  std::vector<Node*> nodes;    // everything the Attention node replaces
};

struct AttentionFuser {
  Graph& graph;
  fusion::Uses uses{graph};

  // True when the constant bool `cond`, broadcast to [.., s, s], keeps exactly
  // the keys j <= i for every query i.
  static bool IsCausalCondition(const Value* cond, int64_t s) {
    if (!cond || !cond->constant || cond->dtype != DataType::kBool || !cond->IsStatic()) return false;
    const auto& sh = cond->shape;
    if (sh.size() < 2 || sh[sh.size() - 1] != s || sh[sh.size() - 2] != s) return false;
    const auto* c = cond->constant->as<uint8_t>();
    const int64_t planes = cond->NumElements() / (s * s);
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < s; ++j)
          if ((c[(p * s + i) * s + j] != 0) != (j <= i)) return false;
    return true;
  }

  // True when the constant float mask, broadcast to [.., s, s], is 0 on and
  // below the diagonal and hides (<= -1e4) everything above it.
  static bool IsCausalAdditive(const Value* mask, int64_t s) {
    if (!mask || !mask->constant || !IsF32Static(mask)) return false;
    const auto& sh = mask->shape;
    if (sh.size() < 2 || sh[sh.size() - 1] != s || sh[sh.size() - 2] != s) return false;
    const float* c = mask->constant->as<float>();
    const int64_t planes = mask->NumElements() / (s * s);
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < s; ++j) {
          const float x = c[(p * s + i) * s + j];
          if (j <= i ? x != 0.f : !(x <= -1e4f)) return false;
        }
    return true;
  }

  // A mask broadcastable (numpy) to `full` without broadcasting the key dim,
  // as Attention's attn_mask takes it.
  static bool IsAttnMask(const Value* m, const std::vector<int64_t>& full) {
    if (!IsF32Static(m) || m->shape.empty() || m->shape.size() > full.size()) return false;
    if (m->shape.back() != full.back()) return false;
    const size_t off = full.size() - m->shape.size();
    for (size_t i = 0; i < m->shape.size(); ++i)
      if (m->shape[i] != 1 && m->shape[i] != full[off + i]) return false;
    return true;
  }

  // Walks from the Softmax input back to MatMul(Q, Kt). `reader` is the node
  // that reads `cur` (it must be its only reader).
  // `scaled_later`: a scale was met on the way back, i.e. it applies after
  // everything still to come.
  bool Walk(Value* cur, const Node* reader, const std::vector<int64_t>& full, bool scaled_later, Match* m) {
    if (!uses.OnlyBy(cur, reader) || !IsF32Static(cur) || cur->shape != full) return false;
    Node* p = cur->producer;
    if (!p || !p->domain.empty()) return false;
    const std::string& op = p->op_type;
    if (op == "MatMul") {
      if (p->inputs.size() != 2) return false;
      m->qk = p;
      m->q = p->inputs[0];
      m->kt = p->inputs[1];
      m->nodes.push_back(p);
      return true;
    }
    if (op == "Div" || op == "Mul") {
      if (p->inputs.size() != 2) return false;
      const int chain = Scalar(p->inputs[1]) ? 0 : (op == "Mul" && Scalar(p->inputs[0]) ? 1 : -1);
      if (chain < 0) return false;
      const float c = *Scalar(p->inputs[1 - chain]);
      if (!(c > 0.f) || !std::isfinite(c)) return false;
      m->scale *= op == "Div" ? 1.0 / c : c;
      m->nodes.push_back(p);
      return Walk(p->inputs[chain], p, full, true, m);
    }
    if (op == "Where") {
      if (m->causal || p->inputs.size() != 3) return false;
      auto fill = Scalar(p->inputs[2]);
      const int64_t s = full[3];
      if (full[2] != s || !fill || !(*fill <= -1e4f) || !IsCausalCondition(p->inputs[0], s)) return false;
      m->causal = true;
      m->nodes.push_back(p);
      return Walk(p->inputs[1], p, full, scaled_later, m);
    }
    if (op == "Add") {
      // A scale after the mask would scale the mask too.
      if (m->mask || scaled_later || p->inputs.size() != 2) return false;
      const size_t before = m->nodes.size();
      for (int chain = 0; chain < 2; ++chain) {
        Value* mask = p->inputs[1 - chain];
        if (mask == p->inputs[chain] || !IsAttnMask(mask, full)) continue;
        Match trial = *m;
        // A constant causal mask (a folded causal Where) is is_causal, which
        // lets the kernel skip the blocks above the diagonal.
        if (!m->causal && full[2] == full[3] && IsCausalAdditive(mask, full[3])) trial.causal = true;
        else trial.mask = mask;
        trial.nodes.push_back(p);
        if (Walk(p->inputs[chain], p, full, false, &trial)) {
          *m = std::move(trial);
          return true;
        }
      }
      m->nodes.resize(before);
      return false;
    }
    return false;
  }

  // The Where of Where(IsNaN(p), 0, p) when p is read by exactly that pair.
  Node* NanGuard(const Value* p) const {
    if (graph.IsGraphOutput(p)) return nullptr;
    const auto& r = uses.Of(p);
    if (r.size() != 2) return nullptr;
    for (int i = 0; i < 2; ++i) {
      Node* isnan = r[i];
      Node* where = r[1 - i];
      if (!IsOp(isnan, "IsNaN") || !IsOp(where, "Where") || where->inputs.size() != 3) continue;
      if (where->inputs[0] != isnan->output(0) || where->inputs[2] != p || !uses.OnlyBy(isnan->output(0), where))
        continue;
      if (!fusion::IsScalar(where->inputs[1], 0.f)) continue;
      if (where->output(0)->shape != p->shape) continue;
      return where;
    }
    return nullptr;
  }

  // p when x = Transpose(Reshape(p, [B, S, H, D]), perm [0, 2, 1, 3]) with p
  // of shape [B, S, H*D]: the usual head split of a projection.
  static Value* HeadSplitSource(const Value* x) {
    Node* tr = x ? x->producer : nullptr;
    if (!IsOp(tr, "Transpose") || tr->GetInts("perm") != std::vector<int64_t>{0, 2, 1, 3}) return nullptr;
    const Value* r = tr->input(0);
    Node* rs = r ? r->producer : nullptr;
    if (!IsOp(rs, "Reshape") || !rs->input(0)) return nullptr;
    Value* p = rs->input(0);
    if (!IsF32Static(p) || !r->IsStatic() || p->shape.size() != 3 || r->shape.size() != 4) return nullptr;
    if (p->shape[0] != r->shape[0] || p->shape[1] != r->shape[1] || p->shape[2] != r->shape[2] * r->shape[3])
      return nullptr;
    return p;
  }

  // x when q, k, v are outputs 0, 1, 2 of one Split of x = [B, S, 3 * hidden]
  // along its last axis into equal thirds (GPT-2's c_attn output): the
  // Attention then reads x in place (packed_qkv) and the Split's copy goes
  // away with the head Reshapes (dead-code-elimination).
  static Value* PackedQkvSource(const Value* q, const Value* k, const Value* v) {
    Node* split = q ? q->producer : nullptr;
    if (!IsOp(split, "Split") || !split->input(0) || split->outputs.size() != 3) return nullptr;
    if (split->output(0) != q || split->output(1) != k || split->output(2) != v) return nullptr;
    Value* x = split->input(0);
    if (!IsF32Static(x) || x->shape.size() != 3 || x->shape[2] % 3 != 0) return nullptr;
    const int64_t axis = split->GetInt("axis", 0);
    if (axis != 2 && axis != -1) return nullptr;
    for (const Value* part : {q, k, v})
      if (part->shape != std::vector<int64_t>{x->shape[0], x->shape[1], x->shape[2] / 3}) return nullptr;
    return x;
  }

  bool TryFuse(Node* softmax) {
    if (!IsOp(softmax, "Softmax") || softmax->inputs.size() != 1) return false;
    Value* s = softmax->input(0);
    Value* probs = softmax->output(0);
    if (!IsF32Static(s) || s->shape.size() != 4) return false;
    // Softmax before opset 13 flattens from `axis` (default 1); over the last
    // axis both spellings are the same.
    const int64_t def_axis = softmax->opset >= 13 ? -1 : 1;
    const int64_t axis = softmax->GetInt("axis", def_axis);
    if (axis != -1 && axis != 3) return false;
    Match m;
    m.nodes = {softmax};
    // torch's SDPA export zeroes the NaN rows of fully masked queries:
    // Where(IsNaN(P), 0, P). The kernel already writes 0 for such rows.
    if (Node* guard = NanGuard(probs)) {
      m.nodes.push_back(guard->inputs[0]->producer);
      m.nodes.push_back(guard);
      probs = guard->output(0);
    }
    // transformers' eager attention casts the probabilities to the value dtype:
    // a float32 -> float32 Cast that changes nothing.
    if (Node* cast = uses.Sole(probs); IsOp(cast, "Cast") && cast->inputs.size() == 1 &&
                                       cast->GetInt("to", 0) == static_cast<int64_t>(DataType::kFloat32) &&
                                       IsF32Static(cast->output(0))) {
      m.nodes.push_back(cast);
      probs = cast->output(0);
    }
    Node* pv = uses.Sole(probs);
    if (!IsOp(pv, "MatMul") || pv->inputs.size() != 2 || pv->inputs[0] != probs) return false;
    Value* v = pv->inputs[1];
    Value* out = pv->output(0);
    m.nodes.push_back(pv);
    const std::vector<int64_t>& full = s->shape;  // [B, H, Sq, Skv]
    if (!Walk(s, softmax, full, false, &m)) return false;

    // Pre-scaled operands: Mul(Q, c) / Mul(Kt, c) read only by the QK MatMul.
    Node* kt_reader = m.qk;  // the chain node that reads Kt
    for (Value** operand : {&m.q, &m.kt}) {
      Value* x = *operand;
      Node* p = x->producer;
      if (!p || !(IsOp(p, "Mul") || IsOp(p, "Div")) || p->inputs.size() != 2 || !uses.OnlyBy(x, m.qk)) continue;
      const int chain = Scalar(p->inputs[1]) ? 0 : (IsOp(p, "Mul") && Scalar(p->inputs[0]) ? 1 : -1);
      if (chain < 0 || p->inputs[chain]->shape != x->shape || p->inputs[chain] == m.q || p->inputs[chain] == m.kt)
        continue;
      const float c = *Scalar(p->inputs[1 - chain]);
      if (!(c > 0.f) || !std::isfinite(c)) continue;
      m.scale *= IsOp(p, "Div") ? 1.0 / c : c;
      m.nodes.push_back(p);
      *operand = p->inputs[chain];
      if (operand == &m.kt) kt_reader = p;
    }

    Value* q = m.q;
    Value* kt = m.kt;
    if (q == kt || !IsF32Static(q) || !IsF32Static(kt) || !IsF32Static(v) || !IsF32Static(out)) return false;
    if (q->shape.size() != 4 || kt->shape.size() != 4 || v->shape.size() != 4) return false;
    const int64_t b = full[0], h = full[1], sq = full[2], skv = full[3], d = q->shape[3];
    if (q->shape != std::vector<int64_t>{b, h, sq, d} || kt->shape != std::vector<int64_t>{b, h, d, skv} ||
        v->shape[0] != b || v->shape[1] != h || v->shape[2] != skv ||
        out->shape != std::vector<int64_t>{b, h, sq, v->shape[3]})
      return false;

    // K = Kt with its last two axes swapped: retarget the Transpose that made Kt
    // when only the QK MatMul reads it, else add one.
    Value* k = nullptr;
    Node* tr = kt->producer;
    if (IsOp(tr, "Transpose") && uses.OnlyBy(kt, kt_reader) && tr->input(0) && tr->input(0)->shape.size() == 4) {
      std::vector<int64_t> perm = tr->GetInts("perm", {3, 2, 1, 0});
      std::swap(perm[2], perm[3]);
      if (perm == std::vector<int64_t>{0, 1, 2, 3}) {
        k = tr->input(0);
        m.nodes.push_back(tr);
      } else {
        tr->SetInts("perm", perm);
        std::swap(kt->shape[2], kt->shape[3]);
        std::swap(kt->dim_params[2], kt->dim_params[3]);
        k = kt;
      }
    } else {
      k = fusion::NewValue(graph, kt->name + "_k", DataType::kFloat32, {b, h, skv, d});
      fusion::AddOnnxNode(graph, "Transpose", 13, kt->name + "_untranspose", {kt}, {k})
          ->SetInts("perm", {0, 1, 3, 2});
    }

    // When Q, K and V are head splits of [B, S, H*D] projections and the
    // result is merged back the same way, the 3-D form reads and writes those
    // directly (the kernel walks heads by stride): the head Transposes go away
    // (dead-code-elimination drops them unless something else reads them).
    Value* q3 = HeadSplitSource(q);
    Value* k3 = HeadSplitSource(k);
    Value* v3 = HeadSplitSource(v);
    Node* merge_t = uses.Sole(out);
    // torch's SDPA export reshapes the result to its own shape first.
    Node* noop = nullptr;
    if (IsOp(merge_t, "Reshape") && merge_t->input(0) == out && merge_t->output(0)->shape == out->shape) {
      noop = merge_t;
      merge_t = uses.Sole(noop->output(0));
    }
    Node* merge_r = merge_t ? uses.Sole(merge_t->output(0)) : nullptr;
    const bool as3d = q3 && k3 && v3 && IsOp(merge_t, "Transpose") &&
                      merge_t->GetInts("perm") == std::vector<int64_t>{0, 2, 1, 3} && IsOp(merge_r, "Reshape") &&
                      merge_r->input(0) == merge_t->output(0) && IsF32Static(merge_r->output(0)) &&
                      merge_r->output(0)->shape == std::vector<int64_t>{b, sq, h * v->shape[3]};
    Value* packed = as3d && v->shape[3] == d ? PackedQkvSource(q3, k3, v3) : nullptr;
    if (as3d) {
      q = q3;
      k = k3;
      v = v3;
      if (packed) q = k = v = packed;
      out = merge_r->output(0);
      m.nodes.push_back(merge_t);
      m.nodes.push_back(merge_r);
      if (noop) m.nodes.push_back(noop);
    }

    const std::string name = m.qk->name.empty() ? "attention" : m.qk->name + "_attention";
    for (Node* n : m.nodes) graph.RemoveNode(n);
    std::vector<Value*> inputs = {q, k, v};
    if (m.mask) inputs.push_back(m.mask);
    Node* att = fusion::AddOnnxNode(graph, "Attention", 23, name, std::move(inputs), {out});
    att->SetFloat("scale", static_cast<float>(m.scale));
    if (as3d) {
      att->SetInt("q_num_heads", h);
      att->SetInt("kv_num_heads", h);
    }
    if (packed) att->SetInt("packed_qkv", 1);
    if (m.causal) att->SetInt("is_causal", 1);
    uses.Rebuild();
    return true;
  }
};

Status FuseAttention(Graph& graph) {
  AttentionFuser f{graph};
  // Softmax outputs as anchors: values outlive the nodes a rewrite removes.
  std::vector<Value*> anchors;
  for (auto& n : graph.nodes())
    if (IsOp(n.get(), "Softmax") && n->output(0)) anchors.push_back(n->output(0));
  bool changed = false;
  for (Value* a : anchors)
    if (a->producer) changed |= f.TryFuse(a->producer);
  if (!changed) return Status::Ok();
  return graph.TopologicalSort();
}

}  // namespace

Status RunFuseAttention(Graph& graph, const CompileOptions& options) {
  if (!options.fuse) return Status::Ok();
  return FuseAttention(graph);
}

}  // namespace oc

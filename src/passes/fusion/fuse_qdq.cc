// fuse-qdq: a QDQ-form model (QuantizeLinear/DequantizeLinear around float ops,
// as quantization tools export it) computes in float between the DQs and the
// Q; the integer ops compute the same products exactly, then round once:
//   Q(Conv(DQ(x), DQ(w), DQ(b)))        -> QLinearConv(x, w, b)
//   Q(Relu(Conv(DQ(x), DQ(w), DQ(b))))  -> QLinearConv when Q's zero point is the
//                                          type's minimum (saturation is the Relu)
//   Q(MatMul(DQ(a), DQ(b)))             -> QLinearMatMul(a, b)
// Conditions: 8-bit quantized tensors, float32 scales, x / a / y quantized per
// tensor, weights per tensor or per output channel (Conv: DQ axis 0; MatMul: a
// 2-D b on axis 1), an int32 bias whose scale is x_scale * w_scale (checked on
// the constants), and float intermediates used by nothing else. Runs before
// constant folding, which would otherwise turn the weight DQs into float
// constants. The dropped DQs are removed by dead-code elimination when unused.
#include <cmath>
#include <optional>
#include <vector>

#include "ops/infer_util.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

bool IsQ8(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

Node* ProducerOp(const Value* v, const char* op) {
  if (!v || !v->producer) return nullptr;
  Node* n = v->producer;
  return n->domain.empty() && n->op_type == op ? n : nullptr;
}

// A float intermediate the fusion removes: one reader, not a graph output.
bool PrivateValue(const Graph& g, const Value* v) { return v && !g.IsGraphOutput(v) && CountUses(g, v) == 1; }

// The value of a constant one-element int8/uint8 tensor.
std::optional<int> ConstQ8(const Value* v) {
  if (!v || !v->constant || !IsQ8(v->dtype) || v->NumElements() != 1 || v->constant->size() < 1)
    return std::nullopt;
  const uint8_t b = v->constant->data()[0];
  return v->dtype == DataType::kInt8 ? static_cast<int>(static_cast<int8_t>(b)) : static_cast<int>(b);
}

bool OneElement(const Value* v) {
  return v && v->IsStatic() && v->NumElements() == 1 && v->shape.size() <= 1;
}

// The quantized tensor, scale and zero point (null when absent) of a Q or DQ.
struct QParams {
  Value* q = nullptr;  // DQ: its input; Q: its output
  Value* scale = nullptr;
  Value* zp = nullptr;
  int64_t axis = 1;
  int64_t channels = 1;  // 1: per tensor
};

// A DQ of an 8-bit tensor with a float32 scale, per tensor or (when
// `axis_dim` >= 0) per channel along that dimension of its input.
std::optional<QParams> MatchDequantize(const Node* dq, int64_t axis_dim) {
  if (!dq || dq->GetInt("block_size", 0) != 0) return std::nullopt;
  QParams p{dq->input(0), dq->input(1), dq->input(2)};
  if (!p.q || !IsQ8(p.q->dtype) || !p.q->IsStatic() || !p.scale || p.scale->dtype != DataType::kFloat32)
    return std::nullopt;
  if (dq->GetInt("output_dtype", 0) > 1) return std::nullopt;  // float32 output only
  if (p.zp && (p.zp->dtype != p.q->dtype || p.zp->shape != p.scale->shape)) {
    if (!(OneElement(p.zp) && OneElement(p.scale))) return std::nullopt;
  }
  if (OneElement(p.scale)) return p;
  if (axis_dim < 0 || !p.scale->IsStatic() || p.scale->shape.size() != 1) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(p.q->shape.size());
  int64_t axis = dq->GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis != axis_dim || p.scale->shape[0] != p.q->shape[static_cast<size_t>(axis)]) return std::nullopt;
  p.axis = axis;
  p.channels = p.scale->shape[0];
  return p;
}

// A zero point for an absent one (the fused ops' opset-10 form requires it).
Value* ZeroPoint(Graph& g, Value* zp, DataType t, const std::string& hint) {
  if (zp) return zp;
  return g.AddConstant(g.UniqueName(hint + "_zero_point"), t, {}, TensorData::Allocate(1));
}

// The int32 bias of a DQ(b_q) whose scale equals x_scale * w_scale per channel.
Value* MatchBias(Value* b, const QParams& x, const QParams& w, int64_t m) {
  Node* dq = ProducerOp(b, "DequantizeLinear");
  if (!dq) return nullptr;
  Value* bq = dq->input(0);
  Value* bs = dq->input(1);
  if (!bq || bq->dtype != DataType::kInt32 || !bq->IsStatic() || bq->NumElements() != m || !bs) return nullptr;
  if (const Value* bz = dq->input(2)) {
    auto z = ConstInts(bz);
    if (!z) return nullptr;
    for (int64_t v : *z)
      if (v != 0) return nullptr;
  }
  auto sb = ConstFloats(bs), sx = ConstFloats(x.scale), sw = ConstFloats(w.scale);
  if (!sb || !sx || !sw || sx->size() != 1) return nullptr;
  for (int64_t c = 0; c < m; ++c) {
    const float want = (*sx)[0] * (*sw)[sw->size() == 1 ? 0 : static_cast<size_t>(c)];
    const float got = (*sb)[sb->size() == 1 ? 0 : static_cast<size_t>(c)];
    if (std::fabs(got - want) > 1e-6f * std::fabs(want)) return nullptr;
  }
  return bq;
}

std::optional<QParams> MatchQuantize(const Node& q) {
  QParams p{q.output(0), q.input(1), q.input(2)};
  if (!p.q || !IsQ8(p.q->dtype) || !OneElement(p.scale) || p.scale->dtype != DataType::kFloat32)
    return std::nullopt;
  if (p.zp && (!OneElement(p.zp) || p.zp->dtype != p.q->dtype)) return std::nullopt;
  if (q.GetInt("block_size", 0) != 0 || q.HasAttr("precision")) return std::nullopt;
  return p;
}

bool Registered(const char* op, int opset) { return OpRegistry::Global().Find("", op, opset) != nullptr; }

bool TryFuseConv(Graph& g, Node& qn) {
  auto y = MatchQuantize(qn);
  if (!y) return false;
  Value* yf = qn.input(0);
  Node* relu = ProducerOp(yf, "Relu");
  if (relu) {
    // Q(Relu(v)) == Q(v) only when Q's zero point saturates at the bottom of the type.
    const auto zp = ConstQ8(y->zp);
    const int qmin = y->q->dtype == DataType::kInt8 ? -128 : 0;
    if (!PrivateValue(g, yf) || !(y->zp ? zp == qmin : qmin == 0)) return false;
    yf = relu->input(0);
  }
  Node* conv = ProducerOp(yf, "Conv");
  if (!conv || !PrivateValue(g, yf) || !Registered("QLinearConv", conv->opset)) return false;
  auto x = MatchDequantize(ProducerOp(conv->input(0), "DequantizeLinear"), -1);
  auto w = MatchDequantize(ProducerOp(conv->input(1), "DequantizeLinear"), 0);
  if (!x || !w) return false;
  const int64_t m = w->q->shape.empty() ? 0 : w->q->shape[0];
  Value* bias = nullptr;
  if (Value* b = conv->input(2)) {
    bias = MatchBias(b, *x, *w, m);
    if (!bias) return false;
  }
  std::vector<Value*> ins = {x->q,
                             x->scale,
                             ZeroPoint(g, x->zp, x->q->dtype, conv->name + "_x"),
                             w->q,
                             w->scale,
                             ZeroPoint(g, w->zp, w->q->dtype, conv->name + "_w"),
                             y->scale,
                             ZeroPoint(g, y->zp, y->q->dtype, conv->name + "_y")};
  if (bias) ins.push_back(bias);
  Value* out = y->q;
  const std::string name = g.UniqueName(conv->name + "_qlinear");
  const int opset = conv->opset;
  auto attrs = conv->attrs;
  g.RemoveNode(&qn);
  if (relu) g.RemoveNode(relu);
  g.RemoveNode(conv);
  Node* fused = g.AddNode("QLinearConv", name, ins, {out});
  fused->opset = opset;
  fused->attrs = std::move(attrs);
  return true;
}

bool TryFuseMatMul(Graph& g, Node& qn) {
  auto y = MatchQuantize(qn);
  if (!y) return false;
  Value* yf = qn.input(0);
  Node* mm = ProducerOp(yf, "MatMul");
  if (!mm || !PrivateValue(g, yf) || !Registered("QLinearMatMul", mm->opset)) return false;
  auto a = MatchDequantize(ProducerOp(mm->input(0), "DequantizeLinear"), -1);
  Node* dqb = ProducerOp(mm->input(1), "DequantizeLinear");
  const bool b2d = dqb && dqb->input(0) && dqb->input(0)->shape.size() == 2;
  auto b = MatchDequantize(dqb, b2d ? 1 : -1);
  if (!a || !b) return false;
  std::vector<Value*> ins = {a->q,
                             a->scale,
                             ZeroPoint(g, a->zp, a->q->dtype, mm->name + "_a"),
                             b->q,
                             b->scale,
                             ZeroPoint(g, b->zp, b->q->dtype, mm->name + "_b"),
                             y->scale,
                             ZeroPoint(g, y->zp, y->q->dtype, mm->name + "_y")};
  Value* out = y->q;
  const std::string name = g.UniqueName(mm->name + "_qlinear");
  const int opset = mm->opset;
  g.RemoveNode(&qn);
  g.RemoveNode(mm);
  Node* fused = g.AddNode("QLinearMatMul", name, ins, {out});
  fused->opset = opset;
  return true;
}

}  // namespace

Status RunFuseQdq(Graph& graph, const CompileOptions& options) {
  if (!options.fuse) return Status::Ok();
  std::vector<Node*> quantizes;
  for (auto& n : graph.nodes())
    if (n->domain.empty() && n->op_type == "QuantizeLinear") quantizes.push_back(n.get());
  bool changed = false;
  for (Node* q : quantizes) {
    const Value* in = q->input(0);
    if (!in || !in->producer) continue;
    // TryFuse* remove q when they succeed; nothing else removes nodes here.
    if (TryFuseConv(graph, *q) || TryFuseMatMul(graph, *q)) changed = true;
  }
  if (changed) OC_RETURN_IF_ERROR(graph.TopologicalSort());
  return Status::Ok();
}

}  // namespace oc

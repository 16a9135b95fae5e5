// ai.onnx Attention (opsets 23-25) and ai.onnx.preview FlexAttention on the
// fused kernel of attention_core.h.
//
// Attention takes Q, K, V either 4-D ([batch, heads, seq, head_size]) or 3-D
// ([batch, seq, heads * head_size], with q_num_heads / kv_num_heads); the 3-D
// forms are read in place through strides, never transposed. With past_key /
// past_value the present outputs hold past ++ new keys (4-D), and attention
// reads those. Grouped-query attention maps query head h to key/value head
// h / (q_heads / kv_heads).
//
// Packed 3-D form (made by fuse-attention, not an ONNX attribute): with
// packed_qkv = 1, Q, K and V are one [batch, seq, 3 * heads * head_size]
// tensor holding Q | K | V along the last dim (GPT-2's c_attn output before its
// Split), read in place; q_num_heads == kv_num_heads.
#include <cmath>
#include <cstring>
#include <string>

#include "ops/cpu/attention/attention_core.h"
#include "ops/cpu/attention/attention_flex.h"
#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// Sizes of one Attention node; -1 where unknown (inference on dynamic shapes).
struct Geometry {
  bool is3d = false;
  bool packed = false;  // packed_qkv: Q | K | V in one 3-D tensor
  int64_t batch = -1, q_heads = -1, kv_heads = -1, q_len = -1, kv_new = -1, past = 0;
  int64_t head_dim = -1, v_dim = -1;
  int64_t kv_total() const { return kv_new < 0 || past < 0 ? -1 : kv_new + past; }
};

int64_t DivOrUnknown(int64_t a, int64_t b) { return a < 0 || b <= 0 ? -1 : a / b; }

// Checks that two dims agree where both are known.
Status SameDim(const Node& n, const char* what, int64_t a, int64_t b) {
  if (a >= 0 && b >= 0 && a != b)
    return InvalidArgument(n.Describe(), ": ", what, " disagree (", a, " vs ", b, ")");
  return Status::Ok();
}

Expected<Geometry> ResolveGeometry(const Node& n) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(n, i));
  const Value& q = *n.input(0);
  const Value& k = *n.input(1);
  const Value& v = *n.input(2);
  const size_t rank = q.shape.size();
  if ((rank != 3 && rank != 4) || k.shape.size() != rank || v.shape.size() != rank)
    return InvalidArgument(n.Describe(), ": Q, K and V must all be 3-D or all 4-D, got ", q.ShapeString(), ", ",
                           k.ShapeString(), ", ", v.ShapeString());
  Geometry g;
  g.is3d = rank == 3;
  g.batch = q.shape[0];
  g.packed = n.GetInt("packed_qkv", 0) != 0;
  if (g.packed && (!g.is3d || n.input(1) != n.input(0) || n.input(2) != n.input(0) ||
                   n.GetInt("q_num_heads", 0) != n.GetInt("kv_num_heads", 0) || q.shape[2] % 3 != 0))
    return InvalidArgument(n.Describe(), ": packed_qkv needs one 3-D input [batch, seq, 3 * hidden] as Q, K and V "
                           "and q_num_heads == kv_num_heads, got ", q.ShapeString());
  // Hidden size of each of Q, K, V.
  const int64_t qd = g.packed ? q.shape[2] / 3 : q.shape[2];
  const int64_t kd = g.packed ? qd : (g.is3d ? k.shape[2] : -1);
  const int64_t vd = g.packed ? qd : (g.is3d ? v.shape[2] : -1);
  if (g.is3d) {
    g.q_heads = n.GetInt("q_num_heads", 0);
    g.kv_heads = n.GetInt("kv_num_heads", 0);
    if (g.q_heads <= 0 || g.kv_heads <= 0)
      return InvalidArgument(n.Describe(), ": 3-D inputs need positive q_num_heads and kv_num_heads attributes");
    g.q_len = q.shape[1];
    g.kv_new = k.shape[1];
    for (auto [dim, heads, what] : {std::tuple{qd, g.q_heads, "Q"}, {kd, g.kv_heads, "K"},
                                    {vd, g.kv_heads, "V"}})
      if (dim >= 0 && dim % heads != 0)
        return InvalidArgument(n.Describe(), ": ", what, " hidden size ", dim, " is not a multiple of its ", heads,
                               " heads");
    g.head_dim = DivOrUnknown(qd, g.q_heads);
    OC_RETURN_IF_ERROR(SameDim(n, "Q and K head sizes", g.head_dim, DivOrUnknown(kd, g.kv_heads)));
    g.v_dim = DivOrUnknown(vd, g.kv_heads);
    OC_RETURN_IF_ERROR(SameDim(n, "K and V sequence lengths", k.shape[1], v.shape[1]));
  } else {
    g.q_heads = q.shape[1];
    g.kv_heads = k.shape[1];
    g.q_len = q.shape[2];
    g.kv_new = k.shape[2];
    g.head_dim = q.shape[3];
    g.v_dim = v.shape[3];
    OC_RETURN_IF_ERROR(SameDim(n, "Q and K head sizes", q.shape[3], k.shape[3]));
    OC_RETURN_IF_ERROR(SameDim(n, "K and V head counts", k.shape[1], v.shape[1]));
    OC_RETURN_IF_ERROR(SameDim(n, "K and V sequence lengths", k.shape[2], v.shape[2]));
  }
  OC_RETURN_IF_ERROR(SameDim(n, "Q and K batch sizes", q.shape[0], k.shape[0]));
  OC_RETURN_IF_ERROR(SameDim(n, "Q and V batch sizes", q.shape[0], v.shape[0]));
  if (g.q_heads > 0 && g.kv_heads > 0 && g.q_heads % g.kv_heads != 0)
    return InvalidArgument(n.Describe(), ": q heads (", g.q_heads, ") must be a multiple of kv heads (", g.kv_heads,
                           ")");
  const Value* pk = n.input(4);
  const Value* pv = n.input(5);
  if ((pk == nullptr) != (pv == nullptr))
    return InvalidArgument(n.Describe(), ": past_key and past_value must be given together");
  if (pk) {
    if (n.input(6))
      return InvalidArgument(n.Describe(), ": nonpad_kv_seqlen cannot be combined with past_key/past_value");
    if (!pk->has_shape || !pv->has_shape || pk->shape.size() != 4 || pv->shape.size() != 4)
      return InvalidArgument(n.Describe(), ": past_key and past_value must be 4-D [batch, kv_heads, past, head]");
    OC_RETURN_IF_ERROR(SameDim(n, "past_key and Q batch sizes", pk->shape[0], g.batch));
    OC_RETURN_IF_ERROR(SameDim(n, "past_key and K head counts", pk->shape[1], g.kv_heads));
    OC_RETURN_IF_ERROR(SameDim(n, "past_key and K head sizes", pk->shape[3], g.head_dim));
    OC_RETURN_IF_ERROR(SameDim(n, "past_value and V head sizes", pv->shape[3], g.v_dim));
    OC_RETURN_IF_ERROR(SameDim(n, "past_key and past_value lengths", pk->shape[2], pv->shape[2]));
    g.past = pk->shape[2];
  }
  return g;
}

Status InferAttention(Node& node) {
  OC_ASSIGN_OR_RETURN(Geometry g, ResolveGeometry(node));
  const DataType t1 = node.input(0)->dtype, t2 = node.input(2)->dtype;
  if (g.is3d) {
    const int64_t hidden = g.v_dim < 0 ? -1 : g.q_heads * g.v_dim;
    SetOutput(node, 0, t1, {g.batch, g.q_len, hidden});
  } else {
    SetOutput(node, 0, t1, {g.batch, g.q_heads, g.q_len, g.v_dim});
  }
  SetOutput(node, 1, node.input(1)->dtype, {g.batch, g.kv_heads, g.kv_total(), g.head_dim});
  SetOutput(node, 2, t2, {g.batch, g.kv_heads, g.kv_total(), g.v_dim});
  SetOutput(node, 3, t1, {g.batch, g.q_heads, g.q_len, g.kv_total()});
  return Status::Ok();
}

// Element strides of a [batch, heads, seq, dim] view of a 3-D or 4-D input.
attn::HeadView View(const std::vector<int64_t>& shape, bool is3d, int64_t heads) {
  attn::HeadView v;
  if (is3d) {  // [batch, seq, heads * dim]
    v.sb = shape[1] * shape[2];
    v.ss = shape[2];
    v.sh = shape[2] / heads;
  } else {  // [batch, heads, seq, dim]
    v.sb = shape[1] * shape[2] * shape[3];
    v.sh = shape[2] * shape[3];
    v.ss = shape[3];
  }
  return v;
}

attn::HeadView Contiguous4d(int64_t heads, int64_t seq, int64_t dim) {
  return {nullptr, heads * seq * dim, seq * dim, dim};
}

// Writes past ++ new into a contiguous [batch, heads, past + new, dim] buffer.
template <typename T>
void Concat(T* dst, const T* past, int64_t past_len, const T* src, const attn::HeadView& sv, int64_t batch,
            int64_t heads, int64_t new_len, int64_t dim) {
  const int64_t total = past_len + new_len;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      T* d = dst + (b * heads + h) * total * dim;
      if (past_len) std::memcpy(d, past + (b * heads + h) * past_len * dim, sizeof(T) * past_len * dim);
      d += past_len * dim;
      const T* s = src + b * sv.sb + h * sv.sh;
      if (sv.ss == dim) {
        std::memcpy(d, s, sizeof(T) * new_len * dim);
      } else {
        for (int64_t j = 0; j < new_len; ++j) std::memcpy(d + j * dim, s + j * sv.ss, sizeof(T) * dim);
      }
    }
}

void* OutputOrNull(const KernelIO& io, size_t i) { return i < io.num_outputs ? io.outputs[i] : nullptr; }

template <typename T>
class AttentionKernel final : public Kernel {
 public:
  AttentionKernel(const attn::Params& params, const Geometry& g, int max_threads, bool whole_rows)
      : p_(params), g_(g), plan_(params, std::is_same_v<T, float>, max_threads, whole_rows) {
    k_in_ = p_.k;
    v_in_ = p_.v;
    const int64_t total = g_.kv_total();
    k_cat_ = Contiguous4d(g_.kv_heads, total, g_.head_dim);
    v_cat_ = Contiguous4d(g_.kv_heads, total, g_.v_dim);
    k_bytes_ = sizeof(T) * g_.batch * g_.kv_heads * total * g_.head_dim;
    v_bytes_ = sizeof(T) * g_.batch * g_.kv_heads * total * g_.v_dim;
  }

  // With past inputs, past ++ new goes to the present outputs, or to scratch
  // for an output the model does not take.
  void set_past(bool has_past, bool present_k, bool present_v) {
    has_past_ = has_past;
    k_scratch_ = has_past && !present_k ? Align(k_bytes_) : 0;
    v_scratch_ = has_past && !present_v ? Align(v_bytes_) : 0;
  }

  // packed_qkv: where K and V start within each row of the one input (elements).
  void set_packed_offsets(int64_t k_off, int64_t v_off) {
    k_off_ = k_off;
    v_off_ = v_off;
  }

  size_t ScratchBytes() const override { return plan_.ScratchBytes() + k_scratch_ + v_scratch_; }

  Status Run(const KernelIO& io) override {
    attn::Params p = p_;
    p.q.data = io.inputs[0];
    const T* k = io.in<T>(1) + k_off_;
    const T* v = io.in<T>(2) + v_off_;
    T* present_k = static_cast<T*>(OutputOrNull(io, 1));
    T* present_v = static_cast<T*>(OutputOrNull(io, 2));
    char* cat_scratch = static_cast<char*>(io.scratch) + plan_.ScratchBytes();
    if (has_past_) {
      T* kc = k_scratch_ ? reinterpret_cast<T*>(cat_scratch) : present_k;
      T* vc = v_scratch_ ? reinterpret_cast<T*>(cat_scratch + k_scratch_) : present_v;
      Concat(kc, io.in<T>(4), g_.past, k, k_in_, g_.batch, g_.kv_heads, g_.kv_new, g_.head_dim);
      Concat(vc, io.in<T>(5), g_.past, v, v_in_, g_.batch, g_.kv_heads, g_.kv_new, g_.v_dim);
      p.k = k_cat_;
      p.v = v_cat_;
      p.k.data = kc;
      p.v.data = vc;
    } else {
      p.k.data = k;
      p.v.data = v;
      if (present_k) Concat<T>(present_k, nullptr, 0, k, k_in_, g_.batch, g_.kv_heads, g_.kv_new, g_.head_dim);
      if (present_v) Concat<T>(present_v, nullptr, 0, v, v_in_, g_.batch, g_.kv_heads, g_.kv_new, g_.v_dim);
    }
    if (p.mask_kind != attn::MaskKind::kNone) p.mask = io.inputs[3];
    if (io.num_inputs > 6 && io.inputs[6]) p.nonpad = io.in<int64_t>(6);
    p.y = io.outputs[0];
    p.qk_out = OutputOrNull(io, 3);
    plan_.Run<T>(p, io.pool, io.scratch);
    return Status::Ok();
  }

 private:
  static size_t Align(size_t b) { return (b + 63) / 64 * 64; }

  attn::Params p_;
  Geometry g_;
  attn::Plan plan_;
  attn::HeadView k_in_, v_in_, k_cat_, v_cat_;
  size_t k_bytes_ = 0, v_bytes_ = 0;
  size_t k_scratch_ = 0, v_scratch_ = 0;
  bool has_past_ = false;
  int64_t k_off_ = 0, v_off_ = 0;
};

// Strides of attn_mask broadcast (numpy, right-aligned) to
// [batch, q_heads, q_len, mask_len]. The key dim is never broadcast: a mask
// shorter than the keys masks the keys past its end.
Status SetMaskView(const Node& n, const Geometry& g, attn::Params& p) {
  const Value* m = n.input(3);
  if (!m) return Status::Ok();
  const DataType qt = n.input(0)->dtype;
  if (m->dtype == DataType::kBool) p.mask_kind = attn::MaskKind::kBool;
  else if (m->dtype == qt) p.mask_kind = attn::MaskKind::kAdditive;
  else
    return NotSupported(n.Describe(), ": attn_mask of type ", DataTypeName(m->dtype),
                        " is not supported (expected bool or ", DataTypeName(qt), ", the type of Q)");
  const auto& s = m->shape;
  if (s.empty() || s.size() > 4)
    return InvalidArgument(n.Describe(), ": attn_mask must have rank 1 to 4, got ", m->ShapeString());
  const int64_t target[4] = {g.batch, g.q_heads, g.q_len, g.kv_total()};
  std::vector<int64_t> st = Strides(s);
  int64_t strides[4] = {0, 0, 0, 1};
  const size_t r = s.size();
  for (size_t i = 0; i + 1 < r; ++i) {
    const size_t d = 4 - r + i;
    if (s[i] != 1 && s[i] != target[d])
      return InvalidArgument(n.Describe(), ": attn_mask shape ", m->ShapeString(), " does not broadcast to [",
                             g.batch, ",", g.q_heads, ",", g.q_len, ",", g.kv_total(), "]");
    strides[d] = s[i] == 1 ? 0 : st[i];
  }
  p.mask_len = s.back();
  if (p.mask_len > g.kv_total())
    return InvalidArgument(n.Describe(), ": attn_mask has ", p.mask_len, " key positions, more than the ",
                           g.kv_total(), " keys");
  p.m_sb = strides[0];
  p.m_sh = strides[1];
  p.m_sq = strides[2];
  return Status::Ok();
}

Expected<KernelPtr> MakeAttention(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(Geometry g, ResolveGeometry(n));
  if (g.q_heads <= 0 || g.kv_heads <= 0)
    return InvalidArgument(n.Describe(), ": Q and K/V need at least one head, got ", g.q_heads, " and ", g.kv_heads);
  const DataType t = n.input(0)->dtype;
  for (size_t i : {1, 2, 4, 5})
    if (n.input(i) && n.input(i)->dtype != t)
      return NotSupported(n.Describe(), ": input ", i, " has type ", DataTypeName(n.input(i)->dtype),
                          ", expected Q's type ", DataTypeName(t));
  if (n.input(6) && n.input(6)->shape != std::vector<int64_t>{g.batch})
    return InvalidArgument(n.Describe(), ": nonpad_kv_seqlen must have shape [", g.batch, "], got ",
                           n.input(6)->ShapeString());
  const int64_t mode = n.GetInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return InvalidArgument(n.Describe(), ": qk_matmul_output_mode must be 0..3, got ", mode);
  attn::Params p;
  p.batch = g.batch;
  p.q_heads = g.q_heads;
  p.kv_heads = g.kv_heads;
  p.q_len = g.q_len;
  p.kv_len = g.kv_total();
  p.head_dim = g.head_dim;
  p.v_dim = g.v_dim;
  p.q = View(n.input(0)->shape, g.is3d, g.q_heads);
  p.k = View(n.input(1)->shape, g.is3d, g.kv_heads);
  p.v = View(n.input(2)->shape, g.is3d, g.kv_heads);
  if (g.packed) {  // rows of 3 * hidden; heads head_size apart within each third
    p.q.sh = g.head_dim;
    p.k.sh = g.head_dim;
    p.v.sh = g.v_dim;
  }
  if (g.is3d) {
    p.y_sb = g.q_len * g.q_heads * g.v_dim;
    p.y_ss = g.q_heads * g.v_dim;
    p.y_sh = g.v_dim;
  } else {
    p.y_sb = g.q_heads * g.q_len * g.v_dim;
    p.y_sh = g.q_len * g.v_dim;
    p.y_ss = g.v_dim;
  }
  p.scale = n.HasAttr("scale") ? n.GetFloat("scale", 1.f) : 1.0 / std::sqrt(static_cast<double>(g.head_dim));
  p.softcap = n.GetFloat("softcap", 0.f);
  p.causal = n.GetInt("is_causal", 0) != 0;
  p.left_window = n.GetInt("left_window_size", -1);
  p.right_window = n.GetInt("right_window_size", -1);
  if (p.left_window < -1 || p.right_window < -1)
    return InvalidArgument(n.Describe(), ": left_window_size and right_window_size must be -1 or >= 0");
  p.offset = g.past;
  p.qk_mode = static_cast<int>(mode);
  OC_RETURN_IF_ERROR(SetMaskView(n, g, p));
  const bool qk = n.output(3) != nullptr;
  auto finish = [&](auto* kernel) -> Expected<KernelPtr> {
    kernel->set_past(n.input(4) != nullptr, n.output(1) != nullptr, n.output(2) != nullptr);
    if (g.packed) kernel->set_packed_offsets(g.q_heads * g.head_dim, 2 * g.q_heads * g.head_dim);
    return KernelPtr(kernel);
  };
  switch (t) {
    case DataType::kFloat32: return finish(new AttentionKernel<float>(p, g, init.max_threads, qk));
    case DataType::kFloat64: return finish(new AttentionKernel<double>(p, g, init.max_threads, qk));
    default: return ew::UnsupportedDtype(n, t);
  }
}

// FlexAttention without score_mod / prob_mod: plain softmax attention over
// 4-D inputs, grouped-query when K/V have fewer heads. (With them the node was
// expanded into ai.onnx nodes by ExpandFlexAttentionMods at parse time.)
Status InferFlexAttention(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& q = *node.input(0);
  const Value& v = *node.input(2);
  if (q.shape.size() != 4 || node.input(1)->shape.size() != 4 || v.shape.size() != 4)
    return InvalidArgument(node.Describe(), ": Q, K and V must be 4-D");
  SetOutput(node, 0, v.dtype, {q.shape[0], q.shape[1], q.shape[2], v.shape[3]});
  return Status::Ok();
}

Expected<KernelPtr> MakeFlexAttention(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (n.HasAttr("score_mod") || n.HasAttr("prob_mod"))
    return NotSupported(n.Describe(), ": score_mod / prob_mod subgraphs are not supported");
  const auto& qs = n.input(0)->shape;
  const auto& ks = n.input(1)->shape;
  const auto& vs = n.input(2)->shape;
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[3] != qs[3] || vs[1] != ks[1] || vs[2] != ks[2] || ks[1] <= 0 ||
      qs[1] % ks[1] != 0)
    return InvalidArgument(n.Describe(), ": Q ", n.input(0)->ShapeString(), ", K ", n.input(1)->ShapeString(),
                           " and V ", n.input(2)->ShapeString(),
                           " must share batch, K/V heads and lengths, Q/K head size, and q heads % kv heads == 0");
  const DataType t = n.input(0)->dtype;
  if (n.input(1)->dtype != t || n.input(2)->dtype != t)
    return InvalidArgument(n.Describe(), ": Q, K and V must have the same type");
  Geometry g;
  g.batch = qs[0];
  g.q_heads = qs[1];
  g.kv_heads = ks[1];
  g.q_len = qs[2];
  g.kv_new = ks[2];
  g.head_dim = qs[3];
  g.v_dim = vs[3];
  attn::Params p;
  p.batch = g.batch;
  p.q_heads = g.q_heads;
  p.kv_heads = g.kv_heads;
  p.q_len = g.q_len;
  p.kv_len = g.kv_new;
  p.head_dim = g.head_dim;
  p.v_dim = g.v_dim;
  p.q = View(qs, false, g.q_heads);
  p.k = View(ks, false, g.kv_heads);
  p.v = View(vs, false, g.kv_heads);
  p.y_sb = g.q_heads * g.q_len * g.v_dim;
  p.y_sh = g.q_len * g.v_dim;
  p.y_ss = g.v_dim;
  p.scale = n.HasAttr("scale") ? n.GetFloat("scale", 1.f) : 1.0 / std::sqrt(static_cast<double>(g.head_dim));
  switch (t) {
    case DataType::kFloat32: return KernelPtr(new AttentionKernel<float>(p, g, init.max_threads, false));
    case DataType::kFloat64: return KernelPtr(new AttentionKernel<double>(p, g, init.max_threads, false));
    default: return ew::UnsupportedDtype(n, t);
  }
}

}  // namespace

void RegisterAttentionOps(OpRegistry& r) {
  r.Register({.op_type = "Attention", .min_opset = 23, .infer = InferAttention, .kernels = CpuKernel(MakeAttention)});
  r.Register({.domain = "ai.onnx.preview", .op_type = "FlexAttention", .min_opset = 1,
              .infer = InferFlexAttention, .kernels = CpuKernel(MakeFlexAttention), .canonicalize = ExpandFlexAttentionMods});
}

}  // namespace oc

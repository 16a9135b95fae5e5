// LinearAttention (opset 27): the recurrent form of linear attention with an
// optional gate and delta rule. Per batch b and key/value head h the state S
// (d_k x d_v, float32) evolves over time t:
//   gated:  S *= exp(decay_t)              (decay per head or per key dim)
//   delta:  v_t = beta_t * (v_t - S^T k_t)
//   S += k_t v_t^T
//   out_t[q head g] = scale * S^T q_t[g]   for every query head g of the group
// Q/K/V are [batch, T, heads * dim]; query head g reads kv head g / (q_heads /
// kv_heads). The state is kept in the present_state output, which is float32
// here like the inputs.
#include <cmath>
#include <cstring>
#include <string>

#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct LinearAttnShape {
  int64_t batch = 0, len = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  bool gating = false, delta = false;
  bool decay_per_dim = false;  // decay [B, T, kv_heads * dk] (else [B, T, kv_heads])
  int64_t beta_heads = 1;      // beta last dim: kv_heads or 1
  float scale = 1.f;
  int64_t max_dk = 0;
};

class LinearAttentionKernel final : public Kernel {
 public:
  explicit LinearAttentionKernel(LinearAttnShape s) : s_(s) {}

  // Two vectors of d_v floats per thread for the delta rule.
  size_t ScratchBytes() const override { return sizeof(float) * (2 * s_.dv + 16) * threads_; }
  void set_threads(int t) { threads_ = std::max(1, t); }

  Status Run(const KernelIO& io) override {
    const float* q = io.in<float>(0);
    const float* k = io.in<float>(1);
    const float* v = io.in<float>(2);
    const float* past = io.num_inputs > 3 && io.inputs[3] ? io.in<float>(3) : nullptr;
    const float* decay = io.num_inputs > 4 && io.inputs[4] ? io.in<float>(4) : nullptr;
    const float* beta = io.num_inputs > 5 && io.inputs[5] ? io.in<float>(5) : nullptr;
    float* out = io.out<float>(0);
    float* state_all = io.out<float>(1);
    const int64_t units = s_.batch * s_.kv_heads;
    const int64_t slots = std::min<int64_t>({units, io.pool->num_threads(), threads_});
    auto work = [&](int64_t slot) {
      float* tmp = static_cast<float*>(io.scratch) + slot * (2 * s_.dv + 16);
      for (int64_t u = units * slot / slots; u < units * (slot + 1) / slots; ++u) RunHead(u, q, k, v, past, decay, beta, out, state_all, tmp);
    };
    if (slots <= 1) {
      work(0);
    } else {
      io.pool->ParallelFor(slots, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) work(t);
      });
    }
    return Status::Ok();
  }

 private:
  void RunHead(int64_t u, const float* q, const float* k, const float* v, const float* past, const float* decay,
               const float* beta, float* out, float* state_all, float* tmp) const {
    const int64_t b = u / s_.kv_heads, h = u % s_.kv_heads;
    const int64_t dk = s_.dk, dv = s_.dv, group = s_.q_heads / s_.kv_heads;
    float* S = state_all + u * dk * dv;
    if (past) std::memcpy(S, past + u * dk * dv, sizeof(float) * dk * dv);
    else std::memset(S, 0, sizeof(float) * dk * dv);
    float* vt = tmp;
    for (int64_t t = 0; t < s_.len; ++t) {
      const int64_t bt = b * s_.len + t;
      const float* kt = k + (bt * s_.kv_heads + h) * dk;
      std::memcpy(vt, v + (bt * s_.kv_heads + h) * dv, sizeof(float) * dv);
      if (s_.gating) {
        if (s_.decay_per_dim) {
          const float* g = decay + (bt * s_.kv_heads + h) * dk;
          for (int64_t d = 0; d < dk; ++d) {
            const float f = std::exp(g[d]);
            for (int64_t m = 0; m < dv; ++m) S[d * dv + m] *= f;
          }
        } else {
          const float f = std::exp(decay[bt * s_.kv_heads + h]);
          for (int64_t i = 0; i < dk * dv; ++i) S[i] *= f;
        }
      }
      if (s_.delta) {
        const float bb = beta[bt * s_.beta_heads + (s_.beta_heads == 1 ? 0 : h)];
        float* r = tmp + dv;
        std::fill(r, r + dv, 0.f);
        for (int64_t d = 0; d < dk; ++d)
          for (int64_t m = 0; m < dv; ++m) r[m] += S[d * dv + m] * kt[d];
        for (int64_t m = 0; m < dv; ++m) vt[m] = bb * (vt[m] - r[m]);
      }
      for (int64_t d = 0; d < dk; ++d)
        for (int64_t m = 0; m < dv; ++m) S[d * dv + m] += kt[d] * vt[m];
      for (int64_t g = 0; g < group; ++g) {
        const int64_t hq = h * group + g;
        const float* qt = q + (bt * s_.q_heads + hq) * dk;
        float* o = out + (bt * s_.q_heads + hq) * dv;
        std::fill(o, o + dv, 0.f);
        for (int64_t d = 0; d < dk; ++d)
          for (int64_t m = 0; m < dv; ++m) o[m] += qt[d] * S[d * dv + m];
        for (int64_t m = 0; m < dv; ++m) o[m] *= s_.scale;
      }
    }
  }

  LinearAttnShape s_;
  int threads_ = 1;
};

Status InferLinearAttention(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& q = *node.input(0);
  const Value& k = *node.input(1);
  const Value& v = *node.input(2);
  if (q.shape.size() != 3 || k.shape.size() != 3 || v.shape.size() != 3)
    return InvalidArgument(node.Describe(), ": query, key and value must be 3-D [batch, T, heads * dim]");
  const int64_t hq = node.GetInt("q_num_heads", 0), hkv = node.GetInt("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    return InvalidArgument(node.Describe(), ": q_num_heads (", hq, ") must be a positive multiple of kv_num_heads (",
                           hkv, ")");
  const int64_t dk = k.shape[2] < 0 ? -1 : k.shape[2] / hkv;
  const int64_t dv = v.shape[2] < 0 ? -1 : v.shape[2] / hkv;
  SetOutput(node, 0, q.dtype, {q.shape[0], q.shape[1], dv < 0 ? -1 : hq * dv});
  const DataType st = node.input(3) ? node.input(3)->dtype : q.dtype;
  SetOutput(node, 1, st, {q.shape[0], hkv, dk, dv});
  return Status::Ok();
}

Expected<KernelPtr> MakeLinearAttention(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& qs = n.input(0)->shape;
  const auto& ks = n.input(1)->shape;
  const auto& vs = n.input(2)->shape;
  LinearAttnShape s;
  s.q_heads = n.GetInt("q_num_heads", 0);
  s.kv_heads = n.GetInt("kv_num_heads", 0);
  s.batch = qs[0];
  s.len = qs[1];
  if (ks[2] % s.kv_heads != 0 || vs[2] % s.kv_heads != 0 || qs[2] % s.q_heads != 0)
    return InvalidArgument(n.Describe(), ": hidden sizes must be multiples of their head counts");
  s.dk = ks[2] / s.kv_heads;
  s.dv = vs[2] / s.kv_heads;
  if (qs[2] / s.q_heads != s.dk)
    return InvalidArgument(n.Describe(), ": query head size ", qs[2] / s.q_heads, " differs from key head size ", s.dk);
  if (ks[0] != s.batch || vs[0] != s.batch || ks[1] != s.len || vs[1] != s.len)
    return InvalidArgument(n.Describe(), ": query, key and value must share batch and length");
  const std::string rule = n.GetString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return InvalidArgument(n.Describe(), ": update_rule must be linear, gated, delta or gated_delta, got '", rule, "'");
  s.gating = rule == "gated" || rule == "gated_delta";
  s.delta = rule == "delta" || rule == "gated_delta";
  const Value* decay = n.input(4);
  const Value* beta = n.input(5);
  if (s.gating != (decay != nullptr))
    return InvalidArgument(n.Describe(), ": update_rule '", rule, "' ", s.gating ? "requires" : "forbids",
                           " the decay input");
  if (s.delta != (beta != nullptr))
    return InvalidArgument(n.Describe(), ": update_rule '", rule, "' ", s.delta ? "requires" : "forbids",
                           " the beta input");
  if (decay) {
    const auto& ds = decay->shape;
    if (ds.size() != 3 || ds[0] != s.batch || ds[1] != s.len || (ds[2] != s.kv_heads && ds[2] != s.kv_heads * s.dk))
      return InvalidArgument(n.Describe(), ": decay must be [", s.batch, ",", s.len, ", kv_heads or kv_heads * d_k], got ",
                             decay->ShapeString());
    s.decay_per_dim = ds[2] != s.kv_heads;
  }
  if (beta) {
    const auto& bs = beta->shape;
    if (bs.size() != 3 || bs[0] != s.batch || bs[1] != s.len || (bs[2] != s.kv_heads && bs[2] != 1))
      return InvalidArgument(n.Describe(), ": beta must be [", s.batch, ",", s.len, ", kv_heads or 1], got ",
                             beta->ShapeString());
    s.beta_heads = bs[2];
  }
  if (n.input(3) && n.input(3)->shape != std::vector<int64_t>{s.batch, s.kv_heads, s.dk, s.dv})
    return InvalidArgument(n.Describe(), ": past_state must be [", s.batch, ",", s.kv_heads, ",", s.dk, ",", s.dv,
                           "], got ", n.input(3)->ShapeString());
  const float scale = n.GetFloat("scale", 0.f);
  s.scale = scale == 0.f ? 1.f / std::sqrt(static_cast<float>(s.dk)) : scale;
  for (size_t i = 0; i < 6; ++i)
    if (n.input(i) && n.input(i)->dtype != DataType::kFloat32) return ew::UnsupportedDtype(n, n.input(i)->dtype);
  auto kernel = std::make_unique<LinearAttentionKernel>(s);
  kernel->set_threads(init.max_threads);
  return KernelPtr(std::move(kernel));
}

}  // namespace

void RegisterLinearAttentionOps(OpRegistry& r) {
  r.Register({.op_type = "LinearAttention", .min_opset = 27, .infer = InferLinearAttention,
              .kernels = CpuKernel(MakeLinearAttention)});
}

}  // namespace oc

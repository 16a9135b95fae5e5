#include "llm/model/weights.h"

#include <string>

namespace oc::llm {

namespace {

constexpr int64_t kPackHeader = 64;  // bytes of a packed operand's header

// Packs W given as row blocks of HF Linear weights ([out_i, in] each, stacked
// into [sum out_i, in]) or as one Conv1D weight ([in, out], `conv1d`), in the
// chosen dtype; `name` is for errors.
Expected<Linear> Pack(const gemm::GemmUkernel& uk, const WeightFormat& fmt, const std::string& name,
                      std::vector<float> w, int64_t in, int64_t out, bool conv1d, std::vector<float> bias) {
  Linear l;
  l.in = in;
  l.out = out;
  l.dtype = fmt.dtype;
  l.bias = std::move(bias);
  const int64_t ld = conv1d ? out : in;
  const bool trans = !conv1d;
  switch (fmt.dtype) {
    case WeightDtype::kBfloat16:
      if (fmt.bf16) {
        l.w_bf16 = gemm::Bf16PackedOperand::Make(gemm::PackedSide::kB, w.data(), ld, trans, out, in, {});
        l.w_bytes = gemm::Bf16PackedBSize(out, in) * 2 + kPackHeader;
        return l;
      }
      for (float& v : w) v = gemm::Bf16ToFloat(gemm::FloatToBf16(v));
      l.bf16_emulated = true;
      [[fallthrough]];
    case WeightDtype::kFloat32:
      l.w = gemm::PackedOperand::Make(uk, gemm::PackedSide::kB, w.data(), ld, trans, out, in, {});
      l.w_bytes = gemm::PackedBSize(uk, out, in) * 4 + kPackHeader;
      return l;
    case WeightDtype::kInt8:
    case WeightDtype::kInt4: {
      if (conv1d) {  // [in, out] -> [out, in]
        std::vector<float> t(w.size());
        for (int64_t i = 0; i < in; ++i)
          for (int64_t j = 0; j < out; ++j) t[static_cast<size_t>(j * in + i)] = w[static_cast<size_t>(i * out + j)];
        w.swap(t);
      }
      auto q = Quantize(w.data(), out, in, fmt.dtype == WeightDtype::kInt8 ? 8 : 4, fmt.group_size);
      if (!q.ok()) return q.status().WithContext(name);
      l.q = std::move(q).value();
      l.w_bytes = l.q.bytes();
      return l;
    }
  }
  return l;
}

struct Loader {
  const Checkpoint& ck;
  const gemm::GemmUkernel& uk;
  const WeightFormat& fmt;

  Expected<std::vector<float>> Get(const std::string& name, std::vector<int64_t> shape) const {
    return ck.Read(name, shape);
  }
  // Several HF Linear layers with one input, fused into one GEMM (outputs side by side).
  Expected<Linear> Fused(const std::vector<std::pair<std::string, int64_t>>& parts, int64_t in, bool bias) const {
    std::vector<float> w, b;
    int64_t out = 0;
    for (const auto& [name, o] : parts) {
      OC_ASSIGN_OR_RETURN(auto part, Get(name + ".weight", {o, in}));
      w.insert(w.end(), part.begin(), part.end());
      if (bias) {
        OC_ASSIGN_OR_RETURN(auto pb, Get(name + ".bias", {o}));
        b.insert(b.end(), pb.begin(), pb.end());
      }
      out += o;
    }
    return Pack(uk, fmt, parts.front().first, std::move(w), in, out, false, std::move(b));
  }
  Expected<Linear> Conv1D(const std::string& name, int64_t in, int64_t out) const {
    OC_ASSIGN_OR_RETURN(auto w, Get(name + ".weight", {in, out}));
    OC_ASSIGN_OR_RETURN(auto b, Get(name + ".bias", {out}));
    return Pack(uk, fmt, name, std::move(w), in, out, true, std::move(b));
  }
};

Status LoadGpt2(const Loader& ld, const ModelConfig& c, WeightStore& ws) {
  const std::string p = ld.ck.Has("transformer.wte.weight") ? "transformer." : "";
  const int64_t e = c.hidden;
  OC_ASSIGN_OR_RETURN(ws.embed, ld.Get(p + "wte.weight", {c.vocab, e}));
  OC_ASSIGN_OR_RETURN(ws.positions, ld.Get(p + "wpe.weight", {c.max_positions, e}));
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string b = p + "h." + std::to_string(l) + ".";
    LayerWeights lw;
    OC_ASSIGN_OR_RETURN(lw.norm1_w, ld.Get(b + "ln_1.weight", {e}));
    OC_ASSIGN_OR_RETURN(lw.norm1_b, ld.Get(b + "ln_1.bias", {e}));
    OC_ASSIGN_OR_RETURN(lw.norm2_w, ld.Get(b + "ln_2.weight", {e}));
    OC_ASSIGN_OR_RETURN(lw.norm2_b, ld.Get(b + "ln_2.bias", {e}));
    OC_ASSIGN_OR_RETURN(lw.qkv, ld.Conv1D(b + "attn.c_attn", e, 3 * e));
    OC_ASSIGN_OR_RETURN(lw.o, ld.Conv1D(b + "attn.c_proj", e, e));
    OC_ASSIGN_OR_RETURN(lw.up, ld.Conv1D(b + "mlp.c_fc", e, c.intermediate));
    OC_ASSIGN_OR_RETURN(lw.down, ld.Conv1D(b + "mlp.c_proj", c.intermediate, e));
    ws.layers.push_back(std::move(lw));
  }
  OC_ASSIGN_OR_RETURN(ws.final_w, ld.Get(p + "ln_f.weight", {e}));
  OC_ASSIGN_OR_RETURN(ws.final_b, ld.Get(p + "ln_f.bias", {e}));
  OC_ASSIGN_OR_RETURN(ws.lm_head, Pack(ld.uk, ld.fmt, "lm_head (tied to wte)", ws.embed, e, c.vocab, false, {}));
  return Status::Ok();
}

Status LoadLlama(const Loader& ld, const ModelConfig& c, WeightStore& ws) {
  const int64_t e = c.hidden, qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim;
  OC_ASSIGN_OR_RETURN(ws.embed, ld.Get("model.embed_tokens.weight", {c.vocab, e}));
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string b = "model.layers." + std::to_string(l) + ".";
    LayerWeights lw;
    OC_ASSIGN_OR_RETURN(lw.norm1_w, ld.Get(b + "input_layernorm.weight", {e}));
    OC_ASSIGN_OR_RETURN(lw.norm2_w, ld.Get(b + "post_attention_layernorm.weight", {e}));
    const std::string a = b + "self_attn.";
    OC_ASSIGN_OR_RETURN(lw.qkv,
                        ld.Fused({{a + "q_proj", qd}, {a + "k_proj", kvd}, {a + "v_proj", kvd}}, e, c.qkv_bias));
    OC_ASSIGN_OR_RETURN(lw.o, ld.Fused({{a + "o_proj", e}}, qd, c.o_bias));
    const std::string m = b + "mlp.";
    OC_ASSIGN_OR_RETURN(lw.up,
                        ld.Fused({{m + "gate_proj", c.intermediate}, {m + "up_proj", c.intermediate}}, e, c.mlp_bias));
    OC_ASSIGN_OR_RETURN(lw.down, ld.Fused({{m + "down_proj", e}}, c.intermediate, c.mlp_bias));
    ws.layers.push_back(std::move(lw));
  }
  OC_ASSIGN_OR_RETURN(ws.final_w, ld.Get("model.norm.weight", {e}));
  if (c.tie_embeddings) {
    OC_ASSIGN_OR_RETURN(ws.lm_head,
                        Pack(ld.uk, ld.fmt, "lm_head (tied to embed_tokens)", ws.embed, e, c.vocab, false, {}));
  } else {
    OC_ASSIGN_OR_RETURN(ws.lm_head, ld.Fused({{"lm_head", c.vocab}}, e, false));
  }
  return Status::Ok();
}

}  // namespace

int64_t WeightStore::bytes() const {
  auto f = [](const std::vector<float>& v) { return static_cast<int64_t>(v.size()) * 4; };
  int64_t b = f(embed) + f(positions) + f(final_w) + f(final_b) + lm_head.bytes();
  for (const LayerWeights& l : layers)
    b += f(l.norm1_w) + f(l.norm1_b) + f(l.norm2_w) + f(l.norm2_b) + l.qkv.bytes() + l.o.bytes() + l.up.bytes() +
         l.down.bytes();
  return b;
}

Expected<WeightStore> LoadWeights(const Checkpoint& ck, const ModelConfig& cfg, const gemm::GemmUkernel& uk,
                                  const WeightFormat& fmt) {
  WeightStore ws;
  Loader ld{ck, uk, fmt};
  OC_RETURN_IF_ERROR(cfg.is_gpt2() ? LoadGpt2(ld, cfg, ws) : LoadLlama(ld, cfg, ws));
  return ws;
}

}  // namespace oc::llm

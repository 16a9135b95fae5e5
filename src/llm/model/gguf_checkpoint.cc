// Checkpoint from a GGUF file: the config.json that the metadata describes and
// the Hugging Face names of the GGUF tensors (see docs/llm.md, "GGUF").
#include <cstring>
#include <span>

#include "llm/model/checkpoint.h"

namespace oc::llm {

namespace {

// Metadata reads with the types checked; errors name the key.
struct Meta {
  const GgufFile& g;

  Expected<std::string> Str(const std::string& key) const {
    const GgufValue* v = g.Find(key);
    if (!v) return InvalidFile(g.path(), ": metadata ", key, " is missing");
    if (v->type != GgufValueType::kString) return InvalidFile(g.path(), ": metadata ", key, " is not a string");
    return v->value.get<std::string>();
  }
  // An integer key (any integer type, non-negative); `def` < 0 means required.
  Expected<int64_t> Int(const std::string& key, int64_t def = -1) const {
    const GgufValue* v = g.Find(key);
    if (!v) {
      if (def < 0) return InvalidFile(g.path(), ": metadata ", key, " is missing (an integer)");
      return def;
    }
    if (v->type == GgufValueType::kArray)
      return NotSupported(g.path(), ": metadata ", key, " is an array (per-layer values are not supported)");
    if (!v->value.is_number_integer() || (!v->value.is_number_unsigned() && v->value.get<int64_t>() < 0))
      return InvalidFile(g.path(), ": metadata ", key, " is ", v->value.dump(), ", expected a non-negative integer");
    return v->value.get<int64_t>();
  }
  Expected<double> Num(const std::string& key, double def) const {
    const GgufValue* v = g.Find(key);
    if (!v) return def;
    if (!v->value.is_number()) return InvalidFile(g.path(), ": metadata ", key, " is not a number");
    return v->value.get<double>();
  }
};

struct LayerName {
  const char* gguf;
  const char* hf;
};

// blk.N.<gguf> -> model.layers.N.<hf> (llama, qwen2)
constexpr LayerName kLlamaLayer[] = {
    {"attn_norm", "input_layernorm"}, {"attn_q", "self_attn.q_proj"},   {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},   {"attn_output", "self_attn.o_proj"}, {"ffn_norm", "post_attention_layernorm"},
    {"ffn_gate", "mlp.gate_proj"},    {"ffn_up", "mlp.up_proj"},         {"ffn_down", "mlp.down_proj"},
};
// blk.N.<gguf> -> h.N.<hf> (gpt2)
constexpr LayerName kGpt2Layer[] = {
    {"attn_norm", "ln_1"},        {"attn_qkv", "attn.c_attn"}, {"attn_output", "attn.c_proj"},
    {"ffn_norm", "ln_2"},         {"ffn_up", "mlp.c_fc"},      {"ffn_down", "mlp.c_proj"},
};

// The Hugging Face name of a GGUF tensor, or "" for tensors the loader does not use.
std::string HfName(const std::string& g, bool gpt2) {
  if (gpt2) {
    if (g == "token_embd.weight") return "wte.weight";
    if (g == "position_embd.weight") return "wpe.weight";
    if (g == "output_norm.weight") return "ln_f.weight";
    if (g == "output_norm.bias") return "ln_f.bias";
  } else {
    if (g == "token_embd.weight") return "model.embed_tokens.weight";
    if (g == "output_norm.weight") return "model.norm.weight";
    if (g == "output.weight") return "lm_head.weight";
  }
  if (g.rfind("blk.", 0) != 0) return "";
  const size_t dot = g.find('.', 4);
  if (dot == std::string::npos || dot == 4) return "";
  const std::string layer = g.substr(4, dot - 4);
  if (layer.find_first_not_of("0123456789") != std::string::npos) return "";
  const size_t dot2 = g.rfind('.');
  if (dot2 <= dot) return "";
  const std::string part = g.substr(dot + 1, dot2 - dot - 1), suffix = g.substr(dot2 + 1);
  if (suffix != "weight" && suffix != "bias") return "";
  for (const auto& n : gpt2 ? std::span<const LayerName>(kGpt2Layer) : std::span<const LayerName>(kLlamaLayer))
    if (part == n.gguf) return (gpt2 ? "h." : "model.layers.") + layer + "." + n.hf + "." + suffix;
  return "";
}

// llama / qwen2 config.json fields; `a` is "{arch}.".
Status LlamaConfig(const Meta& m, const std::string& a, nlohmann::json& c) {
  OC_ASSIGN_OR_RETURN(c["hidden_size"], m.Int(a + "embedding_length"));
  OC_ASSIGN_OR_RETURN(c["num_hidden_layers"], m.Int(a + "block_count"));
  OC_ASSIGN_OR_RETURN(c["intermediate_size"], m.Int(a + "feed_forward_length"));
  {
    OC_ASSIGN_OR_RETURN(int64_t heads, m.Int(a + "attention.head_count"));
    OC_ASSIGN_OR_RETURN(int64_t kv_heads, m.Int(a + "attention.head_count_kv", heads));
    c["num_attention_heads"] = heads;
    c["num_key_value_heads"] = kv_heads;
  }
  OC_ASSIGN_OR_RETURN(c["max_position_embeddings"], m.Int(a + "context_length", 2048));
  OC_ASSIGN_OR_RETURN(c["rms_norm_eps"], m.Num(a + "attention.layer_norm_rms_epsilon", 1e-6));
  OC_ASSIGN_OR_RETURN(c["rope_theta"], m.Num(a + "rope.freq_base", 10000.0));
  if (m.g.Find(a + "attention.key_length")) {
    OC_ASSIGN_OR_RETURN(c["head_dim"], m.Int(a + "attention.key_length"));
    OC_ASSIGN_OR_RETURN(int64_t vlen, m.Int(a + "attention.value_length", c["head_dim"].get<int64_t>()));
    if (vlen != c["head_dim"].get<int64_t>())
      return NotSupported(m.g.path(), ": attention.value_length ", vlen, " != attention.key_length ", c["head_dim"].dump(),
                          " is not supported");
  }
  if (m.g.Find(a + "rope.scaling.type")) {
    OC_ASSIGN_OR_RETURN(std::string type, m.Str(a + "rope.scaling.type"));
    OC_ASSIGN_OR_RETURN(double factor, m.Num(a + "rope.scaling.factor", 1.0));
    if (type == "linear") {
      c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", factor}};
    } else if (type != "none") {
      return NotSupported(m.g.path(), ": ", a, "rope.scaling.type \"", type, "\" is not supported (none, linear)");
    }
  }
  return Status::Ok();
}

// gpt2's config.json fields (GPT2Config's names).
Status Gpt2Config(const Meta& m, nlohmann::json& c) {
  OC_ASSIGN_OR_RETURN(c["n_embd"], m.Int("gpt2.embedding_length"));
  OC_ASSIGN_OR_RETURN(c["n_layer"], m.Int("gpt2.block_count"));
  OC_ASSIGN_OR_RETURN(c["n_head"], m.Int("gpt2.attention.head_count"));
  OC_ASSIGN_OR_RETURN(c["n_positions"], m.Int("gpt2.context_length"));
  OC_ASSIGN_OR_RETURN(c["n_inner"], m.Int("gpt2.feed_forward_length", 4 * c["n_embd"].get<int64_t>()));
  OC_ASSIGN_OR_RETURN(c["layer_norm_epsilon"], m.Num("gpt2.attention.layer_norm_epsilon", 1e-5));
  return Status::Ok();
}

}  // namespace

Status Checkpoint::OpenGguf(const std::string& path) {
  OC_ASSIGN_OR_RETURN(gguf_, GgufFile::Open(path));
  const GgufFile& g = *gguf_;
  Meta m{g};
  OC_ASSIGN_OR_RETURN(std::string arch, m.Str("general.architecture"));
  if (arch != "llama" && arch != "qwen2" && arch != "gpt2")
    return NotSupported(path, ": general.architecture \"", arch, "\" is not supported (llama, qwen2, gpt2)");
  if (g.Tensor("rope_freqs.weight"))
    return NotSupported(path, ": tensor rope_freqs.weight (per-frequency RoPE factors, llama3 RoPE scaling) is not "
                              "supported");
  const std::string a = arch + ".";
  const bool gpt2 = arch == "gpt2";
  nlohmann::json c = nlohmann::json::object();
  c["model_type"] = arch;
  OC_RETURN_IF_ERROR(gpt2 ? Gpt2Config(m, c) : LlamaConfig(m, a, c));
  // The vocabulary: the token list, else the embedding's rows.
  const GgufTensor* embd = g.Tensor("token_embd.weight");
  if (!embd) return InvalidFile(path, ": tensor token_embd.weight is missing");
  const GgufValue* tokens = g.Find("tokenizer.ggml.tokens");
  c["vocab_size"] = tokens && tokens->value.is_array() ? static_cast<int64_t>(tokens->value.size()) : embd->dims.back();
  if (!gpt2) c["tie_word_embeddings"] = g.Tensor("output.weight") == nullptr;
  if (arch == "llama") {
    c["attention_bias"] = g.Tensor("blk.0.attn_q.bias") != nullptr;
    c["mlp_bias"] = g.Tensor("blk.0.ffn_up.bias") != nullptr;
  }
  if (const GgufValue* v = g.Find("tokenizer.ggml.bos_token_id"); v && v->value.is_number_integer())
    c["bos_token_id"] = v->value;
  if (const GgufValue* v = g.Find("tokenizer.ggml.eos_token_id"); v && v->value.is_number_integer())
    c["eos_token_id"] = v->value;
  config_ = std::move(c);

  const int64_t heads = gpt2 ? 0 : config_["num_attention_heads"].get<int64_t>();
  const int64_t kv_heads = gpt2 ? 0 : config_["num_key_value_heads"].get<int64_t>();
  for (const auto& [name, t] : g.tensors()) {
    const std::string hf = HfName(name, gpt2);
    if (hf.empty()) continue;
    GgufName gn{&t, 0, false};
    // gpt2's Conv1D weights ([in, out]) are stored as Linear ones ([out, in]).
    gn.transpose = gpt2 && t.dims.size() == 2 && name.find(".weight") != std::string::npos &&
                   name.rfind("blk.", 0) == 0 && name.find("_norm.") == std::string::npos;
    // llama.cpp's converter interleaves the two rotary halves of each q / k
    // head for GGML's "normal" RoPE; qwen2 (NEOX RoPE) is stored as is.
    if (arch == "llama" && name.find(".attn_q.") != std::string::npos) gn.permute_heads = heads;
    if (arch == "llama" && name.find(".attn_k.") != std::string::npos) gn.permute_heads = kv_heads;
    gguf_names_[hf] = gn;
  }
  return Status::Ok();
}

const Checkpoint::GgufName* Checkpoint::FindGguf(const std::string& name, const std::vector<int64_t>& shape,
                                                 Status* err) const {
  auto it = gguf_names_.find(name);
  if (it == gguf_names_.end()) {
    *err = NotFound(gguf_->path(), ": tensor '", name, "' (shape ", ShapeString(shape), ") is missing");
    return nullptr;
  }
  const GgufTensor& t = *it->second.t;
  if (!GgmlTypeSupported(t.type)) {
    *err = NotSupported(gguf_->path(), ": tensor ", t.name, " has type ", GgmlTypeName(t.type),
                        ", which is not supported (F32, F16, BF16, Q8_0, Q4_0)");
    return nullptr;
  }
  const std::vector<int64_t> hf_shape = it->second.transpose ? t.dims : t.shape();
  if (hf_shape != shape) {
    *err = InvalidFile(gguf_->path(), ": tensor ", t.name, " (", name, ") has shape ", ShapeString(hf_shape),
                       ", expected ", ShapeString(shape), " from the metadata");
    return nullptr;
  }
  const int64_t heads = it->second.permute_heads;
  if (heads > 0 && (shape[0] % (2 * heads) != 0)) {
    *err = InvalidFile(gguf_->path(), ": tensor ", t.name, " has ", shape[0], " rows, not a multiple of 2 x ", heads,
                       " heads");
    return nullptr;
  }
  return &it->second;
}

namespace {

// Row order of a q / k projection as llama.cpp stores it: Hugging Face row
// (head h, half s, index i) is stored at h * D + 2 * i + s.
std::vector<int64_t> UnpermuteOrder(int64_t rows, int64_t heads) {
  const int64_t d = rows / heads, half = d / 2;
  std::vector<int64_t> order(static_cast<size_t>(rows));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < half; ++i) order[static_cast<size_t>(h * d + s * half + i)] = h * d + 2 * i + s;
  return order;
}

}  // namespace

Expected<std::vector<float>> Checkpoint::ReadGguf(const std::string& name, const std::vector<int64_t>& shape) const {
  Status err;
  const GgufName* gn = FindGguf(name, shape, &err);
  if (!gn) return err;
  std::vector<float> out(static_cast<size_t>(gn->t->numel()));
  OC_RETURN_IF_ERROR(DequantizeGguf(*gn->t, out.data()));
  if (gn->transpose) {  // stored [out, in] -> [in, out]
    const int64_t in = gn->t->dims[0], outs = gn->t->dims[1];
    std::vector<float> tr(out.size());
    for (int64_t o = 0; o < outs; ++o)
      for (int64_t i = 0; i < in; ++i) tr[static_cast<size_t>(i * outs + o)] = out[static_cast<size_t>(o * in + i)];
    return tr;
  }
  if (gn->permute_heads == 0) return out;
  const int64_t rows = shape[0], cols = static_cast<int64_t>(out.size()) / rows;
  const auto order = UnpermuteOrder(rows, gn->permute_heads);
  std::vector<float> hf(out.size());
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(hf.data() + r * cols, out.data() + order[static_cast<size_t>(r)] * cols,
                static_cast<size_t>(cols) * sizeof(float));
  return hf;
}

Expected<Checkpoint::GgufRows> Checkpoint::ReadGgufRows(const std::string& name,
                                                        const std::vector<int64_t>& shape) const {
  if (!gguf_) return NotSupported(dir_, ": not a GGUF checkpoint (no stored GGUF blocks)");
  Status err;
  const GgufName* gn = FindGguf(name, shape, &err);
  if (!gn) return err;
  GgufRows r;
  r.type = gn->t->type;
  r.rows = gn->t->numel() / gn->t->dims[0];
  r.cols = gn->t->dims[0];
  r.data = gn->t->data;
  r.row_bytes = r.data.size() / static_cast<size_t>(r.rows);
  if (gn->permute_heads > 0) r.row_order = UnpermuteOrder(r.rows, gn->permute_heads);
  return r;
}

}  // namespace oc::llm

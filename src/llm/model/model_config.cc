#include "llm/model/model_config.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>

namespace oc::llm {

namespace {

// Reads config fields with their types checked; errors name the field.
struct Reader {
  const nlohmann::json& j;
  Status err;

  bool present(const char* k) const { return j.contains(k) && !j[k].is_null(); }
  int64_t Int(const char* k, int64_t def, bool required = false) {
    if (!present(k)) {
      if (required && err.ok()) err = InvalidFile("config.json: missing \"", k, "\" (an integer)");
      return def;
    }
    if (!j[k].is_number_integer() || j[k].get<int64_t>() < 0) {
      if (err.ok()) err = InvalidFile("config.json: \"", k, "\" is ", j[k].dump(), ", expected a non-negative integer");
      return def;
    }
    return j[k].get<int64_t>();
  }
  double Num(const nlohmann::json& o, const char* k, double def, const char* where = "") {
    if (!o.contains(k) || o[k].is_null()) return def;
    if (!o[k].is_number()) {
      if (err.ok()) err = InvalidFile("config.json: \"", where, k, "\" is ", o[k].dump(), ", expected a number");
      return def;
    }
    return o[k].get<double>();
  }
  bool Bool(const char* k, bool def) {
    if (!present(k)) return def;
    if (!j[k].is_boolean()) {
      if (err.ok()) err = InvalidFile("config.json: \"", k, "\" is ", j[k].dump(), ", expected true or false");
      return def;
    }
    return j[k].get<bool>();
  }
  std::string Str(const char* k, const std::string& def) {
    if (!present(k)) return def;
    if (!j[k].is_string()) {
      if (err.ok()) err = InvalidFile("config.json: \"", k, "\" is ", j[k].dump(), ", expected a string");
      return def;
    }
    return j[k].get<std::string>();
  }
};

Expected<Act> ParseAct(const std::string& s, const char* field) {
  if (s == "gelu_new" || s == "gelu_pytorch_tanh" || s == "gelu_fast") return Act::kGeluTanh;
  if (s == "gelu") return Act::kGeluErf;
  if (s == "silu" || s == "swish") return Act::kSilu;
  if (s == "relu") return Act::kRelu;
  return NotSupported("config.json: ", field, " \"", s,
                      "\" is not supported (supported: gelu_new, gelu_pytorch_tanh, gelu, silu, relu)");
}

Status ParseRope(Reader& r, ModelConfig& c) {
  const nlohmann::json& j = r.j;
  // transformers 5 writes rope_parameters {rope_type, rope_theta, ...}; 4.x
  // writes rope_theta and rope_scaling {rope_type | type, factor, ...}.
  nlohmann::json rp = nlohmann::json::object();
  if (r.present("rope_parameters") || r.present("rope_scaling"))
    rp = r.present("rope_parameters") ? j["rope_parameters"] : j["rope_scaling"];
  if (!rp.is_object()) return InvalidFile("config.json: rope_parameters / rope_scaling is not an object");
  c.rope_theta = r.Num(j, "rope_theta", 10000.0);
  c.rope_theta = r.Num(rp, "rope_theta", c.rope_theta, "rope_parameters.");
  std::string type = "default";
  for (const char* k : {"rope_type", "type"})
    if (rp.contains(k) && rp[k].is_string()) {
      type = rp[k].get<std::string>();
      break;
    }
  if (rp.contains("partial_rotary_factor") && r.Num(rp, "partial_rotary_factor", 1.0) != 1.0)
    return NotSupported("config.json: partial_rotary_factor ", rp["partial_rotary_factor"].dump(),
                        " is not supported (only 1.0: RoPE over the whole head)");
  c.rope_factor = r.Num(rp, "factor", 1.0, "rope_parameters.");
  if (type == "default") {
    c.rope_type = RopeType::kDefault;
  } else if (type == "linear") {
    c.rope_type = RopeType::kLinear;
  } else if (type == "llama3") {
    c.rope_type = RopeType::kLlama3;
    c.low_freq_factor = r.Num(rp, "low_freq_factor", 1.0, "rope_parameters.");
    c.high_freq_factor = r.Num(rp, "high_freq_factor", 4.0, "rope_parameters.");
    c.rope_original_max = static_cast<int64_t>(
        r.Num(rp, "original_max_position_embeddings", static_cast<double>(c.max_positions), "rope_parameters."));
    if (c.high_freq_factor <= c.low_freq_factor)
      return InvalidFile("config.json: llama3 RoPE needs high_freq_factor > low_freq_factor, got ", c.high_freq_factor,
                         " and ", c.low_freq_factor);
  } else if (type == "dynamic") {
    // Dynamic NTK changes the frequencies only past max_position_embeddings;
    // within it RoPE is the default one. Longer sequences are refused by Forward.
    c.rope_type = RopeType::kDynamic;
  } else {
    return NotSupported("config.json: RoPE type \"", type,
                        "\" is not supported (supported: default, linear, llama3, dynamic)");
  }
  if (c.rope_factor <= 0) return InvalidFile("config.json: RoPE factor ", c.rope_factor, " must be positive");
  return r.err;
}

}  // namespace

std::vector<float> ModelConfig::RopeInvFreq() const {
  const int64_t half = head_dim / 2;
  std::vector<float> f(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    // As transformers computes it: 1 / theta^(2i / d) in float32.
    const float e = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    double inv = 1.0 / std::pow(rope_theta, static_cast<double>(e));
    if (rope_type == RopeType::kLinear) {
      inv /= rope_factor;
    } else if (rope_type == RopeType::kLlama3) {
      const double old_len = static_cast<double>(rope_original_max);
      const double low_wavelen = old_len / low_freq_factor, high_wavelen = old_len / high_freq_factor;
      const double wavelen = 2 * std::numbers::pi / inv;
      if (wavelen > low_wavelen) {
        inv = inv / rope_factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
        inv = (1 - smooth) * inv / rope_factor + smooth * inv;
      }
    }
    f[static_cast<size_t>(i)] = static_cast<float>(inv);
  }
  return f;
}

Expected<ModelConfig> ParseModelConfig(const nlohmann::json& j) {
  ModelConfig c;
  Reader r{j, Status::Ok()};
  std::string mt = r.Str("model_type", "");
  // model_type, or else the architecture's class name ("LlamaForCausalLM").
  static constexpr struct {
    const char* type;
    const char* class_prefix;
    Arch arch;
  } kTypes[] = {{"gpt2", "GPT2", Arch::kGpt2},
                {"llama", "Llama", Arch::kLlama},
                {"qwen2", "Qwen2", Arch::kQwen2},
                {"mistral", "Mistral", Arch::kMistral}};
  if (mt.empty() && j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string()) {
    const std::string a = j["architectures"][0].get<std::string>();
    for (const auto& t : kTypes)
      if (a.rfind(t.class_prefix, 0) == 0) mt = t.type;
    if (mt.empty())
      return NotSupported("config.json: architecture \"", a,
                          "\" is not supported (supported model types: gpt2, llama, qwen2, mistral)");
  }
  if (mt.empty()) return InvalidFile("config.json: no \"model_type\" or \"architectures\"");
  c.model_type = mt;
  const auto* known = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const auto& t) { return mt == t.type; });
  if (known == std::end(kTypes))
    return NotSupported("config.json: model_type \"", mt,
                        "\" is not supported (supported: gpt2, llama, qwen2, mistral)");
  c.arch = known->arch;

  if (c.arch == Arch::kGpt2) {
    c.vocab = r.Int("vocab_size", 0, true);
    c.hidden = r.Int("n_embd", 0, true);
    c.layers = r.Int("n_layer", 0, true);
    c.heads = r.Int("n_head", 0, true);
    c.kv_heads = c.heads;
    c.max_positions = r.Int("n_positions", 0, true);
    c.intermediate = r.Int("n_inner", 4 * c.hidden);
    c.norm_eps = r.Num(j, "layer_norm_epsilon", 1e-5);
    OC_ASSIGN_OR_RETURN(c.act, ParseAct(r.Str("activation_function", "gelu_new"), "activation_function"));
    c.scale_attn_weights = r.Bool("scale_attn_weights", true);
    c.scale_by_inverse_layer_idx = r.Bool("scale_attn_by_inverse_layer_idx", false);
    if (r.Bool("add_cross_attention", false))
      return NotSupported("config.json: gpt2 add_cross_attention is not supported (decoder-only models)");
    c.tie_embeddings = true;
    c.qkv_bias = c.o_bias = c.mlp_bias = true;
  } else {
    c.vocab = r.Int("vocab_size", 0, true);
    c.hidden = r.Int("hidden_size", 0, true);
    c.layers = r.Int("num_hidden_layers", 0, true);
    c.heads = r.Int("num_attention_heads", 0, true);
    c.kv_heads = r.Int("num_key_value_heads", c.heads);
    c.intermediate = r.Int("intermediate_size", 0, true);
    c.max_positions = r.Int("max_position_embeddings", 2048);
    c.norm_eps = r.Num(j, "rms_norm_eps", 1e-6);
    OC_ASSIGN_OR_RETURN(c.act, ParseAct(r.Str("hidden_act", "silu"), "hidden_act"));
    c.tie_embeddings = r.Bool("tie_word_embeddings", false);
    if (c.arch == Arch::kQwen2) {
      c.qkv_bias = true;
    } else if (c.arch == Arch::kLlama) {
      c.qkv_bias = c.o_bias = r.Bool("attention_bias", false);
      c.mlp_bias = r.Bool("mlp_bias", false);
    }
    if (r.Int("pretraining_tp", 1) > 1)
      return NotSupported("config.json: pretraining_tp ", j["pretraining_tp"].dump(), " is not supported (only 1)");
    OC_RETURN_IF_ERROR(ParseRope(r, c));
  }
  OC_RETURN_IF_ERROR(r.err);
  if (c.vocab == 0 || c.hidden == 0 || c.layers == 0 || c.heads == 0 || c.kv_heads == 0 || c.intermediate == 0)
    return InvalidFile(
        "config.json: vocab, hidden size, layers, heads, key/value heads and intermediate size must be positive");
  if (c.heads % c.kv_heads != 0)
    return InvalidFile("config.json: num_attention_heads ", c.heads, " is not a multiple of num_key_value_heads ",
                       c.kv_heads);
  c.head_dim = c.hidden / c.heads;
  if (!c.is_gpt2()) c.head_dim = r.Int("head_dim", c.head_dim);
  OC_RETURN_IF_ERROR(r.err);
  if (c.is_gpt2() && c.hidden % c.heads != 0)
    return InvalidFile("config.json: n_embd ", c.hidden, " is not a multiple of n_head ", c.heads);
  if (c.head_dim == 0 || (!c.is_gpt2() && c.head_dim % 2 != 0))
    return InvalidFile("config.json: head_dim ", c.head_dim, " must be positive and even (RoPE rotates pairs)");

  // Sliding windows: mistral's sliding_window for every layer; qwen2's only
  // with use_sliding_window (from max_window_layers on, or as layer_types says).
  c.window.assign(static_cast<size_t>(c.layers), 0);
  if (c.arch == Arch::kMistral || c.arch == Arch::kQwen2) {
    const bool use = c.arch == Arch::kMistral || r.Bool("use_sliding_window", false);
    const int64_t w = use ? r.Int("sliding_window", 0) : 0;
    OC_RETURN_IF_ERROR(r.err);
    if (w > 0) {
      const int64_t first = c.arch == Arch::kQwen2 ? r.Int("max_window_layers", 0) : 0;
      for (int64_t l = 0; l < c.layers; ++l) c.window[static_cast<size_t>(l)] = l >= first ? w : 0;
    }
    if (j.contains("layer_types") && j["layer_types"].is_array()) {
      const auto& lt = j["layer_types"];
      if (static_cast<int64_t>(lt.size()) != c.layers)
        return InvalidFile("config.json: layer_types has ", lt.size(),
                           " entries, expected num_hidden_layers = ", c.layers);
      for (int64_t l = 0; l < c.layers; ++l) {
        const std::string t =
            lt[static_cast<size_t>(l)].is_string() ? lt[static_cast<size_t>(l)].get<std::string>() : "";
        if (t == "full_attention")
          c.window[static_cast<size_t>(l)] = 0;
        else if (t == "sliding_attention")
          c.window[static_cast<size_t>(l)] = w;
        else
          return NotSupported("config.json: layer_types[", l, "] \"", t,
                              "\" is not supported (full_attention, sliding_attention)");
        if (t == "sliding_attention" && w <= 0)
          return InvalidFile("config.json: layer_types[", l, "] is sliding_attention but no sliding_window is set");
      }
    }
  }
  return c;
}

}  // namespace oc::llm

// The architecture of a decoder-only model, read from a Hugging Face
// config.json. One struct covers the supported families: gpt2 (learned
// positions, LayerNorm, GELU MLP, fused Conv1D qkv) and the llama family
// (llama, qwen2, mistral: RMSNorm, RoPE, GQA, SwiGLU). Anything the config
// asks for that is not implemented is refused by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace oc::llm {

enum class Arch { kGpt2, kLlama, kQwen2, kMistral };
enum class Act { kGeluTanh, kGeluErf, kSilu, kRelu };
enum class RopeType { kDefault, kLinear, kLlama3, kDynamic };

struct ModelConfig {
  Arch arch = Arch::kLlama;
  std::string model_type;
  int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
  int64_t max_positions = 0;
  double norm_eps = 1e-5;
  Act act = Act::kSilu;
  // Biases (llama family): q/k/v, o, and the MLP projections.
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool tie_embeddings = false;
  // Per layer: keys visible to a query at position p are (p - window, p]; 0 = all.
  std::vector<int64_t> window;
  // gpt2 attention options.
  bool scale_attn_weights = true, scale_by_inverse_layer_idx = false;
  // RoPE (llama family).
  RopeType rope_type = RopeType::kDefault;
  double rope_theta = 10000.0;
  double rope_factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  int64_t rope_original_max = 0;

  bool is_gpt2() const { return arch == Arch::kGpt2; }
  // The inverse frequencies of the rotary embedding, head_dim / 2 of them.
  std::vector<float> RopeInvFreq() const;
};

Expected<ModelConfig> ParseModelConfig(const nlohmann::json& j);

}  // namespace oc::llm

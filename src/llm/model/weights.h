// Where a model's weights live once loaded: every projection as GEMM panels
// packed once for the selected micro-kernel (B operands, [in, out] after any
// transpose), norms, biases and embeddings as float32. Checkpoints in F16 /
// BF16 are widened at load; a later bf16 or int8 path replaces the panels here
// and nothing else.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "llm/model/checkpoint.h"
#include "llm/model/model_config.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::llm {

// y[m, out] = x[m, in] W + bias.
struct Linear {
  int64_t in = 0, out = 0;
  gemm::PackedOperand w;
  std::vector<float> bias;  // empty: none
};

struct LayerWeights {
  std::vector<float> norm1_w, norm1_b, norm2_w, norm2_b;  // *_b only for LayerNorm (gpt2)
  Linear qkv;                                             // [q heads | k heads | v heads]
  Linear o;
  Linear up;  // gpt2: c_fc; llama family: [gate | up]
  Linear down;
};

struct WeightStore {
  std::vector<float> embed;      // [vocab, hidden]
  std::vector<float> positions;  // gpt2: [n_positions, hidden]
  std::vector<LayerWeights> layers;
  std::vector<float> final_w, final_b;
  Linear lm_head;
};

Expected<WeightStore> LoadWeights(const Checkpoint& ck, const ModelConfig& cfg, const gemm::GemmUkernel& uk);

}  // namespace oc::llm

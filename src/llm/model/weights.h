// Where a model's weights live once loaded: every projection (the lm_head
// included) in the weight dtype chosen at load (weight_dtype.h) -- float32
// panels packed once for the selected sgemm micro-kernel (B operands, [in, out]
// after any transpose), bf16 panels of the bf16 GEMM, or int8 / int4 rows with
// per-group scales (quant.h) -- and norms, biases and embeddings as float32.
// Checkpoints in F16 / BF16 are widened to float32 at load first; only the
// chosen form of a projection is kept.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "llm/model/checkpoint.h"
#include "llm/model/model_config.h"
#include "llm/model/quant.h"
#include "llm/model/weight_dtype.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::llm {

// y[m, out] = x[m, in] W + bias.
struct Linear {
  int64_t in = 0, out = 0;
  WeightDtype dtype = WeightDtype::kFloat32;
  // float32 panels: kFloat32, and kBfloat16 where the CPU has no bf16
  // micro-kernel (then the values are bf16-rounded: `bf16_emulated`).
  gemm::PackedOperand w;
  bool bf16_emulated = false;
  gemm::Bf16PackedOperand w_bf16;  // kBfloat16 with a bf16 micro-kernel
  QuantizedMatrix q;               // kInt8, kInt4
  std::vector<float> bias;         // empty: none
  int64_t w_bytes = 0;             // bytes of the weight (whichever form), bias excluded

  int64_t bytes() const { return w_bytes + static_cast<int64_t>(bias.size()) * 4; }
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

  // Bytes of every weight held (embeddings, norms, biases, projections).
  int64_t bytes() const;
};

struct WeightFormat {
  WeightDtype dtype = WeightDtype::kFloat32;
  int64_t group_size = 0;  // as ResolveGroupSize returns it (int8 0: per output channel)
  // kBfloat16: the bf16 micro-kernel, or null (then bf16-rounded float32 panels).
  const gemm::Bf16Ukernel* bf16 = nullptr;
};

Expected<WeightStore> LoadWeights(const Checkpoint& ck, const ModelConfig& cfg, const gemm::GemmUkernel& uk,
                                  const WeightFormat& fmt = {});

}  // namespace oc::llm

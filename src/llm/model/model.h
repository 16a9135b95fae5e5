// A decoder-only transformer (gpt2, llama, qwen2, mistral) over the paged KV
// cache: one Forward runs a batch of sequences, each with its new tokens (a
// prefill of many or a decode step of one), writes their keys and values into
// the cache and returns the logits of each sequence's last new token.
//
// All projections and the lm_head run in the weight dtype chosen at load
// (ModelOptions, weight_dtype.h): the project's fp32 GEMM with weights
// pre-packed once (WeightStore), its bf16 GEMM, or the weight-only int8 /
// int4 GEMM of quant.h; attention reads the cache in place
// (paged_attention.h). Threads: the pool given at load.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model_config.h"
#include "llm/model/weights.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::llm {

// One sequence's part of a forward step.
struct SeqStep {
  std::span<const int32_t> tokens;       // the new tokens (at least one)
  int64_t context = 0;                   // positions already in the cache
  std::span<const int32_t> block_table;  // covers context + tokens.size() positions
};

struct ModelOptions {
  WeightDtype weight_dtype = WeightDtype::kFloat32;
  // int8 / int4: inputs per scale, a multiple of 32; 0: the dtype's default
  // (int8 per output channel, int4 128). Must be 0 for float32 / bfloat16.
  int64_t group_size = 0;
};

class Model {
 public:
  // Reads config.json and the safetensors weights of a Hugging Face folder.
  static Expected<std::unique_ptr<Model>> Load(const std::string& dir, ThreadPool* pool,
                                               const ModelOptions& options = {});

  const ModelConfig& config() const { return cfg_; }
  WeightDtype weight_dtype() const { return fmt_.dtype; }
  // Inputs per scale of int8 / int4 weights (0: per output channel / not quantized).
  int64_t group_size() const { return fmt_.group_size; }
  // Bytes of all weights held (embeddings, norms and biases in float32 included).
  int64_t weight_bytes() const { return w_.bytes(); }
  // What the projections run on, e.g. "int4 (group 128), qgemv_avx512".
  std::string WeightSummary() const;
  // The cache geometry this model needs, for `num_blocks` blocks.
  KvCacheShape CacheShape(int32_t num_blocks, int64_t block_size = 16) const;
  // logits: seqs.size() x vocab floats. One call at a time (the step buffers
  // are the model's). Blocks a step writes (from each sequence's context on)
  // must be owned by that sequence alone (reference count 1).
  Status Forward(std::span<const SeqStep> seqs, KvCache& cache, float* logits);

 private:
  Model() = default;
  Status Check(std::span<const SeqStep> seqs, const KvCache& cache) const;
  void Gemm(const Linear& w, const float* x, int64_t m, float* y, const float* residual);
  void EnsureCapacity(int64_t tokens);

  ModelConfig cfg_;
  WeightFormat fmt_;
  WeightStore w_;
  ThreadPool* pool_ = nullptr;
  const gemm::GemmUkernel* uk_ = nullptr;
  const QGemvKernel* qk_ = nullptr;
  gemm::SgemmPlan plan_;
  gemm::Bf16GemmPlan bf16_plan_;
  int64_t plan_rows_ = 0;
  std::vector<float> inv_freq_;
  // Per-step buffers, grown to the largest step seen.
  std::unique_ptr<float[], void (*)(float*)> scratch_{nullptr, nullptr};
  std::vector<float> x_, h_, qkv_, attn_, mlp_, act_, cos_, sin_, last_;
  std::vector<float> gemm_in_, qpad_, qdeq_;  // bf16-rounded inputs (emulated bf16); int8 / int4 buffers
};

}  // namespace oc::llm

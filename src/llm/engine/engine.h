// The offline LLM engine: requests in, tokens out, one forward step at a
// time over continuous batching (scheduler.h) and per-request sampling
// (sampling.h).
//
//   auto engine = Engine::Create(cfg);          // loads the model, sizes the KV cache
//   engine->AddRequest("a", prompt_ids, params);
//   while (engine->HasUnfinished())
//     for (const StepOutput& o : *engine->Step()) ...   // new tokens per (request, choice)
//
// A request with params.n > 1 runs its prompt once and then n choices
// (index 0..n-1) that share the prompt's KV blocks; choice i of a request
// seeded s draws from its own RNG seeded s + i (vLLM's derivation), so choice
// 0 is exactly the n = 1 request. Outputs carry the choice index; a choice's
// last output has finished set; the request is done when all n are.
//
// Not thread-safe: one caller drives it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "llm/engine/sampling.h"
#include "llm/engine/scheduler.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model.h"

namespace oc::llm {

struct EngineConfig {
  std::string model_dir;
  int64_t kv_cache_bytes = int64_t{1} << 30;  // the KV budget; a whole number of blocks is taken
  int64_t block_size = 16;
  int32_t max_num_seqs = 64;
  int64_t max_num_batched_tokens = 2048;
  int64_t max_model_len = 0;       // 0: the model's max positions
  ThreadPool* pool = nullptr;      // null: ThreadPool::Global()
  std::vector<int32_t> eos_token_ids;  // empty: config.json's eos_token_id
  bool enable_prefix_caching = true;   // reuse the KV of cached full blocks of earlier requests (vLLM's default)
  WeightDtype weight_dtype = WeightDtype::kFloat32;  // projections' precision (weight_dtype.h)
  int64_t weight_group_size = 0;  // int8 / int4 inputs per scale; 0: the dtype's default
};

// What one step produced for one request.
struct StepOutput {
  std::string id;
  std::vector<int32_t> new_tokens;
  std::vector<TokenLogprob> logprobs;  // one per new token when asked
  bool finished = false;
  std::string finish_reason;           // "stop", "length", "abort" when finished
  int32_t index = 0;                   // the choice (0..n-1); finished is this choice's
};

struct EngineStats {
  int64_t running = 0, waiting = 0;    // sequences (a request of n choices counts n once forked)
  int32_t kv_blocks_used = 0, kv_blocks_total = 0;  // used: blocks some sequence holds
  int64_t preemptions = 0, steps = 0;
  int64_t max_concurrency = 0;  // sequences of max_model_len the cache holds at once
  int64_t max_model_len = 0, block_size = 0;
  // Prefix caching, in tokens as vLLM counts them: each admission of a
  // waiting sequence queries its length and hits its cached prefix.
  int64_t prefix_cache_queries = 0, prefix_cache_hits = 0;
  int32_t kv_blocks_evictable = 0;     // cached blocks nobody holds (not in kv_blocks_used)
  int64_t prefix_cache_evictions = 0;  // cached blocks reused for other content
  int64_t cow_copies = 0;              // blocks copied on write (n > 1)
};

struct RequestOutput {
  std::string id;
  std::vector<int32_t> tokens;
  std::vector<TokenLogprob> logprobs;
  std::string finish_reason;
  int32_t index = 0;  // the choice
};

class Engine {
 public:
  static Expected<std::unique_ptr<Engine>> Create(EngineConfig cfg);

  // Refused: an id already in use, an empty prompt, ids outside the
  // vocabulary, prompt + max_tokens past max_model_len, bad parameters.
  Status AddRequest(const std::string& id, std::vector<int32_t> prompt, const SamplingParams& params);
  Expected<std::vector<StepOutput>> Step();
  bool HasUnfinished() const { return sched_->num_running() + sched_->num_waiting() > 0; }
  // The request (all its choices) ends with reason "abort" at the next Step;
  // its blocks are freed there.
  Status Abort(const std::string& id);
  EngineStats stats() const;
  const Model& model() const { return *model_; }

  // Runs prompts to completion (ids "0", "1", ...) and returns one output per
  // (prompt, choice) in that order: prompt i's choice c is element i * n + c.
  Expected<std::vector<RequestOutput>> Generate(const std::vector<std::vector<int32_t>>& prompts,
                                                const SamplingParams& params);

 private:
  Engine() = default;
  void Seed(Sequence& s, int32_t choice) const;
  // Samples one token for `s` from its raw logits row; appends its output.
  void Sample(Sequence& s, std::span<const float> raw, std::vector<float>& row, std::vector<StepOutput>& out);
  EngineConfig cfg_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<BlockManager> blocks_;
  std::unique_ptr<Scheduler> sched_;
  std::vector<int32_t> eos_;
  std::vector<float> logits_;
  std::vector<double> scratch_;
  int64_t steps_ = 0;
};

}  // namespace oc::llm

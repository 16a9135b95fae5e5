// The block manager (who owns which KV blocks) and the continuous-batching
// scheduler (what runs this step). Neither touches the model: the engine
// runs the forward step the scheduler picks and reports back how far each
// sequence got, so both are tested alone (scheduler_test.cc).
//
// A step is one batch of at most max_num_seqs sequences and
// max_num_batched_tokens new tokens. Running sequences come first, oldest
// first (a decode is one token; a sequence still in a chunked prefill takes
// what the budget leaves); then waiting ones join in arrival order while the
// budget, the sequence limit and the free blocks allow. A prompt longer than
// the budget left is split across steps (chunked prefill), so decodes are
// never starved by a long prompt. When a running sequence needs a block and
// none is free, the newest running sequence is preempted: its blocks are
// freed and it goes back to the front of the waiting queue with its
// generated tokens kept, to be recomputed as part of its prompt
// (preemption by recomputation). No waiting sequence joins in a step that
// preempted.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "llm/engine/sampling.h"
#include "llm/model/kv_cache.h"

namespace oc::llm {

// Per-sequence block tables over a KvCache's allocator.
class BlockManager {
 public:
  explicit BlockManager(KvCache* cache) : cache_(cache) {}
  int32_t num_blocks() const { return cache_->allocator().num_blocks(); }
  int32_t num_free() const { return cache_->allocator().num_free(); }
  int64_t block_size() const { return cache_->shape().block_size; }
  int64_t BlocksFor(int64_t positions) const { return (positions + block_size() - 1) / block_size(); }
  // Whether `table` can grow to cover `positions` with the free blocks.
  bool CanGrow(const std::vector<int32_t>& table, int64_t positions) const {
    return BlocksFor(positions) - static_cast<int64_t>(table.size()) <= num_free();
  }
  Status Grow(std::vector<int32_t>& table, int64_t positions) { return cache_->Reserve(table, positions); }
  Status Free(std::vector<int32_t>& table) { return cache_->Free(table); }

  // Bytes one block takes in the cache (K and V of every layer, float32).
  static int64_t BlockBytes(const KvCacheShape& s) { return 2 * s.layers * s.kv_heads * s.block_size * s.head_dim * 4; }

 private:
  KvCache* cache_;
};

struct Sequence {
  std::string id;
  std::vector<int32_t> prompt;
  SamplingParams params;
  std::vector<int32_t> output;
  std::vector<TokenLogprob> logprobs;
  int64_t computed = 0;           // positions of prompt + output whose KV is cached
  std::vector<int32_t> table;     // block table
  std::mt19937_64 rng;
  bool finished = false;
  std::string finish_reason;      // "stop", "length", "abort"
  size_t emitted = 0;             // output tokens already streamed

  int64_t length() const { return static_cast<int64_t>(prompt.size() + output.size()); }
  int32_t token(int64_t pos) const {
    return pos < static_cast<int64_t>(prompt.size()) ? prompt[static_cast<size_t>(pos)]
                                                     : output[static_cast<size_t>(pos) - prompt.size()];
  }
};

struct SchedulerConfig {
  int32_t max_num_seqs = 64;
  int64_t max_num_batched_tokens = 2048;
};

// One sequence's part of a step: positions [start, start + count) are computed.
struct ScheduledSeq {
  Sequence* seq = nullptr;
  int64_t start = 0, count = 0;
  bool samples() const { return start + count == seq->length(); }
};

class Scheduler {
 public:
  Scheduler(SchedulerConfig cfg, BlockManager* blocks) : cfg_(cfg), blocks_(blocks) {}

  void Add(std::unique_ptr<Sequence> s) { waiting_.push_back(std::move(s)); }
  // The next batch; the blocks for its positions are allocated.
  Expected<std::vector<ScheduledSeq>> Schedule();
  // After the forward: each scheduled sequence's positions are cached.
  void Computed(const std::vector<ScheduledSeq>& batch);
  // Removes finished sequences (freeing their blocks) and returns them.
  Expected<std::vector<std::unique_ptr<Sequence>>> TakeFinished();
  // Marks a sequence finished with reason "abort"; NotFound if unknown.
  Status Abort(const std::string& id);
  bool Has(const std::string& id) const;

  size_t num_running() const { return running_.size(); }
  size_t num_waiting() const { return waiting_.size(); }
  int64_t num_preemptions() const { return preemptions_; }

 private:
  Status Preempt();
  SchedulerConfig cfg_;
  BlockManager* blocks_;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;  // oldest first
  int64_t preemptions_ = 0;
};

}  // namespace oc::llm

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
//
// Prefix caching (BlockManager with prefix_caching on): every block a
// sequence fills is registered under its content hash (kv_cache.h); a
// waiting sequence, when it is admitted, takes the longest run of its leading
// full blocks found in the cache (one more owner each) and starts computing
// past them. At most (length - 1) / block_size blocks are taken, so at least
// the last token is always recomputed and its logits exist. Blocks a
// finished or preempted sequence held stay cached (evictable) until the
// allocator needs them.
//
// n > 1 (Fork): when a request's prompt is done, its n - 1 other choices are
// forked from it: each shares every block of the prompt (one more owner
// each) and sits right after it in the running list. A sequence about to
// write into a block it shares (the prompt's last, partial block) first gets
// its own copy of it (copy-on-write); the last owner writes in place.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "llm/engine/sampling.h"
#include "llm/model/kv_cache.h"

namespace oc::llm {

struct Sequence {
  std::string id;
  int32_t index = 0;              // the choice index (0..n-1)
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
  bool forked = false;            // n > 1: the other choices exist (forked from choice 0)
  std::vector<uint64_t> hashes;   // content hashes of the leading full blocks (prefix caching)
  int64_t registered = 0;         // leading blocks of `table` offered to the prefix cache

  int64_t length() const { return static_cast<int64_t>(prompt.size() + output.size()); }
  int32_t token(int64_t pos) const {
    return pos < static_cast<int64_t>(prompt.size()) ? prompt[static_cast<size_t>(pos)]
                                                     : output[static_cast<size_t>(pos) - prompt.size()];
  }
  // Token ids of positions [begin, end).
  std::vector<int32_t> tokens(int64_t begin, int64_t end) const {
    std::vector<int32_t> t;
    for (int64_t p = begin; p < end; ++p) t.push_back(token(p));
    return t;
  }
};

// Per-sequence block tables over a KvCache's allocator, with the prefix
// cache and copy-on-write.
class BlockManager {
 public:
  explicit BlockManager(KvCache* cache, bool prefix_caching = false)
      : cache_(cache), prefix_caching_(prefix_caching) {}
  bool prefix_caching() const { return prefix_caching_; }
  int32_t num_blocks() const { return cache_->allocator().num_blocks(); }
  // Blocks that can be allocated (free or evictable).
  int32_t num_free() const { return cache_->allocator().num_free(); }
  int32_t num_evictable() const { return cache_->allocator().num_evictable(); }
  int32_t num_used() const { return cache_->allocator().num_used(); }
  int32_t ref_count(int32_t block) const { return cache_->allocator().ref_count(block); }
  int64_t block_size() const { return cache_->shape().block_size; }
  int64_t BlocksFor(int64_t positions) const { return (positions + block_size() - 1) / block_size(); }
  int64_t num_copies() const { return copies_; }

  // Blocks to allocate so that `s` can compute up to `positions`: new blocks
  // and copies of the shared blocks it would write.
  int64_t BlocksNeeded(const Sequence& s, int64_t positions) const;
  bool CanGrow(const Sequence& s, int64_t positions) const { return BlocksNeeded(s, positions) <= num_free(); }
  // Copies the shared blocks `s` would write and grows its table to `positions`.
  Status Grow(Sequence& s, int64_t positions);
  Status Free(Sequence& s);

  // The leading full blocks of `s` (computed 0, empty table) found in the
  // prefix cache, at most (length - 1) / block_size; `evictable` counts those
  // with no owner (taking them lowers num_free).
  struct Hit {
    std::vector<int32_t> blocks;
    int64_t evictable = 0;
  };
  Hit FindCachedPrefix(Sequence& s) const;
  // `s` takes the blocks of `hit`: its table and `computed` start past them.
  Status TakeCachedPrefix(Sequence& s, const Hit& hit);
  // Registers the blocks of `s` that its computed positions fill (prefix caching).
  Status RegisterFull(Sequence& s);
  // `child` shares every block of `parent` (one more owner each).
  Status Share(const Sequence& parent, Sequence& child);

  // Bytes one block takes in the cache (K and V of every layer, float32).
  static int64_t BlockBytes(const KvCacheShape& s) { return 2 * s.layers * s.kv_heads * s.block_size * s.head_dim * 4; }

 private:
  void EnsureHashes(Sequence& s, int64_t blocks) const;
  KvCache* cache_;
  bool prefix_caching_;
  int64_t copies_ = 0;
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
  // After the forward: each scheduled sequence's positions are cached (and
  // the blocks they fill registered in the prefix cache).
  Status Computed(const std::vector<ScheduledSeq>& batch);
  // Removes finished sequences (freeing their blocks) and returns them.
  Expected<std::vector<std::unique_ptr<Sequence>>> TakeFinished();
  // Marks every sequence of the id (all its choices) finished with reason
  // "abort"; NotFound if none is running or waiting.
  Status Abort(const std::string& id);
  bool Has(const std::string& id) const;
  // Creates the choices 1..n-1 of running `parent` (choice 0, its prompt
  // computed, no output yet): each shares its blocks, copies its state and
  // sits after it in the running list; their RNGs are the caller's to seed.
  Expected<std::vector<Sequence*>> Fork(Sequence* parent);
  // Every live sequence, running then waiting.
  std::vector<const Sequence*> sequences() const;

  size_t num_running() const { return running_.size(); }
  size_t num_waiting() const { return waiting_.size(); }
  int64_t num_preemptions() const { return preemptions_; }
  // Prefix cache lookups, in tokens (vLLM's counting): at each admission of
  // a waiting sequence, its length is queried and its cached prefix hit.
  int64_t prefix_cache_queries() const { return queries_; }
  int64_t prefix_cache_hits() const { return hits_; }

 private:
  Status Preempt();
  SchedulerConfig cfg_;
  BlockManager* blocks_;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;  // oldest first
  int64_t preemptions_ = 0;
  int64_t queries_ = 0, hits_ = 0;
};

}  // namespace oc::llm

// The paged KV cache: fixed-size blocks of token positions in one
// preallocated pool per layer, handed out by a block allocator.
//
// Layout of a layer's pool (K and V alike), float32:
//   [num_blocks, num_kv_heads, block_size, head_dim]
// A block holds block_size consecutive positions of one sequence; inside it
// each key/value head's positions are one contiguous run of
// block_size * head_dim floats, so that the attention loop, which walks one
// head's keys, streams through memory. (Head-major inside the block costs the
// writer num_kv_heads short copies per token instead of one, which is nothing
// next to reading the whole context once per step.)
//
// A sequence owns a block table: position p lives in block table[p / block_size]
// at slot p % block_size. Blocks carry reference counts so that sequences can
// share blocks read-only (a prefix found in the cache, the prompt of n > 1
// choices).
//
// Prefix caching (vLLM's scheme): a FULL block can be registered under its
// content hash, BlockHash(parent hash, its token ids), where the parent hash
// is the previous block's (kRootBlockHash for the first), so a hash names the
// whole prefix up to the end of the block. A registered block whose last
// owner releases it is not forgotten: it waits, ref count 0, in an LRU of
// evictable blocks, where a later sequence with the same prefix finds it.
// Allocate takes never-used or unregistered free blocks first and evicts the
// least recently released cached block only when there are none. Lookups
// compare the stored parent hash and token ids too, so a hash collision can
// never hand out a wrong block.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace oc::llm {

inline constexpr uint64_t kRootBlockHash = 0x6f70656e63616e6eull;  // the parent hash of a first block
// The content hash of a full block: its parent's hash and its token ids.
uint64_t BlockHash(uint64_t parent, std::span<const int32_t> tokens);

// A free list of block ids with reference counts and the prefix cache's
// evictable LRU.
class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t num_blocks);
  int32_t num_blocks() const { return static_cast<int32_t>(refs_.size()); }
  // Blocks Allocate can hand out: the free list and the evictable cached blocks.
  int32_t num_free() const { return static_cast<int32_t>(free_.size() + lru_.size()); }
  // Cached blocks with no owner (reusable by a lookup until evicted).
  int32_t num_evictable() const { return static_cast<int32_t>(lru_.size()); }
  // Blocks with at least one owner.
  int32_t num_used() const { return num_blocks() - num_free(); }
  // Cached blocks evicted so far.
  int64_t num_evictions() const { return evictions_; }
  // A block with reference count 1: from the free list, else the least
  // recently released cached block (evicted: its hash is forgotten), else
  // ResourceExhausted.
  Expected<int32_t> Allocate();
  // One more owner of `block` (which must be allocated).
  Status Retain(int32_t block);
  // One owner less; at zero the block goes to the evictable LRU (most recent
  // end) when it is cached, to the free list when not.
  Status Release(int32_t block);
  int32_t ref_count(int32_t block) const { return refs_[static_cast<size_t>(block)]; }

  // Registers allocated, full `block` as holding `tokens` after the prefix
  // `parent`, under `hash` = BlockHash(parent, tokens). Returns false (the
  // block stays unregistered) when another block already holds that hash;
  // true when this block is (now or already) registered under it.
  Expected<bool> Cache(int32_t block, uint64_t hash, uint64_t parent, std::span<const int32_t> tokens);
  // The cached block (owned or evictable) holding `tokens` after `parent`
  // under `hash`, or -1.
  int32_t Find(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) const;
  // Takes one reference to a cached block found by Find, reviving it from the
  // evictable LRU when it has no owner.
  Status Acquire(int32_t block);
  bool is_cached(int32_t block) const { return meta_[static_cast<size_t>(block)].cached; }
  bool is_evictable(int32_t block) const { return is_cached(block) && ref_count(block) == 0; }
  // The evictable blocks, least recently released first (the eviction order).
  std::vector<int32_t> evictable() const { return {lru_.begin(), lru_.end()}; }

 private:
  struct Meta {
    bool cached = false;
    uint64_t hash = 0, parent = 0;
    std::vector<int32_t> tokens;
    std::list<int32_t>::iterator lru;  // valid while evictable
  };
  std::vector<int32_t> free_;
  std::vector<int32_t> refs_;
  std::vector<Meta> meta_;
  std::list<int32_t> lru_;  // evictable cached blocks, least recently released first
  std::unordered_map<uint64_t, int32_t> by_hash_;
  int64_t evictions_ = 0;
};

struct KvCacheShape {
  int64_t layers = 0, kv_heads = 0, head_dim = 0;
  int64_t block_size = 16;
  int32_t num_blocks = 0;
};

class KvCache {
 public:
  static Expected<KvCache> Create(const KvCacheShape& shape);

  const KvCacheShape& shape() const { return shape_; }
  BlockAllocator& allocator() { return alloc_; }
  const BlockAllocator& allocator() const { return alloc_; }
  // Floats of one block of one layer (K or V).
  int64_t block_floats() const { return shape_.kv_heads * shape_.block_size * shape_.head_dim; }
  float* k(int64_t layer) { return k_[static_cast<size_t>(layer)].get(); }
  float* v(int64_t layer) { return v_[static_cast<size_t>(layer)].get(); }

  // Grows `table` so that it covers `positions` positions (allocating blocks).
  Status Reserve(std::vector<int32_t>& table, int64_t positions);
  // Releases every block of `table`, last block first (so that a prefix's
  // tail is evicted before its head), and clears it.
  Status Free(std::vector<int32_t>& table);
  // Copies block `src`'s K and V of every layer into block `dst` (copy-on-write).
  Status CopyBlock(int32_t src, int32_t dst);

 private:
  explicit KvCache(const KvCacheShape& s) : shape_(s), alloc_(s.num_blocks) {}
  KvCacheShape shape_;
  BlockAllocator alloc_;
  // Left uninitialised (a position is written before any read of it), so a
  // large budget costs no start-up time: pages are touched as blocks are used.
  std::vector<std::unique_ptr<float[]>> k_, v_;
};

}  // namespace oc::llm

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
// at slot p % block_size. Blocks carry reference counts so that a later
// scheduler can share prefix blocks between sequences (fork).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace oc::llm {

// A free list of block ids with reference counts.
class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t num_blocks);
  int32_t num_blocks() const { return static_cast<int32_t>(refs_.size()); }
  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  // A block with reference count 1, or ResourceExhausted when none is free.
  Expected<int32_t> Allocate();
  // One more owner of `block` (which must be allocated).
  Status Retain(int32_t block);
  // One owner less; the block returns to the free list at zero.
  Status Release(int32_t block);
  int32_t ref_count(int32_t block) const { return refs_[static_cast<size_t>(block)]; }

 private:
  std::vector<int32_t> free_;
  std::vector<int32_t> refs_;
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
  float* k(int64_t layer) { return k_[static_cast<size_t>(layer)].data(); }
  float* v(int64_t layer) { return v_[static_cast<size_t>(layer)].data(); }

  // Grows `table` so that it covers `positions` positions (allocating blocks).
  Status Reserve(std::vector<int32_t>& table, int64_t positions);
  // Releases every block of `table` and clears it.
  Status Free(std::vector<int32_t>& table);

 private:
  explicit KvCache(const KvCacheShape& s) : shape_(s), alloc_(s.num_blocks) {}
  KvCacheShape shape_;
  BlockAllocator alloc_;
  std::vector<std::vector<float>> k_, v_;
};

}  // namespace oc::llm

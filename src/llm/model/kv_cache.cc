#include "llm/model/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace oc::llm {

namespace {

// splitmix64's finalizer: a bijective 64-bit mix.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t BlockHash(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = Mix(parent ^ (static_cast<uint64_t>(tokens.size()) << 32));
  for (int32_t t : tokens) h = Mix(h ^ static_cast<uint32_t>(t));
  return h;
}

BlockAllocator::BlockAllocator(int32_t num_blocks)
    : refs_(static_cast<size_t>(num_blocks), 0), meta_(static_cast<size_t>(num_blocks)) {
  free_.reserve(static_cast<size_t>(num_blocks));
  // Popped from the back: block 0 first.
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);
}

Expected<int32_t> BlockAllocator::Allocate() {
  int32_t b = -1;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    b = lru_.front();
    lru_.pop_front();
    Meta& m = meta_[static_cast<size_t>(b)];
    by_hash_.erase(m.hash);
    m = Meta{};
    ++evictions_;
  } else {
    return ResourceExhausted("KV cache: all ", refs_.size(), " blocks are in use");
  }
  refs_[static_cast<size_t>(b)] = 1;
  return b;
}

Status BlockAllocator::Retain(int32_t block) {
  if (block < 0 || block >= num_blocks() || refs_[static_cast<size_t>(block)] == 0)
    return InvalidArgument("KV cache: block ", block, " is not allocated (blocks 0..", num_blocks() - 1, ")");
  ++refs_[static_cast<size_t>(block)];
  return Status::Ok();
}

Status BlockAllocator::Release(int32_t block) {
  if (block < 0 || block >= num_blocks() || refs_[static_cast<size_t>(block)] == 0)
    return InvalidArgument("KV cache: block ", block, " is not allocated (blocks 0..", num_blocks() - 1, ")");
  if (--refs_[static_cast<size_t>(block)] == 0) {
    Meta& m = meta_[static_cast<size_t>(block)];
    if (m.cached) {
      m.lru = lru_.insert(lru_.end(), block);
    } else {
      free_.push_back(block);
    }
  }
  return Status::Ok();
}

Expected<bool> BlockAllocator::Cache(int32_t block, uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) {
  if (block < 0 || block >= num_blocks() || refs_[static_cast<size_t>(block)] == 0)
    return InvalidArgument("KV cache: block ", block, " is not allocated (blocks 0..", num_blocks() - 1, ")");
  Meta& m = meta_[static_cast<size_t>(block)];
  if (m.cached) {
    if (m.hash != hash)
      return InvalidArgument("KV cache: block ", block, " is already cached under another hash");
    return true;
  }
  if (by_hash_.count(hash)) return false;
  m.cached = true;
  m.hash = hash;
  m.parent = parent;
  m.tokens.assign(tokens.begin(), tokens.end());
  by_hash_[hash] = block;
  return true;
}

int32_t BlockAllocator::Find(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return -1;
  const Meta& m = meta_[static_cast<size_t>(it->second)];
  if (m.parent != parent || !std::equal(m.tokens.begin(), m.tokens.end(), tokens.begin(), tokens.end())) return -1;
  return it->second;
}

Status BlockAllocator::Acquire(int32_t block) {
  if (block < 0 || block >= num_blocks() || !meta_[static_cast<size_t>(block)].cached)
    return InvalidArgument("KV cache: block ", block, " is not a cached block");
  Meta& m = meta_[static_cast<size_t>(block)];
  if (refs_[static_cast<size_t>(block)]++ == 0) lru_.erase(m.lru);
  return Status::Ok();
}

Expected<KvCache> KvCache::Create(const KvCacheShape& s) {
  if (s.layers <= 0 || s.kv_heads <= 0 || s.head_dim <= 0 || s.block_size <= 0 || s.num_blocks <= 0)
    return InvalidArgument("KV cache: layers, kv heads, head_dim, block_size and num_blocks must be positive");
  KvCache c(s);
  const size_t n = static_cast<size_t>(s.num_blocks) * static_cast<size_t>(c.block_floats());
  try {
    for (int64_t l = 0; l < s.layers; ++l) {
      c.k_.emplace_back(new float[n]);
      c.v_.emplace_back(new float[n]);
    }
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("KV cache: cannot allocate ", 2 * s.layers, " pools of ", n * 4, " bytes");
  }
  return c;
}

Status KvCache::Reserve(std::vector<int32_t>& table, int64_t positions) {
  const int64_t need = (positions + shape_.block_size - 1) / shape_.block_size;
  while (static_cast<int64_t>(table.size()) < need) {
    OC_ASSIGN_OR_RETURN(int32_t b, alloc_.Allocate());
    table.push_back(b);
  }
  return Status::Ok();
}

Status KvCache::Free(std::vector<int32_t>& table) {
  for (auto it = table.rbegin(); it != table.rend(); ++it) OC_RETURN_IF_ERROR(alloc_.Release(*it));
  table.clear();
  return Status::Ok();
}

Status KvCache::CopyBlock(int32_t src, int32_t dst) {
  for (int32_t b : {src, dst})
    if (b < 0 || b >= shape_.num_blocks || alloc_.ref_count(b) == 0)
      return InvalidArgument("KV cache: copy of block ", src, " to ", dst, ": block ", b, " is not allocated");
  const size_t n = static_cast<size_t>(block_floats());
  for (int64_t l = 0; l < shape_.layers; ++l)
    for (auto* pool : {&k_[static_cast<size_t>(l)], &v_[static_cast<size_t>(l)]})
      std::memcpy(pool->get() + static_cast<size_t>(dst) * n, pool->get() + static_cast<size_t>(src) * n, n * 4);
  return Status::Ok();
}

}  // namespace oc::llm

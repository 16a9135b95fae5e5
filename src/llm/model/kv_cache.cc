#include "llm/model/kv_cache.h"

#include <new>

namespace oc::llm {

BlockAllocator::BlockAllocator(int32_t num_blocks) : refs_(static_cast<size_t>(num_blocks), 0) {
  free_.reserve(static_cast<size_t>(num_blocks));
  // Popped from the back: block 0 first.
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);
}

Expected<int32_t> BlockAllocator::Allocate() {
  if (free_.empty()) return ResourceExhausted("KV cache: all ", refs_.size(), " blocks are in use");
  int32_t b = free_.back();
  free_.pop_back();
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
  if (--refs_[static_cast<size_t>(block)] == 0) free_.push_back(block);
  return Status::Ok();
}

Expected<KvCache> KvCache::Create(const KvCacheShape& s) {
  if (s.layers <= 0 || s.kv_heads <= 0 || s.head_dim <= 0 || s.block_size <= 0 || s.num_blocks <= 0)
    return InvalidArgument("KV cache: layers, kv heads, head_dim, block_size and num_blocks must be positive");
  KvCache c(s);
  const size_t n = static_cast<size_t>(s.num_blocks) * static_cast<size_t>(c.block_floats());
  try {
    c.k_.resize(static_cast<size_t>(s.layers));
    c.v_.resize(static_cast<size_t>(s.layers));
    for (int64_t l = 0; l < s.layers; ++l) {
      c.k_[static_cast<size_t>(l)].assign(n, 0.f);
      c.v_[static_cast<size_t>(l)].assign(n, 0.f);
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
  for (int32_t b : table) OC_RETURN_IF_ERROR(alloc_.Release(b));
  table.clear();
  return Status::Ok();
}

}  // namespace oc::llm

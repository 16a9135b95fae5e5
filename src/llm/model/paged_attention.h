// Attention of a batch of sequences' new tokens over the paged KV cache.
//
// Work split: one task = (new token, key/value head); it serves the query
// heads of that KV head's group (GQA), so each key and value row read from
// the cache is used by all of them. Per task, for groups of up to four query
// heads (the row kernels of src/ops/cpu/attention/):
//   for each cache block overlapping the visible keys [lo, pos]:
//     scores[r, j] = scale * q_r . k_j          (k_j read in place from the block)
//   softmax per row over all visible keys (max, exp, sum)
//   o_r = sum_j p[r, j] v_j / sum_r             (v_j read in place)
// Visible keys for a query at absolute position pos: [0, pos] (causal; the new
// tokens of a sequence see the earlier new ones, which are written to the
// cache first), limited to (pos - window, pos] with a sliding window.
#pragma once

#include <cstdint>
#include <span>

#include "base/thread_pool.h"

namespace oc::llm {

// One sequence of the batch: rows [row0, row0 + n) of q / out are its new
// tokens, at positions [context, context + n).
struct PagedSeqView {
  int64_t row0 = 0, n = 0, context = 0;
  const int32_t* blocks = nullptr;  // block table, covering context + n positions
};

struct PagedAttentionArgs {
  std::span<const PagedSeqView> seqs;
  const float* q = nullptr;  // [rows, ldq]: query head h at q + row * ldq + h * head_dim
  int64_t ldq = 0;
  const float* k_pool = nullptr;  // [num_blocks, kv_heads, block_size, head_dim]
  const float* v_pool = nullptr;
  int64_t heads = 0, kv_heads = 0, head_dim = 0, block_size = 0;
  int64_t window = 0;  // 0: none
  float scale = 1.f;
  float* out = nullptr;  // [rows, heads * head_dim]
};

void PagedAttention(const PagedAttentionArgs& a, ThreadPool* pool);

}  // namespace oc::llm

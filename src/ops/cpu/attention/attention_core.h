// Fused scaled-dot-product attention over strided [batch, heads, seq, dim]
// views, shared by ai.onnx Attention and ai.onnx.preview FlexAttention.
//
// Blocking scheme (flash-attention style, no seq x seq buffer):
//   one task = (batch b, query head h, block of up to kQueryBlock query rows)
//     pack the query block once (GEMM A panels)
//     for each block of up to kKeyBlock key positions that some row may see:
//       S = scale * Qblk K^T           (GEMM micro-kernels, into a per-thread tile)
//       softcap, then the mask: every structural limit (causal frontier, sliding
//       window, nonpad_kv_seqlen, a mask shorter than the keys) is an interval
//       [lo, hi) of visible keys per row; the attn_mask values apply inside it
//       online softmax: running max m and sum l per row; O *= exp(m_old - m_new)
//       O += P Vblk                     (GEMM micro-kernels, accumulate)
//     Y row = O row / l, or a zero row when no key was visible
// Tasks are split statically over the pool; each thread owns one slice of the
// per-run scratch. When qk_matmul_output is requested the key block is the
// whole key range, so the one block holds the full score row (that output is
// materialised by definition).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::attn {

enum class MaskKind { kNone, kBool, kAdditive };

// A [batch, heads, seq, dim] tensor with a contiguous last dim; strides in elements.
struct HeadView {
  const void* data = nullptr;
  int64_t sb = 0, sh = 0, ss = 0;
};

struct Params {
  int64_t batch = 0, q_heads = 0, kv_heads = 0;
  int64_t q_len = 0, kv_len = 0;  // kv_len counts past + new keys
  int64_t head_dim = 0, v_dim = 0;
  HeadView q, k, v;
  void* y = nullptr;
  int64_t y_sb = 0, y_sh = 0, y_ss = 0;
  double scale = 1.0;    // multiplies Q K^T
  double softcap = 0.0;  // > 0: s = softcap * tanh(s / softcap) before the mask
  bool causal = false;
  int64_t left_window = -1, right_window = -1;  // -1: unbounded
  int64_t offset = 0;                // absolute position of query 0 (past length)
  const int64_t* nonpad = nullptr;   // per batch: valid keys; offset = nonpad - q_len
  MaskKind mask_kind = MaskKind::kNone;
  const void* mask = nullptr;        // bool (1 byte) or the element type
  int64_t m_sb = 0, m_sh = 0, m_sq = 0;  // broadcast strides (0 on broadcast dims)
  int64_t mask_len = 0;              // keys at or past mask_len are masked out
  // Optional [batch, q_heads, q_len, kv_len] output; mode 0 raw scores, 1 after
  // softcap, 2 after the mask, 3 probabilities.
  void* qk_out = nullptr;
  int qk_mode = 0;
};

inline constexpr int64_t kQueryBlock = 64;
inline constexpr int64_t kKeyBlock = 256;

// Per-kernel plan fixed at creation: block sizes and the per-thread scratch.
class Plan {
 public:
  Plan() = default;
  // `is_float`: float32 (GEMM micro-kernels) or float64 (plain loops).
  // `whole_rows`: one key block spans all keys (needed for qk_out).
  Plan(const Params& shape, bool is_float, int max_threads, bool whole_rows);
  size_t ScratchBytes() const { return static_cast<size_t>(per_thread_bytes_) * max_threads_; }
  int64_t query_block() const { return qb_; }
  int64_t key_block() const { return kb_; }

  template <typename T>
  void Run(const Params& p, ThreadPool* pool, void* scratch) const;

 private:
  const gemm::GemmUkernel* uk_ = nullptr;
  int64_t qb_ = 0, kb_ = 0;
  int64_t per_thread_bytes_ = 0;
  int max_threads_ = 1;
};

}  // namespace oc::attn

#include "llm/model/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "base/cpu_features.h"
#include "ops/cpu/attention/attention_core_isa.h"

namespace oc::llm {

namespace {

using ScoresFn = void (*)(const float* q, int64_t ldq, int64_t rows, const float* k, int64_t ldk, int64_t n, int64_t d,
                          float scale, float* s, int64_t lds);
using PvFn = void (*)(const float* p, int64_t lds, int64_t rows, const float* v, int64_t ldv, int64_t n, int64_t dv,
                      float* o, int64_t ldo);
using MaxFn = float (*)(const float* x, int64_t n);
using ExpSumFn = float (*)(float* x, int64_t n, float shift);

void ScoresScalar(const float* q, int64_t ldq, int64_t rows, const float* k, int64_t ldk, int64_t n, int64_t d,
                  float scale, float* s, int64_t lds) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int64_t c = 0; c < d; ++c) acc += q[r * ldq + c] * k[j * ldk + c];
      s[r * lds + j] = scale * acc;
    }
}

void PvScalar(const float* p, int64_t lds, int64_t rows, const float* v, int64_t ldv, int64_t n, int64_t dv, float* o,
              int64_t ldo) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const float w = p[r * lds + j];
      for (int64_t c = 0; c < dv; ++c) o[r * ldo + c] += w * v[j * ldv + c];
    }
}

float MaxScalar(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

float ExpSumScalar(float* x, int64_t n, float shift) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) s += (x[i] = std::exp(x[i] - shift));
  return s;
}

struct RowFns {
  ScoresFn scores = ScoresScalar;
  PvFn pv = PvScalar;
  MaxFn max = MaxScalar;
  ExpSumFn exp_sum = ExpSumScalar;
};

const RowFns& Fns() {
  static const RowFns fns = [] {
    RowFns f;
#if defined(__x86_64__) || defined(_M_X64)
    const Isa isa = SelectedIsa();
    if (isa == Isa::kAvx512) {
      f = {attn::f32_attn_scores_rows_avx512, attn::f32_attn_pv_rows_avx512, attn::f32_attn_row_max_avx512,
           attn::f32_attn_exp_sum_avx512};
    } else if (isa == Isa::kAvx2) {
      f = {attn::f32_attn_scores_rows_avx2, attn::f32_attn_pv_rows_avx2, attn::f32_attn_row_max_avx2,
           attn::f32_attn_exp_sum_avx2};
    }
#endif
    return f;
  }();
  return fns;
}

constexpr int64_t kMaxRows = attn::kDirectRows;

}  // namespace

void PagedAttention(const PagedAttentionArgs& a, ThreadPool* pool) {
  const RowFns& fns = Fns();
  const int64_t group = a.heads / a.kv_heads, d = a.head_dim, bs = a.block_size;
  const int64_t block_floats = a.kv_heads * bs * d;
  // Task t = (global row of a new token) * kv_heads + kv head; rows map to sequences.
  std::vector<std::pair<int32_t, int64_t>> row_seq;  // (sequence, row of q / out)
  for (size_t s = 0; s < a.seqs.size(); ++s)
    for (int64_t i = 0; i < a.seqs[s].n; ++i) row_seq.emplace_back(static_cast<int32_t>(s), a.seqs[s].row0 + i);
  const int64_t rows_total = static_cast<int64_t>(row_seq.size());
  pool->ParallelFor(rows_total * a.kv_heads, 1, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> scores;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t g = t % a.kv_heads;
      const auto [seq, row] = row_seq[static_cast<size_t>(t / a.kv_heads)];
      const PagedSeqView& sq = a.seqs[static_cast<size_t>(seq)];
      const int64_t pos = sq.context + (row - sq.row0);
      const int64_t lo = a.window > 0 ? std::max<int64_t>(0, pos - a.window + 1) : 0;
      const int64_t len = pos - lo + 1;
      if (static_cast<int64_t>(scores.size()) < kMaxRows * len) scores.resize(static_cast<size_t>(kMaxRows * len));
      for (int64_t h0 = 0; h0 < group; h0 += kMaxRows) {
        const int64_t rows = std::min(kMaxRows, group - h0);
        const int64_t head = g * group + h0;
        const float* q = a.q + row * a.ldq + head * d;
        float* o = a.out + row * a.heads * d + head * d;
        float* s = scores.data();
        for (int64_t p = lo; p <= pos;) {
          const int64_t slot = p % bs, n = std::min(bs - slot, pos + 1 - p);
          const int64_t blk = sq.blocks[p / bs];
          const float* k = a.k_pool + blk * block_floats + g * bs * d + slot * d;
          fns.scores(q, d, rows, k, d, n, d, a.scale, s + (p - lo), len);
          p += n;
        }
        float sum[kMaxRows];
        for (int64_t r = 0; r < rows; ++r) {
          const float m = fns.max(s + r * len, len);
          sum[r] = fns.exp_sum(s + r * len, len, m);
        }
        std::fill(o, o + rows * d, 0.f);
        for (int64_t p = lo; p <= pos;) {
          const int64_t slot = p % bs, n = std::min(bs - slot, pos + 1 - p);
          const int64_t blk = sq.blocks[p / bs];
          const float* v = a.v_pool + blk * block_floats + g * bs * d + slot * d;
          fns.pv(s + (p - lo), len, rows, v, d, n, d, o, d);
          p += n;
        }
        for (int64_t r = 0; r < rows; ++r) {
          const float inv = 1.f / sum[r];
          for (int64_t c = 0; c < d; ++c) o[r * d + c] *= inv;
        }
      }
    }
  });
}

}  // namespace oc::llm

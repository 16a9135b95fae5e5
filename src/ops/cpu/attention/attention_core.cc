// The fused attention kernel (blocking scheme in attention_core.h).
#include "ops/cpu/attention/attention_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "base/cpu_features.h"
#include "ops/cpu/attention/attention_core_isa.h"
#include "ops/cpu/elementwise/elementwise_math.h"

namespace oc::attn {
namespace {

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Packed K + V floats per thread up to which a whole (batch, kv head) is packed at once (1 MiB).
constexpr int64_t kWholeKvFloats = 256 * 1024;

// Offsets (in elements of T, or int64 for the intervals) of one thread's
// scratch slice. Every part starts on a 64-byte boundary.
struct Layout {
  int64_t lds = 0, ldo = 0;  // leading dims of the score tile and the accumulator
  int64_t qpack = 0, kpack = 0, vpack = 0, ppack = 0, s = 0, o = 0, m = 0, l = 0, lo = 0, hi = 0;
  int64_t bytes = 0;
  bool whole_kv = false;  // kpack / vpack hold all keys of one (batch, kv head)
};

Layout MakeLayout(const Params& p, const gemm::GemmUkernel* uk, int64_t qb, int64_t kb, size_t elem) {
  Layout L;
  const int64_t per_line = 64 / static_cast<int64_t>(elem);
  L.lds = RoundUp(kb, per_line);
  L.ldo = RoundUp(std::max<int64_t>(p.v_dim, 1), per_line);
  int64_t at = 0;  // in elements
  auto take = [&](int64_t n) {
    int64_t off = at;
    at += RoundUp(std::max<int64_t>(n, 1), per_line);
    return off;
  };
  if (uk) {
    L.qpack = take(gemm::PackedASize(*uk, qb, p.head_dim));
    // K and V of one (batch, kv head) packed whole when they fit the budget:
    // packed once, then shared by every query block and every query head of
    // the group. Otherwise one key block is packed at a time.
    const int64_t whole = gemm::PackedBSize(*uk, p.kv_len, p.head_dim) + gemm::PackedBSize(*uk, p.v_dim, p.kv_len);
    L.whole_kv = whole <= kWholeKvFloats;
    L.kpack = take(L.whole_kv ? gemm::PackedBSize(*uk, p.kv_len, p.head_dim) : gemm::PackedBSize(*uk, kb, p.head_dim));
    L.vpack = take(L.whole_kv ? gemm::PackedBSize(*uk, p.v_dim, p.kv_len) : gemm::PackedBSize(*uk, p.v_dim, kb));
    L.ppack = take(gemm::PackedASize(*uk, qb, kb));
  }
  L.s = take(qb * L.lds);
  L.o = take(qb * L.ldo);
  L.m = take(qb);
  L.l = take(qb);
  // The two interval arrays are int64: 8 bytes, at most 2 elements of T each.
  L.lo = take(qb * static_cast<int64_t>(8 / elem));
  L.hi = take(qb * static_cast<int64_t>(8 / elem));
  L.bytes = at * static_cast<int64_t>(elem);
  return L;
}

// Keys [lo, hi) visible to query row i of batch b before the attn_mask values.
void RowInterval(const Params& p, int64_t b, int64_t i, int64_t* lo, int64_t* hi) {
  int64_t l = 0, h = p.kv_len, off = p.offset;
  if (p.nonpad) {
    off = p.nonpad[b] - p.q_len;
    h = std::min(h, std::max<int64_t>(p.nonpad[b], 0));
  }
  if (p.mask_kind != MaskKind::kNone) h = std::min(h, p.mask_len);
  const int64_t pos = i + off;
  if (p.causal) h = std::min(h, pos + 1);
  if (p.right_window >= 0) h = std::min(h, pos + p.right_window + 1);
  if (p.left_window >= 0) l = std::max(l, pos - p.left_window);
  *lo = l;
  *hi = std::max(h, l);
}

float DefaultRowMax(const float* x, int64_t n) { return ew::MathKernels().row_max(x, n); }
float DefaultExpSum(float* x, int64_t n, float shift) { return ew::MathKernels().exp_sum(x, x, n, shift); }

void DefaultScoresRows(const float* q, int64_t ldq, int64_t rows, const float* k, int64_t ldk, int64_t n, int64_t d,
                       float scale, float* s, int64_t lds) {
  constexpr int kL = 16;  // independent lanes: vectorises without reassociation
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const float* qr = q + r * ldq;
      const float* kj = k + j * ldk;
      float acc[kL] = {};
      int64_t p = 0;
      for (; p + kL <= d; p += kL)
        for (int l = 0; l < kL; ++l) acc[l] += qr[p + l] * kj[p + l];
      float sum = 0;
      for (; p < d; ++p) sum += qr[p] * kj[p];
      for (int l = 0; l < kL; ++l) sum += acc[l];
      s[r * lds + j] = scale * sum;
    }
}

void DefaultPvRows(const float* p, int64_t lds, int64_t rows, const float* v, int64_t ldv, int64_t n, int64_t dv,
                   float* o, int64_t ldo) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const float pj = p[r * lds + j];
      const float* vj = v + j * ldv;
      float* orow = o + r * ldo;
      for (int64_t c = 0; c < dv; ++c) orow[c] += pj * vj[c];
    }
}

float DefaultAddMax(float* x, const float* add, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += add[i];
  return DefaultRowMax(x, n);
}

float DefaultSelectMax(float* x, const uint8_t* keep, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = keep[i] ? x[i] : -std::numeric_limits<float>::infinity();
  return DefaultRowMax(x, n);
}

// The float32 row passes, packer and few-row products for this process's ISA.
struct F32RowOps {
  float (*row_max)(const float*, int64_t) = DefaultRowMax;
  float (*exp_sum)(float*, int64_t, float) = DefaultExpSum;
  float (*add_max)(float*, const float*, int64_t) = DefaultAddMax;
  float (*select_max)(float*, const uint8_t*, int64_t) = DefaultSelectMax;
  void (*pack_kt32)(const float*, int64_t, int64_t, int64_t, float*) = nullptr;  // NR == 32 only
  void (*scores_rows)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, float, float*,
                      int64_t) = DefaultScoresRows;
  void (*pv_rows)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, float*,
                  int64_t) = DefaultPvRows;
};

const F32RowOps& RowOps() {
  static const F32RowOps ops = [] {
    F32RowOps o;
#if defined(__x86_64__) || defined(_M_X64)
    if (SelectedIsa() == Isa::kAvx2) {
      o.row_max = f32_attn_row_max_avx2;
      o.exp_sum = f32_attn_exp_sum_avx2;
      o.add_max = f32_attn_add_max_avx2;
      o.select_max = f32_attn_select_max_avx2;
      o.scores_rows = f32_attn_scores_rows_avx2;
      o.pv_rows = f32_attn_pv_rows_avx2;
    }
    if (SelectedIsa() == Isa::kAvx512) {
      o.row_max = f32_attn_row_max_avx512;
      o.exp_sum = f32_attn_exp_sum_avx512;
      o.add_max = f32_attn_add_max_avx512;
      o.select_max = f32_attn_select_max_avx512;
      o.pack_kt32 = f32_attn_pack_kt32_avx512;
      o.scores_rows = f32_attn_scores_rows_avx512;
      o.pv_rows = f32_attn_pv_rows_avx512;
    }
#endif
    return o;
  }();
  return ops;
}

// K^T block into B panels: the ISA packer when it matches the micro-kernel.
void PackKt(const gemm::GemmUkernel& uk, const float* k, int64_t ldk, int64_t n, int64_t d, float* dst) {
  const auto& ops = RowOps();
  if (uk.nr == 32 && uk.isa == Isa::kAvx512 && ops.pack_kt32 && ldk * 32 < (int64_t{1} << 31)) {
    ops.pack_kt32(k, ldk, n, d, dst);
    return;
  }
  gemm::PackB(uk, k, ldk, true, n, d, dst);
}

template <typename T>
T RowMax(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return RowOps().row_max(x, n);
  } else {
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
  }
}

// y[i] = exp(x[i] - shift); returns the sum.
template <typename T>
T ExpSum(T* x, int64_t n, T shift) {
  if constexpr (std::is_same_v<T, float>) {
    return RowOps().exp_sum(x, n, shift);
  } else {
    T s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i] = std::exp(x[i] - shift);
    return s;
  }
}

// x += add over n; returns the max.
template <typename T>
T AddMax(T* x, const T* add, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return RowOps().add_max(x, add, n);
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] += add[i];
    return RowMax(x, n);
  }
}

// x = keep ? x : -inf over n; returns the max.
template <typename T>
T SelectMax(T* x, const uint8_t* keep, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return RowOps().select_max(x, keep, n);
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] = keep[i] ? x[i] : -std::numeric_limits<T>::infinity();
    return RowMax(x, n);
  }
}

template <typename T>
void Softcap(T* x, int64_t n, T cap) {
  const T inv = T(1) / cap;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  if constexpr (std::is_same_v<T, float>) {
    ew::MathKernels().tanh(x, x, n);
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
  }
  for (int64_t i = 0; i < n; ++i) x[i] *= cap;
}

template <typename T>
class TaskRunner {
 public:
  TaskRunner(const Params& p, const Layout& L, const gemm::GemmUkernel* uk, int64_t qb, int64_t kb, void* slice)
      : p_(p), L_(L), uk_(uk), qb_(qb), kb_(kb), base_(static_cast<T*>(slice)) {}

  // Query rows [i0, i0 + qb) of head h; or, with heads > 1 (single-query
  // steps only), row 0 of heads [h, h + heads), which share one K/V head.
  void Run(int64_t b, int64_t h, int64_t i0, int64_t heads = 1) {
    multi_ = heads > 1;
    const int64_t rows = multi_ ? heads : std::min(qb_, p_.q_len - i0);
    const int64_t hk = h / (p_.q_heads / p_.kv_heads);
    ldq_ = multi_ ? p_.q.sh : p_.q.ss;
    const T* q = static_cast<const T*>(p_.q.data) + b * p_.q.sb + h * p_.q.sh + i0 * p_.q.ss;
    const T* k = static_cast<const T*>(p_.k.data) + b * p_.k.sb + hk * p_.k.sh;
    const T* v = static_cast<const T*>(p_.v.data) + b * p_.v.sb + hk * p_.v.sh;
    T* s = base_ + L_.s;
    T* o = base_ + L_.o;
    T* m = base_ + L_.m;
    T* l = base_ + L_.l;
    int64_t* lo = reinterpret_cast<int64_t*>(base_ + L_.lo);
    int64_t* hi = reinterpret_cast<int64_t*>(base_ + L_.hi);
    const bool materialise = p_.qk_out != nullptr;
    int64_t jmin = p_.kv_len, jmax = 0;
    for (int64_t r = 0; r < rows; ++r) {
      RowInterval(p_, b, i0 + (multi_ ? 0 : r), &lo[r], &hi[r]);
      if (lo[r] < hi[r]) jmin = std::min(jmin, lo[r]), jmax = std::max(jmax, hi[r]);
      m[r] = -std::numeric_limits<T>::infinity();
      l[r] = 0;
      std::memset(o + r * L_.ldo, 0, sizeof(T) * p_.v_dim);
    }
    if (materialise) jmin = 0, jmax = p_.kv_len;
    direct_ = rows <= kDirectRows;
    if constexpr (std::is_same_v<T, float>) {
      if (jmin < jmax && !direct_) {
        gemm::PackA(*uk_, q, ldq_, false, rows, p_.head_dim, base_ + L_.qpack);
        if (L_.whole_kv && (b != packed_b_ || hk != packed_hk_)) {
          PackKt(*uk_, k, p_.k.ss, p_.kv_len, p_.head_dim, base_ + L_.kpack);
          gemm::PackB(*uk_, v, p_.v.ss, false, p_.v_dim, p_.kv_len, base_ + L_.vpack);
          packed_b_ = b, packed_hk_ = hk;
        }
        // Blocks start on a B-panel edge so that they address whole packed panels.
        if (L_.whole_kv) jmin -= jmin % uk_->nr;
      }
    }
    // Rows are kv_len apart in qk_out in both modes (q_len is 1 with several heads).
    T* qk_rows = materialise ? static_cast<T*>(p_.qk_out) +
                                   ((b * p_.q_heads + h) * p_.q_len + i0) * p_.kv_len
                             : nullptr;
    for (int64_t j0 = jmin; j0 < jmax; j0 += kb_) {
      const int64_t nb = std::min(kb_, jmax - j0);
      Scores(q, k, j0, rows, nb, s);
      for (int64_t r = 0; r < rows; ++r)
        SoftmaxStep(b, multi_ ? h + r : h, multi_ ? i0 : i0 + r, r, j0, nb, s + r * L_.lds, qk_rows);
      AccumulatePV(v, j0, rows, nb, s, o);
    }
    T* y = static_cast<T*>(p_.y) + b * p_.y_sb + h * p_.y_sh + i0 * p_.y_ss;
    for (int64_t r = 0; r < rows; ++r) {
      T* yr = y + r * (multi_ ? p_.y_sh : p_.y_ss);
      const bool empty = std::isinf(m[r]) && m[r] < 0;
      const T inv = empty || l[r] == 0 ? T(0) : T(1) / l[r];
      const T* orow = o + r * L_.ldo;
      for (int64_t d = 0; d < p_.v_dim; ++d) yr[d] = orow[d] * inv;
      if (materialise && p_.qk_mode == 3) {
        T* qr = qk_rows + r * p_.kv_len;
        const T* pr = s + r * L_.lds;
        for (int64_t j = 0; j < p_.kv_len; ++j) qr[j] = empty ? T(0) : pr[j] * inv;
      }
    }
  }

 private:
  // s[r][c] = scale * q_r . k_{j0 + c} for rows < rows, c < nb.
  void Scores(const T* q, const T* k, int64_t j0, int64_t rows, int64_t nb, T* s) {
    const int64_t D = p_.head_dim;
    k += j0 * p_.k.ss;
    if constexpr (std::is_same_v<T, float>) {
      if (direct_) {
        RowOps().scores_rows(q, ldq_, rows, k, p_.k.ss, nb, D, static_cast<float>(p_.scale), s, L_.lds);
        return;
      }
      float* kpack = base_ + L_.kpack;
      const float* qpack = base_ + L_.qpack;
      if (L_.whole_kv) kpack += j0 * D;  // j0 is a multiple of NR: panel j0 / NR
      else PackKt(*uk_, k, p_.k.ss, nb, D, kpack);
      const int mr = uk_->mr, nr = uk_->nr;
      const float alpha = static_cast<float>(p_.scale);
      for (int64_t j = 0; j < nb; j += nr) {
        const float* bp = kpack + j * D;
        for (int64_t i = 0; i < rows; i += mr)
          uk_->fn(D, qpack + i * D, bp, s + i * L_.lds + j, L_.lds, std::min<int64_t>(mr, rows - i),
                  std::min<int64_t>(nr, nb - j), alpha, 0.f);
      }
    } else {
      for (int64_t i = 0; i < rows; ++i) {
        const T* qi = q + i * ldq_;
        T* si = s + i * L_.lds;
        for (int64_t j = 0; j < nb; ++j) {
          const T* kj = k + j * p_.k.ss;
          T acc = 0;
          for (int64_t d = 0; d < D; ++d) acc += qi[d] * kj[d];
          si[j] = acc * static_cast<T>(p_.scale);
        }
      }
    }
  }

  // Turns row r of the score block (keys [j0, j0 + nb)) into unnormalised
  // probabilities against the running max, rescaling the row's accumulator.
  void SoftmaxStep(int64_t b, int64_t h, int64_t i, int64_t r, int64_t j0, int64_t nb, T* sr, T* qk_rows) {
    constexpr T kNegInf = -std::numeric_limits<T>::infinity();
    T* qr = qk_rows ? qk_rows + r * p_.kv_len + j0 : nullptr;
    if (qr && p_.qk_mode == 0) std::memcpy(qr, sr, sizeof(T) * nb);
    if (p_.softcap > 0) Softcap(sr, nb, static_cast<T>(p_.softcap));
    if (qr && p_.qk_mode == 1) std::memcpy(qr, sr, sizeof(T) * nb);
    int64_t* lo = reinterpret_cast<int64_t*>(base_ + L_.lo);
    int64_t* hi = reinterpret_cast<int64_t*>(base_ + L_.hi);
    const int64_t a = std::clamp<int64_t>(lo[r] - j0, 0, nb), e = std::clamp<int64_t>(hi[r] - j0, a, nb);
    // The mask is applied inside [a, e) in the same pass as the block max.
    T mb = kNegInf;
    if (e > a) {
      const int64_t moff = b * p_.m_sb + h * p_.m_sh + i * p_.m_sq + j0;
      if (p_.mask_kind == MaskKind::kBool) {
        mb = SelectMax(sr + a, static_cast<const uint8_t*>(p_.mask) + moff + a, e - a);
      } else if (p_.mask_kind == MaskKind::kAdditive) {
        mb = AddMax(sr + a, static_cast<const T*>(p_.mask) + moff + a, e - a);
      } else {
        mb = RowMax(sr + a, e - a);
      }
    }
    if (qr && p_.qk_mode == 2) {
      std::fill(sr, sr + a, kNegInf);
      std::fill(sr + e, sr + nb, kNegInf);
      std::memcpy(qr, sr, sizeof(T) * nb);
    }
    std::fill(sr, sr + a, T(0));
    std::fill(sr + e, sr + nb, T(0));
    if (std::isinf(mb) && mb < 0) {  // nothing visible in this block
      std::fill(sr + a, sr + e, T(0));
      return;
    }
    T* m = base_ + L_.m;
    T* l = base_ + L_.l;
    const T m_new = std::max(m[r], mb);
    const T sum = ExpSum(sr + a, e - a, m_new);
    if (std::isinf(m[r])) {  // first visible block: the accumulator is still zero
      l[r] = sum;
    } else {
      const T corr = std::exp(m[r] - m_new);
      if (corr != T(1)) {
        T* orow = base_ + L_.o + r * L_.ldo;
        for (int64_t d = 0; d < p_.v_dim; ++d) orow[d] *= corr;
      }
      l[r] = l[r] * corr + sum;
    }
    m[r] = m_new;
  }

  // o[rows x v_dim] += s[rows x nb] * v[j0 .. j0 + nb, v_dim].
  void AccumulatePV(const T* v, int64_t j0, int64_t rows, int64_t nb, const T* s, T* o) {
    const int64_t Dv = p_.v_dim;
    v += j0 * p_.v.ss;
    if constexpr (std::is_same_v<T, float>) {
      if (direct_) {
        RowOps().pv_rows(s, L_.lds, rows, v, p_.v.ss, nb, Dv, o, L_.ldo);
        return;
      }
      float* ppack = base_ + L_.ppack;
      const float* vpack = base_ + L_.vpack;
      gemm::PackA(*uk_, s, L_.lds, false, rows, nb, ppack);
      // Panel q of V holds columns [q NR, q NR + NR) for all packed keys.
      int64_t keys = nb;
      if (L_.whole_kv) {
        keys = p_.kv_len;
        vpack += j0 * uk_->nr;
      } else {
        gemm::PackB(*uk_, v, p_.v.ss, false, Dv, nb, base_ + L_.vpack);
      }
      const int mr = uk_->mr, nr = uk_->nr;
      for (int64_t j = 0; j < Dv; j += nr) {
        const float* bp = vpack + j * keys;
        for (int64_t i = 0; i < rows; i += mr)
          uk_->fn(nb, ppack + i * nb, bp, o + i * L_.ldo + j, L_.ldo, std::min<int64_t>(mr, rows - i),
                  std::min<int64_t>(nr, Dv - j), 1.f, 1.f);
      }
    } else {
      for (int64_t i = 0; i < rows; ++i) {
        const T* si = s + i * L_.lds;
        T* oi = o + i * L_.ldo;
        for (int64_t j = 0; j < nb; ++j) {
          const T pj = si[j];
          if (pj == T(0)) continue;
          const T* vj = v + j * p_.v.ss;
          for (int64_t d = 0; d < Dv; ++d) oi[d] += pj * vj[d];
        }
      }
    }
  }

  const Params& p_;
  const Layout& L_;
  const gemm::GemmUkernel* uk_;
  int64_t qb_, kb_;
  T* base_;
  int64_t packed_b_ = -1, packed_hk_ = -1;  // whose K / V the whole-kv buffers hold
  bool direct_ = false;                     // few rows: unpacked products
  bool multi_ = false;                      // rows are heads (see Run)
  int64_t ldq_ = 0;                         // elements between query rows
};

}  // namespace

Plan::Plan(const Params& shape, bool is_float, int max_threads, bool whole_rows)
    : max_threads_(std::max(1, max_threads)) {
  if (is_float) uk_ = &gemm::DefaultUkernel();
  qb_ = std::clamp<int64_t>(shape.q_len, 1, kQueryBlock);
  // Single-query steps over grouped K/V take up to kDirectRows heads as rows (Run).
  if (shape.q_len == 1 && shape.kv_heads > 0)
    qb_ = std::max<int64_t>(qb_, std::min<int64_t>(shape.q_heads / shape.kv_heads, kDirectRows));
  kb_ = whole_rows ? std::max<int64_t>(shape.kv_len, 1) : std::clamp<int64_t>(shape.kv_len, 1, kKeyBlock);
  per_thread_bytes_ = MakeLayout(shape, uk_, qb_, kb_, is_float ? sizeof(float) : sizeof(double)).bytes;
}

template <typename T>
void Plan::Run(const Params& p, ThreadPool* pool, void* scratch) const {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  if (p.batch == 0 || p.q_heads == 0 || p.q_len == 0) return;
  if (p.v_dim == 0) return;
  const Layout L = MakeLayout(p, uk_, qb_, kb_, sizeof(T));
  const int64_t qblocks = (p.q_len + qb_ - 1) / qb_;
  // A single query against grouped K/V heads: the query heads of a group are
  // taken kDirectRows at a time as the rows of one block, so each pass over a
  // K/V head serves several query heads.
  const int64_t group = p.q_heads / p.kv_heads;
  const int64_t head_chunk = p.q_len == 1 && group > 1 ? std::min(group, kDirectRows) : 1;
  const int64_t chunks_per_group = (group + head_chunk - 1) / head_chunk;
  const int64_t units = head_chunk > 1 ? p.batch * p.kv_heads * chunks_per_group : p.batch * p.q_heads * qblocks;
  // Enough work per thread to pay for a wake-up (~ 0.5 MFLOP).
  const double flops = 2.0 * p.q_len * p.kv_len * (p.head_dim + p.v_dim) * p.batch * p.q_heads;
  int64_t slots = std::min<int64_t>({pool ? pool->num_threads() : 1, max_threads_, units,
                                     std::max<int64_t>(1, static_cast<int64_t>(flops / 5e5))});
  auto slot_work = [&](int64_t t) {
    TaskRunner<T> runner(p, L, uk_, qb_, kb_, static_cast<char*>(scratch) + t * per_thread_bytes_);
    const int64_t u0 = units * t / slots, u1 = units * (t + 1) / slots;
    for (int64_t u = u0; u < u1; ++u) {
      if (head_chunk > 1) {
        const int64_t c = u % chunks_per_group, bk = u / chunks_per_group;
        const int64_t h0 = (bk % p.kv_heads) * group + c * head_chunk;
        runner.Run(bk / p.kv_heads, h0, 0, std::min(head_chunk, (bk % p.kv_heads + 1) * group - h0));
        continue;
      }
      const int64_t qbi = u % qblocks, bh = u / qblocks;
      runner.Run(bh / p.q_heads, bh % p.q_heads, qbi * qb_);
    }
  };
  if (slots <= 1) {
    slots = 1;
    slot_work(0);
    return;
  }
  // slots <= pool threads, so each ParallelFor chunk is one slot and owns its scratch slice.
  pool->ParallelFor(slots, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) slot_work(t);
  });
}

template void Plan::Run<float>(const Params&, ThreadPool*, void*) const;
template void Plan::Run<double>(const Params&, ThreadPool*, void*) const;

}  // namespace oc::attn

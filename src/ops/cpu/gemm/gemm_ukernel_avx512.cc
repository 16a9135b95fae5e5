// AVX-512 f32 GEMM micro-kernel, 14x32: 28 zmm accumulators, two B vectors per
// k step, A values broadcast straight from memory into the FMAs (31 of the 32
// zmm registers). Columns past n are masked; a tile of m < 14 rows runs an
// m-row instance of the same loop. The _epilogue_ variant applies bias,
// residual and a clamp-like activation to the accumulators before the store
// (and takes TileEpilogue::b_next, the B panel to prefetch); the _ldb_
// variant reads B in place instead of from a packed panel (for few rows,
// where packing B costs a large share of the FMA work).
#include <immintrin.h>

#include <cstdint>

#include <algorithm>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps() and warn about
// it at every inlined use (hundreds of false "may be used uninitialized").
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {

namespace {
constexpr int kMR = 14;

// out[p] = column p of the 16x16 block whose rows are r[0..15].
inline void Transpose16x16(const __m512* r, __m512* out) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // u[4i + j], 128-bit lane L, holds rows 4i..4i+3 of column 4L + j.
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 v = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 w = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    out[j] = _mm512_shuffle_f32x4(v, v2, 0x88);
    out[8 + j] = _mm512_shuffle_f32x4(v, v2, 0xDD);
    out[4 + j] = _mm512_shuffle_f32x4(w, w2, 0x88);
    out[12 + j] = _mm512_shuffle_f32x4(w, w2, 0xDD);
  }
}

// Stores rows [0, M) of the accumulators: C = alpha*acc (+ beta*C).
template <int M, bool kBeta>
inline void StoreRows(const __m512* c0, const __m512* c1, float* c, int64_t ldc, int64_t n,
                      float alpha, float beta) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const __mmask16 k0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 k1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
#pragma GCC unroll 14
  for (int i = 0; i < M; ++i) {
    float* ci = c + i * ldc;
    __m512 r0 = _mm512_mul_ps(c0[i], va), r1 = _mm512_mul_ps(c1[i], va);
    if (kBeta) {
      r0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, ci), vb, r0);
      r1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, ci + 16), vb, r1);
    }
    _mm512_mask_storeu_ps(ci, k0, r0);
    _mm512_mask_storeu_ps(ci + 16, k1, r1);
  }
}

// Stores rows [0, M) with the epilogue applied in registers:
// act(alpha*acc (+ beta*C) + row_bias[i] + col_bias[j] + residual(i, j)).
template <int M, bool kBeta>
inline void StoreRowsEpilogue(const __m512* c0, const __m512* c1, float* c, int64_t ldc, int64_t n,
                              float alpha, float beta, const TileEpilogue& ep) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const __mmask16 k0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 k1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
  __m512 cb0 = _mm512_setzero_ps(), cb1 = _mm512_setzero_ps();
  if (ep.col_bias) {
    cb0 = _mm512_maskz_loadu_ps(k0, ep.col_bias);
    cb1 = _mm512_maskz_loadu_ps(k1, ep.col_bias + 16);
  }
  // Relu and Clip are one clamp: max(lo, v) then min(hi, v), operands ordered
  // so that a NaN v passes through (vmaxps/vminps return the second operand).
  const bool clamp = ep.act == ActivationKind::kRelu || ep.act == ActivationKind::kClip;
  const bool leaky = ep.act == ActivationKind::kLeakyRelu;
  const __m512 lo = _mm512_set1_ps(ep.act == ActivationKind::kRelu ? 0.f : ep.act_alpha);
  const __m512 hi = _mm512_set1_ps(ep.act == ActivationKind::kRelu ? __builtin_inff() : ep.act_beta);
  const __m512 slope = _mm512_set1_ps(ep.act_alpha);
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 14
  for (int i = 0; i < M; ++i) {
    float* ci = c + i * ldc;
    __m512 r0 = _mm512_mul_ps(c0[i], va), r1 = _mm512_mul_ps(c1[i], va);
    if (kBeta) {
      r0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, ci), vb, r0);
      r1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, ci + 16), vb, r1);
    }
    const __m512 rb = _mm512_set1_ps(ep.row_bias ? ep.row_bias[i] : 0.f);
    r0 = _mm512_add_ps(r0, _mm512_add_ps(rb, cb0));
    r1 = _mm512_add_ps(r1, _mm512_add_ps(rb, cb1));
    if (ep.residual) {
      const float* ri = ep.residual + i * ep.ldr;
      r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(k0, ri));
      r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(k1, ri + 16));
    }
    if (clamp) {
      r0 = _mm512_min_ps(hi, _mm512_max_ps(lo, r0));
      r1 = _mm512_min_ps(hi, _mm512_max_ps(lo, r1));
    } else if (leaky) {
      r0 = _mm512_mask_mul_ps(r0, _mm512_cmp_ps_mask(r0, zero, _CMP_LT_OQ), r0, slope);
      r1 = _mm512_mask_mul_ps(r1, _mm512_cmp_ps_mask(r1, zero, _CMP_LT_OQ), r1, slope);
    }
    _mm512_mask_storeu_ps(ci, k0, r0);
    _mm512_mask_storeu_ps(ci + 16, k1, r1);
  }
}

// M rows of the tile (M <= 14), reading the 14-wide packed A panel: edge tiles
// cost in proportion to their rows (M = 1 is a GEMV over packed B). With
// kEpilogue, `ep` is applied before the store.
// kLdb: B is not packed but read in place, row k of the tile's 32 columns at
// b + k * ldb (masked to the n valid columns, so nothing past them is read).
// kHalf (n <= 16, the last column panel of an N such as 196 = 6*32 + 4):
// only the first 16 columns are computed, half the FMAs of a full tile.
// b_next_lines lines from b_next are prefetched into L2, one every few steps
// (see TileEpilogue::b_next).
template <int M, bool kEpilogue = false, bool kLdb = false, bool kHalf = false>
void TileRows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n,
              float alpha, float beta, const TileEpilogue* ep = nullptr, int64_t ldb = 32,
              const float* b_next = nullptr, int64_t b_next_lines = 0) {
  __m512 c0[M], c1[M];
#pragma GCC unroll 14
  for (int i = 0; i < M; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  const __mmask16 kb0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 kb1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
  // k steps ahead that B is asked for. A tile of few rows spends only a few
  // cycles per step, too few to cover a miss to memory 16 steps ahead: M = 1
  // streaming cold weights (1 x 1000 x 1280) gained ~6% with 64.
  constexpr int kBAhead = M <= 4 ? 64 : 16;
  auto step = [&]() __attribute__((always_inline)) {
    __m512 b0, b1 = _mm512_setzero_ps();
    if constexpr (kLdb) {
      b0 = _mm512_maskz_loadu_ps(kb0, b);
      if constexpr (!kHalf) b1 = _mm512_maskz_loadu_ps(kb1, b + 16);
    } else {
      b0 = _mm512_loadu_ps(b);
      if constexpr (!kHalf) b1 = _mm512_loadu_ps(b + 16);
    }
    // Touch the A panel a few steps ahead. B is L1-resident after the first
    // tile of a panel, but that first tile streams it from L3 or memory
    // (pre-packed weights: page by page, where the hardware prefetcher
    // restarts), so it is asked for 16 steps ahead too: BERT-base shapes
    // 128 x {768, 2304, 3072} x 768 and 128 x 768 x 3072 +9-20% CPU time.
    // The addresses run past the panels' ends near the last steps: computed
    // as integers (a prefetch of any address is harmless, an out-of-range
    // pointer is not).
    const uintptr_t an = reinterpret_cast<uintptr_t>(a) + kMR * 8 * sizeof(float);
    const uintptr_t bn = reinterpret_cast<uintptr_t>(b) + (kLdb ? 16 * ldb : 32 * kBAhead) * sizeof(float);
    _mm_prefetch(reinterpret_cast<const char*>(an), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(bn), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(bn + 16 * sizeof(float)), _MM_HINT_T0);
#pragma GCC unroll 14
    for (int i = 0; i < M; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      c0[i] = _mm512_fmadd_ps(ai, b0, c0[i]);
      if constexpr (!kHalf) c1[i] = _mm512_fmadd_ps(ai, b1, c1[i]);
    }
    a += kMR;
    b += kLdb ? ldb : 32;
  };
  // The C tile comes into L1 during the last M steps, one row per step: a
  // prefetch at the start would be evicted by the A and B panels streaming
  // through L1 before the store loop reads it (the driver has already asked
  // for the tile in L2, see RunTask).
  const int64_t kpf = kc > M ? kc - M : 0;
  int64_t k = 0;
  if (!kLdb && b_next_lines > 0) {
    // Evenly spread: a burst would fill the L1 miss buffers the kernel's own
    // loads need.
    const int64_t every = std::max<int64_t>(1, kpf / b_next_lines);
    const int64_t end = std::min(kpf, every * b_next_lines);
    // A count-down, not k % every: no division in the k loop.
    for (int64_t left = 1; k < end; ++k) {
      if (--left == 0) {
        _mm_prefetch(reinterpret_cast<const char*>(b_next), _MM_HINT_T1);
        b_next += 16;
        left = every;
      }
      step();
    }
  }
  for (; k < kpf; ++k) step();
  for (k = kpf; k < kc; ++k) {
    const float* row = c + (k - kpf) * ldc;
    _mm_prefetch(reinterpret_cast<const char*>(row), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(row + 16), _MM_HINT_T0);
    step();
  }
  if constexpr (kEpilogue) {
    if (beta == 0.f) StoreRowsEpilogue<M, false>(c0, c1, c, ldc, n, alpha, beta, *ep);
    else StoreRowsEpilogue<M, true>(c0, c1, c, ldc, n, alpha, beta, *ep);
  } else {
    if (beta == 0.f) StoreRows<M, false>(c0, c1, c, ldc, n, alpha, beta);
    else StoreRows<M, true>(c0, c1, c, ldc, n, alpha, beta);
  }
}
}  // namespace

#define OC_ROWS_SWITCH(CALL)                                                       \
  switch (m) {                                                                     \
    case 14: CALL(14) case 13: CALL(13) case 12: CALL(12) case 11: CALL(11)         \
    case 10: CALL(10) case 9: CALL(9) case 8: CALL(8) case 7: CALL(7) case 6: CALL(6) \
    case 5: CALL(5) case 4: CALL(4) case 3: CALL(3) case 2: CALL(2) case 1: CALL(1)   \
    default: return;                                                               \
  }

void f32_gemm_14x32_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           int64_t m, int64_t n, float alpha, float beta) {
#define OC_PLAIN(M)                                                                          \
  return n <= 16 ? TileRows<M, false, false, true>(kc, a, b, c, ldc, n, alpha, beta) \
                 : TileRows<M>(kc, a, b, c, ldc, n, alpha, beta);
  OC_ROWS_SWITCH(OC_PLAIN)
#undef OC_PLAIN
}

void f32_gemm_epilogue_14x32_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                    int64_t m, int64_t n, float alpha, float beta, const TileEpilogue& ep) {
  // The driver also calls this for K blocks before the last one (empty
  // epilogue) to pass b_next.
  const bool e = !ep.empty();
#define OC_FUSED(M)                                                                                             \
  return n <= 16 ? (e ? TileRows<M, true, false, true>(kc, a, b, c, ldc, n, alpha, beta, &ep, 32, ep.b_next, ep.b_next_lines) \
                      : TileRows<M, false, false, true>(kc, a, b, c, ldc, n, alpha, beta, &ep, 32, ep.b_next, ep.b_next_lines)) \
                 : (e ? TileRows<M, true>(kc, a, b, c, ldc, n, alpha, beta, &ep, 32, ep.b_next, ep.b_next_lines)                  \
                      : TileRows<M>(kc, a, b, c, ldc, n, alpha, beta, &ep, 32, ep.b_next, ep.b_next_lines));
  OC_ROWS_SWITCH(OC_FUSED)
#undef OC_FUSED
}

void f32_gemm_ldb_14x32_avx512(int64_t kc, const float* a, const float* b, int64_t ldb, float* c,
                               int64_t ldc, int64_t m, int64_t n, float alpha, float beta,
                               const TileEpilogue& ep) {
  const bool e = !ep.empty();
#define OC_LDB(M)                                                                  \
  return e ? TileRows<M, true, true>(kc, a, b, c, ldc, n, alpha, beta, &ep, ldb) \
           : TileRows<M, false, true>(kc, a, b, c, ldc, n, alpha, beta, &ep, ldb);
  OC_ROWS_SWITCH(OC_LDB)
#undef OC_LDB
}

// Packs a 14-row A panel from row-major A (rows <= 14, zero rows after them):
// 16 columns at a time, 16x16 register transposes (rows 14, 15 are zero and
// not stored), so reads and writes are both contiguous.
void f32_packa_14_avx512(const float* a, int64_t lda, int64_t rows, int64_t k, float* dst) {
  const __mmask16 store_mask = 0x3FFF;
  for (int64_t p0 = 0; p0 < k; p0 += 16) {
    const int64_t cols = std::min<int64_t>(16, k - p0);
    const __mmask16 lm = cols == 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
    __m512 r[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm512_maskz_loadu_ps(lm, a + i * lda + p0) : _mm512_setzero_ps();
    __m512 out[16];
    Transpose16x16(r, out);
    float* d = dst + p0 * 14;
#pragma GCC unroll 16
    for (int p = 0; p < 16; ++p)
      if (p < cols) _mm512_mask_storeu_ps(d + p * 14, store_mask, out[p]);
  }
}

}  // namespace oc::gemm

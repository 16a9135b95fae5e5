// AVX2 + FMA pieces of the fused attention kernel: the softmax row passes (see
// attention_core_avx512.cc for the AVX-512 set). Called only when SelectedIsa()
// is AVX2; compiled with -mavx2 -mfma by the build (file suffix).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "ops/cpu/attention/attention_core_isa.h"

namespace oc::attn {
namespace {

inline float ReduceMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline float ReduceAdd(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x) for x <= 0: 2^n p(r) as in the AVX-512 version; x below -87 (and -inf) gives 0.
inline __m256 ExpNonPositive(__m256 x) {
  const __m256 live = _mm256_cmp_ps(x, _mm256_set1_ps(-87.f), _CMP_GE_OQ);
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.4286068203094172e-06f), r);
  __m256 p = _mm256_set1_ps(1.f / 720.f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 120.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 24.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f / 6.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
  // n >= -126 after the clamp, so 2^n is a normal float built in the exponent bits.
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)), live);
}

}  // namespace

float f32_attn_row_max_avx2(const float* x, int64_t n) {
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
    m2 = _mm256_max_ps(m2, _mm256_loadu_ps(x + i + 16));
    m3 = _mm256_max_ps(m3, _mm256_loadu_ps(x + i + 24));
  }
  for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
  float r = ReduceMax(_mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

float f32_attn_exp_sum_avx2(float* x, int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 e0 = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    const __m256 e1 = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s));
    _mm256_storeu_ps(x + i, e0);
    _mm256_storeu_ps(x + i + 8, e1);
    a0 = _mm256_add_ps(a0, e0);
    a1 = _mm256_add_ps(a1, e1);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 e = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(x + i, e);
    a0 = _mm256_add_ps(a0, e);
  }
  float sum = ReduceAdd(_mm256_add_ps(a0, a1));
  if (i < n) {  // the tail through a zero-padded block
    alignas(32) float t[8] = {};
    for (int64_t j = i; j < n; ++j) t[j - i] = x[j] - shift;
    for (int64_t j = n - i; j < 8; ++j) t[j] = -INFINITY;
    const __m256 e = ExpNonPositive(_mm256_load_ps(t));
    _mm256_store_ps(t, e);
    for (int64_t j = i; j < n; ++j) x[j] = t[j - i];
    sum += ReduceAdd(e);
  }
  return sum;
}

float f32_attn_add_max_avx2(float* x, const float* add, int64_t n) {
  __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(add + i));
    const __m256 b = _mm256_add_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(add + i + 8));
    _mm256_storeu_ps(x + i, a);
    _mm256_storeu_ps(x + i + 8, b);
    m0 = _mm256_max_ps(m0, a);
    m1 = _mm256_max_ps(m1, b);
  }
  float r = ReduceMax(_mm256_max_ps(m0, m1));
  for (; i < n; ++i) {
    x[i] += add[i];
    r = x[i] > r ? x[i] : r;
  }
  return r;
}

float f32_attn_select_max_avx2(float* x, const uint8_t* keep, int64_t n) {
  float r = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = keep[i] ? x[i] : -INFINITY;
    r = x[i] > r ? x[i] : r;
  }
  return r;
}

}  // namespace oc::attn

namespace oc::attn {
namespace {

// Lanes [0, left) of an AVX2 load/store mask.
inline __m256i TailMask8(int64_t left) {
  const int n = left >= 8 ? 8 : static_cast<int>(left);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

template <int R>
void ScoresRows8(const float* q, int64_t ldq, const float* k, int64_t ldk, int64_t n, int64_t d, float scale,
                 float* s, int64_t lds) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {  // 4 keys x R rows of independent FMA chains
    __m256 acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_setzero_ps();
    for (int64_t p = 0; p < d; p += 8) {
      const __m256i m = TailMask8(d - p);
      __m256 kv[4];
      for (int c = 0; c < 4; ++c) kv[c] = _mm256_maskload_ps(k + (j + c) * ldk + p, m);
      for (int r = 0; r < R; ++r) {
        const __m256 qv = _mm256_maskload_ps(q + r * ldq + p, m);
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_fmadd_ps(qv, kv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) s[r * lds + j + c] = scale * ReduceAdd(acc[r][c]);
  }
  for (; j < n; ++j) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t p = 0; p < d; p += 8) {
      const __m256i m = TailMask8(d - p);
      const __m256 kv = _mm256_maskload_ps(k + j * ldk + p, m);
      for (int r = 0; r < R; ++r) acc[r] = _mm256_fmadd_ps(_mm256_maskload_ps(q + r * ldq + p, m), kv, acc[r]);
    }
    for (int r = 0; r < R; ++r) s[r * lds + j] = scale * ReduceAdd(acc[r]);
  }
}

template <int R>
void PvRows8(const float* p, int64_t lds, const float* v, int64_t ldv, int64_t n, int64_t dv, float* o, int64_t ldo) {
  for (int64_t c0 = 0; c0 < dv; c0 += 32) {  // 32 output columns in registers across all keys
    __m256i m[4];
    __m256 acc[R][4];
    for (int c = 0; c < 4; ++c) m[c] = TailMask8(c0 + 8 * c < dv ? dv - c0 - 8 * c : 0);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_maskload_ps(o + r * ldo + c0 + 8 * c, m[c]);
    for (int64_t j = 0; j < n; ++j) {
      __m256 vv[4];
      for (int c = 0; c < 4; ++c) vv[c] = _mm256_maskload_ps(v + j * ldv + c0 + 8 * c, m[c]);
      for (int r = 0; r < R; ++r) {
        const __m256 pr = _mm256_set1_ps(p[r * lds + j]);
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_fmadd_ps(pr, vv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) _mm256_maskstore_ps(o + r * ldo + c0 + 8 * c, m[c], acc[r][c]);
  }
}

}  // namespace

void f32_attn_scores_rows_avx2(const float* q, int64_t ldq, int64_t rows, const float* k, int64_t ldk, int64_t n,
                               int64_t d, float scale, float* s, int64_t lds) {
  switch (rows) {
    case 1: ScoresRows8<1>(q, ldq, k, ldk, n, d, scale, s, lds); break;
    case 2: ScoresRows8<2>(q, ldq, k, ldk, n, d, scale, s, lds); break;
    case 3: ScoresRows8<3>(q, ldq, k, ldk, n, d, scale, s, lds); break;
    default: ScoresRows8<4>(q, ldq, k, ldk, n, d, scale, s, lds); break;
  }
}

void f32_attn_pv_rows_avx2(const float* p, int64_t lds, int64_t rows, const float* v, int64_t ldv, int64_t n,
                           int64_t dv, float* o, int64_t ldo) {
  switch (rows) {
    case 1: PvRows8<1>(p, lds, v, ldv, n, dv, o, ldo); break;
    case 2: PvRows8<2>(p, lds, v, ldv, n, dv, o, ldo); break;
    case 3: PvRows8<3>(p, lds, v, ldv, n, dv, o, ldo); break;
    default: PvRows8<4>(p, lds, v, ldv, n, dv, o, ldo); break;
  }
}

}  // namespace oc::attn

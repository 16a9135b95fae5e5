// AVX-512 pieces of the fused attention kernel: the softmax row passes and the
// K^T panel packer. Called only when SelectedIsa() is AVX-512 (see
// attention_core.cc); compiled with -mavx512f ... by the build (file suffix).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "ops/cpu/attention/attention_core_isa.h"

namespace oc::attn {

float f32_attn_row_max_avx512(const float* x, int64_t n) {
  __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {  // four chains hide the max latency
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
    m2 = _mm512_max_ps(m2, _mm512_loadu_ps(x + i + 32));
    m3 = _mm512_max_ps(m3, _mm512_loadu_ps(x + i + 48));
  }
  for (; i + 16 <= n; i += 16) m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
  if (i < n) {
    const __mmask16 k = static_cast<__mmask16>((1u << (n - i)) - 1);
    m1 = _mm512_max_ps(m1, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i));
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

namespace {

// exp(x) for x <= 0 (a score minus the running max): 2^n * p(r), r = x - n ln2
// in [-ln2/2, ln2/2], degree-6 polynomial (relative error ~2e-7); x below -87
// (including -inf) gives exactly 0.
inline __m512 ExpNonPositive(__m512 x) {
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.f), _CMP_GE_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.4286068203094172e-06f), r);
  __m512 p = _mm512_set1_ps(1.f / 720.f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 120.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 24.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f / 6.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  return _mm512_maskz_scalef_ps(live, p, n);
}

}  // namespace

float f32_attn_exp_sum_avx512(float* x, int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  __m512 a0 = _mm512_setzero_ps(), a1 = a0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 e0 = ExpNonPositive(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
    const __m512 e1 = ExpNonPositive(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), s));
    _mm512_storeu_ps(x + i, e0);
    _mm512_storeu_ps(x + i + 16, e1);
    a0 = _mm512_add_ps(a0, e0);
    a1 = _mm512_add_ps(a1, e1);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 e = _mm512_maskz_mov_ps(k, ExpNonPositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), s)));
    _mm512_mask_storeu_ps(x + i, k, e);
    a0 = _mm512_add_ps(a0, e);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

void f32_attn_pack_kt32_avx512(const float* k, int64_t ldk, int64_t n, int64_t d, float* dst) {
  alignas(64) int32_t idx[16];
  for (int j = 0; j < 16; ++j) idx[j] = static_cast<int32_t>(j * ldk);
  const __m512i vidx = _mm512_load_si512(idx);
  for (int64_t j0 = 0; j0 < n; j0 += 32, dst += 32 * d) {
    const int64_t cols = n - j0 < 32 ? n - j0 : 32;
    const __mmask16 mlo = cols >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << cols) - 1);
    const __mmask16 mhi = cols >= 32 ? 0xFFFF : cols <= 16 ? 0 : static_cast<__mmask16>((1u << (cols - 16)) - 1);
    const float* lo = k + j0 * ldk;
    const float* hi = lo + 16 * ldk;
    for (int64_t p = 0; p < d; ++p) {
      _mm512_storeu_ps(dst + p * 32, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mlo, vidx, lo + p, 4));
      _mm512_storeu_ps(dst + p * 32 + 16,
                       mhi ? _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mhi, vidx, hi + p, 4) : _mm512_setzero_ps());
    }
  }
}

}  // namespace oc::attn

namespace oc::attn {
namespace {

inline __mmask16 TailMask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

// Four keys at a time per row: 4 * R independent FMA chains.
template <int R>
void ScoresRows(const float* q, int64_t ldq, const float* k, int64_t ldk, int64_t n, int64_t d, float scale,
                float* s, int64_t lds) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    __m512 acc[R][4];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int64_t p = 0; p < d; p += 16) {
      const __mmask16 m = TailMask(d - p);
      __m512 kv[4];
      for (int c = 0; c < 4; ++c) kv[c] = _mm512_maskz_loadu_ps(m, k + (j + c) * ldk + p);
      for (int r = 0; r < R; ++r) {
        const __m512 qv = _mm512_maskz_loadu_ps(m, q + r * ldq + p);
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_fmadd_ps(qv, kv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) s[r * lds + j + c] = scale * _mm512_reduce_add_ps(acc[r][c]);
  }
  for (; j < n; ++j) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t p = 0; p < d; p += 16) {
      const __mmask16 m = TailMask(d - p);
      const __m512 kv = _mm512_maskz_loadu_ps(m, k + j * ldk + p);
      for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + r * ldq + p), kv, acc[r]);
    }
    for (int r = 0; r < R; ++r) s[r * lds + j] = scale * _mm512_reduce_add_ps(acc[r]);
  }
}

// Output columns in groups of 64 held in registers across all keys.
template <int R>
void PvRows(const float* p, int64_t lds, const float* v, int64_t ldv, int64_t n, int64_t dv, float* o, int64_t ldo) {
  for (int64_t c0 = 0; c0 < dv; c0 += 64) {
    __mmask16 m[4];
    __m512 acc[R][4];
    for (int c = 0; c < 4; ++c) m[c] = c0 + 16 * c < dv ? TailMask(dv - c0 - 16 * c) : 0;
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_maskz_loadu_ps(m[c], o + r * ldo + c0 + 16 * c);
    for (int64_t j = 0; j < n; ++j) {
      __m512 vv[4];
      for (int c = 0; c < 4; ++c) vv[c] = _mm512_maskz_loadu_ps(m[c], v + j * ldv + c0 + 16 * c);
      for (int r = 0; r < R; ++r) {
        const __m512 pr = _mm512_set1_ps(p[r * lds + j]);
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_fmadd_ps(pr, vv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) _mm512_mask_storeu_ps(o + r * ldo + c0 + 16 * c, m[c], acc[r][c]);
  }
}

}  // namespace

void f32_attn_scores_rows_avx512(const float* q, int64_t ldq, int64_t rows, const float* k, int64_t ldk, int64_t n,
                                 int64_t d, float scale, float* s, int64_t lds) {
  switch (rows) {
    case 1: ScoresRows<1>(q, ldq, k, ldk, n, d, scale, s, lds); break;
    case 2: ScoresRows<2>(q, ldq, k, ldk, n, d, scale, s, lds); break;
    case 3: ScoresRows<3>(q, ldq, k, ldk, n, d, scale, s, lds); break;
    default: ScoresRows<4>(q, ldq, k, ldk, n, d, scale, s, lds); break;
  }
}

void f32_attn_pv_rows_avx512(const float* p, int64_t lds, int64_t rows, const float* v, int64_t ldv, int64_t n,
                             int64_t dv, float* o, int64_t ldo) {
  switch (rows) {
    case 1: PvRows<1>(p, lds, v, ldv, n, dv, o, ldo); break;
    case 2: PvRows<2>(p, lds, v, ldv, n, dv, o, ldo); break;
    case 3: PvRows<3>(p, lds, v, ldv, n, dv, o, ldo); break;
    default: PvRows<4>(p, lds, v, ldv, n, dv, o, ldo); break;
  }
}

}  // namespace oc::attn

namespace oc::attn {

float f32_attn_add_max_avx512(float* x, const float* add, int64_t n) {
  __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_add_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(add + i));
    const __m512 b = _mm512_add_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(add + i + 16));
    _mm512_storeu_ps(x + i, a);
    _mm512_storeu_ps(x + i + 16, b);
    m0 = _mm512_max_ps(m0, a);
    m1 = _mm512_max_ps(m1, b);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 a = _mm512_add_ps(_mm512_maskz_loadu_ps(k, x + i), _mm512_maskz_loadu_ps(k, add + i));
    _mm512_mask_storeu_ps(x + i, k, a);
    m0 = _mm512_mask_max_ps(m0, k, m0, a);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
}

float f32_attn_select_max_avx512(float* x, const uint8_t* keep, int64_t n) {
  const __m512 neg_inf = _mm512_set1_ps(-INFINITY);
  __m512 m0 = neg_inf;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m128i bytes = _mm_maskz_loadu_epi8(k, keep + i);
    const __mmask16 live = _mm_test_epi8_mask(bytes, bytes);  // needs AVX-512 BW + VL
    const __m512 a = _mm512_mask_loadu_ps(neg_inf, live, x + i);
    _mm512_mask_storeu_ps(x + i, k, a);
    m0 = _mm512_max_ps(m0, a);
  }
  return _mm512_reduce_max_ps(m0);
}

}  // namespace oc::attn

// ISA-specific pieces of the fused attention kernel (attention_core.cc picks
// them once per plan from SelectedIsa()).
#pragma once

#include <cstdint>

namespace oc::attn {

// Query blocks of at most this many rows skip GEMM packing (decoding steps).
inline constexpr int64_t kDirectRows = 4;

#if defined(__x86_64__) || defined(_M_X64)
// Max of x[0, n) (-inf when n == 0).
float f32_attn_row_max_avx512(const float* x, int64_t n);
// x[i] += add[i], or x[i] = keep[i] ? x[i] : -inf; both return the max of the result.
float f32_attn_add_max_avx512(float* x, const float* add, int64_t n);
float f32_attn_select_max_avx512(float* x, const uint8_t* keep, int64_t n);
// x[i] = exp(x[i] - shift) in place, for x[i] <= shift (-inf gives 0); returns the sum.
float f32_attn_exp_sum_avx512(float* x, int64_t n, float shift);
// Packs K^T (k is n rows of d floats, leading dim ldk) into 32-column GEMM B
// panels: dst[panel][p * 32 + j] = k[(panel * 32 + j) * ldk + p], zero past n.
void f32_attn_pack_kt32_avx512(const float* k, int64_t ldk, int64_t n, int64_t d, float* dst);
// Unpacked products for a few query rows (decoding), rows <= kDirectRows:
// s[r * lds + j] = scale * q_r . k_j, and o[r * ldo + c] += sum_j p[r * lds + j] v[j * ldv + c].
void f32_attn_scores_rows_avx512(const float* q, int64_t ldq, int64_t rows, const float* k, int64_t ldk, int64_t n,
                                 int64_t d, float scale, float* s, int64_t lds);
void f32_attn_pv_rows_avx512(const float* p, int64_t lds, int64_t rows, const float* v, int64_t ldv, int64_t n,
                             int64_t dv, float* o, int64_t ldo);
// The same row passes for AVX2 + FMA.
float f32_attn_row_max_avx2(const float* x, int64_t n);
float f32_attn_exp_sum_avx2(float* x, int64_t n, float shift);
float f32_attn_add_max_avx2(float* x, const float* add, int64_t n);
float f32_attn_select_max_avx2(float* x, const uint8_t* keep, int64_t n);
void f32_attn_scores_rows_avx2(const float* q, int64_t ldq, int64_t rows, const float* k, int64_t ldk, int64_t n,
                               int64_t d, float scale, float* s, int64_t lds);
void f32_attn_pv_rows_avx2(const float* p, int64_t lds, int64_t rows, const float* v, int64_t ldv, int64_t n,
                           int64_t dv, float* o, int64_t ldo);
#endif

}  // namespace oc::attn

// Depthwise 3x3 convolution (stride 1 or 2, small padding, no dilation) with
// AVX2: the direct kernel of conv_dw3x3_avx512.cc in 8-wide vectors. The
// padded-row loops of conv_loops.h work in 16-float blocks, which under AVX2
// need two registers per weight and spill; here the nine weights take nine of
// the sixteen ymm registers. Edge blocks use masked loads (lanes outside the
// row read as zero and never touch memory). Picked by DepthwiseConvPadded
// (conv_loops.cc) when UseDepthwise3x3(g) and SelectedIsa() is kAvx2.
#include <immintrin.h>

#include <algorithm>

#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/conv/conv_common.h"

namespace oc {
namespace {

// All-ones lanes i where start + i lies in [0, iw).
inline __m256i ColMask(int64_t start, int64_t iw) {
  const __m256i idx = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(start)),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i ge0 = _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(-1));
  const __m256i lt = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(iw)), idx);
  return _mm256_and_si256(ge0, lt);
}

inline __m256 Load(const float* row, int64_t start, int64_t iw, bool inner) {
  if (inner) return _mm256_loadu_ps(row + start);
  return _mm256_maskload_ps(row + start, ColMask(start, iw));
}

// Even and odd elements of the 16 floats in a, b (in order).
inline __m256 Evens(__m256 a, __m256 b) {
  const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}
inline __m256 Odds(__m256 a, __m256 b) {
  const __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}

// t[kx][i] = row[(ox0 + i) * SW + kx - pw], zero outside [0, iw).
template <int SW>
inline void LoadTaps(const float* row, int64_t ox0, int64_t pw, int64_t iw, bool inner, __m256* t) {
  if constexpr (SW == 1) {
    const int64_t b = ox0 - pw;
    for (int kx = 0; kx < 3; ++kx) t[kx] = Load(row, b + kx, iw, inner);
  } else {
    const int64_t b = 2 * ox0 - pw;
    const __m256 a0 = Load(row, b, iw, inner), a1 = Load(row, b + 8, iw, inner);
    const __m256 c0 = Load(row, b + 2, iw, inner), c1 = Load(row, b + 10, iw, inner);
    t[0] = Evens(a0, a1);
    t[1] = Odds(a0, a1);
    t[2] = Evens(c0, c1);
  }
}

// FusedClampOf's bounds in registers.
struct Epilogue {
  explicit Epilogue(const FusedClamp& fc) : clamp(fc.kind), lo(_mm256_set1_ps(fc.lo)), hi(_mm256_set1_ps(fc.hi)) {}
  int clamp;  // FusedClamp::Kind
  __m256 lo, hi;
};

// max/min return their second operand when one is NaN: a NaN passes through,
// as in ApplyActivation.
inline __m256 Finish(__m256 acc, const Epilogue& e) {
  if (e.clamp == FusedClamp::kClamp) return _mm256_min_ps(e.hi, _mm256_max_ps(e.lo, acc));
  if (e.clamp == FusedClamp::kLeaky) {
    const __m256 neg = _mm256_cmp_ps(acc, _mm256_setzero_ps(), _CMP_LT_OQ);
    return _mm256_blendv_ps(acc, _mm256_mul_ps(acc, e.lo), neg);
  }
  return acc;
}

template <int SW, int R>
inline void Rows(const float* xc, int64_t ih, int64_t iw, int64_t ow, int64_t ph, int64_t pw, int64_t oy0,
                 const __m256* w, __m256 bias, const float* zc, float* yc, const Epilogue& ep,
                 int64_t inner_lo, int64_t inner_hi) {
  constexpr int kRows = (R - 1) * SW + 3;
  const float* in[kRows];
  for (int j = 0; j < kRows; ++j) {
    const int64_t iy = oy0 * SW - ph + j;
    in[j] = (iy >= 0 && iy < ih) ? xc + iy * iw : nullptr;
  }
  for (int64_t ox0 = 0; ox0 < ow; ox0 += 8) {
    const bool inner = ox0 >= inner_lo && ox0 < inner_hi;
    __m256 acc[R];
    for (int k = 0; k < R; ++k) acc[k] = bias;
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) {
      if (!in[j]) continue;
      __m256 t[3];
      LoadTaps<SW>(in[j], ox0, pw, iw, inner, t);
#pragma GCC unroll 4
      for (int k = 0; k < R; ++k) {
        const int ky = j - k * SW;
        if (ky < 0 || ky > 2) continue;
        acc[k] = _mm256_fmadd_ps(w[ky * 3 + 0], t[0], acc[k]);
        acc[k] = _mm256_fmadd_ps(w[ky * 3 + 1], t[1], acc[k]);
        acc[k] = _mm256_fmadd_ps(w[ky * 3 + 2], t[2], acc[k]);
      }
    }
    const int64_t cnt = std::min<int64_t>(8, ow - ox0);
    for (int k = 0; k < R; ++k) {
      const int64_t off = (oy0 + k) * ow + ox0;
      __m256 v = acc[k];
      if (cnt == 8) {
        if (zc) v = _mm256_add_ps(v, _mm256_loadu_ps(zc + off));
        _mm256_storeu_ps(yc + off, Finish(v, ep));
      } else {
        const __m256i m = ColMask(0, cnt);
        if (zc) v = _mm256_add_ps(v, _mm256_maskload_ps(zc + off, m));
        _mm256_maskstore_ps(yc + off, m, Finish(v, ep));
      }
    }
  }
}

template <int SW>
void Planes(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias, const float* z,
            float* y, const Activation& act, int64_t c0, int64_t c1) {
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t ph = g.pad_begin[1], pw = g.pad_begin[2];
  const Epilogue ep(FusedClampOf(act));
  const bool other_act = act.kind != ActivationKind::kNone && ep.clamp == FusedClamp::kNone;
  // Blocks [inner_lo, inner_hi) (by ox0) load only inside the row: loads
  // start at ox0*SW - pw >= 0 and reach `reach` floats further.
  const int64_t inner_lo = (pw + SW - 1) / SW;
  const int64_t reach = SW == 1 ? 9 : 17;
  const int64_t last_start = iw - 1 - reach + pw;
  const int64_t inner_hi = last_start >= 0 ? last_start / SW + 1 : 0;
  for (int64_t bc = c0; bc < c1; ++bc) {
    const int64_t b = bc / g.c_out, c = bc % g.c_out;
    const float* xc = x + (b * g.c_in + c / mg) * ih * iw;
    __m256 wv[9];
    for (int t = 0; t < 9; ++t) wv[t] = _mm256_set1_ps(w[c * 9 + t]);
    const __m256 bv = _mm256_set1_ps(bias ? bias[c] : 0.f);
    float* yc = y + bc * oh * ow;
    const float* zc = z ? z + bc * oh * ow : nullptr;
    int64_t oy = 0;
    for (; oy + 2 <= oh; oy += 2) Rows<SW, 2>(xc, ih, iw, ow, ph, pw, oy, wv, bv, zc, yc, ep, inner_lo, inner_hi);
    if (oy < oh) Rows<SW, 1>(xc, ih, iw, ow, ph, pw, oy, wv, bv, zc, yc, ep, inner_lo, inner_hi);
    if (other_act) ApplyActivation(act, yc, oh * ow);
  }
}

}  // namespace

void Depthwise3x3Avx2(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                      const float* z, float* y, const Activation& act, int64_t c0, int64_t c1) {
  if (g.stride[2] == 1) Planes<1>(g, mg, x, w, bias, z, y, act, c0, c1);
  else Planes<2>(g, mg, x, w, bias, z, y, act, c0, c1);
}

}  // namespace oc

// Depthwise 3x3 convolution (stride 1 or 2, small padding, no dilation) with
// AVX-512, straight from the input planes: no padded copy of the rows. Blocks
// of 16 outputs of one row; each tap is one unaligned load (stride 1) or two
// loads and a two-source permute (stride 2), masked where the taps reach past
// the row so padding reads as zero. Two output rows are computed together so
// that the input rows they share are loaded once; the nine weights of the
// channel stay in registers. The fused epilogue (bias, residual Z, Relu /
// Clip / LeakyRelu) is applied in registers; other activations run on the
// stored row. Picked by DepthwiseConv(Padded) (conv_loops.cc) when
// UseDepthwise3x3(g) and SelectedIsa() is kAvx512.
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on the undefined
// pass-through operand of the unmasked intrinsics it wraps (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>

#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/conv/conv_common.h"

namespace oc {
namespace {

// Lanes i of a 16-float block whose input column start + i lies in [0, iw).
inline __mmask16 ColMask(int64_t start, int64_t iw) {
  const int64_t lo = std::max<int64_t>(0, -start), hi = std::min<int64_t>(16, iw - start);
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// The three tap vectors of input row `row` for outputs [ox0, ox0 + 16):
// t[kx][i] = row[(ox0 + i) * SW + kx - pw], zero outside [0, iw).
template <int SW>
inline void LoadTaps(const float* row, int64_t ox0, int64_t pw, int64_t iw, bool inner, __m512* t) {
  if constexpr (SW == 1) {
    const int64_t b = ox0 - pw;
    if (inner) {
      for (int kx = 0; kx < 3; ++kx) t[kx] = _mm512_loadu_ps(row + b + kx);
    } else {
      for (int kx = 0; kx < 3; ++kx) t[kx] = _mm512_maskz_loadu_ps(ColMask(b + kx, iw), row + b + kx);
    }
  } else {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const int64_t b = 2 * ox0 - pw;  // tap kx reads b + kx + 2i
    __m512 a0, a1, c0, c1;
    if (inner) {
      a0 = _mm512_loadu_ps(row + b), a1 = _mm512_loadu_ps(row + b + 16);
      c0 = _mm512_loadu_ps(row + b + 2), c1 = _mm512_loadu_ps(row + b + 18);
    } else {
      a0 = _mm512_maskz_loadu_ps(ColMask(b, iw), row + b);
      a1 = _mm512_maskz_loadu_ps(ColMask(b + 16, iw), row + b + 16);
      c0 = _mm512_maskz_loadu_ps(ColMask(b + 2, iw), row + b + 2);
      c1 = _mm512_maskz_loadu_ps(ColMask(b + 18, iw), row + b + 18);
    }
    t[0] = _mm512_permutex2var_ps(a0, even, a1);
    t[1] = _mm512_permutex2var_ps(a0, odd, a1);
    t[2] = _mm512_permutex2var_ps(c0, even, c1);
  }
}

// FusedClampOf's bounds in registers.
struct Epilogue {
  explicit Epilogue(const FusedClamp& fc) : clamp(fc.kind), lo(_mm512_set1_ps(fc.lo)), hi(_mm512_set1_ps(fc.hi)) {}
  int clamp;  // FusedClamp::Kind
  __m512 lo, hi;
};

// Same NaN behaviour as ApplyActivation: max/min return their second operand
// when one is NaN, so a NaN accumulator passes through.
inline __m512 Finish(__m512 acc, const Epilogue& e) {
  if (e.clamp == FusedClamp::kClamp) return _mm512_min_ps(e.hi, _mm512_max_ps(e.lo, acc));
  if (e.clamp == FusedClamp::kLeaky) {
    const __mmask16 neg = _mm512_cmp_ps_mask(acc, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_mul_ps(acc, neg, acc, e.lo);
  }
  return acc;
}

// R output rows oy0 .. oy0+R-1 of one channel plane.
template <int SW, int R>
inline void Rows(const float* xc, int64_t ih, int64_t iw, int64_t ow, int64_t ph, int64_t pw, int64_t oy0,
                 const __m512* w, __m512 bias, const float* zc, float* yc, const Epilogue& ep,
                 int64_t inner_lo, int64_t inner_hi) {
  constexpr int kRows = (R - 1) * SW + 3;  // input rows the R output rows read
  const float* in[kRows];
  for (int j = 0; j < kRows; ++j) {
    const int64_t iy = oy0 * SW - ph + j;
    in[j] = (iy >= 0 && iy < ih) ? xc + iy * iw : nullptr;
  }
  for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
    const bool inner = ox0 >= inner_lo && ox0 < inner_hi;
    __m512 acc[R];
    for (int k = 0; k < R; ++k) acc[k] = bias;
#pragma GCC unroll 8
    for (int j = 0; j < kRows; ++j) {
      if (!in[j]) continue;
      __m512 t[3];
      LoadTaps<SW>(in[j], ox0, pw, iw, inner, t);
#pragma GCC unroll 4
      for (int k = 0; k < R; ++k) {
        const int ky = j - k * SW;
        if (ky < 0 || ky > 2) continue;
        acc[k] = _mm512_fmadd_ps(w[ky * 3 + 0], t[0], acc[k]);
        acc[k] = _mm512_fmadd_ps(w[ky * 3 + 1], t[1], acc[k]);
        acc[k] = _mm512_fmadd_ps(w[ky * 3 + 2], t[2], acc[k]);
      }
    }
    const int64_t cnt = std::min<int64_t>(16, ow - ox0);
    const __mmask16 m = static_cast<__mmask16>((1u << cnt) - 1u);
    for (int k = 0; k < R; ++k) {
      const int64_t off = (oy0 + k) * ow + ox0;
      __m512 v = acc[k];
      if (zc) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, zc + off));
      v = Finish(v, ep);
      if (cnt == 16) _mm512_storeu_ps(yc + off, v);
      else _mm512_mask_storeu_ps(yc + off, m, v);
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
  // Blocks [inner_lo, inner_hi) (by ox0) load only inside the row: the
  // loads start at ox0*SW - pw >= 0 and reach `reach` floats further (stride
  // 2 loads one float past the last tap), which must stay below iw.
  const int64_t inner_lo = (pw + SW - 1) / SW;
  const int64_t reach = SW == 1 ? 17 : 33;
  const int64_t last_start = iw - 1 - reach + pw;  // largest ox0*SW allowed
  const int64_t inner_hi = last_start >= 0 ? last_start / SW + 1 : 0;
  for (int64_t bc = c0; bc < c1; ++bc) {
    const int64_t b = bc / g.c_out, c = bc % g.c_out;
    const float* xc = x + (b * g.c_in + c / mg) * ih * iw;
    __m512 wv[9];
    for (int t = 0; t < 9; ++t) wv[t] = _mm512_set1_ps(w[c * 9 + t]);
    const __m512 bv = _mm512_set1_ps(bias ? bias[c] : 0.f);
    float* yc = y + bc * oh * ow;
    const float* zc = z ? z + bc * oh * ow : nullptr;
    int64_t oy = 0;
    for (; oy + 2 <= oh; oy += 2) Rows<SW, 2>(xc, ih, iw, ow, ph, pw, oy, wv, bv, zc, yc, ep, inner_lo, inner_hi);
    if (oy < oh) Rows<SW, 1>(xc, ih, iw, ow, ph, pw, oy, wv, bv, zc, yc, ep, inner_lo, inner_hi);
    if (other_act) ApplyActivation(act, yc, oh * ow);
  }
}

}  // namespace

void Depthwise3x3Avx512(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                        const float* z, float* y, const Activation& act, int64_t c0, int64_t c1) {
  if (g.stride[2] == 1) Planes<1>(g, mg, x, w, bias, z, y, act, c0, c1);
  else Planes<2>(g, mg, x, w, bias, z, y, act, c0, c1);
}

}  // namespace oc

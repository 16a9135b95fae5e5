// The data-movement and direct-convolution loops of Conv, written once and
// compiled once per ISA: conv_loops.cc (baseline), conv_loops_avx2.cc and
// conv_loops_avx512.cc include this with their own target flags so that the
// compiler vectorises the same loops for each ISA. Everything here has
// internal linkage (anonymous namespace), so the per-ISA copies never merge.
// Callers use the dispatching entry points declared in conv_common.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/conv/conv_common.h"

namespace oc {
namespace {

inline int64_t FloorDivL(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t CeilDivL(int64_t a, int64_t b) { return -FloorDivL(-a, b); }

// (-Wpsabi: these vectors never cross a non-inline call, so the ABI note for
// builds without AVX-512 does not apply.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// 16 floats as one GCC/Clang vector: each ISA build lowers it to its own
// registers (one zmm, two ymm, four xmm), without intrinsics.
typedef float DwVec __attribute__((vector_size(64)));
inline DwVec DwLoad(const float* p) {
  DwVec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The even elements of the 32 floats at s (s[0], s[2], ..., s[30]).
inline DwVec DwEvens(const float* s) {
  const DwVec a = DwLoad(s), b = DwLoad(s + 16);
#if defined(__clang__)
  return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
#else
  typedef int32_t DwIdx __attribute__((vector_size(64)));
  return __builtin_shuffle(a, b, DwIdx{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30});
#endif
}

// 2-D (or 1-D) im2col, for panels of NR columns. Each
// im2col row is first assembled contiguously in a small buffer (one copy and
// at most two zero fills per output row, with the bounds worked out once per
// output row instead of once per panel piece), then moved to the panels in
// whole NR-float pieces the compiler turns into straight vector copies. On
// small images (rows of 8-32 outputs) the piecewise walk spent more time on
// its bookkeeping than on the copies.
constexpr int64_t kIm2ColRowMax = 2048;
template <int NR>
void PackIm2Col2D(const ConvGeometry& g, const float* x, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                  float* dst) {
  const int64_t kh = g.kernel[1], kw = g.kernel[2];
  const int64_t IH = g.in[1], IW = g.in[2], OW = g.out[2];
  const int64_t sh = g.stride[1], sw = g.stride[2], dh = g.dilation[1], dw = g.dilation[2];
  const int64_t ph = g.pad_begin[1], pw = g.pad_begin[2];
  const int64_t panels = (nc + NR - 1) / NR;
  const int64_t panel_stride = kc * NR;
  alignas(64) float row[kIm2ColRowMax + NR];
  for (int64_t j = nc; j < panels * NR; ++j) row[j] = 0.f;
  int64_t t = k0;
  int64_t kx = t % kw; t /= kw;
  int64_t ky = t % kh; t /= kh;
  int64_t c = t;
  const int64_t oy_start = n0 / OW, ox_start = n0 % OW;
  for (int64_t r = k0; r < k0 + kc; ++r) {
    const float* xc = x + c * IH * IW;
    const int64_t base = kx * dw - pw;  // ix = ox * sw + base
    const int64_t ox_lo = std::clamp<int64_t>(CeilDivL(-base, sw), 0, OW);
    const int64_t ox_hi = std::clamp<int64_t>(FloorDivL(IW - 1 - base, sw) + 1, ox_lo, OW);
    int64_t p = 0, oy = oy_start, ox0 = ox_start;
    while (p < nc) {
      const int64_t e = std::min(OW, ox0 + (nc - p));  // this output row covers ox in [ox0, e)
      float* d = row + p;  // d[ox - ox0]
      const int64_t iy = oy * sh - ph + ky * dh;
      if (iy < 0 || iy >= IH) {
        for (int64_t ox = ox0; ox < e; ++ox) d[ox - ox0] = 0.f;
      } else {
        // Valid ox in [lo, hi) read input column ox * sw + base, in [0, IW).
        const int64_t lo = std::clamp(ox_lo, ox0, e), hi = std::clamp(ox_hi, lo, e);
        const float* xrow = xc + iy * IW;
        for (int64_t ox = ox0; ox < lo; ++ox) d[ox - ox0] = 0.f;
        if (sw == 1) {
          if (hi > lo)
            std::memcpy(d + (lo - ox0), xrow + (lo + base), static_cast<size_t>(hi - lo) * sizeof(float));
        } else {
          int64_t ox = lo;
          if (sw == 2)  // 16 at a time from two loads, never past the row's last element
            for (; ox + 16 <= hi && (ox + 15) * 2 + base + 1 < IW; ox += 16) {
              const DwVec v = DwEvens(xrow + ox * 2 + base);
              std::memcpy(d + (ox - ox0), &v, sizeof(v));
            }
          for (; ox < hi; ++ox) d[ox - ox0] = xrow[ox * sw + base];
        }
        for (int64_t ox = hi; ox < e; ++ox) d[ox - ox0] = 0.f;
      }
      p += e - ox0;
      ox0 = 0;
      ++oy;
    }
    float* drow = dst + (r - k0) * NR;
    for (int64_t q = 0; q < panels; ++q) std::memcpy(drow + q * panel_stride, row + q * NR, NR * sizeof(float));
    if (++kx == kw) {
      kx = 0;
      if (++ky == kh) ky = 0, ++c;
    }
  }
}

// Im2col rows [k0, k0+kc) x output positions [n0, n0+nc) packed into nr-wide
// GEMM B panels: element (r, p) goes to panel (p-n0)/nr, row r-k0, column
// (p-n0)%nr (panel stride kc*nr). Rows are walked outermost so that each input
// row segment is decoded once and copied in panel-sized pieces.
inline void PackIm2ColImpl(const ConvGeometry& g, const float* x, int nr, int64_t k0, int64_t kc, int64_t n0,
                           int64_t nc, float* dst) {
  const int64_t kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  const int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2];
  const int64_t OH = g.out[1], OW = g.out[2];
  const int64_t in_size = ID * IH * IW;
  const int64_t sw = g.stride[2];
  if (kd == 1 && ID == 1 && g.out[0] == 1 && g.pad_begin[0] == 0 && nc <= kIm2ColRowMax) {
    if (nr == 32) return PackIm2Col2D<32>(g, x, k0, kc, n0, nc, dst);
    if (nr == 16) return PackIm2Col2D<16>(g, x, k0, kc, n0, nc, dst);
  }
  const int64_t panel_stride = kc * nr;
  // Divisions are hoisted out of the loops (small convolutions spend most of
  // their packing time on them otherwise): the row index r = (c, kz, ky, kx)
  // and the position p = (oz, oy, ox) advance like odometers, the valid ox
  // range per kx is computed once per call.
  constexpr int64_t kMaxCachedKw = 16;
  int64_t base_kx[kMaxCachedKw], lo_kx[kMaxCachedKw], hi_kx[kMaxCachedKw];
  auto kx_range = [&](int64_t kx, int64_t* base, int64_t* lo, int64_t* hi) {
    *base = kx * g.dilation[2] - g.pad_begin[2];  // ix = ox * sw + base
    *lo = std::max<int64_t>(0, CeilDivL(-*base, sw));
    *hi = std::min<int64_t>(OW, FloorDivL(IW - 1 - *base, sw) + 1);
  };
  for (int64_t kx = 0; kx < std::min(kw, kMaxCachedKw); ++kx) kx_range(kx, &base_kx[kx], &lo_kx[kx], &hi_kx[kx]);
  int64_t t = k0;
  int64_t kx = t % kw; t /= kw;
  int64_t ky = t % kh; t /= kh;
  int64_t kz = t % kd; t /= kd;
  int64_t c = t;
  const int64_t ox_start = n0 % OW, oy_start = (n0 / OW) % OH, oz_start = n0 / (OW * OH);
  for (int64_t r = k0; r < k0 + kc; ++r) {
    const float* xc = x + c * in_size;
    float* drow = dst + (r - k0) * nr;
    int64_t base, ox_lo, ox_hi;
    if (kx < kMaxCachedKw) base = base_kx[kx], ox_lo = lo_kx[kx], ox_hi = hi_kx[kx];
    else kx_range(kx, &base, &ox_lo, &ox_hi);
    int64_t p = n0, ox0 = ox_start, oy = oy_start, oz = oz_start;
    int64_t panel = 0, col = 0;  // of position p within the block
    const int64_t pend = n0 + nc;
    while (p < pend) {
      const int64_t run = std::min(OW - ox0, pend - p);
      const int64_t iz = oz * g.stride[0] - g.pad_begin[0] + kz * g.dilation[0];
      const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ky * g.dilation[1];
      const bool row_ok = iz >= 0 && iz < ID && iy >= 0 && iy < IH;
      const float* xrow = xc + (iz * IH + iy) * IW;
      // Valid j (ox = ox0 + j) in [lo, hi).
      const int64_t lo = row_ok ? std::clamp(ox_lo - ox0, int64_t{0}, run) : run;
      const int64_t hi = row_ok ? std::clamp(ox_hi - ox0, lo, run) : run;
      for (int64_t j = 0; j < run;) {
        const int64_t len = std::min<int64_t>(run - j, nr - col);
        float* d = drow + panel * panel_stride + col;  // d[u - j] holds position u of this run
        const int64_t a = std::clamp(lo, j, j + len), b = std::clamp(hi, a, j + len);
        for (int64_t u = j; u < a; ++u) d[u - j] = 0.f;
        if (sw == 1) {
          const float* s = xrow + ox0 + base;
          for (int64_t u = a; u < b; ++u) d[u - j] = s[u];
        } else {
          int64_t u = a;
          if (sw == 2) {  // 16 at a time from two loads; never reads past the row's last element
            for (; u + 16 <= b && (ox0 + u + 15) * 2 + base + 1 < IW; u += 16) {
              const DwVec e = DwEvens(xrow + (ox0 + u) * 2 + base);
              std::memcpy(d + (u - j), &e, sizeof(e));
            }
          }
          for (; u < b; ++u) d[u - j] = xrow[(ox0 + u) * sw + base];
        }
        for (int64_t u = b; u < j + len; ++u) d[u - j] = 0.f;
        j += len;
        col += len;
        if (col == nr) col = 0, ++panel;
      }
      p += run;
      ox0 = 0;
      if (++oy == OH) oy = 0, ++oz;
    }
    if (++kx == kw) {
      kx = 0;
      if (++ky == kh) {
        ky = 0;
        if (++kz == kd) kz = 0, ++c;
      }
    }
  }
  if (const int64_t tail = nc % nr) {
    float* panel = dst + (nc / nr) * panel_stride;
    for (int64_t r = 0; r < kc; ++r)
      for (int64_t j = tail; j < nr; ++j) panel[r * nr + j] = 0.f;
  }
}

// One output row of a depthwise conv, interior columns [lo, hi) where every
// tap is inside the input row: all taps accumulate in registers (KH x KW known
// at compile time, so the loop over ox vectorises). xr[ky] is the input row
// for tap row ky, or null when that row is padding.
template <int KH, int KW>
inline void DepthwiseRowInterior(const float* const* xr, const float* wc, float bv, int64_t sw, int64_t dw,
                                 int64_t pw, int64_t lo, int64_t hi, float* yrow) {
  float wk[KH][KW];
  bool live[KH];
  for (int ky = 0; ky < KH; ++ky) {
    live[ky] = xr[ky] != nullptr;
    for (int kx = 0; kx < KW; ++kx) wk[ky][kx] = live[ky] ? wc[ky * KW + kx] : 0.f;
  }
  // Padding rows read row 0 of a live row with zero weights (keeps the loop branch-free).
  const float* any = nullptr;
  for (int ky = 0; ky < KH; ++ky) if (live[ky]) any = xr[ky];
  if (!any) {
    for (int64_t ox = lo; ox < hi; ++ox) yrow[ox] = bv;
    return;
  }
  const float* rows[KH];
  for (int ky = 0; ky < KH; ++ky) rows[ky] = live[ky] ? xr[ky] : any;
  if (sw == 1) {
    for (int64_t ox = lo; ox < hi; ++ox) {
      float acc = bv;
#pragma GCC unroll 8
      for (int ky = 0; ky < KH; ++ky)
#pragma GCC unroll 8
        for (int kx = 0; kx < KW; ++kx) acc += wk[ky][kx] * rows[ky][ox + kx * dw - pw];
      yrow[ox] = acc;
    }
  } else {
    for (int64_t ox = lo; ox < hi; ++ox) {
      float acc = bv;
#pragma GCC unroll 8
      for (int ky = 0; ky < KH; ++ky)
#pragma GCC unroll 8
        for (int kx = 0; kx < KW; ++kx) acc += wk[ky][kx] * rows[ky][ox * sw + kx * dw - pw];
      yrow[ox] = acc;
    }
  }
}

// Depthwise (C/group == 1) convolution of output channels [c0, c1) of all
// images (bc = image * C_out + channel), 1-D/2-D: bias, taps, residual, activation.
inline void DepthwiseImpl(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                          const float* z, float* y, const Activation& act, int64_t c0, int64_t c1) {
  const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t KH = g.kernel[1], KW = g.kernel[2];
  const int64_t sh = g.stride[1], sw = g.stride[2], dh = g.dilation[1], dw = g.dilation[2];
  const int64_t ph = g.pad_begin[1], pw = g.pad_begin[2];
  // Valid output columns per kernel column (divisions hoisted out of the loops).
  constexpr int64_t kMaxKW = 32;
  int64_t lo_kx[kMaxKW], hi_kx[kMaxKW];
  auto range = [&](int64_t kx, int64_t* lo, int64_t* hi) {
    const int64_t off = kx * dw - pw;
    *lo = std::max<int64_t>(0, CeilDivL(-off, sw));
    *hi = std::min<int64_t>(OW, FloorDivL(IW - 1 - off, sw) + 1);
  };
  int64_t in_lo = 0, in_hi = OW;  // columns where every tap is valid
  for (int64_t kx = 0; kx < KW; ++kx) {
    int64_t lo, hi;
    range(kx, &lo, &hi);
    if (kx < kMaxKW) lo_kx[kx] = lo, hi_kx[kx] = hi;
    in_lo = std::max(in_lo, lo);
    in_hi = std::min(in_hi, hi);
  }
  const bool fast = (KH == 3 && KW == 3) || (KH == 5 && KW == 5);
  if (in_hi < in_lo) in_hi = in_lo;
  for (int64_t bc = c0; bc < c1; ++bc) {
    const int64_t b = bc / g.c_out, c = bc % g.c_out;
    const float* xc = x + (b * g.c_in + c / mg) * IH * IW;
    const float* wc = w + c * KH * KW;
    float* yc = y + bc * OH * OW;
    const float bv = bias ? bias[c] : 0.f;
    for (int64_t oy = 0; oy < OH; ++oy) {
      float* yrow = yc + oy * OW;
      // Edge columns (and every column for other kernel sizes): tap by tap.
      const int64_t e_lo = fast ? in_lo : OW, e_hi = fast ? in_hi : OW;
      for (int64_t ox = 0; ox < OW; ++ox)
        if (ox < e_lo || ox >= e_hi) yrow[ox] = bv;
      for (int64_t ky = 0; ky < KH; ++ky) {
        const int64_t iy = oy * sh - ph + ky * dh;
        if (iy < 0 || iy >= IH) continue;
        const float* xrow = xc + iy * IW;
        for (int64_t kx = 0; kx < KW; ++kx) {
          const float wv = wc[ky * KW + kx];
          const int64_t off = kx * dw - pw;  // ix = ox * sw + off
          int64_t lo, hi;
          if (kx < kMaxKW) lo = lo_kx[kx], hi = hi_kx[kx];
          else range(kx, &lo, &hi);
          // Skip the interior when the register-blocked loop handles it.
          const int64_t a1 = lo, b1 = std::min(hi, e_lo), a2 = std::max(lo, e_hi), b2 = hi;
          if (sw == 1) {
            const float* xs = xrow + off;
            for (int64_t ox = a1; ox < b1; ++ox) yrow[ox] += wv * xs[ox];
            for (int64_t ox = a2; ox < b2; ++ox) yrow[ox] += wv * xs[ox];
          } else {
            for (int64_t ox = a1; ox < b1; ++ox) yrow[ox] += wv * xrow[ox * sw + off];
            for (int64_t ox = a2; ox < b2; ++ox) yrow[ox] += wv * xrow[ox * sw + off];
          }
        }
      }
      if (fast && in_lo < in_hi) {
        const float* xr[5];
        for (int64_t ky = 0; ky < KH; ++ky) {
          const int64_t iy = oy * sh - ph + ky * dh;
          xr[ky] = (iy < 0 || iy >= IH) ? nullptr : xc + iy * IW;
        }
        if (KH == 3) DepthwiseRowInterior<3, 3>(xr, wc, bv, sw, dw, pw, in_lo, in_hi, yrow);
        else DepthwiseRowInterior<5, 5>(xr, wc, bv, sw, dw, pw, in_lo, in_hi, yrow);
      }
      if (z) {
        const float* zrow = z + bc * OH * OW + oy * OW;
        for (int64_t ox = 0; ox < OW; ++ox) yrow[ox] += zrow[ox];
      }
      if (act.kind != ActivationKind::kNone) ApplyActivation(act, yrow, OW);
    }
  }
}

// Padded depthwise: the layout of one input row as the taps read it. The row
// padded with zeros, q[j] = x[j - pw] for j in [0, (OW-1)*sw + (KW-1)*dw + 1),
// is stored as sw phases of `len` floats, phase r holding q[r], q[r+sw], ...;
// tap kx then reads phase (kx*dw) % sw at offset (kx*dw) / sw, contiguously in
// ox. Phases are zero past the row and a little beyond the last block of 16
// outputs, so whole blocks can be read.
struct DwRowLayout {
  int64_t padded, len, floats;  // padded row length, phase length, floats per row (sw * len)
};
inline DwRowLayout DepthwiseRowLayout(const ConvGeometry& g) {
  const int64_t OW = g.out[2], KW = g.kernel[2], sw = g.stride[2], dw = g.dilation[2];
  DwRowLayout l;
  l.padded = (OW - 1) * sw + (KW - 1) * dw + 1;
  const int64_t reach = (OW + 15) / 16 * 16 + (KW - 1) * dw / sw;  // furthest read + 1, per phase
  l.len = (std::max((l.padded + sw - 1) / sw, reach) + 15) / 16 * 16;
  l.floats = sw * l.len;
  return l;
}

// Outputs [0, OW) of one row: y = act(bias + sum_t w[t] * p[t][ox] (+ z)), 16
// at a time in registers; the block past OW reads phase padding and is not
// stored.
template <int T>
inline void DepthwiseRowTaps(const float* const* p, const float* wt, int64_t taps, float bv, const float* zrow,
                             float* yrow, int64_t OW, const FusedClamp& fc) {
  const int64_t nt = T > 0 ? T : taps;
  const DwVec vlo = DwVec{} + fc.lo, vhi = DwVec{} + fc.hi, vzero = DwVec{};
  // Weights and row pointers in locals: the stores to yrow cannot alias them,
  // so they stay in registers across the row instead of being reloaded.
  constexpr int kRegs = T > 0 ? T : 1;
  DwVec wv[kRegs];
  const float* pp[kRegs];
  if constexpr (T > 0) {
    for (int t = 0; t < T; ++t) wv[t] = DwVec{} + wt[t], pp[t] = p[t];
  }
  for (int64_t ox0 = 0; ox0 < OW; ox0 += 16) {
    DwVec acc = DwVec{} + bv;
    if constexpr (T > 0) {
#pragma GCC unroll 25
      for (int t = 0; t < T; ++t) acc += wv[t] * DwLoad(pp[t] + ox0);
    } else {
      for (int64_t t = 0; t < nt; ++t) acc += wt[t] * DwLoad(p[t] + ox0);
    }
    const int64_t cnt = std::min<int64_t>(16, OW - ox0);
    // Whole blocks move with one fixed-size copy (a register load/store);
    // the short last block goes element by element.
    if (zrow) {
      if (cnt == 16) {
        acc += DwLoad(zrow + ox0);
      } else {
        float zb[16] = {};
        for (int64_t i = 0; i < cnt; ++i) zb[i] = zrow[ox0 + i];
        acc += DwLoad(zb);
      }
    }
    // Same NaN behaviour as ApplyActivation: a NaN compares false and passes.
    if (fc.kind == FusedClamp::kClamp) {
      acc = acc < vlo ? vlo : acc;
      acc = acc > vhi ? vhi : acc;
    } else if (fc.kind == FusedClamp::kLeaky) {
      acc = acc < vzero ? acc * vlo : acc;
    }
    if (cnt == 16) {
      std::memcpy(yrow + ox0, &acc, sizeof(acc));
    } else {
      float out[16];
      std::memcpy(out, &acc, sizeof(acc));
      for (int64_t i = 0; i < cnt; ++i) yrow[ox0 + i] = out[i];
    }
  }
}

// Stride 2: the even and odd elements of 32 input floats at a time go to
// phases 0 and 1 (one two-source shuffle each). Fills t in [*lo, *hi) of both
// phases, a range where both read inside the row.
inline void DepthwiseSplit2(const float* xr, int64_t IW, int64_t pw, const DwRowLayout& l, float* d,
                            int64_t* lo, int64_t* hi) {
  typedef int32_t DwIdx __attribute__((vector_size(64)));
  // Phase r, element t reads xr[2t + r - pw]: need 2t - pw >= 0 and 2t + 31 - pw < IW.
  const int64_t t_lo = (pw + 1) / 2;
  const int64_t limit = std::min(l.padded, pw + IW);  // j = 2t + r must stay below this
  int64_t t = t_lo;
  for (; t + 16 <= l.len && 2 * t + 32 <= limit; t += 16) {
    const float* s = xr + 2 * t - pw;
    const DwVec a = DwLoad(s), b = DwLoad(s + 16);
#if defined(__clang__)
    const DwVec even = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const DwVec odd = __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
#else
    const DwVec even = __builtin_shuffle(a, b, DwIdx{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30});
    const DwVec odd = __builtin_shuffle(a, b, DwIdx{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31});
#endif
    std::memcpy(d + t, &even, sizeof(even));
    std::memcpy(d + l.len + t, &odd, sizeof(odd));
  }
  *lo = t_lo;
  *hi = t;
}

// Fills padded row d (layout above) from input row xr.
inline void DepthwiseFillRow(const float* xr, int64_t IW, int64_t pw, int64_t sw, const DwRowLayout& l, float* d) {
  // Phase r holds q[r + t*sw]; the input supplies t in [t0, t1).
  int64_t done_lo = 0, done_hi = 0;  // stride 2: t range both phases got from DepthwiseSplit2
  if (sw == 2) DepthwiseSplit2(xr, IW, pw, l, d, &done_lo, &done_hi);
  const int64_t j_end = std::min(l.padded, pw + IW);  // q[j] is input for j in [pw, j_end)
  for (int64_t r = 0; r < sw; ++r) {
    float* dp = d + r * l.len;
    const int64_t t0 = std::min(l.len, pw > r ? (pw - r + sw - 1) / sw : 0);
    const int64_t t1 = std::clamp<int64_t>(j_end > r ? (j_end - r + sw - 1) / sw : 0, t0, l.len);
    std::fill(dp, dp + t0, 0.f);
    if (t1 > t0) {
      const float* src = xr + (r + t0 * sw - pw);
      if (sw == 1) {
        std::memcpy(dp + t0, src, sizeof(float) * (t1 - t0));
      } else {
        // Around the range DepthwiseSplit2 filled (empty for other strides).
        const int64_t a = std::clamp(done_lo, t0, t1), e = std::clamp(done_hi, a, t1);
        for (int64_t t = t0; t < a; ++t) dp[t] = src[(t - t0) * sw];
        for (int64_t t = e; t < t1; ++t) dp[t] = src[(t - t0) * sw];
      }
    }
    std::fill(dp + t1, dp + l.len, 0.f);
  }
}

// Input rows a task keeps padded at once: the rows one output row reads.
inline int64_t DepthwiseRingRows(const ConvGeometry& g) {
  return std::min<int64_t>((g.kernel[1] - 1) * g.dilation[1] + 1, g.in[1]);
}

// Small planes (stride 1, rows shorter than a vector block): the whole
// channel padded with pitch P = padded row length, so that output (oy, ox)
// tap (ky, kx) reads plane[(oy + ky*dh) * P + ox + kx*dw] - linear in the
// flat index f = oy*P + ox. Blocks of 16 run over f (columns ox >= OW are
// computed and dropped) instead of one short block per row.
struct DwPlaneLayout {
  bool use = false;
  int64_t pitch = 0, rows = 0, flat = 0;  // P, padded rows, outputs computed ((OH-1)*P + OW)
  int64_t plane_floats = 0, out_floats = 0;
};
inline DwPlaneLayout DepthwisePlaneLayout(const ConvGeometry& g) {
  DwPlaneLayout pl;
  const int64_t OH = g.out[1], OW = g.out[2];
  if (g.stride[1] != 1 || g.stride[2] != 1 || OW >= 16 || OH < 2) return pl;
  pl.pitch = OW + (g.kernel[2] - 1) * g.dilation[2];
  pl.rows = OH + (g.kernel[1] - 1) * g.dilation[1];
  pl.flat = (OH - 1) * pl.pitch + OW;
  pl.out_floats = (pl.flat + 15) / 16 * 16;
  // Reads reach f + (KH-1)*dh*P + (KW-1)*dw for f < out_floats.
  pl.plane_floats = (std::max(pl.rows * pl.pitch, pl.out_floats + pl.rows * pl.pitch) + 15) / 16 * 16;
  pl.use = pl.plane_floats + pl.out_floats <= (int64_t{1} << 16);
  return pl;
}

inline void DepthwisePlaneImpl(const ConvGeometry& g, int64_t mg, const float* x, const float* w, const float* bias,
                               const float* z, float* y, const Activation& act, int64_t c0, int64_t c1,
                               float* scratch, const DwPlaneLayout& pl) {
  const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t KH = g.kernel[1], KW = g.kernel[2], taps = KH * KW;
  const int64_t dh = g.dilation[1], dw = g.dilation[2], ph = g.pad_begin[1], pw = g.pad_begin[2];
  const int64_t P = pl.pitch;
  float* plane = scratch;
  float* out = scratch + pl.plane_floats;
  // Relu / Clip / LeakyRelu on the vectors before they are stored, unless a
  // residual comes first (then ApplyActivation per plane, after it).
  const FusedClamp fc = z ? FusedClamp{} : FusedClampOf(act);
  const bool fused_act = fc.kind != FusedClamp::kNone;
  std::fill(plane, plane + pl.plane_floats, 0.f);  // padding and the tail stay zero
  const float* p[kDepthwiseMaxTaps];
  for (int64_t ky = 0; ky < KH; ++ky)
    for (int64_t kx = 0; kx < KW; ++kx) p[ky * KW + kx] = plane + ky * dh * P + kx * dw;
  // Input columns that land inside a padded row.
  const int64_t col_lo = std::max<int64_t>(0, -pw), col_hi = std::min<int64_t>(IW, P - pw);
  int64_t prev_in = -1;
  for (int64_t bc = c0; bc < c1; ++bc) {
    const int64_t b = bc / g.c_out, c = bc % g.c_out;
    const int64_t in_plane = b * g.c_in + c / mg;
    if (in_plane != prev_in) {
      prev_in = in_plane;
      const float* xc = x + in_plane * IH * IW;
      for (int64_t r = 0; r < pl.rows; ++r) {
        const int64_t iy = r - ph;
        if (iy < 0 || iy >= IH || col_hi <= col_lo) continue;  // stays zero
        std::memcpy(plane + r * P + pw + col_lo, xc + iy * IW + col_lo, sizeof(float) * (col_hi - col_lo));
      }
    }
    const float bv = bias ? bias[c] : 0.f;
    const float* wc = w + c * taps;
    if (taps == 9) DepthwiseRowTaps<9>(p, wc, taps, bv, nullptr, out, pl.out_floats, fc);
    else if (taps == 25) DepthwiseRowTaps<25>(p, wc, taps, bv, nullptr, out, pl.out_floats, fc);
    else DepthwiseRowTaps<0>(p, wc, taps, bv, nullptr, out, pl.out_floats, fc);
    float* yc = y + bc * OH * OW;
    const float* zc = z ? z + bc * OH * OW : nullptr;
    if (!zc && OW >= 4 && OW <= 16) {
      // Rows move as fixed 8- or 16-float copies in order, each spilling into
      // the next row (the copy is at most 2*OW wide: never past the row after
      // it), which that row then overwrites; the last row is copied exactly,
      // so nothing past the plane is written. Per-element copies of rows this
      // short cost a third of the layer.
      if (OW >= 8)
        for (int64_t oy = 0; oy + 1 < OH; ++oy) std::memcpy(yc + oy * OW, out + oy * P, 16 * sizeof(float));
      else
        for (int64_t oy = 0; oy + 1 < OH; ++oy) std::memcpy(yc + oy * OW, out + oy * P, 8 * sizeof(float));
      for (int64_t ox = 0; ox < OW; ++ox) yc[(OH - 1) * OW + ox] = out[(OH - 1) * P + ox];
    } else {
      for (int64_t oy = 0; oy < OH; ++oy) {
        float* yrow = yc + oy * OW;
        const float* o = out + oy * P;
        if (zc) for (int64_t ox = 0; ox < OW; ++ox) yrow[ox] = o[ox] + zc[oy * OW + ox];
        else for (int64_t ox = 0; ox < OW; ++ox) yrow[ox] = o[ox];
      }
    }
    if (!fused_act && act.kind != ActivationKind::kNone) ApplyActivation(act, yc, OH * OW);
  }
}

// Output rows in order; each input row is padded into a ring slot (row iy in
// slot iy % ring) when first read, so the input streams through once and the
// rows the taps read stay in L1.
inline void DepthwisePaddedImpl(const ConvGeometry& g, int64_t mg, const float* x, const float* w,
                                const float* bias, const float* z, float* y, const Activation& act, int64_t c0,
                                int64_t c1, float* scratch) {
  const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t KH = g.kernel[1], KW = g.kernel[2], taps = KH * KW;
  const int64_t sh = g.stride[1], sw = g.stride[2], dh = g.dilation[1], dw = g.dilation[2];
  const int64_t ph = g.pad_begin[1], pw = g.pad_begin[2];
  if (const DwPlaneLayout pl = DepthwisePlaneLayout(g); pl.use)
    return DepthwisePlaneImpl(g, mg, x, w, bias, z, y, act, c0, c1, scratch, pl);
  const DwRowLayout l = DepthwiseRowLayout(g);
  const int64_t ring = DepthwiseRingRows(g);
  float* zero_row = scratch;         // rows above / below the input
  float* rows = scratch + l.floats;  // `ring` padded input rows
  std::fill(zero_row, zero_row + l.floats, 0.f);
  int64_t tag[kDepthwiseMaxRing];    // input row held by each slot
  const FusedClamp fc = FusedClampOf(act);
  const bool other_act = act.kind != ActivationKind::kNone && fc.kind == FusedClamp::kNone;
  // Tap offsets within a padded row (phase start + offset in the phase).
  int64_t tap_off[kDepthwiseMaxTaps];
  for (int64_t kx = 0; kx < KW; ++kx) {
    const int64_t off = kx * dw;
    tap_off[kx] = (off % sw) * l.len + off / sw;
  }
  for (int64_t bc = c0; bc < c1; ++bc) {
    const int64_t b = bc / g.c_out, c = bc % g.c_out;
    const float* xc = x + (b * g.c_in + c / mg) * IH * IW;
    std::fill(tag, tag + ring, int64_t{-1});
    const float* wc = w + c * taps;
    const float bv = bias ? bias[c] : 0.f;
    float* yc = y + bc * OH * OW;
    const float* zc = z ? z + bc * OH * OW : nullptr;
    const float* p[kDepthwiseMaxTaps];
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ky = 0; ky < KH; ++ky) {
        const int64_t iy = oy * sh - ph + ky * dh;
        const float* row = zero_row;
        if (iy >= 0 && iy < IH) {
          float* slot = rows + (iy % ring) * l.floats;
          if (tag[iy % ring] != iy) {
            DepthwiseFillRow(xc + iy * IW, IW, pw, sw, l, slot);
            tag[iy % ring] = iy;
          }
          row = slot;
        }
        for (int64_t kx = 0; kx < KW; ++kx) p[ky * KW + kx] = row + tap_off[kx];
      }
      float* yrow = yc + oy * OW;
      const float* zrow = zc ? zc + oy * OW : nullptr;
      if (taps == 9) DepthwiseRowTaps<9>(p, wc, taps, bv, zrow, yrow, OW, fc);
      else if (taps == 25) DepthwiseRowTaps<25>(p, wc, taps, bv, zrow, yrow, OW, fc);
      else DepthwiseRowTaps<0>(p, wc, taps, bv, zrow, yrow, OW, fc);
      if (other_act) ApplyActivation(act, yrow, OW);
    }
  }
}

#pragma GCC diagnostic pop

}  // namespace
}  // namespace oc

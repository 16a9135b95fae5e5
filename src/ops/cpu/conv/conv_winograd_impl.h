// The transforms of Winograd F(4x4, 3x3) (conv_winograd.h), written once and
// compiled per ISA like conv_loops.h: conv_winograd.cc (baseline),
// conv_winograd_avx2.cc and conv_winograd_avx512.cc include this with their
// own target flags; everything here has internal linkage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/cpu/elementwise/activation.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace oc {

// One GEMM batch of tiles [t0, t0 + nt): V[xi][t][ci] and M[xi][t][co].
struct WinogradJob {
  int64_t cin, cout, IH, IW, OH, OW, ph, pw;
  int64_t tiles_w, per_image, t0, nt;
  const float* x;
  float* v;
  const float* m;
  const float* bias;
  const float* z;
  float* y;
  const Activation* act;
  // 0: NCHW. 8 or 16: x, z and y in the blocked layout (ops/cpu/nchwc/nchwc.h),
  // [N][ceil(C/block)][H][W][block].
  int64_t block = 0;
};

namespace {

constexpr int64_t kLanes = 16;
// B^T d over kLanes lanes: r[i] and d[i] are rows i of 6, each kLanes wide.
inline void InputRows(const float (*d)[kLanes], int64_t step, float (*r)[kLanes], int64_t rstep) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float d0 = d[0][l], d1 = d[step][l], d2 = d[2 * step][l], d3 = d[3 * step][l], d4 = d[4 * step][l],
                d5 = d[5 * step][l];
    r[0][l] = 4.f * d0 - 5.f * d2 + d4;
    r[rstep][l] = -4.f * d1 - 4.f * d2 + d3 + d4;
    r[2 * rstep][l] = 4.f * d1 - 4.f * d2 - d3 + d4;
    r[3 * rstep][l] = -2.f * d1 - d2 + 2.f * d3 + d4;
    r[4 * rstep][l] = 2.f * d1 - d2 - 2.f * d3 + d4;
    r[5 * rstep][l] = 4.f * d1 - 5.f * d3 + d5;
  }
}

// A^T m over kLanes lanes: 6 inputs -> 4 outputs.
inline void OutputRows(const float (*m)[kLanes], int64_t step, float (*o)[kLanes], int64_t ostep) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float m0 = m[0][l], m1 = m[step][l], m2 = m[2 * step][l], m3 = m[3 * step][l], m4 = m[4 * step][l],
                m5 = m[5 * step][l];
    const float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    o[0][l] = m0 + s12 + s34;
    o[ostep][l] = d12 + 2.f * d34;
    o[2 * ostep][l] = s12 + 4.f * s34;
    o[3 * ostep][l] = d12 + 8.f * d34 + m5;
  }
}

struct TileGeom {
  int64_t b, oy0, ox0;
};

#if defined(__AVX512F__)
// In-register transposes for the AVX-512 build: the transforms work across 16
// channels per vector, but the image stores each channel's rows
// contiguously, so an interior tile's 6x6 input and 4x4 output are moved with
// row loads/stores plus shuffles instead of one scalar access per value
// (which took most of the transforms' time).

// r[m] = [8 floats of row A_m | 8 floats of row B_m], m < 8. Transposes each
// 256-bit half as an 8x8 matrix: column j (j < 6) of the A rows goes to lanes
// 0-7 of out[j], of the B rows to lanes 8-15.
inline void Transpose8x8Halves(const __m512 (&r)[8], __m512 (&out)[6]) {
  __m512 t[8], u[8];
  for (int m = 0; m < 4; ++m) {
    t[2 * m] = _mm512_unpacklo_ps(r[2 * m], r[2 * m + 1]);
    t[2 * m + 1] = _mm512_unpackhi_ps(r[2 * m], r[2 * m + 1]);
  }
  for (int h = 0; h < 2; ++h) {
    const __m512 a0 = t[4 * h], a1 = t[4 * h + 1], a2 = t[4 * h + 2], a3 = t[4 * h + 3];
    u[4 * h] = _mm512_shuffle_ps(a0, a2, _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * h + 1] = _mm512_shuffle_ps(a0, a2, _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * h + 2] = _mm512_shuffle_ps(a1, a3, _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * h + 3] = _mm512_shuffle_ps(a1, a3, _MM_SHUFFLE(3, 2, 3, 2));
  }
  // 128-bit lanes: [a.0, b.0, a.2, b.2] (columns 0-3) and [a.1, b.1, a.3, b.3] (4-7).
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
  const __m512i hi = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int j = 0; j < 4; ++j) out[j] = _mm512_permutex2var_ps(u[j], lo, u[j + 4]);
  for (int j = 4; j < 6; ++j) out[j] = _mm512_permutex2var_ps(u[j - 4], hi, u[j]);
}

// d[i*6 + j][l] = xc_l[(iy0 + i) * IW + ix0 + j] for the 16 channels l at
// xc (channel stride cs), 6x6 window inside the image.
inline void GatherTile16(const float* xc, int64_t cs, int64_t IW, bool full_rows, float (*d)[16]) {
  for (int i = 0; i < 6; ++i) {
    __m512 r[8], out[6];
    const float* p = xc + i * IW;
    for (int m = 0; m < 8; ++m) {
      const float* a = p + m * cs;
      const float* b = p + (m + 8) * cs;
      // Whole 8-float rows where they stay inside the image row; else only the 6 used.
      const __m256 va = full_rows ? _mm256_loadu_ps(a) : _mm256_maskz_loadu_ps(0x3F, a);
      const __m256 vb = full_rows ? _mm256_loadu_ps(b) : _mm256_maskz_loadu_ps(0x3F, b);
      r[m] = _mm512_insertf32x8(_mm512_castps256_ps512(va), vb, 1);
    }
    Transpose8x8Halves(r, out);
    for (int j = 0; j < 6; ++j) _mm512_store_ps(d[i * 6 + j], out[j]);
  }
}

// 16x16 transpose: out[l][k] = in[k][l].
inline void Transpose16x16(const float (*in)[16], __m512 (&out)[16]) {
  __m512 a[16], b[16];
  for (int k = 0; k < 16; ++k) a[k] = _mm512_load_ps(in[k]);
  for (int k = 0; k < 16; k += 2) {
    b[k] = _mm512_unpacklo_ps(a[k], a[k + 1]);
    b[k + 1] = _mm512_unpackhi_ps(a[k], a[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) {
    for (int q = 0; q < 2; ++q) {
      a[k + q] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(b[k + q]), _mm512_castps_pd(b[k + q + 2])));
      a[k + q + 2] =
          _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(b[k + q]), _mm512_castps_pd(b[k + q + 2])));
    }
  }
  // a[k + s] (s < 4) holds, per 128-bit lane c, rows k..k+3 at column 4c + s'
  // for a fixed s'; two 128-bit lane shuffles finish the transpose.
  for (int k = 0; k < 8; ++k) {
    const int g = k / 4 * 8 + k % 4;  // rows 0-3 with 4-7, 8-11 with 12-15
    b[g] = _mm512_shuffle_f32x4(a[g], a[g + 4], _MM_SHUFFLE(2, 0, 2, 0));
    b[g + 4] = _mm512_shuffle_f32x4(a[g], a[g + 4], _MM_SHUFFLE(3, 1, 3, 1));
  }
  for (int k = 0; k < 4; ++k) {
    for (int h = 0; h < 2; ++h) {
      const int g = k + 4 * h;
      a[g] = _mm512_shuffle_f32x4(b[g], b[g + 8], _MM_SHUFFLE(2, 0, 2, 0));
      a[g + 8] = _mm512_shuffle_f32x4(b[g], b[g + 8], _MM_SHUFFLE(3, 1, 3, 1));
    }
  }
  // Undo the unpack order: unpacklo/hi put columns (0,1,4,5..) / (2,3,...) apart.
  static constexpr int kOrder[16] = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
  for (int l = 0; l < 16; ++l) out[l] = a[kOrder[l]];
}
#endif

// V[xi][t][ci] = (B^T d B)[xi] for tiles [tb, te) of the job, every channel.
[[maybe_unused]] void WinogradInputImpl(const WinogradJob& job, int64_t tb, int64_t te) {
  const int64_t cin = job.cin, IH = job.IH, IW = job.IW, ph = job.ph, pw = job.pw;
  const int64_t nt = job.nt, t0 = job.t0;
  const float* x = job.x;
  float* v = job.v;
  auto tile_at = [&](int64_t t) {
    const int64_t b = t / job.per_image, r = t % job.per_image;
    return TileGeom{b, r / job.tiles_w * 4, r % job.tiles_w * 4};
  };
  alignas(64) float d[36][kLanes];
  alignas(64) float r[36][kLanes];
  for (int64_t t = tb; t < te; ++t) {
    const TileGeom tg = tile_at(t0 + t);
    const int64_t iy0 = tg.oy0 - ph, ix0 = tg.ox0 - pw;
    const bool inside = iy0 >= 0 && ix0 >= 0 && iy0 + 6 <= IH && ix0 + 6 <= IW;
    for (int64_t c0 = 0; c0 < cin; c0 += kLanes) {
      const int64_t nl = std::min(kLanes, cin - c0);
      if (job.block) {
        // Blocked input: the 16 lanes of a position are one or two whole
        // channel blocks, contiguous in memory - no transposes needed.
        const int64_t bs = job.block, cb_n = (cin + bs - 1) / bs;
        for (int i = 0; i < 6; ++i) {
          const int64_t iy = iy0 + i;
          for (int j = 0; j < 6; ++j) {
            const int64_t ix = ix0 + j;
            const bool in = iy >= 0 && iy < IH && ix >= 0 && ix < IW;
            for (int64_t h = 0; h < kLanes / bs; ++h) {
              const int64_t cb = c0 / bs + h;
              float* dst = d[i * 6 + j] + h * bs;
              if (!in || cb >= cb_n) {
                std::fill(dst, dst + bs, 0.f);
                continue;
              }
              const float* src = x + ((tg.b * cb_n + cb) * IH * IW + iy * IW + ix) * bs;
              if (bs == 16) std::memcpy(dst, src, 16 * sizeof(float));
              else std::memcpy(dst, src, 8 * sizeof(float));
            }
          }
        }
        for (int j = 0; j < 6; ++j) InputRows(&d[j], 6, &r[j], 6);
        for (int i = 0; i < 6; ++i) InputRows(&r[i * 6], 1, &d[i * 6], 1);
        if (nl == kLanes)
          for (int k = 0; k < 36; ++k) std::memcpy(v + (k * nt + t) * cin + c0, d[k], sizeof(float) * kLanes);
        else
          for (int k = 0; k < 36; ++k) std::memcpy(v + (k * nt + t) * cin + c0, d[k], sizeof(float) * nl);
        continue;
      }
#if defined(__AVX512F__)
      if (inside && nl == kLanes) {
        GatherTile16(x + ((tg.b * cin + c0) * IH + iy0) * IW + ix0, IH * IW, IW, ix0 + 8 <= IW, d);
        for (int j = 0; j < 6; ++j) InputRows(&d[j], 6, &r[j], 6);
        for (int i = 0; i < 6; ++i) InputRows(&r[i * 6], 1, &d[i * 6], 1);
        for (int k = 0; k < 36; ++k) std::memcpy(v + (k * nt + t) * cin + c0, d[k], sizeof(float) * kLanes);
        continue;
      }
#endif
      for (int64_t l = 0; l < kLanes; ++l) {
        if (l >= nl) {
          for (int k = 0; k < 36; ++k) d[k][l] = 0.f;
          continue;
        }
        const float* xc = x + ((tg.b * cin + c0 + l) * IH) * IW;
        if (inside) {
          for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) d[i * 6 + j][l] = xc[(iy0 + i) * IW + ix0 + j];
        } else {
          for (int i = 0; i < 6; ++i) {
            const int64_t iy = iy0 + i;
            for (int j = 0; j < 6; ++j) {
              const int64_t ix = ix0 + j;
              d[i * 6 + j][l] = (iy >= 0 && iy < IH && ix >= 0 && ix < IW) ? xc[iy * IW + ix] : 0.f;
            }
          }
        }
      }
      for (int j = 0; j < 6; ++j) InputRows(&d[j], 6, &r[j], 6);      // columns: B^T d
      for (int i = 0; i < 6; ++i) InputRows(&r[i * 6], 1, &d[i * 6], 1);  // rows: (B^T d) B
      if (nl == kLanes)
        for (int k = 0; k < 36; ++k) std::memcpy(v + (k * nt + t) * cin + c0, d[k], sizeof(float) * kLanes);
      else
        for (int k = 0; k < 36; ++k) std::memcpy(v + (k * nt + t) * cin + c0, d[k], sizeof(float) * nl);
    }
  }
}

// Y = A^T m A per tile and output channel, then bias, residual, activation.
[[maybe_unused]] void WinogradOutputImpl(const WinogradJob& job, int64_t tb, int64_t te) {
  const int64_t cout = job.cout, OH = job.OH, OW = job.OW;
  const int64_t nt = job.nt, t0 = job.t0;
  const float* bias = job.bias;
  const float* z = job.z;
  const float* m = job.m;
  float* y = job.y;
  const Activation& act = *job.act;
  auto tile_at = [&](int64_t t) {
    const int64_t b = t / job.per_image, r = t % job.per_image;
    return TileGeom{b, r / job.tiles_w * 4, r % job.tiles_w * 4};
  };
  alignas(64) float mm[36][kLanes];
  alignas(64) float o1[24][kLanes];
  alignas(64) float o2[16][kLanes];
  for (int64_t t = tb; t < te; ++t) {
    const TileGeom tg = tile_at(t0 + t);
    const int64_t rows = std::min<int64_t>(4, OH - tg.oy0), cols = std::min<int64_t>(4, OW - tg.ox0);
    for (int64_t c0 = 0; c0 < cout; c0 += kLanes) {
      const int64_t nl = std::min(kLanes, cout - c0);
      // A constant size for whole blocks: a variable-size memcpy became
      // `rep movsq`, which took most of this function's time.
      if (nl == kLanes) {
        for (int k = 0; k < 36; ++k) std::memcpy(mm[k], m + (k * nt + t) * cout + c0, sizeof(float) * kLanes);
      } else {
        for (int k = 0; k < 36; ++k) {
          std::memcpy(mm[k], m + (k * nt + t) * cout + c0, sizeof(float) * nl);
          for (int64_t l = nl; l < kLanes; ++l) mm[k][l] = 0.f;
        }
      }
      for (int j = 0; j < 6; ++j) OutputRows(&mm[j], 6, &o1[j], 6);       // o1[i*6+j], i < 4
      for (int i = 0; i < 4; ++i) OutputRows(&o1[i * 6], 1, &o2[i * 4], 1);  // o2[i*4+j]
      // Bias, residual and the activation on the whole block (one
      // ApplyActivation call per tile and kLanes channels), then the stores.
      if (bias) {
        alignas(64) float bl[kLanes] = {};
        std::memcpy(bl, bias + c0, sizeof(float) * nl);
        for (int k = 0; k < 16; ++k)
          for (int64_t l = 0; l < kLanes; ++l) o2[k][l] += bl[l];
      }
      if (job.block) {
        // Blocked output: each position's lanes are stored as whole blocks.
        // Lanes past Cout hold 0 here (zero M and bias) and get act(0), the
        // padding the blocked layout expects; the residual's are not added.
        const int64_t bs = job.block, cb_n = (cout + bs - 1) / bs;
        auto at = [&](int64_t cb, int64_t i, int64_t j) {
          return ((tg.b * cb_n + cb) * OH * OW + (tg.oy0 + i) * OW + tg.ox0 + j) * bs;
        };
        if (z) {
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
              for (int64_t l = 0; l < nl; ++l) o2[i * 4 + j][l] += z[at((c0 + l) / bs, i, j) + (c0 + l) % bs];
        }
        if (act.kind != ActivationKind::kNone) ApplyActivation(act, &o2[0][0], 16 * kLanes);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            for (int64_t h = 0; h < kLanes / bs; ++h) {
              const int64_t cb = c0 / bs + h;
              if (cb >= cb_n) continue;
              const float* src = o2[i * 4 + j] + h * bs;
              if (bs == 16) std::memcpy(y + at(cb, i, j), src, 16 * sizeof(float));
              else std::memcpy(y + at(cb, i, j), src, 8 * sizeof(float));
            }
        continue;
      }
#if defined(__AVX512F__)
      if (rows == 4 && cols == 4 && nl == kLanes) {
        // Per channel, its 4x4 outputs as one vector: row-wise residual and stores.
        alignas(64) float ot[kLanes][16];
        __m512 tr[16];
        Transpose16x16(o2, tr);
        for (int64_t l = 0; l < kLanes; ++l) _mm512_store_ps(ot[l], tr[l]);
        const int64_t plane0 = (tg.b * cout + c0) * OH * OW + tg.oy0 * OW + tg.ox0;
        if (z) {
          for (int64_t l = 0; l < kLanes; ++l) {
            const float* zc = z + plane0 + l * OH * OW;
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) ot[l][i * 4 + j] += zc[i * OW + j];
          }
        }
        // Relu and Clip in registers (min/max keep a NaN as ApplyActivation
        // does); other activations through it.
        const bool clamp = act.kind == ActivationKind::kRelu || act.kind == ActivationKind::kClip;
        if (act.kind != ActivationKind::kNone && !clamp) ApplyActivation(act, &ot[0][0], 16 * kLanes);
        const __m512 lo = _mm512_set1_ps(act.kind == ActivationKind::kClip ? act.alpha : 0.f);
        const __m512 hi = _mm512_set1_ps(act.kind == ActivationKind::kClip ? act.beta : __builtin_inff());
        for (int64_t l = 0; l < kLanes; ++l) {
          float* yc = y + plane0 + l * OH * OW;
          if (clamp) _mm512_store_ps(ot[l], _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_load_ps(ot[l]))));
          for (int i = 0; i < 4; ++i) std::memcpy(yc + i * OW, &ot[l][i * 4], 4 * sizeof(float));
        }
        continue;
      }
#endif
      if (z) {
        for (int64_t l = 0; l < nl; ++l) {
          const float* zc = z + ((tg.b * cout + c0 + l) * OH + tg.oy0) * OW + tg.ox0;
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) o2[i * 4 + j][l] += zc[i * OW + j];
        }
      }
      if (act.kind != ActivationKind::kNone) ApplyActivation(act, &o2[0][0], 16 * kLanes);
      for (int64_t l = 0; l < nl; ++l) {
        float* yc = y + ((tg.b * cout + c0 + l) * OH + tg.oy0) * OW + tg.ox0;
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) yc[i * OW + j] = o2[i * 4 + j][l];
      }
    }
  }
}

}  // namespace
}  // namespace oc

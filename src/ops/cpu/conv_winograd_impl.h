// The transforms of Winograd F(4x4, 3x3) (conv_winograd.h), written once and
// compiled per ISA like conv_loops.h: conv_winograd.cc (baseline),
// conv_winograd_avx2.cc and conv_winograd_avx512.cc include this with their
// own target flags; everything here has internal linkage.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/cpu/activation.h"

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
      for (int k = 0; k < 36; ++k) {
        std::memcpy(mm[k], m + (k * nt + t) * cout + c0, sizeof(float) * nl);
        for (int64_t l = nl; l < kLanes; ++l) mm[k][l] = 0.f;
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

// The NCHWc direct convolution, written once over GCC vector types and built
// per ISA (nchwc_kernels.cc baseline, nchwc_conv_avx2.cc, nchwc_conv_avx512.cc each
// include this inside their own namespace; everything here has internal
// linkage so the builds never mix).
//
// Blocking scheme (dense conv). A work unit (nchwc::ConvUnitGrid: image x
// group of FB output channel blocks x row band x column chunk) covers output
// rows of FB * c channels. Along a row, OW output pixels at a time
// are accumulated in FB x OW vector registers of c lanes:
//   for each input block, kernel tap (kh, kw) and input channel i of the block:
//     FB vector loads of the packed weights w[ob][ib][kh][kw][i][0..c)
//     OW broadcasts of the input x[ib][ih][iw_j][i], FB * OW FMAs.
// Pixels whose taps all fall inside the input (the interior) take full
// OW-pixel tiles; the few border pixels take 1-pixel tiles with the kw range
// clipped. Rows clip their kh range. The epilogue adds bias and the residual Z
// and applies Relu/Clip in registers (other activations run over the finished
// row, still in cache). Depthwise: each c-lane vector is c independent
// channels, so the tile is OW vector loads of x times one weight vector per tap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/nchwc/nchwc.h"

namespace {

using oc::nchwc::ConvArgs;
using oc::nchwc::ConvShape;

template <int C>
struct VecOf {
  typedef float type __attribute__((vector_size(C * sizeof(float))));
};
template <int C>
using Vec = typename VecOf<C>::type;

template <int C>
inline Vec<C> Load(const float* p) {
  Vec<C> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int C>
inline void Store(float* p, Vec<C> v) {
  std::memcpy(p, &v, sizeof v);
}

// Lane-wise max/min. GCC lowers a vector ?: wider than the ISA's registers
// to scalar code, so wide vectors are split into native-width pieces first.
#if defined(__AVX512F__)
constexpr int kNativeLanes = 16;
constexpr bool kWideRegisterFile = true;  // 32 vector registers
#elif defined(__AVX__)
constexpr int kNativeLanes = 8;
constexpr bool kWideRegisterFile = false;
#else
constexpr int kNativeLanes = 4;
constexpr bool kWideRegisterFile = false;
#endif

template <int C, bool kMax>
inline Vec<C> Select(Vec<C> a, Vec<C> b) {
  if constexpr (C <= kNativeLanes) {
    return kMax ? (a > b ? a : b) : (a < b ? a : b);
  } else {
    constexpr int P = C / kNativeLanes;
    Vec<kNativeLanes> pa[P], pb[P];
    std::memcpy(pa, &a, sizeof a);
    std::memcpy(pb, &b, sizeof b);
    for (int i = 0; i < P; ++i) pa[i] = kMax ? (pa[i] > pb[i] ? pa[i] : pb[i]) : (pa[i] < pb[i] ? pa[i] : pb[i]);
    std::memcpy(&a, pa, sizeof a);
    return a;
  }
}
template <int C>
inline Vec<C> VMax(Vec<C> a, Vec<C> b) {
  return Select<C, true>(a, b);
}
template <int C>
inline Vec<C> VMin(Vec<C> a, Vec<C> b) {
  return Select<C, false>(a, b);
}

// One input value in every lane. (GCC folds it into the FMAs as an embedded
// broadcast operand. Forcing one vbroadcastss per pixel shared by the FB
// FMAs, through an asm, measured slower: the asm made GCC spill accumulators.)
template <int C, int FB>
inline Vec<C> Broadcast(const float* p) {
  return *p - Vec<C>{};
}

// Strides (in floats) of one convolution, fixed for all tiles.
struct Strides {
  int64_t n_ib, cib;         // packed input blocks, channels per input block
  int64_t x_ib, x_ic;        // next input block / next channel inside a block
  int64_t x_kh, x_kw, x_ow;  // next kernel row / kernel column / output pixel
  int64_t w_ob, w_ib, w_kh;  // packed weights: next output block / input block / kernel row
  int64_t y_ob;              // next output block (also Z)
  oc::ActivationKind act;
  float lo, hi;              // Clip bounds; HardSigmoid's alpha and beta
};

// A dense tile's bias, residual and in-register activation (kRelu, kClip,
// kHardSigmoid, kHardSwish or kNone: others run over the finished row), then
// the stores. (Hard-swish over the finished row cost MobileNetV3's expanding
// convs and depthwise convs a second pass over their outputs.) The kind and the
// residual are template arguments: tested per vector, they kept GCC from
// unrolling this loop, and it spilled all accumulators to the stack and ran
// them through a rolled loop (a third of the instructions of a tile with 16
// input channels).
template <int C, int FB, int OW, oc::ActivationKind K, bool Z>
inline void StoreDenseTile(const Strides& r, Vec<C> (&acc)[FB][OW], const float* bias, const float* z, float* y) {
  using V = Vec<C>;
  [[maybe_unused]] const V lo = r.lo - V{}, hi = r.hi - V{}, one = 1.f - V{};
  [[maybe_unused]] const V sixth = (1.f / 6.f) - V{}, half = 0.5f - V{};
#pragma GCC unroll 8
  for (int f = 0; f < FB; ++f) {
    const V b = Load<C>(bias + f * C);
#pragma GCC unroll 16
    for (int j = 0; j < OW; ++j) {
      V v = acc[f][j] + b;
      if constexpr (Z) v += Load<C>(z + f * r.y_ob + j * C);
      // The bound first: Select returns its second operand when the
      // comparison is false, so a NaN passes through as ApplyActivation lets it.
      if constexpr (K == oc::ActivationKind::kRelu) v = VMax<C>(V{}, v);
      if constexpr (K == oc::ActivationKind::kClip) v = VMin<C>(hi, VMax<C>(lo, v));
      // ApplyActivation's std::min(1, std::max(0, t)) for t = alpha v + beta
      // and t = v / 6 + 1/2: the bound second, so that a NaN t gives 0 as
      // std::max(0, NaN) does (HardSwish: v * 0, NaN for a NaN v). The AVX2 and
      // AVX-512 builds contract t into one FMA: up to an ulp from the row form.
      if constexpr (K == oc::ActivationKind::kHardSigmoid) v = VMin<C>(VMax<C>(lo * v + hi, V{}), one);
      if constexpr (K == oc::ActivationKind::kHardSwish) v = v * VMin<C>(VMax<C>(v * sixth + half, V{}), one);
      Store<C>(y + f * r.y_ob + j * C, v);
    }
  }
}

template <int C, int FB, int OW, bool Z>
inline void StoreDenseTileAct(const Strides& r, Vec<C> (&acc)[FB][OW], const float* bias, const float* z, float* y) {
  switch (r.act) {
    case oc::ActivationKind::kRelu:
      return StoreDenseTile<C, FB, OW, oc::ActivationKind::kRelu, Z>(r, acc, bias, z, y);
    case oc::ActivationKind::kClip:
      return StoreDenseTile<C, FB, OW, oc::ActivationKind::kClip, Z>(r, acc, bias, z, y);
    case oc::ActivationKind::kHardSigmoid:
      return StoreDenseTile<C, FB, OW, oc::ActivationKind::kHardSigmoid, Z>(r, acc, bias, z, y);
    case oc::ActivationKind::kHardSwish:
      return StoreDenseTile<C, FB, OW, oc::ActivationKind::kHardSwish, Z>(r, acc, bias, z, y);
    default:
      return StoreDenseTile<C, FB, OW, oc::ActivationKind::kNone, Z>(r, acc, bias, z, y);
  }
}

// Where a pass over a chunk of the input blocks stands (template argument M of
// the dense tiles): the first chunk starts from zero, later ones from the
// partial sums in y; the last applies bias, residual and activation.
constexpr int kFirstChunk = 1, kLastChunk = 2, kOnlyChunk = kFirstChunk | kLastChunk;

// FB output blocks x OW pixels. x: input at (block 0, first valid kh, first
// pixel's first valid kw); w: packed weights at (first output block, ib 0, kh0, kw0).
// Not inlined: inlined into ConvUnits (one large function with every tile
// variant), GCC kept some variants' accumulators on the stack.
// pf: weights to pull into L2 for a later pass (see Prefetch): the next
// pf.steps * C floats from pf.at, C per channel step, one prefetch per 64-byte
// line; pf.at null: none.
struct PrefetchRange {
  const float* at = nullptr;
  int64_t steps = 0;
};
template <int C, int FB, int OW, bool BLK, int M>
__attribute__((noinline)) void DenseTile(const Strides& r, const float* x, const float* w, int64_t nkh, int64_t nkw,
                      const float* bias, const float* z, float* y, PrefetchRange pf) {
  using V = Vec<C>;
  V acc[FB][OW];
  for (int f = 0; f < FB; ++f)
    for (int j = 0; j < OW; ++j) acc[f][j] = V{};
  const int64_t cib = BLK ? C : r.cib;
  const int64_t w_kw = cib * C;
  for (int64_t ib = 0; ib < r.n_ib; ++ib) {
    for (int64_t kh = 0; kh < nkh; ++kh) {
      const float* xk = x + ib * r.x_ib + kh * r.x_kh;
      const float* wk = w + ib * r.w_ib + kh * r.w_kh;
      for (int64_t kw = 0; kw < nkw; ++kw) {
        const float* xp = xk + kw * r.x_kw;
        const float* wp = wk + kw * w_kw;
        if constexpr (BLK) {
          auto step = [&](int i) __attribute__((always_inline)) {
            V wv[FB];
            for (int f = 0; f < FB; ++f) wv[f] = Load<C>(wp + f * r.w_ob + i * C);
            for (int j = 0; j < OW; ++j) {
              const V s = Broadcast<C, FB>(xp + j * r.x_ow + i);
              for (int f = 0; f < FB; ++f) acc[f][j] += wv[f] * s;
            }
          };
          // The first n steps also prefetch (one line per 64 bytes), the rest do not.
          const int n = pf.steps < C ? static_cast<int>(pf.steps) : C;
          int i = 0;
          for (; i < n; ++i) {
            if (C * 4 >= 64 || i % (64 / (C * 4)) == 0) __builtin_prefetch(pf.at + i * C, 0, 2);
            step(i);
          }
          for (; i < C; ++i) step(i);
          pf.at += n * C;
          pf.steps -= n;
        } else {
          // NCHW input (the stem): RGB's 3 channels unrolled; a run-time
          // 3-step loop per tap cost the stem more than its FMAs.
          auto channel = [&](int64_t i) {
            V wv[FB];
            for (int f = 0; f < FB; ++f) wv[f] = Load<C>(wp + f * r.w_ob + i * C);
            for (int j = 0; j < OW; ++j) {
              const V s = Broadcast<C, FB>(xp + j * r.x_ow + i * r.x_ic);
              for (int f = 0; f < FB; ++f) acc[f][j] += wv[f] * s;
            }
          };
          if (cib == 3) {
            channel(0), channel(1), channel(2);
          } else {
            for (int64_t i = 0; i < cib; ++i) channel(i);
          }
        }
      }
    }
  }
  // The partial sums are added after the loop: loaded into the accumulators
  // before it, they made GCC spill 9 of the 24 (half the speed).
  // (Unrolled by the pragma: rolled, GCC kept the accumulators on the stack.)
  if constexpr (!(M & kFirstChunk)) {
#pragma GCC unroll 8
    for (int f = 0; f < FB; ++f)
#pragma GCC unroll 16
      for (int j = 0; j < OW; ++j) acc[f][j] += Load<C>(y + f * r.y_ob + j * C);
  }
  if constexpr (!(M & kLastChunk)) {
#pragma GCC unroll 8
    for (int f = 0; f < FB; ++f)
#pragma GCC unroll 16
      for (int j = 0; j < OW; ++j) Store<C>(y + f * r.y_ob + j * C, acc[f][j]);
    return;
  }
  if (z) StoreDenseTileAct<C, FB, OW, true>(r, acc, bias, z, y);
  else StoreDenseTileAct<C, FB, OW, false>(r, acc, bias, z, y);
}

// A depthwise tile's bias, residual and activation, then the store (one
// output block: StoreDenseTile's 1 x OW case).
template <int C, int OW>
inline void StoreDepthwise(const Strides& r, const Vec<C>* acc, const float* bias, const float* z, float* y) {
  Vec<C> tile[1][OW];
  for (int j = 0; j < OW; ++j) tile[0][j] = acc[j];
  if (z) StoreDenseTileAct<C, 1, OW, true>(r, tile, bias, z, y);
  else StoreDenseTileAct<C, 1, OW, false>(r, tile, bias, z, y);
}

template <int C, int OW>
inline void DepthwiseTile(const Strides& r, const float* x, const float* w, int64_t nkh, int64_t nkw,
                          const float* bias, const float* z, float* y) {
  using V = Vec<C>;
  V acc[OW];
  for (int j = 0; j < OW; ++j) acc[j] = V{};
  for (int64_t kh = 0; kh < nkh; ++kh) {
    for (int64_t kw = 0; kw < nkw; ++kw) {
      const float* xp = x + kh * r.x_kh + kw * r.x_kw;
      const V wv = Load<C>(w + kh * r.w_kh + kw * C);
      for (int j = 0; j < OW; ++j) acc[j] += Load<C>(xp + j * r.x_ow) * wv;
    }
  }
  StoreDepthwise<C, OW>(r, acc, bias, z, y);
}

// Depthwise 3-wide taps without dilation, stride SW: each input vector of a
// kernel row is loaded once and used by every tap that reads it (the generic
// tile reloads it per tap: 3 * OW loads per kernel row instead of
// SW * (OW - 1) + 3).
template <int C, int OW, int SW>
inline void DepthwiseTile3(const Strides& r, const float* x, const float* w, int64_t nkh, const float* bias,
                           const float* z, float* y) {
  using V = Vec<C>;
  constexpr int kIn = SW * (OW - 1) + 3;
  V acc[OW];
  for (int j = 0; j < OW; ++j) acc[j] = V{};
  for (int64_t kh = 0; kh < nkh; ++kh) {
    const float* xp = x + kh * r.x_kh;
    const float* wp = w + kh * r.w_kh;
    V in[kIn];
    for (int i = 0; i < kIn; ++i) in[i] = Load<C>(xp + i * C);
    for (int kw = 0; kw < 3; ++kw) {
      const V wv = Load<C>(wp + kw * C);
      for (int j = 0; j < OW; ++j) acc[j] += in[j * SW + kw] * wv;
    }
  }
  StoreDepthwise<C, OW>(r, acc, bias, z, y);
}

// One tile of `count` (< OWMAX) pixels, picked at compile time.
template <int C, int FB, int OWMAX, bool DW, bool BLK, int M, int K = OWMAX - 1>
inline void RemainderTile(int64_t count, const Strides& r, const float* x, const float* w, int64_t nkh,
                          int64_t nkw, const float* bias, const float* z, float* y, PrefetchRange pf) {
  if constexpr (K >= 1) {
    if (count == K) {
      if constexpr (DW) DepthwiseTile<C, K>(r, x, w, nkh, nkw, bias, z, y);
      else DenseTile<C, FB, K, BLK, M>(r, x, w, nkh, nkw, bias, z, y, pf);
      return;
    }
    RemainderTile<C, FB, OWMAX, DW, BLK, M, K - 1>(count, r, x, w, nkh, nkw, bias, z, y, pf);
  }
}

// The weights a unit's next pass reads (the next input-block chunk of the
// unit, or else the next unit's first chunk unless that unit reads the same
// weights in one pass), pulled into L2 while this pass runs: its last
// 2 * blocks tiles prefetch, tile t the chunk of output block t % blocks, as
// far as the tile's channel steps reach (a tile clipped by padding, or a short
// chunk before a longer one, covers part of it). Without it each pass's first
// tiles waited for weights coming from L3: MobileNetV2's 960 -> 160 1x1 conv
// on 7x7 ran at 104 GFLOP/s in the model against 141 with its weights warm.
// Prefetching in every tile (ebd303f: ResNet-50 4-5% faster than none) cost
// 4-10% of a tile's speed on warm weights, and lines fetched at the start of
// a long pass (a 56 x 56 map) were evicted by its input before the next pass:
// in the last tiles only (f4611fb), ResNet-50 1-2% and MobileNetV2 3-5% faster
// again (docs/nchwc.md).
struct Prefetch {
  const float* next = nullptr;  // chunk start of output block 0; null: nothing to fetch
  int64_t stride = 0;           // floats between output blocks
  int64_t blocks = 0;
  int64_t floats = 0;           // of the chunk, per output block
  int64_t start = 0;            // the first tile that prefetches
  int64_t tile = 0;
  // What tile number `tile` prefetches: nothing before `start`.
  PrefetchRange Next(int64_t tile_steps, int64_t c) {
    const int64_t t = tile++;
    if (!next || t < start) return {};
    return {next + ((t - start) % blocks) * stride, std::min(tile_steps, floats / c)};
  }
};

// One output row: border pixels one by one with clipped kw, the interior in tiles.
template <int C, int FB, int OWMAX, bool DW, bool BLK, int M>
void ConvRow(const ConvShape& s, const Strides& r, const float* xrow, const float* wrow, int64_t nkh,
             const float* bias, const float* z, float* y, int64_t pix_stride, int64_t ow_lo, int64_t ow_hi,
             int64_t ow_begin, int64_t ow_end, Prefetch& pf) {
  const int64_t w_kw = DW ? C : (BLK ? C : r.cib) * C;
  // Depthwise full tiles with 3 taps per row, no dilation: the stride (1 or 2)
  // for DepthwiseTile3, else 0. Only where 32 vector registers hold its
  // up to 13 input vectors next to the accumulators (AVX-512 builds).
  const int dw3 = kWideRegisterFile && DW && s.k_w == 3 && s.dil_w == 1 && (s.stride_w == 1 || s.stride_w == 2)
                      ? int(s.stride_w)
                      : 0;
  for (int64_t ow = ow_begin; ow < ow_end;) {
    const int64_t iw0 = ow * s.stride_w - s.pad_l;
    if (ow < ow_lo || ow >= ow_hi) {
      int64_t kw0 = 0, kw1 = s.k_w;
      while (kw0 < kw1 && iw0 + kw0 * s.dil_w < 0) ++kw0;
      while (kw1 > kw0 && iw0 + (kw1 - 1) * s.dil_w >= s.in_w) --kw1;
      const float* xp = kw1 > kw0 ? xrow + (iw0 + kw0 * s.dil_w) * pix_stride : xrow;
      const float* zp = z ? z + ow * C : nullptr;
      if constexpr (DW)
        DepthwiseTile<C, 1>(r, xp, wrow + kw0 * w_kw, nkh, kw1 - kw0, bias, zp, y + ow * C);
      else
        DenseTile<C, FB, 1, BLK, M>(r, xp, wrow + kw0 * w_kw, nkh, kw1 - kw0, bias, zp, y + ow * C,
                                    pf.Next(r.n_ib * nkh * (kw1 - kw0) * C, C));
      ++ow;
      continue;
    }
    const int64_t count = std::min<int64_t>(OWMAX, std::min(ow_hi, ow_end) - ow);
    const float* xp = xrow + iw0 * pix_stride;
    const float* zp = z ? z + ow * C : nullptr;
    if (count == OWMAX) {
      if constexpr (DW) {
        if constexpr (kWideRegisterFile) {
          if (dw3 == 1) {
            DepthwiseTile3<C, OWMAX, 1>(r, xp, wrow, nkh, bias, zp, y + ow * C);
          } else if (dw3 == 2) {
            DepthwiseTile3<C, OWMAX, 2>(r, xp, wrow, nkh, bias, zp, y + ow * C);
          } else {
            DepthwiseTile<C, OWMAX>(r, xp, wrow, nkh, s.k_w, bias, zp, y + ow * C);
          }
        } else {
          DepthwiseTile<C, OWMAX>(r, xp, wrow, nkh, s.k_w, bias, zp, y + ow * C);
        }
      } else {
        DenseTile<C, FB, OWMAX, BLK, M>(r, xp, wrow, nkh, s.k_w, bias, zp, y + ow * C,
                                        pf.Next(r.n_ib * nkh * s.k_w * C, C));
      }
    } else {
      RemainderTile<C, FB, OWMAX, DW, BLK, M>(count, r, xp, wrow, nkh, s.k_w, bias, zp, y + ow * C,
                                             DW ? PrefetchRange{} : pf.Next(r.n_ib * nkh * s.k_w * C, C));
    }
    ow += count;
  }
}

template <int C, int FB, int OWMAX, bool DW, bool BLK>
void ConvUnits(const ConvArgs& a, const Strides& rg, int64_t begin, int64_t end) {
  const ConvShape& s = *a.shape;
  const int64_t ob_total = s.OutBlocks();
  const int64_t pix_stride = BLK || DW ? C : 1;
  const int64_t x_row = s.in_w * pix_stride;
  const int64_t x_img = BLK || DW ? s.InBlocks() * s.in_h * x_row : s.c_in * s.in_h * s.in_w;
  const int64_t y_img = ob_total * rg.y_ob;
  // Interior: every kw tap inside the row.
  int64_t ow_lo = std::min<int64_t>(s.out_w, (s.pad_l + s.stride_w - 1) / s.stride_w);
  const int64_t last = s.in_w - 1 + s.pad_l - (s.k_w - 1) * s.dil_w;
  int64_t ow_hi = last < 0 ? 0 : std::min<int64_t>(s.out_w, last / s.stride_w + 1);
  if (ow_hi < ow_lo) ow_hi = ow_lo;
  const bool row_act = rg.act != oc::ActivationKind::kNone && rg.act != oc::ActivationKind::kRelu &&
                       rg.act != oc::ActivationKind::kClip && rg.act != oc::ActivationKind::kHardSigmoid &&
                       rg.act != oc::ActivationKind::kHardSwish;
  const oc::nchwc::ConvUnitGrid grid = oc::nchwc::ConvUnitsOf(s, FB);
  // Input blocks per pass. Partial sums wait in y between passes, so a
  // residual Z that shares y's bytes (never the case in a planned graph) gets
  // one pass.
  int64_t kc = DW || s.ib_chunk <= 0 ? rg.n_ib : s.ib_chunk;
  if (a.z && a.z < a.y + s.batch * y_img && a.y < a.z + s.batch * y_img) kc = rg.n_ib;
  for (int64_t u = begin; u < end; ++u) {
    const auto [n, g, oh_begin, oh_end, ow_begin, ow_end] = grid.At(u);
    const int64_t ob0 = DW ? g : g * FB;
    const float* x_n = a.x + n * x_img + (DW ? g * s.in_h * x_row : 0);
    const float* w_g = a.w + ob0 * rg.w_ob;
    const float* bias = a.bias + ob0 * C;
    const int64_t nfb = DW ? 1 : std::min<int64_t>(FB, ob_total - ob0);
    for (int64_t ib0 = 0; ib0 < rg.n_ib; ib0 += kc) {
      Strides r = rg;
      r.n_ib = std::min(kc, rg.n_ib - ib0);
      const int mode = (ib0 == 0 ? kFirstChunk : 0) | (ib0 + kc >= rg.n_ib ? kLastChunk : 0);
      Prefetch pf;
      if constexpr (!DW && BLK) {
        if (ib0 + kc < rg.n_ib) {
          pf = {w_g + (ib0 + kc) * rg.w_ib, rg.w_ob, nfb, std::min(kc, rg.n_ib - ib0 - kc) * rg.w_ib};
        } else if (u + 1 < end) {
          const int64_t g1 = grid.At(u + 1).g;
          if (g1 != g || kc < rg.n_ib)
            pf = {a.w + g1 * FB * rg.w_ob, rg.w_ob, std::min<int64_t>(FB, ob_total - g1 * FB), kc * rg.w_ib};
        }
        // Tiles of the pass as ConvRow makes them: border pixels one by one.
        const int64_t lo = std::clamp(ow_lo, ow_begin, ow_end), hi = std::clamp(ow_hi, lo, ow_end);
        const int64_t tiles = (oh_end - oh_begin) * ((lo - ow_begin) + (hi - lo + OWMAX - 1) / OWMAX + (ow_end - hi));
        pf.start = std::max<int64_t>(0, tiles - 2 * pf.blocks);
      }
      for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
        const int64_t ih0 = oh * s.stride_h - s.pad_t;
        int64_t kh0 = 0, kh1 = s.k_h;
        while (kh0 < kh1 && ih0 + kh0 * s.dil_h < 0) ++kh0;
        while (kh1 > kh0 && ih0 + (kh1 - 1) * s.dil_h >= s.in_h) --kh1;
        const float* xrow = (kh1 > kh0 ? x_n + (ih0 + kh0 * s.dil_h) * x_row : x_n) + ib0 * r.x_ib;
        const float* wrow = w_g + ib0 * r.w_ib + kh0 * r.w_kh;
        const int64_t y_off = n * y_img + ob0 * r.y_ob + oh * s.out_w * C;
        const float* z = a.z ? a.z + y_off : nullptr;
        float* y = a.y + y_off;
        if constexpr (DW) {
          ConvRow<C, 1, OWMAX, true, BLK, kOnlyChunk>(s, r, xrow, wrow, kh1 - kh0, bias, z, y, pix_stride, ow_lo,
                                                     ow_hi, ow_begin, ow_end, pf);
        } else {
          [&]<int... F>(std::integer_sequence<int, F...>) {
            auto run = [&]<int M>() {
              ((nfb == F + 1 ? ConvRow<C, F + 1, OWMAX, false, BLK, M>(s, r, xrow, wrow, kh1 - kh0, bias, z, y,
                                                                      pix_stride, ow_lo, ow_hi, ow_begin, ow_end,
                                                                      pf)
                             : void()),
               ...);
            };
            // An NCHW input (the stem) is one input block: one pass, so the
            // other pass variants are not instantiated for it.
            if constexpr (!BLK) {
              run.template operator()<kOnlyChunk>();
            } else {
              switch (mode) {
                case kOnlyChunk: run.template operator()<kOnlyChunk>(); break;
                case kFirstChunk: run.template operator()<kFirstChunk>(); break;
                case kLastChunk: run.template operator()<kLastChunk>(); break;
                default: run.template operator()<0>(); break;
              }
            }
          }(std::make_integer_sequence<int, FB>{});
        }
      }
    }
    if (row_act)
      for (int64_t oh = oh_begin; oh < oh_end; ++oh)
        for (int64_t f = 0; f < nfb; ++f) {
          oc::Activation act{rg.act, rg.lo, rg.hi};
          oc::ApplyActivation(act, a.y + n * y_img + (ob0 + f) * rg.y_ob + (oh * s.out_w + ow_begin) * C,
                              (ow_end - ow_begin) * C);
        }
  }
}

// Entry point of one ISA build: FB output blocks per dense unit, OWMAX pixels per tile.
template <int C, int FB, int OWMAX>
void ConvEntry(const ConvArgs& a, int64_t begin, int64_t end) {
  const ConvShape& s = *a.shape;
  Strides r{};
  const bool blk = !s.nchw_input;
  r.n_ib = s.depthwise ? 1 : s.PackedInBlocks();
  r.cib = s.InBlockChannels();
  const int64_t pix = blk ? C : 1;
  r.x_ib = s.in_h * s.in_w * C;
  r.x_ic = blk ? 1 : s.in_h * s.in_w;
  r.x_kh = s.dil_h * s.in_w * pix;
  r.x_kw = s.dil_w * pix;
  r.x_ow = s.stride_w * pix;
  r.w_kh = s.depthwise ? s.k_w * C : s.k_w * r.cib * C;
  r.w_ib = s.k_h * r.w_kh;
  r.w_ob = s.depthwise ? r.w_ib : r.n_ib * r.w_ib;
  r.y_ob = s.out_h * s.out_w * C;
  r.act = a.act.kind;
  r.lo = a.act.alpha;
  r.hi = a.act.beta;
  if (s.depthwise) ConvUnits<C, 1, OWMAX, true, true>(a, r, begin, end);
  else if (blk) ConvUnits<C, FB, OWMAX, false, true>(a, r, begin, end);
  else ConvUnits<C, FB, OWMAX, false, false>(a, r, begin, end);
}

}  // namespace

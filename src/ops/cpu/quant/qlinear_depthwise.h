// Direct depthwise convolution of 8-bit planes into exact int32 sums, for
// ConvInteger / QLinearConv with one input and one output channel per group
// (MobileNet-style layers): an im2col GEMM with one output row would spend
// its time packing.
//
// The input plane is first padded with the zero point (pads then contribute
// (x_zp - x_zp) * w = 0) and split into stride phases: phase plane (a, b)
// holds padded rows a, a + sh, ... and columns b, b + sw, ... (PHs x PWs
// each; one plane for unit strides). Tap (kh, kw) of output (oh, ow) reads
// padded (oh*sh + kh*dh, ow*sw + kw*dw), which is element (oh + qa, ow + qb)
// of phase plane (kh*dh % sh, kw*dw % sw), qa = kh*dh / sh, qb = kw*dw / sw.
// So every tap is one contiguous sweep over a "wide" accumulator of OH x PWs
// (columns past OW are don't-care), a long loop the compiler vectorises.
// The template is compiled twice: for the baseline ISA where it is included,
// and in qlinear_depthwise_avx512.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ops/cpu/conv/conv_common.h"

namespace oc::qlinear {

// Sizes of the phase planes of a 1-D/2-D depthwise geometry.
struct DepthwisePhases {
  int64_t ph = 0, pw = 0;    // padded plane
  int64_t phs = 0, pws = 0;  // one phase plane
  int64_t planes = 1;        // sh * sw
  int64_t Bytes(const ConvGeometry& g) const {
    return planes * phs * pws + g.kernel[2] * g.dilation[2] + 64;  // slack: wide reads run past a plane
  }
};

inline DepthwisePhases PhasesOf(const ConvGeometry& g) {
  DepthwisePhases p;
  p.ph = g.in[1] + g.pad_begin[1] + g.pad_end[1];
  p.pw = g.in[2] + g.pad_begin[2] + g.pad_end[2];
  p.phs = (p.ph + g.stride[1] - 1) / g.stride[1];
  p.pws = (p.pw + g.stride[2] - 1) / g.stride[2];
  p.planes = g.stride[1] * g.stride[2];
  return p;
}

// Writes the padded, phase-split copy of one input plane into `xph`.
inline void BuildPhasePlanes(const ConvGeometry& g, const DepthwisePhases& p, const uint8_t* x, uint8_t pad,
                             uint8_t* xph) {
  std::memset(xph, pad, static_cast<size_t>(p.Bytes(g)));
  const int64_t sh = g.stride[1], sw = g.stride[2], IH = g.in[1], IW = g.in[2];
  const int64_t plane = p.phs * p.pws;
  for (int64_t ih = 0; ih < IH; ++ih) {
    const int64_t r = ih + g.pad_begin[1];
    uint8_t* row = xph + (r % sh) * sw * plane + (r / sh) * p.pws;
    const uint8_t* src = x + ih * IW;
    if (sw == 1) {
      std::memcpy(row + g.pad_begin[2], src, static_cast<size_t>(IW));
      continue;
    }
    // Column c = iw + pad goes to phase c % sw, index c / sw: walk both
    // without dividing per element.
    int64_t b = g.pad_begin[2] % sw, q = g.pad_begin[2] / sw;
    int64_t iw = 0;
#if defined(__SSE2__)
    if (sw == 2) {
      // Stride 2 (the common case): even / odd bytes of 32 input columns at a
      // time, split with a mask and an unsigned pack.
      uint8_t* even = row + b * plane + q;              // phase of iw = 0, 2, 4, ...
      uint8_t* odd = row + (1 - b) * plane + q + b;     // phase of iw = 1, 3, 5, ...
      const __m128i lo8 = _mm_set1_epi16(0x00FF);
      for (; iw + 32 <= IW; iw += 32) {
        const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + iw));
        const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + iw + 16));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(even + iw / 2),
                         _mm_packus_epi16(_mm_and_si128(v0, lo8), _mm_and_si128(v1, lo8)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(odd + iw / 2),
                         _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8)));
      }
      // iw is even here: the walk below resumes at the same phase it started.
      q += iw / 2;
    }
#endif
    for (; iw < IW; ++iw) {
      row[b * plane + q] = src[iw];
      if (++b == sw) b = 0, ++q;
    }
  }
}

// Internal linkage: each including file (baseline, AVX-512) must keep its own
// instantiation, which the linker would otherwise merge into one.
namespace {

// accw[oh*PWs + ow] = sum over taps of (x - x_zp) * wz[tap]; wz are the
// channel's weights minus their zero point.
template <typename T>
void DepthwisePhased(const ConvGeometry& g, const DepthwisePhases& p, const T* xph, int32_t x_zp, const int32_t* wz,
                     int32_t* accw) {
  const int64_t OH = g.out[1], KH = g.kernel[1], KW = g.kernel[2];
  const int64_t sh = g.stride[1], sw = g.stride[2], dh = g.dilation[1], dw = g.dilation[2];
  const int64_t n = OH * p.pws, plane = p.phs * p.pws;
  std::fill(accw, accw + n, 0);
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      const int32_t w = wz[kh * KW + kw];
      if (w == 0) continue;
      const int64_t a = kh * dh % sh, qa = kh * dh / sh, b = kw * dw % sw, qb = kw * dw / sw;
      const T* __restrict x = xph + (a * sw + b) * plane + qa * p.pws + qb;
      int32_t* __restrict acc = accw;
      for (int64_t e = 0; e < n; ++e) acc[e] += (static_cast<int32_t>(x[e]) - x_zp) * w;
    }
}

}  // namespace

#if defined(__x86_64__) || defined(_M_X64)
void DepthwisePhasedU8_avx512(const ConvGeometry& g, const DepthwisePhases& p, const uint8_t* xph, int32_t x_zp,
                              const int32_t* wz, int32_t* accw);
void DepthwisePhasedS8_avx512(const ConvGeometry& g, const DepthwisePhases& p, const int8_t* xph, int32_t x_zp,
                              const int32_t* wz, int32_t* accw);
#endif

}  // namespace oc::qlinear

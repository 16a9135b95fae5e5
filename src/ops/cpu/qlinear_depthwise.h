// Direct depthwise convolution of 8-bit planes into exact int32 sums, for
// ConvInteger / QLinearConv with one input and one output channel per group
// (MobileNet-style layers): an im2col GEMM with one output row would spend
// its time packing. Per output row and tap, a unit-stride (or strided) sweep
// over the output columns whose input column is inside the image; padded taps
// contribute (x_zp - x_zp) * w = 0, so they are simply skipped. The template is
// compiled twice: here for the baseline ISA and in qlinear_depthwise_avx512.cc,
// where the same loops vectorise 16 wide.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/cpu/conv_common.h"

namespace oc::qlinear {

// Most taps the direct path takes (the weights live on the stack).
inline constexpr int64_t kDepthwiseMaxTaps = 64;

// Internal linkage: each including file (baseline, AVX-512) must keep its own
// instantiation, which the linker would otherwise merge into one.
namespace {

// acc[oh*OW + ow] = sum over taps of (x[ih, iw] - x_zp) * wz[tap], for a 1-D or
// 2-D geometry (g.nd <= 2); wz are the channel's weights minus their zero point.
template <typename T>
void DepthwisePlane(const ConvGeometry& g, const T* x, int32_t x_zp, const int32_t* wz, int32_t* acc) {
  const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t KH = g.kernel[1], KW = g.kernel[2];
  const int64_t sh = g.stride[1], sw = g.stride[2], dh = g.dilation[1], dw = g.dilation[2];
  const int64_t ph = g.pad_begin[1], pw = g.pad_begin[2];
  std::fill(acc, acc + OH * OW, 0);
  for (int64_t oh = 0; oh < OH; ++oh) {
    int32_t* __restrict a = acc + oh * OW;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * sh - ph + kh * dh;
      if (ih < 0 || ih >= IH) continue;
      const T* xr = x + ih * IW;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int32_t w = wz[kh * KW + kw];
        if (w == 0) continue;
        const int64_t off = kw * dw - pw;
        // Output columns with 0 <= ow*sw + off < IW.
        const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
        const int64_t hi = IW - 1 - off < 0 ? 0 : std::min<int64_t>(OW, (IW - 1 - off) / sw + 1);
        if (sw == 1) {
          const T* __restrict xs = xr + off;
          for (int64_t ow = lo; ow < hi; ++ow) a[ow] += (static_cast<int32_t>(xs[ow]) - x_zp) * w;
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) a[ow] += (static_cast<int32_t>(xr[ow * sw + off]) - x_zp) * w;
        }
      }
    }
  }
}

// Padded-plane form for unit column stride: `xp` is the input plane padded
// with x_zp to width PW = IW + pads (rows likewise), plus KW*dw bytes of
// slack. The sums go to a "wide" plane accw[oh*PW + ow] (columns past OW are
// don't-care), so that with unit row stride every tap is one long loop over
// the whole plane instead of short loops per row.
template <typename T>
void DepthwisePlaneWide(const ConvGeometry& g, const T* xp, int64_t pw_width, int32_t x_zp, const int32_t* wz,
                        int32_t* accw) {
  const int64_t OH = g.out[1], KH = g.kernel[1], KW = g.kernel[2];
  const int64_t sh = g.stride[1], dh = g.dilation[1], dw = g.dilation[2];
  const int64_t PW = pw_width;
  std::fill(accw, accw + OH * PW, 0);
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      const int32_t w = wz[kh * KW + kw];
      if (w == 0) continue;
      if (sh == 1) {
        int32_t* __restrict a = accw;
        const T* __restrict x = xp + kh * dh * PW + kw * dw;
        for (int64_t e = 0; e < OH * PW; ++e) a[e] += (static_cast<int32_t>(x[e]) - x_zp) * w;
      } else {
        for (int64_t oh = 0; oh < OH; ++oh) {
          int32_t* __restrict a = accw + oh * PW;
          const T* __restrict x = xp + (oh * sh + kh * dh) * PW + kw * dw;
          for (int64_t e = 0; e < PW; ++e) a[e] += (static_cast<int32_t>(x[e]) - x_zp) * w;
        }
      }
    }
}

}  // namespace

#if defined(__x86_64__) || defined(_M_X64)
void DepthwisePlaneWideU8_avx512(const ConvGeometry& g, const uint8_t* xp, int64_t pw_width, int32_t x_zp,
                                 const int32_t* wz, int32_t* accw);
void DepthwisePlaneWideS8_avx512(const ConvGeometry& g, const int8_t* xp, int64_t pw_width, int32_t x_zp,
                                 const int32_t* wz, int32_t* accw);
void DepthwisePlaneU8_avx512(const ConvGeometry& g, const uint8_t* x, int32_t x_zp, const int32_t* wz,
                             int32_t* acc);
void DepthwisePlaneS8_avx512(const ConvGeometry& g, const int8_t* x, int32_t x_zp, const int32_t* wz,
                             int32_t* acc);
#endif

}  // namespace oc::qlinear

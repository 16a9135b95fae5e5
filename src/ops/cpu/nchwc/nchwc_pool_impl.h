// The NCHWc pools, written once over GCC vector types and built per ISA like
// the conv (nchwc_kernels.cc baseline, nchwc_pool_avx2.cc, nchwc_pool_avx512.cc
// include this inside their own namespace; internal linkage). Built without
// AVX, the 16-lane vectors of block 16 became 4 SSE pieces spilled through
// memory on every max: ResNet-50's 3x3/2 max pool took 3x onnxruntime's time.
#pragma once

#include <cfloat>

#include "ops/cpu/nchwc/nchwc_conv_impl.h"

namespace {

using oc::nchwc::PoolShape;

// First and one-past-last tap of a window starting at `i0` that lie inside [0, n).
inline void TapRange(int64_t i0, int64_t k, int64_t d, int64_t n, int64_t* k0, int64_t* k1) {
  *k0 = i0 >= 0 ? 0 : (-i0 + d - 1) / d;
  *k1 = i0 + (k - 1) * d < n ? k : (n - 1 - i0) / d + 1;
  if (*k1 < *k0) *k1 = *k0;
}

template <int C, bool kMax>
void PoolUnits(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  using V = Vec<C>;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t oh = u % s.out_h, nb = u / s.out_h;  // nb: image * blocks + block
    const float* xb = x + nb * s.in_h * s.in_w * C;
    float* yr = y + (nb * s.out_h + oh) * s.out_w * C;
    const int64_t ih0 = oh * s.stride_h - s.pad_t;
    int64_t kh0, kh1;
    TapRange(ih0, s.k_h, s.dil_h, s.in_h, &kh0, &kh1);
    // Taps inside the padded input, for count_include_pad.
    int64_t kh0p, kh1p;
    TapRange(ih0 + s.pad_t, s.k_h, s.dil_h, s.in_h + s.pad_t + s.pad_b, &kh0p, &kh1p);
    for (int64_t ow = 0; ow < s.out_w; ++ow) {
      const int64_t iw0 = ow * s.stride_w - s.pad_l;
      int64_t kw0, kw1;
      TapRange(iw0, s.k_w, s.dil_w, s.in_w, &kw0, &kw1);
      V acc = kMax ? V{} - FLT_MAX : V{};
      for (int64_t kh = kh0; kh < kh1; ++kh) {
        const float* xr = xb + ((ih0 + kh * s.dil_h) * s.in_w + iw0) * C;
        for (int64_t kw = kw0; kw < kw1; ++kw) {
          const V v = Load<C>(xr + kw * s.dil_w * C);
          if constexpr (kMax) acc = VMax<C>(v, acc);
          else acc += v;
        }
      }
      if constexpr (!kMax) {
        int64_t d = (kh1 - kh0) * (kw1 - kw0);
        if (s.count_include_pad) {
          int64_t kw0p, kw1p;
          TapRange(iw0 + s.pad_l, s.k_w, s.dil_w, s.in_w + s.pad_l + s.pad_r, &kw0p, &kw1p);
          d = (kh1p - kh0p) * (kw1p - kw0p);
        }
        acc = d > 0 ? acc / static_cast<float>(d) : V{};
      }
      Store<C>(yr + ow * C, acc);
    }
  }
}

template <int C>
void GlobalAverageUnits(const float* x, float* y, int64_t hw, int64_t begin, int64_t end) {
  using V = Vec<C>;
  for (int64_t u = begin; u < end; ++u) {
    const float* xb = x + u * hw * C;
    V a0{}, a1{}, a2{}, a3{};
    int64_t i = 0;
    for (; i + 4 <= hw; i += 4) {
      a0 += Load<C>(xb + i * C);
      a1 += Load<C>(xb + (i + 1) * C);
      a2 += Load<C>(xb + (i + 2) * C);
      a3 += Load<C>(xb + (i + 3) * C);
    }
    for (; i < hw; ++i) a0 += Load<C>(xb + i * C);
    Store<C>(y + u * C, ((a0 + a1) + (a2 + a3)) / static_cast<float>(hw));
  }
}

void PoolEntry(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  if (s.block == 16) {
    s.max ? PoolUnits<16, true>(s, x, y, begin, end) : PoolUnits<16, false>(s, x, y, begin, end);
  } else {
    s.max ? PoolUnits<8, true>(s, x, y, begin, end) : PoolUnits<8, false>(s, x, y, begin, end);
  }
}

void GlobalAverageEntry(const float* x, float* y, int64_t hw, int block, int64_t begin, int64_t end) {
  if (block == 16) GlobalAverageUnits<16>(x, y, hw, begin, end);
  else GlobalAverageUnits<8>(x, y, hw, begin, end);
}

}  // namespace

// Baseline builds of the NCHWc kernels: the conv for CPUs without AVX2 (and
// the dispatch to the ISA builds), weight packing, reorders and pools. The
// reorders and pools are memory-bound, so one portable build serves all ISAs.
#include <algorithm>
#include <cfloat>

#include "ops/cpu/nchwc.h"
#include "ops/cpu/nchwc_conv_impl.h"

namespace oc::nchwc {

int BlockForIsa(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return 16;
    case Isa::kAvx2: return 8;
    default: return 0;
  }
}

int64_t ConvShape::PackedWeightFloats() const {
  if (depthwise) return OutBlocks() * k_h * k_w * block;
  return OutBlocks() * PackedInBlocks() * k_h * k_w * InBlockChannels() * block;
}

void PackConvWeights(const ConvShape& s, const float* w, float* packed) {
  const int64_t c = s.block, kk = s.k_h * s.k_w;
  std::fill(packed, packed + s.PackedWeightFloats(), 0.f);
  if (s.depthwise) {
    for (int64_t m = 0; m < s.c_out; ++m)
      for (int64_t k = 0; k < kk; ++k) packed[((m / c) * kk + k) * c + m % c] = w[m * kk + k];
    return;
  }
  const int64_t cib = s.InBlockChannels(), nib = s.PackedInBlocks();
  for (int64_t m = 0; m < s.c_out; ++m)
    for (int64_t ci = 0; ci < s.c_in; ++ci)
      for (int64_t k = 0; k < kk; ++k) {
        const int64_t ib = ci / cib, i = ci % cib;
        packed[((((m / c) * nib + ib) * kk + k) * cib + i) * c + m % c] = w[(m * s.c_in + ci) * kk + k];
      }
}

void UnpackConvWeights(const ConvShape& s, const float* packed, float* w) {
  const int64_t c = s.block, kk = s.k_h * s.k_w;
  if (s.depthwise) {
    for (int64_t m = 0; m < s.c_out; ++m)
      for (int64_t k = 0; k < kk; ++k) w[m * kk + k] = packed[((m / c) * kk + k) * c + m % c];
    return;
  }
  const int64_t cib = s.InBlockChannels(), nib = s.PackedInBlocks();
  for (int64_t m = 0; m < s.c_out; ++m)
    for (int64_t ci = 0; ci < s.c_in; ++ci)
      for (int64_t k = 0; k < kk; ++k)
        w[(m * s.c_in + ci) * kk + k] = packed[((((m / c) * nib + ci / cib) * kk + k) * cib + ci % cib) * c + m % c];
}

int64_t ConvWorkUnits(const ConvShape& s, int fb) {
  const int64_t groups = s.depthwise ? s.OutBlocks() : (s.OutBlocks() + fb - 1) / fb;
  const int64_t chunks = s.ow_chunk > 0 ? (s.out_w + s.ow_chunk - 1) / s.ow_chunk : 1;
  const int64_t band = s.depthwise ? 1 : std::max<int64_t>(1, s.oh_band);
  return s.batch * groups * ((s.out_h + band - 1) / band) * chunks;
}

ConvKernelChoice SelectConvKernel(int block) {
#if defined(__x86_64__) || defined(_M_X64)
  const Isa isa = SelectedIsa();
  if (isa == Isa::kAvx512)
    if (ConvKernelChoice k = ConvKernelAvx512(block); k.run) return k;
  if (isa == Isa::kAvx512 || isa == Isa::kAvx2)
    if (ConvKernelChoice k = ConvKernelAvx2(block); k.run) return k;
#endif
  return ConvKernelBaseline(block);
}

ConvKernelChoice ConvKernelBaseline(int block) {
  if (block == 16) return {ConvEntry<16, 1, 4>, 1, "baseline"};
  if (block == 8) return {ConvEntry<8, 1, 4>, 1, "baseline"};
  return {};
}

namespace {

bool UseAvx512Reorders(int block) {
#if defined(__x86_64__) || defined(_M_X64)
  static const bool avx512 = SelectedIsa() == Isa::kAvx512;
  return block == 16 && avx512;
#else
  return false;
#endif
}

}  // namespace

void ReorderToBlocked(const float* x, float* y, int64_t channels, int64_t h, int64_t w, int block,
                      int64_t begin, int64_t end) {
#if defined(__x86_64__) || defined(_M_X64)
  if (UseAvx512Reorders(block)) return ReorderToBlocked16Avx512(x, y, channels, h, w, begin, end);
#endif
  const int64_t blocks = (channels + block - 1) / block, hw = h * w;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t row = u % h, cb = (u / h) % blocks, n = u / (h * blocks);
    float* dst = y + ((n * blocks + cb) * h + row) * w * block;
    const int64_t lanes = std::min<int64_t>(block, channels - cb * block);
    const float* src = x + (n * channels + cb * block) * hw + row * w;
    for (int64_t l = 0; l < lanes; ++l)
      for (int64_t i = 0; i < w; ++i) dst[i * block + l] = src[l * hw + i];
    for (int64_t l = lanes; l < block; ++l)
      for (int64_t i = 0; i < w; ++i) dst[i * block + l] = 0.f;
  }
}

void ReorderFromBlocked(const float* x, float* y, int64_t channels, int64_t h, int64_t w, int block,
                        int64_t begin, int64_t end) {
#if defined(__x86_64__) || defined(_M_X64)
  if (UseAvx512Reorders(block)) return ReorderFromBlocked16Avx512(x, y, channels, h, w, begin, end);
#endif
  const int64_t blocks = (channels + block - 1) / block, hw = h * w;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t row = u % h, cb = (u / h) % blocks, n = u / (h * blocks);
    const float* src = x + ((n * blocks + cb) * h + row) * w * block;
    const int64_t lanes = std::min<int64_t>(block, channels - cb * block);
    float* dst = y + (n * channels + cb * block) * hw + row * w;
    for (int64_t l = 0; l < lanes; ++l)
      for (int64_t i = 0; i < w; ++i) dst[l * hw + i] = src[i * block + l];
  }
}

namespace {

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

}  // namespace

void Pool(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  if (s.block == 16) s.max ? PoolUnits<16, true>(s, x, y, begin, end) : PoolUnits<16, false>(s, x, y, begin, end);
  else s.max ? PoolUnits<8, true>(s, x, y, begin, end) : PoolUnits<8, false>(s, x, y, begin, end);
}

void GlobalAveragePool(const float* x, float* y, int64_t hw, int block, int64_t begin, int64_t end) {
  if (block == 16) GlobalAverageUnits<16>(x, y, hw, begin, end);
  else GlobalAverageUnits<8>(x, y, hw, begin, end);
}

}  // namespace oc::nchwc

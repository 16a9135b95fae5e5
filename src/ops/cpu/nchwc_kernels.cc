// Baseline builds of the NCHWc kernels: the conv and pools for CPUs without
// AVX2 (and the dispatch to the ISA builds), weight packing, reorders and the
// global average pool (block 16 reorders have an AVX-512 build).
#include <algorithm>

#include "ops/cpu/nchwc.h"
#include "ops/cpu/nchwc_conv_impl.h"
#include "ops/cpu/nchwc_pool_impl.h"

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

#if defined(__x86_64__) || defined(_M_X64)
bool UseAvx512Reorders(int block) {
  static const bool avx512 = SelectedIsa() == Isa::kAvx512;
  return block == 16 && avx512;
}
#endif

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

void Pool(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
#if defined(__x86_64__) || defined(_M_X64)
  static const Isa isa = SelectedIsa();
  if (isa == Isa::kAvx512) return PoolAvx512(s, x, y, begin, end);
  if (isa == Isa::kAvx2) return PoolAvx2(s, x, y, begin, end);
#endif
  PoolBaseline(s, x, y, begin, end);
}

void PoolBaseline(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end) {
  if (s.block == 16) PoolEntry<16>(s, x, y, begin, end);
  else PoolEntry<8>(s, x, y, begin, end);
}

void GlobalAveragePool(const float* x, float* y, int64_t hw, int block, int64_t begin, int64_t end) {
  if (block == 16) GlobalAverageUnits<16>(x, y, hw, begin, end);
  else GlobalAverageUnits<8>(x, y, hw, begin, end);
}

}  // namespace oc::nchwc

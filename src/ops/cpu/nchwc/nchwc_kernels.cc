// Baseline builds of the NCHWc kernels: the conv and pools for CPUs without
// AVX2 (and the dispatch to the ISA builds), weight packing, work units and
// reorders (block 16 reorders have an AVX-512 build).
#include <algorithm>

#include "ops/cpu/nchwc/nchwc.h"
#include "ops/cpu/nchwc/nchwc_conv_impl.h"
#include "ops/cpu/nchwc/nchwc_pool_impl.h"

namespace oc::nchwc {

namespace {

int64_t CeilDivPos(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Work units a conv is cut into at least (where its rows allow): enough for an
// even split over 2..8 threads.
constexpr int64_t kMinUnits = 16;
// Weights of one pass over a chunk of input blocks (ConvShape::ib_chunk): what
// stays in a 32-48 KiB L1 next to the input and the partial sums.
constexpr int64_t kL1WeightBytes = 32 << 10;

// Cost of a row of `pixels` outputs of `blocks` output blocks in 6-pixel
// tiles (the remainder one tile), in FMA vectors per input channel: a tile
// issues pixels x blocks FMAs, or (narrow tiles) as many loads as it has
// weight vectors and input broadcasts; plus set-up.
double RowCost(int64_t pixels, int64_t blocks) {
  auto tile = [&](int64_t p) { return static_cast<double>(std::max(p * blocks, p + blocks)); };
  return static_cast<double>(pixels / 6) * tile(6) + (pixels % 6 ? tile(pixels % 6) : 0.0) + 2.0;
}
// What a unit pays once for its group's weights (per input channel, in the
// same FMA units): each unit streams them from L2 again, a weight vector
// costing about 4 FMAs. Without it, ResNet's and MobileNetV2's 1x1 convs on
// 7x7 maps with 960-2048 input channels were cut into 12-pixel chunks that re-read all
// weights per chunk: 960->320 @7 0.251 ms against 0.223 whole rows.
double UnitWeightCost(int64_t blocks) { return 4.0 * static_cast<double>(blocks); }

}  // namespace

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

ConvUnitGrid ConvUnitsOf(const ConvShape& s, int fb) {
  ConvUnitGrid g;
  g.batch = s.batch;
  g.groups = s.depthwise ? s.OutBlocks() : (s.OutBlocks() + fb - 1) / fb;
  g.band = s.depthwise ? 1 : std::max<int64_t>(1, s.oh_band);
  g.bands = (s.out_h + g.band - 1) / g.band;
  // At least 1: an empty output row (out_w 0) has no chunks, not a division by 0.
  g.chunk = std::max<int64_t>(1, s.ow_chunk > 0 ? s.ow_chunk : s.out_w);
  g.chunks = (s.out_w + g.chunk - 1) / g.chunk;
  g.out_h = s.out_h, g.out_w = s.out_w;
  g.order = s.depthwise ? ConvShape::Order::kImageFirst : s.order;
  g.parts = g.order == ConvShape::Order::kImageFirst ? std::max<int64_t>(1, std::min(s.parts, g.bands * g.chunks)) : 1;
  return g;
}

ConvUnit ConvUnitGrid::At(int64_t u) const {
  int64_t n, g, b, c;
  switch (order) {
    case ConvShape::Order::kGroupsInner:
      g = u % groups, u /= groups;
      c = u % chunks, u /= chunks;
      b = u % bands, n = u / bands;
      break;
    case ConvShape::Order::kGroupsFirst:
      c = u % chunks, u /= chunks;
      b = u % bands, u /= bands;
      n = u % batch, g = u / batch;
      break;
    default: {
      if (parts <= 1) {
        c = u % chunks, u /= chunks;
        b = u % bands, u /= bands;
        g = u % groups, n = u / groups;
        break;
      }
      // Part p holds pieces [start(p), start(p + 1)) of every group.
      const int64_t pieces = bands * chunks;
      auto start = [&](int64_t p) { return pieces * p / parts; };
      n = u / (groups * pieces);
      const int64_t v = u % (groups * pieces), x = v / groups;  // start(p) <= x < start(p + 1)
      int64_t p = std::min(parts - 1, x * parts / pieces);
      while (start(p) > x) --p;
      while (start(p + 1) <= x) ++p;
      const int64_t in_part = start(p + 1) - start(p), w = v - groups * start(p);
      g = w / in_part;
      const int64_t piece = start(p) + w % in_part;
      b = piece / chunks, c = piece % chunks;
      break;
    }
  }
  return {n, g, b * band, std::min(out_h, (b + 1) * band), c * chunk, std::min(out_w, (c + 1) * chunk)};
}

int64_t ConvWorkUnits(const ConvShape& s, int fb) { return ConvUnitsOf(s, fb).count(); }

// The largest of the `threads` contiguous ranges of equal unit counts that
// ThreadPool::ParallelFor hands out (RowCost of each unit's rows).
double ConvMaxThreadLoad(const ConvShape& s, int fb, int64_t threads) {
  const ConvUnitGrid grid = ConvUnitsOf(s, fb);
  const int64_t units = grid.count(), ob_total = s.OutBlocks();
  double load = 0;
  for (int64_t t = 0; t < threads; ++t) {
    double sum = 0;
    for (int64_t u = units * t / threads; u < units * (t + 1) / threads; ++u) {
      const ConvUnit w = grid.At(u);
      const int64_t blocks = s.depthwise ? 1 : std::min<int64_t>(fb, ob_total - w.g * fb);
      sum += static_cast<double>(w.oh_end - w.oh_begin) * RowCost(w.ow_end - w.ow_begin, blocks) +
             (s.depthwise ? 0.0 : UnitWeightCost(blocks));
    }
    load = std::max(load, sum);
  }
  return load;
}

namespace {

// Pixels per unit along a row (whole 6-pixel tiles; 0: the whole row) and the
// unit order for a conv with too few units for an even split, such that the
// `threads` ranges carry the most even work (ConvMaxThreadLoad). Rounding a fixed
// piece count instead left e.g. 9 units of a 14x14 pointwise conv: 5 against
// 4 on 2 threads, 1.6x the pixels on one of them; and with the groups of a
// row adjacent only in the image-first order, a pointwise conv with 6 output
// blocks (groups of 4 and 2) gave one thread twice the other's blocks.
void BalanceRowChunks(ConvShape& s, int fb, int64_t threads) {
  const int64_t tiles = CeilDivPos(s.out_w, 6);
  const bool uneven_groups = !s.depthwise && s.OutBlocks() % fb != 0 && s.OutBlocks() > fb;
  ConvShape best = s;
  double best_load = 0;
  for (int inner = 0; inner <= (uneven_groups ? 1 : 0); ++inner) {
    ConvShape t = s;
    if (inner) t.order = ConvShape::Order::kGroupsInner;
    for (int64_t c = 1; c <= std::min<int64_t>(tiles, 64); ++c) {
      const int64_t chunk = CeilDivPos(tiles, c) * 6;
      t.ow_chunk = CeilDivPos(s.out_w, chunk) > 1 ? chunk : 0;
      const double load = ConvMaxThreadLoad(t, fb, threads);
      if ((inner == 0 && c == 1) || load < best_load - 1e-9) best_load = load, best = t;
    }
  }
  s = best;
}

// Whether a dense conv should be cut into spatial parts, one per thread (see
// ConvShape::parts), rather than between output-block groups: where an
// image's input outweighs the weights, which every thread then reads whole.
// Measured at 2 threads (bench/model_bench, interleaved A/B): on ResNet-50,
// parts for every dense conv were slower (layer 4's convs carry 1-9 MB of
// weights per 0.1-0.8 MB of input), parts under this rule 2-4% faster;
// MobileNetV2 unchanged. Depthwise convs keep the groups split: with parts
// MobileNetV2 ran 5% slower (their 7x7 and 14x14 layers read inputs that an
// expanding pointwise conv, split between groups, wrote), and parts only for
// inputs over 0.5-2 MB changed nothing.
bool SpatialPartsPay(const ConvShape& s) {
  if (s.depthwise) return false;
  const int64_t weight_bytes = s.PackedWeightFloats() * int64_t{sizeof(float)};
  const int64_t input_bytes = (s.nchw_input ? s.c_in : s.InBlocks() * s.block) * s.in_h * s.in_w * int64_t{sizeof(float)};
  return weight_bytes <= input_bytes && weight_bytes <= (int64_t{1} << 20);
}

}  // namespace

void PlanConvUnits(ConvShape& s, int fb, int max_threads) {
  // Dense convs whose weights outgrow L1 run in passes over chunks of the
  // input blocks, each over a band of rows (see ConvShape::ib_chunk): the
  // chunk's weights are then read from L2 once per band instead of once per
  // tile. Bands are as tall as an even split over the threads allows.
  if (!s.depthwise && !s.nchw_input) {
    const int64_t block_bytes = s.k_h * s.k_w * s.block * fb * s.block * int64_t{sizeof(float)};
    const int64_t kc = std::max<int64_t>(1, kL1WeightBytes / block_bytes);
    if (kc < s.InBlocks()) {
      s.ib_chunk = kc;
      const int64_t groups = s.batch * CeilDivPos(s.OutBlocks(), fb);
      const int64_t want = max_threads > 1 ? 4 * int64_t{max_threads} : 1;
      const int64_t bands = std::min(s.out_h, CeilDivPos(want, groups));
      s.oh_band = CeilDivPos(s.out_h, bands);
    }
  }
  if (!s.depthwise && s.batch > 1 && s.PackedWeightFloats() > s.InBlocks() * s.in_h * s.in_w * s.block)
    s.order = ConvShape::Order::kGroupsFirst;
  if (max_threads > 1 && s.order == ConvShape::Order::kImageFirst && s.batch % max_threads != 0 && s.out_h > 0 &&
      s.out_w > 0 && SpatialPartsPay(s)) {
    // One part per thread, cut from the bands of rows; where there are fewer
    // bands than threads (a flattened pointwise conv has one row), from
    // chunks of whole 6-pixel tiles of each row as well. (Parts align with the
    // pool's equal unit ranges only when the pieces divide evenly; stealing
    // evens out the rest.)
    s.parts = max_threads;
    const ConvUnitGrid grid = ConvUnitsOf(s, fb);
    if (grid.bands < max_threads) {
      const int64_t chunks = CeilDivPos(max_threads, grid.bands);
      s.ow_chunk = CeilDivPos(CeilDivPos(s.out_w, 6), chunks) * 6;
      if (s.ow_chunk >= s.out_w) s.ow_chunk = 0;
    }
    return;
  }
  // Rows split into chunks (whole 6-pixel tiles) where there are too few
  // units for an even split over threads. Not for one thread: chunks cost it
  // weight traffic and buy nothing (a pool grown after load still runs such a
  // conv correctly, with a less even split).
  if (max_threads > 1 && ConvWorkUnits(s, fb) < kMinUnits) BalanceRowChunks(s, fb, max_threads);
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

PoolKernels SelectPoolKernels() {
#if defined(__x86_64__) || defined(_M_X64)
  const Isa isa = SelectedIsa();
  if (isa == Isa::kAvx512) return PoolKernelsAvx512();
  if (isa == Isa::kAvx2) return PoolKernelsAvx2();
#endif
  return PoolKernelsBaseline();
}

PoolKernels PoolKernelsBaseline() { return {PoolEntry, GlobalAverageEntry, "baseline"}; }

}  // namespace oc::nchwc

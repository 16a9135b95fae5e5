// The blocked channel layout NCHWc and its kernels.
//
// A blocked tensor holds an NCHW tensor [N, C, H, W] as [N, ceil(C/c), H, W, c]:
// channel k lives in block k / c, lane k % c. Channels past C (the padding of the
// last block) hold finite values that no consumer reads into a real channel: the
// convolutions give them zero weights, reorders back to NCHW drop them. The
// block size c is 16 where atc ran with AVX-512, 8 with AVX2 (NchwcBlockForIsa);
// every kernel runs both, with the fastest build the running CPU allows.
//
// Ops (domain com.opencann, opset 1, attribute "block" = c), produced by the
// nchwc-layout pass (src/passes/nchwc_layout.cc):
//   ReorderToNchwc(X [N,C,H,W]) -> [N,Cb,H,W,c] ("channels" = C)
//   ReorderFromNchwc(X [N,Cb,H,W,c]) -> [N,C,H,W]  ("channels" = C)
//   NchwcConv(X, W, [B], [Z]): Conv/FusedConv attributes; W and B as in Conv
//       (re-laid in the kernel and exported prepacked); X blocked, or plain NCHW
//       when "nchw_input" = 1 (the stem conv with few input channels); Z and the
//       output blocked. group must be 1 or the channel count (depthwise).
//   NchwcMaxPool / NchwcAveragePool(X): 2-D pool attributes, blocked in and out.
//   NchwcGlobalAveragePool(X): [N,Cb,H,W,c] -> [N,Cb,1,1,c].
// Element-wise ops (Add, Relu, Clip, ...) and Concat on channel blocks run the
// ordinary ONNX kernels on the 5-D tensors.
#pragma once

#include <cstdint>

#include "base/cpu_features.h"
#include "ops/cpu/elementwise/activation.h"

namespace oc::nchwc {

// Block size the pass chooses for code that runs on `isa` (0: no blocked layout).
int BlockForIsa(Isa isa);

// A 2-D convolution on blocked tensors, every quantity resolved.
struct ConvShape {
  int block = 16;
  bool nchw_input = false;  // X is [N, C, H, W] instead of blocked
  bool depthwise = false;   // group == C_in == C_out, one filter per channel
  int64_t batch = 1, c_in = 0, c_out = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t k_h = 1, k_w = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_t = 0, pad_l = 0;
  // Output pixels per work unit along a row (0: the whole row).
  int64_t ow_chunk = 0;
  // Dense convs: output rows per work unit (0 or 1: one), and input blocks per
  // pass over a unit (0: all). A unit runs its rows once per chunk of ib_chunk
  // input blocks, keeping partial sums in the output, so that the chunk's
  // weights stay in L1 across the unit's tiles instead of streaming from L2
  // for every tile.
  int64_t oh_band = 0, ib_chunk = 0;
  // Order of a dense conv's units (ConvUnitGrid::At).
  enum class Order : uint8_t {
    // image, output-block group, band, chunk.
    kImageFirst,
    // group, image, band, chunk: for batches whose weights outweigh one
    // image's input, so a group's weights are read once for all images
    // instead of once per image.
    kGroupsFirst,
    // image, band, chunk, group: the groups of one pixel chunk are adjacent,
    // so equal contiguous unit ranges cover equal pixel ranges of every group
    // even where the last group has fewer output blocks (6 = 4 + 2).
    kGroupsInner,
  };
  Order order = Order::kImageFirst;
  // kImageFirst only: the pixel pieces (bands x chunks, row-major) of each
  // image are cut into `parts` contiguous runs, and units are numbered image,
  // part, group, piece. With one part per thread, a thread's units cover one
  // region of the image for every group, so the next layer, cut the same way,
  // finds most of its input in the cache of the core that wrote it (with
  // groups outermost, half of every input crosses to the other core).
  // 1: image, group, band, chunk.
  int64_t parts = 1;

  int64_t InBlocks() const { return (c_in + block - 1) / block; }
  int64_t OutBlocks() const { return (c_out + block - 1) / block; }
  // Input channels per packed weight block: c, or C_in for NCHW input.
  int64_t InBlockChannels() const { return nchw_input ? c_in : block; }
  int64_t PackedInBlocks() const { return nchw_input ? 1 : InBlocks(); }
  // Floats of the packed weights (PackConvWeights) and of the padded bias.
  int64_t PackedWeightFloats() const;
};

// Re-lays W [C_out, C_in/group, k_h, k_w] for the conv kernel:
//   dense:     [ob][ib][kh][kw][i][lane]  (i < InBlockChannels(), lane < c)
//   depthwise: [ob][kh][kw][lane]
// Output channels past C_out and input channels past C_in get zero weights.
void PackConvWeights(const ConvShape& s, const float* w, float* packed);
// The inverse: W [C_out, C_in/group, k_h, k_w] back from packed weights.
void UnpackConvWeights(const ConvShape& s, const float* packed, float* w);

struct ConvArgs {
  const ConvShape* shape;
  const float* x;
  const float* w;     // packed
  const float* bias;  // OutBlocks() * c floats (zeros where the node has none)
  const float* z;     // residual in the output layout, or null
  float* y;
  Activation act;
};

using ConvFn = void (*)(const ConvArgs& a, int64_t begin, int64_t end);
// A conv build for one ISA and block size: `fb` output blocks per dense work unit.
struct ConvKernelChoice {
  ConvFn run = nullptr;
  int fb = 1;
  const char* isa = "";
};
// The fastest build for `block` that SelectedIsa() allows.
ConvKernelChoice SelectConvKernel(int block);
// Per-ISA builds (nullptr run where the build lacks `block`); call only when
// SelectedIsa() allows the ISA.
ConvKernelChoice ConvKernelAvx512(int block);
ConvKernelChoice ConvKernelAvx2(int block);
ConvKernelChoice ConvKernelBaseline(int block);
// One unit of parallel work: image n, output-block group g (fb blocks for
// dense convs, one block for depthwise), output rows [oh_begin, oh_end) and
// pixels [ow_begin, ow_end) of them.
struct ConvUnit {
  int64_t n, g, oh_begin, oh_end, ow_begin, ow_end;
};
// The units of a conv: groups x bands of oh_band rows (one row for depthwise)
// x chunks of ow_chunk pixels per image, numbered in ConvShape::order
// (depthwise: image first). The only place these rules live: the kernels walk
// At(), the op counts count() and weighs units for the split over threads.
struct ConvUnitGrid {
  int64_t batch = 1, groups = 1, band = 1, bands = 1, chunk = 1, chunks = 1, out_h = 1, out_w = 1, parts = 1;
  ConvShape::Order order = ConvShape::Order::kImageFirst;
  int64_t count() const { return batch * groups * bands * chunks; }
  ConvUnit At(int64_t u) const;
};
ConvUnitGrid ConvUnitsOf(const ConvShape& s, int fb);
int64_t ConvWorkUnits(const ConvShape& s, int fb);
// The largest work (6-pixel tiles x output blocks, plus set-up per row) of
// the `threads` contiguous ranges of equal unit counts ThreadPool::ParallelFor
// hands out for the conv's units.
double ConvMaxThreadLoad(const ConvShape& s, int fb, int64_t threads);
// Sets a conv's ib_chunk, oh_band, order and ow_chunk for `fb` output blocks
// per unit and up to `max_threads` threads (after the op flattened pointwise
// convs into one row): input-block passes where the weights outgrow L1, groups
// first at batch > 1 where weights outweigh an image's input, and rows cut into
// chunks where there are too few units for an even split, chosen (with the
// order where groups differ in size) so that the largest thread range carries
// the least work.
void PlanConvUnits(ConvShape& s, int fb, int max_threads);

// Reorders of images*blocks*rows [begin, end) (units: N * Cb * H).
void ReorderToBlocked(const float* x, float* y, int64_t channels, int64_t hw_h, int64_t hw_w, int block,
                      int64_t begin, int64_t end);
void ReorderFromBlocked(const float* x, float* y, int64_t channels, int64_t hw_h, int64_t hw_w, int block,
                        int64_t begin, int64_t end);

// AVX-512 builds of the block-16 reorders (16x16 register transposes); the
// functions above call them when SelectedIsa() allows.
void ReorderToBlocked16Avx512(const float* x, float* y, int64_t channels, int64_t h, int64_t w, int64_t begin,
                              int64_t end);
void ReorderFromBlocked16Avx512(const float* x, float* y, int64_t channels, int64_t h, int64_t w, int64_t begin,
                                int64_t end);

struct PoolShape {
  int block = 16;
  bool max = true;
  bool count_include_pad = false;
  int64_t batch = 1, blocks = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t k_h = 1, k_w = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_t = 0, pad_l = 0;
  int64_t pad_b = 0, pad_r = 0;
};
// Pools of rows [begin, end) (units: N * Cb * out_h).
using PoolFn = void (*)(const PoolShape& s, const float* x, float* y, int64_t begin, int64_t end);
// Means over hw float vectors of each of [begin, end) image blocks.
using GlobalAverageFn = void (*)(const float* x, float* y, int64_t hw, int block, int64_t begin, int64_t end);
// The pool kernels of one ISA build (both block sizes).
struct PoolKernels {
  PoolFn pool = nullptr;
  GlobalAverageFn global_average = nullptr;
  const char* isa = "";
};
// The fastest build SelectedIsa() allows (resolve once, when a kernel is made).
PoolKernels SelectPoolKernels();
// Per-ISA builds; call only when SelectedIsa() allows the ISA.
PoolKernels PoolKernelsAvx512();
PoolKernels PoolKernelsAvx2();
PoolKernels PoolKernelsBaseline();

}  // namespace oc::nchwc

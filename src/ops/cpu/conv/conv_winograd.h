// Winograd F(4x4, 3x3) for float32 2-D convolutions with a 3x3 kernel, stride
// 1, dilation 1, one group (any pads). Each 4x4 output tile comes from a 6x6
// input tile: V = B^T d B, then for each of the 36 positions xi of the
// transformed tile one GEMM with the tiles as rows, M[xi] = V[xi] * U[xi]^T
// ([tiles x Cin] x [Cin x Cout]), then Y = A^T m A plus the fused epilogue
// (bias, residual, activation). U = G g G^T is computed once per kernel and
// kept as 36 packed GEMM B operands (exported to the .om).
// 2.25x fewer multiplies than im2col, for an error a few ulps of the output
// scale larger (F(4,3)'s transforms have entries up to 8 and 1/24).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/conv/conv_common.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc {

// True when the geometry is one Winograd computes (3x3, stride 1, dilation 1,
// group 1, 2-D) - correctness only, not whether it is faster.
bool WinogradApplicable(const ConvGeometry& g);
// True when it is applicable and measured faster than im2col for this shape,
// and OPENCANN_WINOGRAD is not "0".
bool WinogradPreferred(const ConvGeometry& g);

class WinogradConv {
 public:
  WinogradConv() = default;
  // `w` (may be null when `prepacked` matches) is [Cout, Cin, 3, 3].
  WinogradConv(const ConvGeometry& g, const float* w, std::span<const uint8_t> prepacked, int max_threads);
  // Weights that change from run to run (a network being trained): each Run
  // transforms and packs the `w` it is given, in its scratch.
  static WinogradConv Dynamic(const ConvGeometry& g, int max_threads);
  bool valid() const { return !u_.empty() || dynamic_; }
  bool dynamic() const { return dynamic_; }
  size_t ScratchBytes() const;
  // Y = act(conv(X) + bias + z); bias and z may be null. `scratch`:
  // ScratchBytes() bytes, 64-byte aligned. `w`: the weights of a Dynamic
  // conv (ignored otherwise).
  void Run(const float* x, const float* bias, const float* z, float* y, const Activation& act, ThreadPool* pool,
           void* scratch, const float* w = nullptr) const;
  // The same on the blocked layout of ops/cpu/nchwc/nchwc.h with `block` 8 or 16:
  // x [N][ceil(Cin/block)][IH][IW][block], z and y [N][ceil(Cout/block)][OH][OW][block].
  // Padding lanes of x are ignored; those of y get act(0), as NchwcConv
  // writes them. The 16 lanes the transforms work on are then whole blocks
  // in memory: no transposes, and no reorders around the conv in a blocked
  // region (NchwcConv runs the convs WinogradPreferred picks through it).
  void RunBlocked(int block, const float* x, const float* bias, const float* z, float* y, const Activation& act,
                  ThreadPool* pool, void* scratch) const {
    RunLayout(block, x, bias, z, y, act, pool, scratch);
  }
  std::vector<uint8_t> ExportPrepacked() const { return u_.Export(); }

 private:
  void RunLayout(int block, const float* x, const float* bias, const float* z, float* y, const Activation& act,
                 ThreadPool* pool, void* scratch, const float* packed_u = nullptr) const;
  // Floats of a Dynamic conv's transformed weights: raw, then packed.
  int64_t DynamicRawFloats() const;
  int64_t DynamicPackedFloats() const;
  // Whether `threads` threads each take a share of the tiles (else they share
  // out the 36 GEMMs of each batch of tiles).
  bool SplitTiles(int64_t threads) const;
  // Tiles per batch of each of `threads` threads that split the tiles.
  int64_t SplitRows(int64_t threads) const;
  // Floats of V and M for batches of `rows` tiles, and of the scratch that
  // holds every V and M a run may use (the GEMM buffers follow it).
  int64_t VmFloats(int64_t rows) const;
  int64_t VmAreaFloats() const;

  ConvGeometry g_;
  int64_t tiles_h_ = 0, tiles_w_ = 0, chunk_ = 0;  // tiles per GEMM batch
  int64_t vm_area_floats_ = 0;                     // VmAreaFloats(), fixed at construction
  int max_threads_ = 1;
  // Single-threaded: each thread runs whole GEMMs with its own packing
  // buffers (one fork/join for all of them, not 36).
  gemm::SgemmPlan plan_;
  gemm::PackedOperand u_;  // 36 groups of [Cout x Cin]
  bool dynamic_ = false;   // no u_: Run transforms the weights it is given
};

}  // namespace oc

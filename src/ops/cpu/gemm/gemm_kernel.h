// Single-precision GEMM library: C = alpha * op(A) * op(B) + beta * C, then an
// optional epilogue (bias per row or column, residual add, activation).
//
// Blocking scheme (BLIS-style, three levels: micro-kernel -> block -> tile):
//   for jc over N in steps of NC          B block (KC x NC) lives in L2/L3
//     for pc over K in steps of KC        pack B[pc:pc+KC, jc:jc+NC] into NR-wide panels
//       for ic over M in steps of MC      pack A[ic:ic+MC, pc:pc+KC] into MR-tall panels (L2)
//         for jr over NC in steps of NR   one B micro-panel (KC x NR) stays in L1
//           for ir over MC in steps of MR
//             micro-kernel: MR x NR tile of C, accumulators in registers
// Threads split C into a grid of (M range x N range) tasks; each task runs the
// loops above on its part with its own packing buffers. Two variations
// (SgemmPlan::RunTask): where a KC x NR B micro-panel outgrows L1 (AVX-512's KC
// 512), a task of up to 2 * MC rows runs as one row block at KC / 2; and a task
// of at most MR rows with pre-packed B runs all of K as one block, each weight
// panel streaming front to back while the next one is prefetched.
//
// Packed layouts (also the layout of pre-packed constant operands):
//   A: panels of MR rows; panel p holds k-major MR values: pa[k*MR + i] =
//      A(p*MR + i, k), rows past M are zero.
//   B: panels of NR columns; pb[k*NR + j] = B(k, p*NR + j), columns past N zero.
// A fully pre-packed operand keeps all K for each panel (panel stride K*MR or
// K*NR), so any KC block starts at panel + pc*MR (or pc*NR).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "base/cpu_features.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "ops/cpu/elementwise/activation.h"

namespace oc::gemm {

// Micro-kernel contract: acc(i, j) = sum_{k < kc} a[k*MR + i] * b[k*NR + j];
// then for i < m, j < n: c[i*ldc + j] = alpha * acc + beta * c[i*ldc + j],
// where beta == 0 means C is not read (it may hold NaNs). Pure, no allocation.
using GemmUkernelFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                               int64_t m, int64_t n, float alpha, float beta);

// Packs one MR-row panel of row-major A: dst[p*MR + i] = a[i*lda + p] for
// i < rows (<= MR), zero for rows..MR-1, p < k.
using PackAPanelFn = void (*)(const float* a, int64_t lda, int64_t rows, int64_t k, float* dst);

// The epilogue of one micro-tile (rows and columns relative to the tile), for
// micro-kernels that apply it in registers before the single store of C.
struct TileEpilogue {
  const float* row_bias = nullptr;  // one value per tile row, or null
  const float* col_bias = nullptr;  // one value per tile column, or null
  const float* residual = nullptr;  // tile-shaped, leading dim ldr, or null
  int64_t ldr = 0;
  ActivationKind act = ActivationKind::kNone;  // kNone, kRelu, kLeakyRelu or kClip
  float act_alpha = 0.f, act_beta = 0.f;
  // Not part of the epilogue: b_next_lines 64-byte lines from b_next (a part
  // of the packed B micro-panel the driver uses after this one) that a kernel
  // may prefetch into L2, spread evenly over its k steps, so that the first
  // tile of the next panel finds its B there rather than in L3 or memory.
  const float* b_next = nullptr;
  int64_t b_next_lines = 0;

  // Nothing to apply (b_next aside).
  bool empty() const { return !row_bias && !col_bias && !residual && act == ActivationKind::kNone; }
};

// A micro-kernel that reads B in place (row-major, leading dim ldb; columns
// past n are not read) instead of from a packed panel; otherwise the contract
// of GemmUkernelFusedFn (an empty TileEpilogue applies nothing).
using GemmUkernelLdbFn = void (*)(int64_t kc, const float* a, const float* b, int64_t ldb, float* c,
                                  int64_t ldc, int64_t m, int64_t n, float alpha, float beta,
                                  const TileEpilogue& ep);

// A micro-kernel with the epilogue fused: the contract of GemmUkernelFn, then
// c(i, j) = act(c(i, j) + row_bias[i] + col_bias[j] + residual(i, j)).
using GemmUkernelFusedFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                    int64_t m, int64_t n, float alpha, float beta, const TileEpilogue& ep);

struct GemmUkernel {
  const char* name;  // f32_gemm_<MR>x<NR>_<isa>
  Isa isa;
  int mr, nr;
  int kc, mc, nc;    // cache blocking: multiples of mr/nr where it matters
  GemmUkernelFn fn;
  PackAPanelFn pack_a;  // ISA-specific packer for non-transposed A, or nullptr
};

#if defined(__x86_64__) || defined(_M_X64)
void f32_packa_14_avx512(const float* a, int64_t lda, int64_t rows, int64_t k, float* dst);
void f32_gemm_epilogue_14x32_avx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                    int64_t m, int64_t n, float alpha, float beta, const TileEpilogue& ep);
void f32_gemm_ldb_14x32_avx512(int64_t kc, const float* a, const float* b, int64_t ldb, float* c,
                               int64_t ldc, int64_t m, int64_t n, float alpha, float beta,
                               const TileEpilogue& ep);
#endif
// The variant of `uk` that reads B in place, or nullptr when it has none.
GemmUkernelLdbFn DirectBUkernelFor(const GemmUkernel& uk);
// The fused-epilogue variant of `uk`, or nullptr when it has none.
GemmUkernelFusedFn FusedUkernelFor(const GemmUkernel& uk);


// Micro-kernels compiled into this build (declared by gemm_ukernels.inc).
std::span<const GemmUkernel> AllUkernels();
// The micro-kernel for `isa`, or nullptr when this build or CPU lacks it.
const GemmUkernel* UkernelForIsa(Isa isa);
// The best micro-kernel for SelectedIsa().
const GemmUkernel& DefaultUkernel();
// True when the CPU can run micro-kernels of `isa`.
bool IsaSupported(Isa isa);

struct Epilogue {
  enum class Bias { kNone, kPerRow, kPerCol };
  Bias bias_kind = Bias::kNone;
  const float* bias = nullptr;      // M values (per row) or N values (per column)
  const float* residual = nullptr;  // added element-wise; may equal C (then ldr must equal ldc)
  int64_t ldr = 0;
  Activation act;
  bool empty() const {
    return bias_kind == Bias::kNone && residual == nullptr && act.kind == ActivationKind::kNone;
  }
};

// True when a fused micro-kernel can apply `ep` (its activation is one of the
// cheap ones listed in TileEpilogue).
bool EpilogueFusable(const Epilogue& ep);

// Packs rows [k0, k0+kc) and columns [n0, n0+nc) of a B that exists only
// implicitly (for example im2col of a convolution input) into NR-wide panels
// at dst (panel stride kc*NR, columns past nc zero). Called concurrently from
// several threads on disjoint column ranges.
using PackBFn = void (*)(const void* ctx, const GemmUkernel& uk, int64_t k0, int64_t kc, int64_t n0,
                         int64_t nc, float* dst);

// One GEMM call. Either a/b (with leading dims and transposes), packed_a /
// packed_b (panels for the plan's micro-kernel, full K, see the layout above),
// or pack_b (a packer for an implicit B).
struct SgemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t lda = 0;
  bool trans_a = false;  // A is stored K x M
  const float* packed_a = nullptr;
  const float* b = nullptr;
  int64_t ldb = 0;
  bool trans_b = false;  // B is stored N x K
  const float* packed_b = nullptr;
  PackBFn pack_b = nullptr;
  const void* pack_b_ctx = nullptr;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.f;
  float beta = 0.f;
  Epilogue epilogue;
};

// Packing (exposed for pre-packing and tests). Write whole panels, zero-padded.
// Sizes in floats of a fully packed operand:
inline int64_t PackedASize(const GemmUkernel& uk, int64_t m, int64_t k) {
  return (m + uk.mr - 1) / uk.mr * uk.mr * k;
}
inline int64_t PackedBSize(const GemmUkernel& uk, int64_t n, int64_t k) {
  return (n + uk.nr - 1) / uk.nr * uk.nr * k;
}
// Packs rows [0, m) and k-range [0, k) of op(A) into dst (panel stride k*MR).
void PackA(const GemmUkernel& uk, const float* a, int64_t lda, bool trans_a, int64_t m, int64_t k,
           float* dst);
// Packs columns [0, n) and k-range [0, k) of op(B) into dst (panel stride k*NR).
void PackB(const GemmUkernel& uk, const float* b, int64_t ldb, bool trans_b, int64_t n, int64_t k,
           float* dst);

// Serialised pre-packed operand: a 64-byte header naming the micro-kernel
// geometry and the operand shape, then the panels. Stored in the .om. An
// operand may hold `groups` independent matrices (grouped conv weights, batched
// constant MatMul operands), each packed alone: group g starts at
// g * Packed{A,B}Size(dim, k) floats.
enum class PackedSide : uint32_t { kA = 1, kB = 2 };
// The panels inside `bytes` if they were packed for this micro-kernel, side and
// shape (and are well formed and 4-byte aligned); else nullptr (caller repacks).
const float* ParsePacked(std::span<const uint8_t> bytes, const GemmUkernel& uk, PackedSide side,
                         int64_t dim, int64_t k, int64_t groups = 1);

// Writes the operand that serialised panels `bytes` (packed for ANY micro-kernel
// geometry, as long as side, dim, k and groups match) were made from back into
// raw layout: group g of op(X) at dst + g * group_stride with leading dim `ld`,
// transposed when `trans` (the arguments PackedOperand::Make got). Packing is a
// permutation with zero padding, so this is exact. For weights a .om stores only
// in packed form (Kernel::PrepackedInputs). Errors say what in the bytes is wrong.
Status UnpackPacked(std::span<const uint8_t> bytes, PackedSide side, int64_t dim, int64_t k, int64_t groups,
                    float* dst, int64_t ld, bool trans, int64_t group_stride);
// `raw` when non-null; else (a weight the .om stored only in `prepacked`) the
// raw values rebuilt into `storage` (`elements` floats) unless the panels in
// `prepacked` already suit `uk` and `use_panels_as_is` is true, in which case
// nullptr (the caller needs no raw data: PackedOperand::Make borrows them).
Expected<const float*> RawOrUnpacked(const float* raw, std::span<const uint8_t> prepacked,
                                     const GemmUkernel* uk, bool use_panels_as_is, PackedSide side,
                                     int64_t dim, int64_t k, int64_t groups, int64_t ld, bool trans,
                                     int64_t group_stride, int64_t elements, std::vector<float>& storage);

// A pre-packed constant operand, either owned or borrowed from KernelInit::prepacked.
class PackedOperand {
 public:
  PackedOperand() = default;
  // Move-only: data() points into owned_.
  PackedOperand(PackedOperand&&) noexcept = default;
  PackedOperand& operator=(PackedOperand&&) noexcept = default;
  PackedOperand(const PackedOperand&) = delete;
  PackedOperand& operator=(const PackedOperand&) = delete;
  // Uses `prepacked` when it matches; otherwise packs `src` (when non-null):
  // group g is op(src + g * group_stride) with leading dim `ld`; `dim` is M
  // (side A) or N (side B) of one group.
  static PackedOperand Make(const GemmUkernel& uk, PackedSide side, const float* src, int64_t ld,
                            bool trans, int64_t dim, int64_t k, std::span<const uint8_t> prepacked,
                            int64_t groups = 1, int64_t group_stride = 0);
  const float* data() const { return data_; }
  const float* group(int64_t g) const { return data_ + g * group_floats_; }
  bool empty() const { return data_ == nullptr; }
  // The serialised form (header + panels).
  std::vector<uint8_t> Export() const;
  // True when the panels live in the caller's prepacked bytes (no copy made).
  bool borrowed() const { return data_ != nullptr && owned_.empty(); }

 private:
  std::vector<uint8_t> owned_;  // serialised form when we packed it ourselves
  const float* data_ = nullptr;
  int64_t group_floats_ = 0;
  std::span<const uint8_t> bytes_;
};

// Per-kernel GEMM plan: micro-kernel choice and the size of the per-thread
// packing buffers, fixed once (in the kernel factory). Threads split C into a
// tm x tn grid of tasks; when the rows are split (tm > 1) and B is packed per
// call, the threads first pack all of B together (each a share of its panels,
// full K) into one shared buffer and then run their tasks on it as on a
// pre-packed B, instead of each packing the same B (an im2col B of a 7x7 conv
// costs a fifth of the thread's FMA time). The buffers live in the
// caller's per-run scratch (Kernel::ScratchBytes / KernelIO::scratch), so that
// concurrent runs of one model never wait for each other and a model's GEMMs
// share one buffer (less memory, and it stays warm in cache).
class SgemmPlan {
 public:
  SgemmPlan() = default;
  // Buffers cover any call with m <= max_m, n <= max_n, k <= max_k, on up to
  // max_threads threads (extra pool threads are left idle).
  SgemmPlan(const GemmUkernel& uk, int64_t max_m, int64_t max_n, int64_t max_k, int max_threads);
  SgemmPlan(SgemmPlan&&) noexcept;
  SgemmPlan& operator=(SgemmPlan&&) noexcept;
  ~SgemmPlan();

  const GemmUkernel& ukernel() const { return *uk_; }
  // Scratch bytes Run needs (a multiple of 64).
  size_t ScratchBytes() const;
  // Runs one GEMM; args must be within the sizes given at construction.
  // `scratch`: ScratchBytes() bytes, 64-byte aligned, used by this call only.
  void Run(const SgemmArgs& args, ThreadPool* pool, void* scratch) const;
  // The same with buffers owned by the plan (allocated at first use);
  // concurrent calls on one plan are serialised. For tests and one-off calls.
  void Run(const SgemmArgs& args, ThreadPool* pool);

 private:
  void RunTask(const SgemmArgs& args, int64_t m0, int64_t m1, int64_t n0, int64_t n1, float* buffers) const;

  const GemmUkernel* uk_ = nullptr;
  int64_t kc_ = 0, mc_ = 0, nc_ = 0;
  int max_threads_ = 1;
  int64_t a_buf_ = 0, b_buf_ = 0;  // floats per thread
  int64_t a_edge_ = 0;             // offset in the A buffer of the two rebalanced edge panels
  int64_t shared_b_ = 0;           // floats of the B that M-split threads pack together (0: off)
  std::unique_ptr<float[], void (*)(float*)> buffers_{nullptr, nullptr};
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

// Convenience for tests and one-off calls (allocates a plan).
void Sgemm(const GemmUkernel& uk, const SgemmArgs& args, ThreadPool* pool);

// Applies the epilogue to the m x n tile at c (rows [row0, row0+m), columns
// [col0, col0+n) of the full C).
void ApplyEpilogue(const Epilogue& ep, float* c, int64_t ldc, int64_t row0, int64_t col0, int64_t m,
                   int64_t n);

}  // namespace oc::gemm

// 8-bit integer GEMM with exact int32 accumulation, the engine of MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv:
//   C(i, j) = sum_k (A(i, k) - za_i) * (B(k, j) - zb_j)
// where A and B are int8 or uint8 (independently) and the zero points are a
// scalar or one per row of A / column of B.
//
// One canonical form, u8 x s8: the micro-kernels multiply unsigned bytes of A
// by signed bytes of B, four k values at a time (the contract of AVX-512 VNNI
// vpdpbusd). Packing flips the top bit where needed: an int8 A value v becomes
// v + 128 as uint8 (and its zero point za + 128); a uint8 B value v becomes
// v - 128 as int8 (zero point zb - 128). The differences (A - za), (B - zb)
// are unchanged, so the result is exact. The zero points are applied after
// the product, with the row sums of A and column sums of B made while packing:
//   C = sum A'B' - za'_i * colsum_j(B') + zb'_j * (K * za'_i - rowsum_i(A'))
// (int32 arithmetic, wrapping like the reference's int32 matmul would).
//
// Packed layouts (for a micro-kernel with tile MR x NR; K padded with zeros to
// a multiple of the kernel's k_align (4, or 64 for AMX), Kp = PaddedK(uk, K);
// rows/columns past the matrix are zero):
//   A: panels of MR rows, panel stride MR*Kp bytes; within a panel, with
//      W = 4 (kGroup4 layout: one 32-bit broadcast per row) or W = 64
//      (kRow64 layout: AMX tile rows of 64 k values):
//        pa[((k / W)*MR + i)*W + k % W] = A'(i, k)            (uint8)
//   B: panels of NR columns, panel stride NR*Kp bytes:
//      pb[(g*NR + j)*4 + t] = B'(4g + t, j)                   (int8)
// A K-block starting at k0 (a multiple of k_align) of a panel starts at
// panel + k0*MR (or k0*NR) in both layouts.
//
// Driver blocking: threads split C into a grid of tasks; a task walks MC x NC
// tiles, each accumulated over KC-deep blocks in an int32 tile buffer (one B
// micro-panel KC x NR stays in L1), then corrected for the zero points and
// handed to the caller's epilogue (requantize, or copy out as int32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/cpu_features.h"
#include "base/thread_pool.h"

namespace oc::igemm {

// Micro-kernel contract: for i < m (<= MR), j < n (<= NR):
//   acc(i, j) = sum_{g < kgroups} sum_{t < 4} pa[(g*MR + i)*4 + t] * pb[(g*NR + j)*4 + t]
//   c[i*ldc + j] = acc(i, j) (+ c[i*ldc + j] when accumulate)
// pa: uint8, pb: int8, exact int32 sums. Pure, no allocation.
using UkernelFn = void (*)(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc,
                           int64_t m, int64_t n, bool accumulate);

enum class ALayout { kGroup4, kRow64 };

// Column sums of one packed B panel (NR columns, `kgroups` groups of four):
// sums[j] = sum of its int8 values. Optional per micro-kernel (vectorised);
// without one the packer sums the source rows.
using ColSumsFn = void (*)(const int8_t* panel, int64_t kgroups, int32_t* sums);

struct Ukernel {
  const char* name;  // u8s8_igemm_<MR>x<NR>_<isa>
  Isa isa;
  bool vnni;         // also needs AVX-512 VNNI
  bool amx;          // also needs AMX-INT8 (and the OS's permission for tile data)
  int mr, nr;
  int kc, mc, nc;    // cache blocking (kc a multiple of k_align, mc of mr, nc of nr)
  int k_align;       // K is padded to this (kgroups passed to fn is a multiple of k_align / 4)
  ALayout a_layout;
  UkernelFn fn;
  ColSumsFn col_sums;  // for NR-column panels, or nullptr
};

// Micro-kernels compiled into this build.
std::span<const Ukernel> AllUkernels();
// True when this CPU can run `uk`.
bool Supported(const Ukernel& uk);
// The best micro-kernel for SelectedIsa() (OPENCANN_ISA caps it) on this CPU.
const Ukernel& DefaultUkernel();
// The best one for an m x n x k product: AMX computes 32 rows and 64-deep
// steps whatever the shape, so thin or shallow products (GEMV-like matmuls,
// depthwise convolutions) take the best non-AMX kernel instead.
const Ukernel& UkernelFor(int64_t m, int64_t n, int64_t k);

inline int64_t PaddedK(const Ukernel& uk, int64_t k) { return (k + uk.k_align - 1) / uk.k_align * uk.k_align; }
inline int64_t PackedABytes(const Ukernel& uk, int64_t m, int64_t k) {
  return (m + uk.mr - 1) / uk.mr * uk.mr * PaddedK(uk, k);
}
inline int64_t PackedBBytes(const Ukernel& uk, int64_t n, int64_t k) {
  return (n + uk.nr - 1) / uk.nr * uk.nr * PaddedK(uk, k);
}
// Byte offset of A'(i, k) inside its packed panel (i < MR).
inline int64_t PackedAOffset(const Ukernel& uk, int64_t i, int64_t k) {
  const int64_t w = uk.a_layout == ALayout::kRow64 ? 64 : 4;
  return ((k / w) * uk.mr + i) * w + k % w;
}

// A row-major 8-bit matrix in memory.
struct Matrix {
  const void* data = nullptr;
  int64_t ld = 0;
  bool is_signed = false;  // int8 (else uint8)
};

// Packs rows [r0, r1) of A (row-major, K columns; r0 a multiple of MR) into
// the panels of the whole packed matrix at `dst` and their row sums (of the
// converted values) into row_sums[r0, r1). Rows past r1 in r1's panel are zero.
void PackA(const Ukernel& uk, const Matrix& a, int64_t k, int64_t r0, int64_t r1, uint8_t* dst,
           int32_t* row_sums);
// The same for columns [c0, c1) of B (row-major, K rows; c0 a multiple of NR).
void PackB(const Ukernel& uk, const Matrix& b, int64_t k, int64_t c0, int64_t c1, int8_t* dst,
           int32_t* col_sums);

// An operand packed once (constant weights), for one micro-kernel.
struct PackedOperand {
  std::vector<uint8_t> panels;
  std::vector<int32_t> sums;  // row sums (A) / column sums (B), converted values
  bool is_signed = false;     // signedness of the original values
  int64_t groups = 1;         // independent matrices, each packed alone
  int64_t group_bytes = 0;
  int64_t group_sums = 0;
  const uint8_t* group(int64_t g) const { return panels.data() + g * group_bytes; }
  const int32_t* group_sum(int64_t g) const { return sums.data() + g * group_sums; }
};
// `groups` matrices of dims x K (A) or K x dims (B), matrix g at data + g*group_stride elements.
PackedOperand PackConstA(const Ukernel& uk, const Matrix& a, int64_t m, int64_t k, int64_t groups = 1,
                         int64_t group_stride = 0);
PackedOperand PackConstB(const Ukernel& uk, const Matrix& b, int64_t k, int64_t n, int64_t groups = 1,
                         int64_t group_stride = 0);

// Zero points in the stored type's value range: `values` (one per row of A /
// column of B) when set, else `scalar`.
struct ZeroPoints {
  const int32_t* values = nullptr;
  int32_t scalar = 0;
};

// One side of the product: raw (packed per run) or pre-packed.
struct Operand {
  Matrix raw;
  const uint8_t* packed = nullptr;  // panels for the plan's micro-kernel, full K
  const int32_t* sums = nullptr;    // with `packed`
  bool is_signed = false;           // int8 values (else uint8); raw.is_signed is not read
  ZeroPoints zp;
};

// Receives the exact results of rows [m0, m0+m) x columns [n0, n0+n) of C in
// `tile` (leading dim ldt). Called concurrently on disjoint tiles.
using TileFn = void (*)(const void* ctx, int64_t m0, int64_t n0, int64_t m, int64_t n, const int32_t* tile,
                        int64_t ldt);

struct Args {
  int64_t m = 0, n = 0, k = 0;
  Operand a, b;
  TileFn epilogue = nullptr;  // null: C is written as int32 to c (ldc)
  const void* ctx = nullptr;
  int32_t* c = nullptr;
  int64_t ldc = 0;
};

// Fixed per kernel: micro-kernel and the per-run scratch layout.
class Plan {
 public:
  Plan() = default;
  // Covers calls with m <= max_m, n <= max_n, k <= max_k on up to max_threads
  // threads; pack_a / pack_b: whether A / B arrive raw (packed in scratch).
  Plan(const Ukernel& uk, int64_t max_m, int64_t max_n, int64_t max_k, bool pack_a, bool pack_b,
       int max_threads);
  const Ukernel& ukernel() const { return *uk_; }
  // Bytes of 64-byte aligned scratch Run needs (a multiple of 64).
  size_t ScratchBytes() const { return scratch_bytes_; }
  void Run(const Args& args, ThreadPool* pool, void* scratch) const;

 private:
  const Ukernel* uk_ = nullptr;
  int max_threads_ = 1;
  size_t a_bytes_ = 0, a_sums_ = 0, b_bytes_ = 0, b_sums_ = 0, tile_bytes_ = 0;
  size_t scratch_bytes_ = 0;
};

// Naive reference (tests, and shapes too small to pack).
void ReferenceGemm(const Args& args);

#if defined(__x86_64__) || defined(_M_X64)
// True when the CPU has AMX-INT8 and the OS granted this process tile data
// (Linux arch_prctl ARCH_REQ_XCOMP_PERM, requested on the first call), and
// OPENCANN_AMX is not 0.
bool AmxUsable();
void u8s8_igemm_32x32_amx(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc,
                          int64_t m, int64_t n, bool accumulate);
void u8s8_igemm_14x32_avx512vnni(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c,
                                 int64_t ldc, int64_t m, int64_t n, bool accumulate);
void s8_colsums_32_avx512vnni(const int8_t* panel, int64_t kgroups, int32_t* sums);
void u8s8_igemm_6x8_avx2(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc,
                         int64_t m, int64_t n, bool accumulate);
#endif
void u8s8_igemm_4x8_scalar(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc,
                           int64_t m, int64_t n, bool accumulate);

}  // namespace oc::igemm

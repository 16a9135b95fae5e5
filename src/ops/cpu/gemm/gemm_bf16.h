// Reduced-precision GEMM: the inputs are rounded to bfloat16 (round to
// nearest even), products are summed in float32, and the output is float32
// with the same epilogues as the fp32 library (gemm_kernel.h). Used by
// Conv/MatMul/Gemm and their fused forms when the compiler marked the node
// (mark-bf16 pass, --precision_mode=allow_fp32_to_bf16 and friends).
//
// The blocking mirrors the fp32 library (kernel -> block -> tile, one C grid
// task per thread), with one packed layout shared by every bf16 micro-kernel,
// so an .om packed on an AMX machine loads unchanged on an AVX512_BF16 one:
//   K is padded with zeros to a multiple of 32 (Kp).
//   A: panels of MR = 32 rows; per 32-deep k block, 32 rows of 32 values:
//      pa[(k/32)*MR*32 + i*32 + k%32] = A(i, k)  (an AMX A tile is 16 of those
//      rows: 64 bytes each, contiguous).
//   B: panels of NR = 32 columns in "VNNI" pairs:
//      pb[(k/2)*NR*2 + j*2 + k%2] = B(k, j)      (a row of 16 pairs is one
//      vdpbf16ps operand; 16 such rows of half a panel are one AMX B tile).
// A K block starting at pc (a multiple of 32) starts at pc*MR / pc*NR.
//
// Micro-kernels: AMX (TDPBF16PS; C as 2x2 tiles of 16x16 float) and
// AVX512_BF16 (vdpbf16ps, 8 rows x 32 columns per pass). Where the CPU has
// neither, DefaultBf16Ukernel() is null and callers keep the fp32 path.
// Environment: OPENCANN_AMX=0 hides the AMX micro-kernel;
// OPENCANN_BF16_BLOCKS=kc,mc,nc overrides the cache blocking (tuning).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "graph/graph.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {

// Node attribute set by the mark-bf16 pass on nodes whose products may run
// in bfloat16 (value "bf16"); kernels read it when they are created.
inline constexpr char kPrecisionAttr[] = "opencann_precision";
// True when `node` is marked for bf16 compute.
bool NodeWantsBf16(const Node& node);
// The --precision_mode / --precision_mode_v2 values meaning "matrix products
// (Conv, MatMul, Gemm) in bfloat16 with float32 accumulation, everything else
// float32".
bool IsBf16PrecisionMode(const std::string& mode);

inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float Bf16ToFloat(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline constexpr int kBf16MR = 32;
inline constexpr int kBf16NR = 32;
inline constexpr int kBf16KBlock = 32;

// acc[i*NR + j] = sum_{k < kcp} A(i, k) * B(k, j) over one A panel block and
// one B panel block (kcp a multiple of 32). Rows >= m may be left unwritten.
using Bf16UkernelFn = void (*)(int64_t kcp, const uint16_t* a, const uint16_t* b, float* acc, int64_t m);

struct Bf16Ukernel {
  const char* name;  // bf16_gemm_32x32_<isa>
  int kc, mc, nc;    // cache blocking (kc a multiple of 32)
  Bf16UkernelFn fn;
  bool amx;          // needs the tile configuration loaded on the calling thread
};

// Micro-kernels this CPU (and OS) can run, best first. OPENCANN_AMX=0 hides AMX.
std::vector<const Bf16Ukernel*> SupportedBf16Ukernels();
// The best of those, or nullptr when there is none (fall back to fp32).
const Bf16Ukernel* DefaultBf16Ukernel();
// The bf16 micro-kernel a kernel factory should use for `node`: null when the
// node is not marked, or when the CPU has no bf16 micro-kernel (then a note
// goes to stderr, once per process, and the node keeps float32).
const Bf16Ukernel* Bf16UkernelForNode(const Node& node);

inline int64_t Bf16PaddedK(int64_t k) { return (k + kBf16KBlock - 1) / kBf16KBlock * kBf16KBlock; }
// Elements (uint16) of a fully packed operand.
inline int64_t Bf16PackedASize(int64_t m, int64_t k) { return (m + kBf16MR - 1) / kBf16MR * kBf16MR * Bf16PaddedK(k); }
inline int64_t Bf16PackedBSize(int64_t n, int64_t k) { return (n + kBf16NR - 1) / kBf16NR * kBf16NR * Bf16PaddedK(k); }
// Full-K packing of op(A) (m x k) / op(B) (k x n) in the layouts above.
void Bf16PackA(const float* a, int64_t lda, bool trans_a, int64_t m, int64_t k, uint16_t* dst);
void Bf16PackB(const float* b, int64_t ldb, bool trans_b, int64_t n, int64_t k, uint16_t* dst);

// A pre-packed constant operand in bf16 (serialised: 64-byte header + panels),
// owned or borrowed from KernelInit::prepacked. `groups` independent matrices.
class Bf16PackedOperand {
 public:
  Bf16PackedOperand() = default;
  Bf16PackedOperand(Bf16PackedOperand&&) noexcept = default;
  Bf16PackedOperand& operator=(Bf16PackedOperand&&) noexcept = default;
  static Bf16PackedOperand Make(PackedSide side, const float* src, int64_t ld, bool trans, int64_t dim, int64_t k,
                                std::span<const uint8_t> prepacked, int64_t groups = 1, int64_t group_stride = 0);
  const uint16_t* data() const { return data_; }
  const uint16_t* group(int64_t g) const { return data_ + g * group_elems_; }
  bool empty() const { return data_ == nullptr; }
  bool borrowed() const { return data_ != nullptr && owned_.empty(); }
  std::vector<uint8_t> Export() const { return std::vector<uint8_t>(bytes_.begin(), bytes_.end()); }

 private:
  std::vector<uint8_t> owned_;
  const uint16_t* data_ = nullptr;
  int64_t group_elems_ = 0;
  std::span<const uint8_t> bytes_;
};

// Per-kernel plan, like SgemmPlan: scratch sized at creation, Run() allocates nothing.
class Bf16GemmPlan {
 public:
  Bf16GemmPlan() = default;
  Bf16GemmPlan(const Bf16Ukernel& uk, int64_t max_m, int64_t max_n, int64_t max_k, int max_threads);
  Bf16GemmPlan(Bf16GemmPlan&&) noexcept;
  Bf16GemmPlan& operator=(Bf16GemmPlan&&) noexcept;
  ~Bf16GemmPlan();

  bool valid() const { return uk_ != nullptr; }
  const Bf16Ukernel& ukernel() const { return *uk_; }
  size_t ScratchBytes() const;
  // `args` as for SgemmPlan (a/b fp32 with transposes, or pack_b for an
  // implicit B; args.packed_a/packed_b must be null); `packed_a` / `packed_b`
  // (bf16 panels, full K) replace args.a / args.b when non-null.
  void Run(const SgemmArgs& args, const uint16_t* packed_a, const uint16_t* packed_b, ThreadPool* pool,
           void* scratch) const;
  // With buffers owned by the plan (tests, one-off calls); serialised.
  void Run(const SgemmArgs& args, const uint16_t* packed_a, const uint16_t* packed_b, ThreadPool* pool);

 private:
  void RunTask(const SgemmArgs& g, const uint16_t* packed_a, const uint16_t* packed_b, int64_t m0, int64_t m1,
               int64_t n0, int64_t n1, uint8_t* buffers) const;

  const Bf16Ukernel* uk_ = nullptr;
  int64_t kc_ = 0, mc_ = 0, nc_ = 0;
  int max_threads_ = 1;
  size_t a_bytes_ = 0, b_bytes_ = 0, tmp_bytes_ = 0, slot_bytes_ = 0;  // per thread
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> buffers_{nullptr, nullptr};
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

// Internal pieces shared by the driver and the ISA file.
namespace bf16_detail {
// The ISA-specific packers (null where the CPU has no AVX-512): A rows ->
// one 32-row panel block of kc (zero-padded to kcp); B rows (non-transposed,
// `cols` columns, any number of panels of stride kcp*NR) -> VNNI panels.
using PackARowsFn = void (*)(const float* a, int64_t lda, int64_t rows, int64_t kc, uint16_t* dst);
using PackBRowsFn = void (*)(const float* b, int64_t ldb, int64_t cols, int64_t kc, int64_t kcp, uint16_t* dst);
// c = alpha * acc + beta * c (beta 0: C not read), then `ep` when non-null.
using StoreTileFn = void (*)(const float* acc, float* c, int64_t ldc, int64_t m, int64_t n, float alpha,
                             float beta, const TileEpilogue* ep);
struct IsaHooks {
  PackARowsFn pack_a = nullptr;
  PackBRowsFn pack_b = nullptr;
  StoreTileFn store = nullptr;
};
IsaHooks X86Hooks();  // empty when the CPU lacks AVX-512 (or not x86)
const Bf16Ukernel* AmxUkernel();         // null when unusable
const Bf16Ukernel* Avx512Bf16Ukernel();  // null when unusable
void ConfigureAmxTiles();
}  // namespace bf16_detail

}  // namespace oc::gemm

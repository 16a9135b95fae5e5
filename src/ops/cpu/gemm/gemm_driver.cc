// The sgemm driver: micro-kernel table, packing, cache blocking, threading and
// the epilogue. The blocking scheme is described in gemm_kernel.h.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::gemm {

#define OC_GEMM_UKERNEL(name, isa, mr, nr, kc, mc, nc, pack_a)                            \
  void name(int64_t kc_, const float* a, const float* b, float* c, int64_t ldc, int64_t m, \
            int64_t n, float alpha, float beta);
#include "ops/cpu/gemm/gemm_ukernels.inc"
#undef OC_GEMM_UKERNEL

namespace {
constexpr GemmUkernel kUkernels[] = {
#define OC_GEMM_UKERNEL(name, isa, mr, nr, kc, mc, nc, pack_a) \
  {#name, Isa::isa, mr, nr, kc, mc, nc, name, pack_a},
#include "ops/cpu/gemm/gemm_ukernels.inc"
#undef OC_GEMM_UKERNEL
};

inline int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Asks for rows x cols of C in L2 (for writing): each row's first and last line.
inline void PrefetchTileL2(const float* c, int64_t ldc, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    __builtin_prefetch(c + i * ldc, 1, 2);
    __builtin_prefetch(c + i * ldc + cols - 1, 1, 2);
  }
}
}  // namespace

std::span<const GemmUkernel> AllUkernels() { return kUkernels; }

bool IsaSupported(Isa isa) {
  const CpuFeatures& f = GetCpuFeatures();
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return f.avx2 && f.fma;
    case Isa::kAvx512: return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
    case Isa::kNeon: return f.neon;
  }
  return false;
}

const GemmUkernel* UkernelForIsa(Isa isa) {
  if (!IsaSupported(isa)) return nullptr;
  for (const GemmUkernel& uk : kUkernels)
    if (uk.isa == isa) return &uk;
  return nullptr;
}

const GemmUkernel& DefaultUkernel() {
  static const GemmUkernel* uk = [] {
    const GemmUkernel* best = UkernelForIsa(SelectedIsa());
    // Fall back along the ladder when the selected ISA has no micro-kernel.
    if (!best && SelectedIsa() == Isa::kAvx512) best = UkernelForIsa(Isa::kAvx2);
    if (!best) best = UkernelForIsa(Isa::kScalar);
    return best;
  }();
  return *uk;
}

GemmUkernelLdbFn DirectBUkernelFor(const GemmUkernel& uk) {
#if defined(__x86_64__) || defined(_M_X64)
  if (uk.fn == &f32_gemm_14x32_avx512) return &f32_gemm_ldb_14x32_avx512;
#endif
  return nullptr;
}

GemmUkernelFusedFn FusedUkernelFor(const GemmUkernel& uk) {
#if defined(__x86_64__) || defined(_M_X64)
  if (uk.fn == &f32_gemm_14x32_avx512) return &f32_gemm_epilogue_14x32_avx512;
#endif
  return nullptr;
}

bool EpilogueFusable(const Epilogue& ep) {
  switch (ep.act.kind) {
    case ActivationKind::kNone:
    case ActivationKind::kRelu:
    case ActivationKind::kLeakyRelu:
    case ActivationKind::kClip: return true;
    default: return false;
  }
}

// ---- Packing ------------------------------------------------------------------

void PackA(const GemmUkernel& uk, const float* a, int64_t lda, bool trans_a, int64_t m, int64_t k,
           float* dst) {
  const int mr = uk.mr;
  for (int64_t i0 = 0; i0 < m; i0 += mr, dst += k * mr) {
    const int64_t rows = std::min<int64_t>(mr, m - i0);
    if (trans_a) {
      // Stored K x M: each k gives `rows` contiguous values.
      for (int64_t p = 0; p < k; ++p) {
        const float* src = a + p * lda + i0;
        float* d = dst + p * mr;
        for (int64_t i = 0; i < rows; ++i) d[i] = src[i];
        for (int64_t i = rows; i < mr; ++i) d[i] = 0.f;
      }
    } else if (uk.pack_a) {
      uk.pack_a(a + i0 * lda, lda, rows, k, dst);
    } else {
      for (int64_t i = 0; i < rows; ++i) {
        const float* src = a + (i0 + i) * lda;
        for (int64_t p = 0; p < k; ++p) dst[p * mr + i] = src[p];
      }
      for (int64_t i = rows; i < mr; ++i)
        for (int64_t p = 0; p < k; ++p) dst[p * mr + i] = 0.f;
    }
  }
}

namespace {
// Full-width rows of non-transposed B: a fixed-size copy the compiler inlines
// (a memcpy call per 32..128-byte row costs more than the copy).
// Walks B row by row (sequential reads, which the prefetchers follow even when
// ldb is large) and scatters each row over the `panels` full panels.
template <int NR>
void PackBRows(const float* b, int64_t ldb, int64_t k, int64_t panels, float* dst) {
  for (int64_t p = 0; p < k; ++p) {
    const float* src = b + p * ldb;
    float* d = dst + p * NR;
    for (int64_t q = 0; q < panels; ++q) std::memcpy(d + q * k * NR, src + q * NR, sizeof(float) * NR);
  }
}
}  // namespace

void PackB(const GemmUkernel& uk, const float* b, int64_t ldb, bool trans_b, int64_t n, int64_t k,
           float* dst) {
  const int nr = uk.nr;
  int64_t j0 = 0;
  if (!trans_b && (nr == 32 || nr == 16 || nr == 8)) {
    const int64_t full = n / nr;
    if (nr == 32) PackBRows<32>(b, ldb, k, full, dst);
    else if (nr == 16) PackBRows<16>(b, ldb, k, full, dst);
    else PackBRows<8>(b, ldb, k, full, dst);
    j0 = full * nr;
    dst += full * k * nr;
  }
  for (; j0 < n; j0 += nr, dst += k * nr) {
    const int64_t cols = std::min<int64_t>(nr, n - j0);
    if (!trans_b) {
      for (int64_t p = 0; p < k; ++p) {
        const float* src = b + p * ldb + j0;
        float* d = dst + p * nr;
        if (cols == nr) {
          std::memcpy(d, src, sizeof(float) * nr);
        } else {
          for (int64_t j = 0; j < cols; ++j) d[j] = src[j];
          for (int64_t j = cols; j < nr; ++j) d[j] = 0.f;
        }
      }
    } else {
      for (int64_t j = 0; j < cols; ++j) {
        const float* src = b + (j0 + j) * ldb;
        for (int64_t p = 0; p < k; ++p) dst[p * nr + j] = src[p];
      }
      for (int64_t j = cols; j < nr; ++j)
        for (int64_t p = 0; p < k; ++p) dst[p * nr + j] = 0.f;
    }
  }
}

// ---- Pre-packed operands ------------------------------------------------------

namespace {
constexpr uint32_t kPackedMagic = 0x4B504347;  // "GCPK"
constexpr uint32_t kPackedVersion = 1;
constexpr size_t kHeaderBytes = 64;
struct PackedHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t side;
  int32_t isa;
  int32_t mr, nr;
  int64_t dim;  // M (side A) or N (side B) of one group
  int64_t k;
  int64_t groups;
  int64_t floats;
};
static_assert(sizeof(PackedHeader) <= kHeaderBytes);

int64_t GroupFloats(const GemmUkernel& uk, PackedSide side, int64_t dim, int64_t k) {
  return side == PackedSide::kA ? PackedASize(uk, dim, k) : PackedBSize(uk, dim, k);
}
}  // namespace

const float* ParsePacked(std::span<const uint8_t> bytes, const GemmUkernel& uk, PackedSide side,
                         int64_t dim, int64_t k, int64_t groups) {
  if (bytes.size() < kHeaderBytes) return nullptr;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) != 0) return nullptr;
  PackedHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  const int64_t want = GroupFloats(uk, side, dim, k) * groups;
  if (h.magic != kPackedMagic || h.version != kPackedVersion ||
      h.side != static_cast<uint32_t>(side) || h.isa != static_cast<int32_t>(uk.isa) ||
      h.mr != uk.mr || h.nr != uk.nr || h.dim != dim || h.k != k || h.groups != groups ||
      h.floats != want)
    return nullptr;
  if (bytes.size() != kHeaderBytes + static_cast<size_t>(want) * sizeof(float)) return nullptr;
  return reinterpret_cast<const float*>(bytes.data() + kHeaderBytes);
}

PackedOperand PackedOperand::Make(const GemmUkernel& uk, PackedSide side, const float* src,
                                  int64_t ld, bool trans, int64_t dim, int64_t k,
                                  std::span<const uint8_t> prepacked, int64_t groups,
                                  int64_t group_stride) {
  PackedOperand p;
  p.group_floats_ = GroupFloats(uk, side, dim, k);
  if (const float* d = ParsePacked(prepacked, uk, side, dim, k, groups)) {
    p.data_ = d;
    p.bytes_ = prepacked;
    return p;
  }
  if (!src) return p;
  const int64_t floats = p.group_floats_ * groups;
  p.owned_.assign(kHeaderBytes + static_cast<size_t>(floats) * sizeof(float), 0);
  float* panels = reinterpret_cast<float*>(p.owned_.data() + kHeaderBytes);
  for (int64_t g = 0; g < groups; ++g) {
    const float* s = src + g * group_stride;
    float* d = panels + g * p.group_floats_;
    if (side == PackedSide::kA) PackA(uk, s, ld, trans, dim, k, d);
    else PackB(uk, s, ld, trans, dim, k, d);
  }
  PackedHeader h{kPackedMagic, kPackedVersion, static_cast<uint32_t>(side),
                 static_cast<int32_t>(uk.isa), uk.mr, uk.nr, dim, k, groups, floats};
  std::memcpy(p.owned_.data(), &h, sizeof(h));
  p.data_ = panels;
  p.bytes_ = p.owned_;
  return p;
}

std::vector<uint8_t> PackedOperand::Export() const {
  return std::vector<uint8_t>(bytes_.begin(), bytes_.end());
}

Status UnpackPacked(std::span<const uint8_t> bytes, PackedSide side, int64_t dim, int64_t k, int64_t groups,
                    float* dst, int64_t ld, bool trans, int64_t group_stride) {
  if (bytes.size() < kHeaderBytes)
    return InvalidFile("packed operand has ", bytes.size(), " bytes, less than its ", kHeaderBytes,
                       "-byte header");
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) != 0)
    return InvalidFile("packed operand is not 4-byte aligned");
  PackedHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (h.magic != kPackedMagic || h.version != kPackedVersion)
    return InvalidFile("packed operand header has magic 0x", std::hex, h.magic, std::dec, " version ", h.version,
                       ", expected GEMM panels (magic 0x", std::hex, kPackedMagic, std::dec, " version ",
                       kPackedVersion, ")");
  if (h.side != static_cast<uint32_t>(side) || h.dim != dim || h.k != k || h.groups != groups)
    return InvalidFile("packed operand is side ", h.side, " [", h.dim, " x ", h.k, "] x ", h.groups,
                       " groups, expected side ", static_cast<uint32_t>(side), " [", dim, " x ", k, "] x ",
                       groups);
  const int64_t width = side == PackedSide::kA ? h.mr : h.nr;
  if (h.mr < 1 || h.nr < 1 || h.mr > 1024 || h.nr > 1024)
    return InvalidFile("packed operand has a micro-tile of ", h.mr, " x ", h.nr);
  const int64_t group_floats = (dim + width - 1) / width * width * k;
  if (h.floats != group_floats * groups ||
      bytes.size() != kHeaderBytes + static_cast<size_t>(h.floats) * sizeof(float))
    return InvalidFile("packed operand holds ", bytes.size() - kHeaderBytes, " bytes of panels (header: ",
                       h.floats, " floats), ", group_floats * groups, " floats expected for panels of ", width);
  const float* panels = reinterpret_cast<const float*>(bytes.data() + kHeaderBytes);
  for (int64_t g = 0; g < groups; ++g) {
    const float* src = panels + g * group_floats;
    float* out = dst + g * group_stride;
    for (int64_t q0 = 0; q0 < dim; q0 += width, src += width * k) {
      const int64_t w = std::min(width, dim - q0);
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t r = 0; r < w; ++r) {
          // Element (q0 + r) of dim at depth p: A(i, p) for side A, B(p, j) for side B.
          const int64_t d = q0 + r;
          const bool row_major_dim = side == PackedSide::kA ? !trans : trans;
          out[row_major_dim ? d * ld + p : p * ld + d] = src[p * width + r];
        }
      }
    }
  }
  return Status::Ok();
}

Expected<const float*> RawOrUnpacked(const float* raw, std::span<const uint8_t> prepacked,
                                     const GemmUkernel* uk, bool use_panels_as_is, PackedSide side,
                                     int64_t dim, int64_t k, int64_t groups, int64_t ld, bool trans,
                                     int64_t group_stride, int64_t elements, std::vector<float>& storage) {
  if (raw) return raw;
  if (use_panels_as_is && uk && ParsePacked(prepacked, *uk, side, dim, k, groups)) return nullptr;
  const bool row_major_dim = side == PackedSide::kA ? !trans : trans;
  const int64_t last = (groups - 1) * group_stride + (row_major_dim ? (dim - 1) * ld + k - 1 : (k - 1) * ld + dim - 1);
  if (dim < 1 || k < 1 || groups < 1 || last >= elements)
    return InvalidArgument("operand of ", elements, " values cannot hold ", groups, " groups of [", dim, " x ", k,
                           "] with leading dim ", ld);
  storage.assign(static_cast<size_t>(elements), 0.f);
  OC_RETURN_IF_ERROR(UnpackPacked(prepacked, side, dim, k, groups, storage.data(), ld, trans, group_stride));
  return static_cast<const float*>(storage.data());
}

// ---- Epilogue -----------------------------------------------------------------

void ApplyEpilogue(const Epilogue& ep, float* c, int64_t ldc, int64_t row0, int64_t col0, int64_t m,
                   int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (ep.bias_kind == Epilogue::Bias::kPerRow) {
      const float bv = ep.bias[row0 + i];
      for (int64_t j = 0; j < n; ++j) ci[j] += bv;
    } else if (ep.bias_kind == Epilogue::Bias::kPerCol) {
      const float* bv = ep.bias + col0;
      for (int64_t j = 0; j < n; ++j) ci[j] += bv[j];
    }
    if (ep.residual) {
      const float* r = ep.residual + (row0 + i) * ep.ldr + col0;
      for (int64_t j = 0; j < n; ++j) ci[j] += r[j];
    }
    if (ep.act.kind != ActivationKind::kNone) ApplyActivation(ep.act, ci, n);
  }
}

// ---- Plan ---------------------------------------------------------------------

namespace {
void FreeFloats(float* p) { ::operator delete[](p, std::align_val_t(64)); }
// Reading B in place (RunTask) instead of packing it: for at most this many
// rows of a task and K <= kDirectBMaxK. Measured (1 thread, CPU time):
// MobileNetV2 16x12544x32 87 -> 110 GFLOP/s, 32x12544x16 116 -> 130; but
// with a long K each B row of a micro-panel sits on its own page (ldb = H*W)
// and the TLB misses cost more than packing saved: 64x3136x256 155 -> 129,
// 128x784x512 185 -> 158. OPENCANN_GEMM_DIRECT_B_ROWS overrides the rows
// (0 = never), for measurements.
const int64_t kDirectBMaxRows = [] {
  const char* e = std::getenv("OPENCANN_GEMM_DIRECT_B_ROWS");
  return e ? std::atoll(e) : int64_t{32};
}();
constexpr int64_t kDirectBMaxK = 64;

// Largest shared B: 3 MiB (a 7x7 conv's im2col B, K = 4608 x 64 columns, is
// 1.2 MiB; 256x196x2304 2 MiB gained 5% CPU time at 2 threads). A 4 MiB B
// (1024^3) lost 7%: its full-K panels no longer stay in the L2s, while the
// per-thread KC x NC blocks do.
constexpr int64_t kSharedBMaxFloats = int64_t{3} << 18;
}  // namespace

// A B micro-panel of KC rows that does not fit in L1 (AVX-512: KC 512 x NR
// 32): row blocks of up to 2 * MC rows then run at KC / 2 (RunTask). The
// plan's buffers are sized by the same test.
bool HalfKcRowBlocks(const GemmUkernel& uk) {
  return int64_t{uk.kc} * uk.nr * int64_t{sizeof(float)} > (int64_t{32} << 10);
}

SgemmPlan::SgemmPlan(const GemmUkernel& uk, int64_t max_m, int64_t max_n, int64_t max_k,
                     int max_threads)
    : uk_(&uk), max_threads_(std::max(1, max_threads)) {
  kc_ = uk.kc;
  mc_ = RoundUp(uk.mc, uk.mr);
  nc_ = RoundUp(uk.nc, uk.nr);
  const bool half = HalfKcRowBlocks(uk);
  // A plan of at most 2 * MC rows never packs more than KC / 2 of K at once.
  const int64_t kc = std::max<int64_t>(1, std::min(half && max_m <= 2 * mc_ ? kc_ / 2 : kc_, max_k));
  // Up to 2 * MC rows run as one row block at KC / 2 (RunTask): the same size.
  a_buf_ = RoundUp(std::min(mc_, RoundUp(std::max<int64_t>(max_m, 1), uk.mr)), uk.mr) * kc;
  if (max_m > mc_ && half)
    a_buf_ = std::max(a_buf_, RoundUp(std::min(2 * mc_, max_m), uk.mr) * std::min(std::max<int64_t>(1, kc_ / 2), kc));
  // One row tile: its A panel over all K (RunTask's single K block).
  if (max_m <= uk.mr) a_buf_ = uk.mr * std::max<int64_t>(max_k, 1);
  // Room for the two re-split edge panels (RunTask), after the A block.
  a_edge_ = RoundUp(a_buf_, 16);
  if (max_m > uk.mr) a_buf_ = a_edge_ + 2 * uk.mr * kc;
  b_buf_ = RoundUp(std::min(nc_, RoundUp(std::max<int64_t>(max_n, 1), uk.nr)), uk.nr) * kc;
  // Keep each thread's buffers on their own cache lines.
  a_buf_ = RoundUp(a_buf_, 16);
  b_buf_ = RoundUp(b_buf_, 16);
  // A B shared by threads that split the rows, while it stays cache-sized.
  const int64_t whole_b = RoundUp(std::max<int64_t>(max_n, 1), uk.nr) * std::max<int64_t>(max_k, 1);
  // A multiple of 16 floats per thread, so that ScratchBytes() / max_threads
  // stays 64-byte aligned (conv hands each thread that share of the scratch).
  // Only where the rows can be split (more than one MR panel).
  if (max_threads_ > 1 && RoundUp(std::max<int64_t>(max_m, 1), uk.mr) > uk.mr && whole_b <= kSharedBMaxFloats)
    shared_b_ = RoundUp(whole_b, 16 * max_threads_);
}

size_t SgemmPlan::ScratchBytes() const {
  return static_cast<size_t>((a_buf_ + b_buf_) * max_threads_ + shared_b_) * sizeof(float);
}

SgemmPlan::SgemmPlan(SgemmPlan&&) noexcept = default;
SgemmPlan& SgemmPlan::operator=(SgemmPlan&&) noexcept = default;
SgemmPlan::~SgemmPlan() = default;

void SgemmPlan::RunTask(const SgemmArgs& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
                        float* buffers) const {
  const GemmUkernel& uk = *uk_;
  const int mr = uk.mr, nr = uk.nr;
  float* abuf = buffers;
  float* bbuf = abuf + a_buf_;
  const int64_t K = g.k;
  const Epilogue& ep = g.epilogue;
  const bool do_epilogue = !ep.empty();
  // The fused-epilogue variant of the micro-kernel (where the ISA has one)
  // runs every tile: it applies the epilogue in registers before the one
  // store of the last K block's tile (else a second pass over the L1-hot
  // tile does), and takes TileEpilogue::b_next, the B to prefetch.
  const GemmUkernelFusedFn fused = FusedUkernelFor(uk);
  const bool fuse_ep = fused && do_epilogue && EpilogueFusable(ep);
  // Few rows: packing B would cost a large share of the FMA work (1 copy per
  // m1 - m0 FMAs per element), so the micro-kernel reads B where it is.
  const GemmUkernelLdbFn direct_b = !g.packed_b && !g.pack_b && !g.trans_b && m1 - m0 <= kDirectBMaxRows &&
                                            g.k <= kDirectBMaxK
                                        ? DirectBUkernelFor(uk)
                                        : nullptr;
  // The epilogue of the tile at (row0, col0) when it goes into the kernel.
  auto tile_epilogue = [&](bool last, int64_t row0, int64_t col0) {
    TileEpilogue te;
    if (!last || !fuse_ep) return te;
    if (ep.bias_kind == Epilogue::Bias::kPerRow) te.row_bias = ep.bias + row0;
    else if (ep.bias_kind == Epilogue::Bias::kPerCol) te.col_bias = ep.bias + col0;
    if (ep.residual) te.residual = ep.residual + row0 * ep.ldr + col0, te.ldr = ep.ldr;
    te.act = ep.act.kind, te.act_alpha = ep.act.alpha, te.act_beta = ep.act.beta;
    return te;
  };
  // One row tile and a pre-packed B (decode steps, classifiers at a small
  // batch): memory-bound, the weights usually coming from memory. Each B
  // panel is contiguous over all K, so a single K block streams it front to
  // back (long sequential runs for the prefetchers) instead of jumping to the
  // next panel every KC rows; and the kernel asks for the next panel into L2
  // meanwhile (two streams in flight; see b_next below). Measured at 1 thread
  // with cold weights (gemm_bench pack:5): 1 x 1000 x 1280 4.2 -> 5.7
  // GFLOP/s, 8 x 1000 x 1280 31 -> 40, 1 x 2304 x 768 4.5 -> 5.4.
  // Where a B micro-panel of KC rows does not fit in L1 (AVX-512: KC 512),
  // up to 2 * MC rows run as one row block with half the KC (the same A
  // block size), so that each B micro-panel stays in L1 for all the block's
  // tiles. With MC = 84 and KC = 512, M = 128 (BERT, GPT-2 at sequence 128)
  // would otherwise read every B micro-panel again for a second block of 44
  // rows (BERT-base, 1 thread: 4% slower), and one 128-row block at KC 512
  // re-reads a B micro-panel that does not fit in L1 from L2 for every tile.
  const bool one_block = HalfKcRowBlocks(*uk_) && m1 - m0 <= 2 * mc_;
  const int64_t mc_step = one_block ? m1 - m0 : mc_;
  const int64_t kc_step = g.packed_b && m1 - m0 <= mr && K * mr <= a_buf_ ? K
                          : one_block                                    ? std::max<int64_t>(1, kc_ / 2)
                                                                         : kc_;
  for (int64_t jc = n0; jc < n1; jc += nc_) {
    const int64_t nc = std::min(nc_, n1 - jc);
    for (int64_t pc = 0; pc < K; pc += kc_step) {
      const int64_t kc = std::min(kc_step, K - pc);
      const float* bblock;
      int64_t b_panel_stride;
      if (g.packed_b) {
        bblock = g.packed_b + (jc / nr) * K * nr + pc * nr;
        b_panel_stride = K * nr;
      } else if (g.pack_b) {
        g.pack_b(g.pack_b_ctx, uk, pc, kc, jc, nc, bbuf);
        bblock = bbuf;
        b_panel_stride = kc * nr;
      } else if (direct_b) {
        bblock = g.b + pc * g.ldb + jc;  // tile jr starts jr columns further
        b_panel_stride = 0;
      } else {
        const float* src = g.trans_b ? g.b + jc * g.ldb + pc : g.b + pc * g.ldb + jc;
        PackB(uk, src, g.ldb, g.trans_b, nc, kc, bbuf);
        bblock = bbuf;
        b_panel_stride = kc * nr;
      }
      const float beta = pc == 0 ? g.beta : 1.f;
      const bool last = pc + kc >= K;
      for (int64_t ic = m0; ic < m1; ic += mc_step) {
        const int64_t mc = std::min(mc_step, m1 - ic);
        const int64_t panels = (mc + mr - 1) / mr, rem = mc % mr;
        const float* ablock;
        int64_t a_panel_stride;
        if (g.packed_a) {
          ablock = g.packed_a + (ic / mr) * K * mr + pc * mr;
          a_panel_stride = K * mr;
        } else {
          const float* src = g.trans_a ? g.a + pc * g.lda + ic : g.a + ic * g.lda + pc;
          PackA(uk, src, g.lda, g.trans_a, mc, kc, abuf);
          ablock = abuf;
          a_panel_stride = kc * mr;
        }
        // A few rows past the last full panel (M = 128 = 9*14 + 2) make a
        // tile that costs over half a full one (its few accumulator chains
        // wait on FMA latency, and its B comes back from L2): the last full
        // panel and those rows are re-split into two tiles of nearly equal
        // rows (8 + 8), copied into two panels of the same layout.
        const bool resplit = panels >= 2 && rem > 0 && rem <= mr / 2;
        const int64_t split_rows = (mr + rem + 1) / 2;  // rows of the first of the two
        float* const edge = abuf + a_edge_;
        if (resplit) {
          const float* p0 = ablock + (panels - 2) * a_panel_stride;
          const float* p1 = ablock + (panels - 1) * a_panel_stride;
          for (int64_t p = 0; p < kc; ++p) {
            const float* s0 = p0 + p * mr;
            const float* s1 = p1 + p * mr;
            float* d0 = edge + p * mr;
            float* d1 = edge + (kc + p) * mr;
            for (int64_t i = 0; i < split_rows; ++i) d0[i] = s0[i];
            for (int64_t i = split_rows; i < mr; ++i) d1[i - split_rows] = s0[i];
            for (int64_t i = 0; i < rem; ++i) d1[mr - split_rows + i] = s1[i];
          }
        }
        // Tile t of the block: first row, rows, packed A.
        struct RowTile {
          int64_t row, rows;
          const float* a;
        };
        auto row_tile = [&](int64_t t) -> RowTile {
          if (resplit && t == panels - 2) return {t * mr, split_rows, edge};
          if (resplit && t == panels - 1) return {t * mr - mr + split_rows, mr + rem - split_rows, edge + kc * mr};
          return {t * mr, std::min<int64_t>(mr, mc - t * mr), ablock + t * a_panel_stride};
        };
        for (int64_t jr = 0; jr < nc; jr += nr) {
          const int64_t n = std::min<int64_t>(nr, nc - jr);
          const float* bp = direct_b ? bblock + jr : bblock + (jr / nr) * b_panel_stride;
          // The B micro-panel this task uses after bp, while the first row
          // block streams the B block (later row blocks find it in L2): the
          // next one in this block, else (pre-packed B only, later blocks are
          // not packed yet) the first of the next K block or column block.
          // Row tiles after the first share its prefetch (the first streams
          // bp). Measured at 1 thread: 128 x 768 x 768 cold B 0.99 -> 0.91 ms;
          // prefetching in every row block cost 1024 x 768 x 768 3-5%.
          const float* b_after = nullptr;
          if (!direct_b && mc > mr && ic == m0) {
            if (jr + nr < nc) b_after = bp + b_panel_stride;
            else if (g.packed_b && ic + mc >= m1 && pc + kc < K) b_after = g.packed_b + (jc / nr) * K * nr + (pc + kc) * nr;
            else if (g.packed_b && ic + mc >= m1 && jc + nc < n1) b_after = g.packed_b + ((jc + nc) / nr) * K * nr;
          }
          for (int64_t t = 0; t < panels; ++t) {
            const RowTile tile = row_tile(t);
            const int64_t ir = tile.row, m = tile.rows;
            const int64_t row0 = ic + ir, col0 = jc + jr;
            float* c = g.c + row0 * g.ldc + col0;
            // The next tile's C into L2 one micro-kernel call ahead (its
            // latency from L3 or memory is far longer than the kernel's final
            // steps, where the kernel pulls its own tile into L1).
            if (t + 1 < panels) {
              const RowTile next = row_tile(t + 1);
              PrefetchTileL2(c + (next.row - ir) * g.ldc, g.ldc, next.rows, n);
            } else if (jr + nr < nc) {
              PrefetchTileL2(g.c + ic * g.ldc + col0 + nr, g.ldc, row_tile(0).rows,
                             std::min<int64_t>(nr, nc - jr - nr));
            }
            const float* ap = tile.a;
            TileEpilogue te = tile_epilogue(last, row0, col0);
            if (direct_b) {
              direct_b(kc, ap, bp, g.ldb, c, g.ldc, m, n, g.alpha, beta, te);
            } else if (fused) {
              if (b_after && t > 0) {
                const int64_t lines = kc * nr / 16, tiles = panels - 1;
                const int64_t chunk = (lines + tiles - 1) / tiles, first = (t - 1) * chunk;
                te.b_next = b_after + first * 16;
                te.b_next_lines = std::max<int64_t>(0, std::min(chunk, lines - first));
              } else if (panels == 1 && g.packed_b && kc == K && jr + nr < nc) {
                // One row tile over all K (kc_step): the first half of the
                // next panel (one line per k step; the whole panel measured
                // slower with cold weights).
                te.b_next = bp + b_panel_stride;
                te.b_next_lines = kc;
              }
              fused(kc, ap, bp, c, g.ldc, m, n, g.alpha, beta, te);
            } else {
              uk.fn(kc, ap, bp, c, g.ldc, m, n, g.alpha, beta);
            }
            if (last && do_epilogue && !fuse_ep) ApplyEpilogue(ep, c, g.ldc, row0, col0, m, n);
          }
        }
      }
    }
  }
}

void SgemmPlan::Run(const SgemmArgs& args, ThreadPool* pool) {
  std::lock_guard<std::mutex> lock(*mu_);
  if (!buffers_) {
    buffers_ = {static_cast<float*>(::operator new[](std::max<size_t>(ScratchBytes(), 64), std::align_val_t(64))),
                FreeFloats};
  }
  Run(args, pool, buffers_.get());
}

void SgemmPlan::Run(const SgemmArgs& args_in, ThreadPool* pool, void* scratch) const {
  SgemmArgs g = args_in;
  if (g.m <= 0 || g.n <= 0) return;
  float* const buffers = static_cast<float*>(scratch);
  // A residual that is C itself folds into beta, so the first K block cannot
  // overwrite it before it is read.
  if (g.epilogue.residual == g.c && g.c) {
    g.beta += 1.f;
    g.epilogue.residual = nullptr;
  }
  if (g.k <= 0) {
    for (int64_t i = 0; i < g.m; ++i) {
      float* ci = g.c + i * g.ldc;
      for (int64_t j = 0; j < g.n; ++j) ci[j] = g.beta == 0.f ? 0.f : g.beta * ci[j];
    }
    if (!g.epilogue.empty()) ApplyEpilogue(g.epilogue, g.c, g.ldc, 0, 0, g.m, g.n);
    return;
  }
  const int mr = uk_->mr, nr = uk_->nr;
  const int64_t mblocks = (g.m + mr - 1) / mr, nblocks = (g.n + nr - 1) / nr;
  // Enough work per task to pay for waking a thread (~ 1 MFLOP).
  const double flops = 2.0 * g.m * g.n * g.k;
  int64_t threads = std::min<int64_t>(pool ? pool->num_threads() : 1, max_threads_);
  threads = std::min<int64_t>(threads, std::max<int64_t>(1, static_cast<int64_t>(flops / 1e6)));
  threads = std::min(threads, mblocks * nblocks);
  // Grid tm x tn <= threads minimising the largest task, then its perimeter.
  int64_t tm = 1, tn = 1;
  double best = -1;
  for (int64_t a = 1; a <= threads; ++a) {
    const int64_t b = threads / a;
    if (a > mblocks || b > nblocks) continue;
    const double rows = static_cast<double>((mblocks + a - 1) / a) * mr;
    const double cols = static_cast<double>((nblocks + b - 1) / b) * nr;
    const double cost = rows * cols * 4 + (rows + cols) * 1e-3;
    if (best < 0 || cost < best) best = cost, tm = a, tn = b;
  }
  const int64_t tasks = tm * tn;
  if (tasks > 1 && pool && tm > 1 && !g.packed_b && nblocks * nr * g.k <= shared_b_) {
    // Rows split: pack B once, together, into full-K panels (the pre-packed
    // layout), then every task reads it as a pre-packed B.
    float* shared = buffers + max_threads_ * (a_buf_ + b_buf_);
    const GemmUkernel& uk = *uk_;
    pool->ParallelFor(nblocks, 1, [&](int64_t p0, int64_t p1) {
      const int64_t j0 = p0 * nr, cols = std::min(g.n, p1 * nr) - j0;
      float* dst = shared + p0 * g.k * nr;
      if (g.pack_b) g.pack_b(g.pack_b_ctx, uk, 0, g.k, j0, cols, dst);
      else PackB(uk, g.trans_b ? g.b + j0 * g.ldb : g.b + j0, g.ldb, g.trans_b, cols, g.k, dst);
    });
    g.packed_b = shared;
    g.pack_b = nullptr;
    g.b = nullptr;
  }
  auto task = [&](int64_t t) {
    const int64_t ti = t / tn, tj = t % tn;
    const int64_t m0 = mblocks * ti / tm * mr, m1 = std::min(g.m, mblocks * (ti + 1) / tm * mr);
    const int64_t n0 = nblocks * tj / tn * nr, n1 = std::min(g.n, nblocks * (tj + 1) / tn * nr);
    if (m0 < m1 && n0 < n1) RunTask(g, m0, m1, n0, n1, buffers + t * (a_buf_ + b_buf_));
  };
  if (tasks == 1 || !pool) {
    task(0);
    return;
  }
  // One index per task and tasks <= pool threads, so each chunk is one task and
  // the task index names its packing buffers.
  pool->ParallelFor(tasks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) task(t);
  });
}

void Sgemm(const GemmUkernel& uk, const SgemmArgs& args, ThreadPool* pool) {
  SgemmPlan plan(uk, args.m, args.n, args.k, pool ? pool->num_threads() : 1);
  plan.Run(args, pool);
}

}  // namespace oc::gemm

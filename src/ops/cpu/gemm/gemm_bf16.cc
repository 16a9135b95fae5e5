// The bf16 GEMM driver: micro-kernel choice, packing (float32 -> bfloat16 in
// the layouts of gemm_bf16.h), cache blocking, threading and the epilogue.
// The loop nest and the thread grid are those of the fp32 driver
// (gemm_driver.cc); the AVX-512 packers and the tile store live in
// gemm_bf16_x86.cc.
#include "ops/cpu/gemm/gemm_bf16.h"

#include <algorithm>
#include <cstdio>
#include <new>

namespace oc::gemm {

namespace {
constexpr int MR = kBf16MR, NR = kBf16NR;
inline int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
}  // namespace

bool NodeWantsBf16(const Node& node) { return node.GetString(kPrecisionAttr, "") == "bf16"; }

const Bf16Ukernel* Bf16UkernelForNode(const Node& node) {
  if (!NodeWantsBf16(node)) return nullptr;
  const Bf16Ukernel* uk = DefaultBf16Ukernel();
  if (!uk) {
    static std::once_flag note;
    std::call_once(note, [] {
      std::fprintf(stderr,
                   "[opencann] note: the model asks for bf16 matrix products, but this CPU has neither AMX-BF16 nor "
                   "AVX512_BF16; they run in float32\n");
    });
  }
  return uk;
}

bool IsBf16PrecisionMode(const std::string& mode) {
  return mode == "allow_fp32_to_bf16" || mode == "allow_mix_precision_bf16" || mode == "mixed_bfloat16";
}

std::vector<const Bf16Ukernel*> SupportedBf16Ukernels() {
  std::vector<const Bf16Ukernel*> out;
  if (const Bf16Ukernel* uk = bf16_detail::AmxUkernel()) out.push_back(uk);
  if (const Bf16Ukernel* uk = bf16_detail::Avx512Bf16Ukernel()) out.push_back(uk);
  return out;
}

const Bf16Ukernel* DefaultBf16Ukernel() {
  static const Bf16Ukernel* uk = [] {
    auto all = SupportedBf16Ukernels();
    return all.empty() ? nullptr : all.front();
  }();
  return uk;
}

// ---- Packing (portable forms; the AVX-512 ones are used where they apply) ----

namespace {
const bf16_detail::IsaHooks& Hooks() {
  static const bf16_detail::IsaHooks h = bf16_detail::X86Hooks();
  return h;
}

// One A panel block: rows [0, rows) of op(A) restricted to kc columns
// starting at the pointer, zero-padded to MR rows and kcp.
void PackAPanelScalar(const float* a, int64_t lda, bool trans, int64_t rows, int64_t kc, uint16_t* dst) {
  const int64_t kcp = Bf16PaddedK(kc);
  for (int64_t k0 = 0; k0 < kcp; k0 += 32) {
    uint16_t* blk = dst + k0 * MR;
    for (int64_t i = 0; i < MR; ++i)
      for (int64_t kk = 0; kk < 32; ++kk) {
        const int64_t k = k0 + kk;
        float v = 0.f;
        if (i < rows && k < kc) v = trans ? a[k * lda + i] : a[i * lda + k];
        blk[i * 32 + kk] = FloatToBf16(v);
      }
  }
}

// B panels for `cols` columns of op(B) (any number of panels, stride kcp*NR).
void PackBPanelsScalar(const float* b, int64_t ldb, bool trans, int64_t cols, int64_t kc, int64_t kcp,
                       uint16_t* dst) {
  for (int64_t j0 = 0; j0 < cols; j0 += NR) {
    uint16_t* panel = dst + (j0 / NR) * kcp * NR;
    for (int64_t k = 0; k < kcp; ++k)
      for (int64_t j = 0; j < NR; ++j) {
        float v = 0.f;
        if (k < kc && j0 + j < cols) v = trans ? b[(j0 + j) * ldb + k] : b[k * ldb + j0 + j];
        panel[(k / 2) * NR * 2 + j * 2 + (k & 1)] = FloatToBf16(v);
      }
  }
}

void PackAPanel(const float* a, int64_t lda, bool trans, int64_t rows, int64_t kc, uint16_t* dst) {
  if (!trans && Hooks().pack_a) Hooks().pack_a(a, lda, rows, kc, dst);
  else PackAPanelScalar(a, lda, trans, rows, kc, dst);
}

void PackBPanels(const float* b, int64_t ldb, bool trans, int64_t cols, int64_t kc, int64_t kcp, uint16_t* dst) {
  if (!trans && Hooks().pack_b) Hooks().pack_b(b, ldb, cols, kc, kcp, dst);
  else PackBPanelsScalar(b, ldb, trans, cols, kc, kcp, dst);
}

void StoreTileScalar(const float* acc, float* c, int64_t ldc, int64_t m, int64_t n, float alpha, float beta,
                     const TileEpilogue* ep) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float v = alpha * acc[i * NR + j];
      if (beta != 0.f) v += beta * c[i * ldc + j];
      if (ep) {
        if (ep->row_bias) v += ep->row_bias[i];
        if (ep->col_bias) v += ep->col_bias[j];
        if (ep->residual) v += ep->residual[i * ep->ldr + j];
        if (ep->act == ActivationKind::kRelu) v = v < 0.f ? 0.f : v;
        else if (ep->act == ActivationKind::kLeakyRelu) v = v < 0.f ? v * ep->act_alpha : v;
        else if (ep->act == ActivationKind::kClip) v = std::min(std::max(v, ep->act_alpha), ep->act_beta);
      }
      c[i * ldc + j] = v;
    }
}
}  // namespace

void Bf16PackA(const float* a, int64_t lda, bool trans_a, int64_t m, int64_t k, uint16_t* dst) {
  const int64_t kp = Bf16PaddedK(k);
  for (int64_t i0 = 0; i0 < m; i0 += MR, dst += kp * MR)
    PackAPanel(trans_a ? a + i0 : a + i0 * lda, lda, trans_a, std::min<int64_t>(MR, m - i0), k, dst);
}

void Bf16PackB(const float* b, int64_t ldb, bool trans_b, int64_t n, int64_t k, uint16_t* dst) {
  PackBPanels(b, ldb, trans_b, n, k, Bf16PaddedK(k), dst);
}

// ---- Pre-packed operands ------------------------------------------------------

namespace {
constexpr uint32_t kMagic = 0x46424347;  // "GCBF"
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 64;
struct Header {
  uint32_t magic, version, side;
  int32_t mr, nr, kblock;
  int64_t dim, k, groups, elems;
};
static_assert(sizeof(Header) <= kHeaderBytes);

int64_t GroupElems(PackedSide side, int64_t dim, int64_t k) {
  return side == PackedSide::kA ? Bf16PackedASize(dim, k) : Bf16PackedBSize(dim, k);
}
}  // namespace

Bf16PackedOperand Bf16PackedOperand::Make(PackedSide side, const float* src, int64_t ld, bool trans, int64_t dim,
                                          int64_t k, std::span<const uint8_t> prepacked, int64_t groups,
                                          int64_t group_stride) {
  Bf16PackedOperand p;
  p.group_elems_ = GroupElems(side, dim, k);
  const int64_t elems = p.group_elems_ * groups;
  if (prepacked.size() == kHeaderBytes + static_cast<size_t>(elems) * 2 &&
      reinterpret_cast<uintptr_t>(prepacked.data()) % alignof(uint16_t) == 0) {
    Header h;
    std::memcpy(&h, prepacked.data(), sizeof h);
    if (h.magic == kMagic && h.version == kVersion && h.side == static_cast<uint32_t>(side) && h.mr == MR &&
        h.nr == NR && h.kblock == kBf16KBlock && h.dim == dim && h.k == k && h.groups == groups &&
        h.elems == elems) {
      p.data_ = reinterpret_cast<const uint16_t*>(prepacked.data() + kHeaderBytes);
      p.bytes_ = prepacked;
      return p;
    }
  }
  if (!src) return p;
  p.owned_.assign(kHeaderBytes + static_cast<size_t>(elems) * 2, 0);
  uint16_t* panels = reinterpret_cast<uint16_t*>(p.owned_.data() + kHeaderBytes);
  for (int64_t g = 0; g < groups; ++g) {
    const float* s = src + g * group_stride;
    uint16_t* d = panels + g * p.group_elems_;
    if (side == PackedSide::kA) Bf16PackA(s, ld, trans, dim, k, d);
    else Bf16PackB(s, ld, trans, dim, k, d);
  }
  Header h{kMagic, kVersion, static_cast<uint32_t>(side), MR, NR, kBf16KBlock, dim, k, groups, elems};
  std::memcpy(p.owned_.data(), &h, sizeof h);
  p.data_ = panels;
  p.bytes_ = p.owned_;
  return p;
}

// ---- Plan ---------------------------------------------------------------------

namespace {
void FreeBytes(uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); }

// PackBFn callers only read the panel width from the micro-kernel.
constexpr GemmUkernel kImplicitBShape{"bf16_implicit_b", Isa::kScalar, MR, NR, 0, 0, 0, nullptr, nullptr};
}  // namespace

Bf16GemmPlan::Bf16GemmPlan(const Bf16Ukernel& uk, int64_t max_m, int64_t max_n, int64_t max_k, int max_threads)
    : uk_(&uk), max_threads_(std::max(1, max_threads)) {
  kc_ = RoundUp(std::max(32, uk.kc), 32);
  mc_ = RoundUp(uk.mc, MR);
  nc_ = RoundUp(uk.nc, NR);
  const int64_t kc = std::min(kc_, Bf16PaddedK(std::max<int64_t>(max_k, 1)));
  const int64_t mc = std::min(mc_, RoundUp(std::max<int64_t>(max_m, 1), MR));
  const int64_t nc = std::min(nc_, RoundUp(std::max<int64_t>(max_n, 1), NR));
  a_bytes_ = static_cast<size_t>(RoundUp(mc * kc * 2, 64));
  b_bytes_ = static_cast<size_t>(RoundUp(nc * kc * 2, 64));
  tmp_bytes_ = static_cast<size_t>(RoundUp(nc * 32 * 4, 64));
  slot_bytes_ = a_bytes_ + b_bytes_ + tmp_bytes_;
}

Bf16GemmPlan::Bf16GemmPlan(Bf16GemmPlan&&) noexcept = default;
Bf16GemmPlan& Bf16GemmPlan::operator=(Bf16GemmPlan&&) noexcept = default;
Bf16GemmPlan::~Bf16GemmPlan() = default;

size_t Bf16GemmPlan::ScratchBytes() const { return slot_bytes_ * static_cast<size_t>(max_threads_); }

void Bf16GemmPlan::RunTask(const SgemmArgs& g, const uint16_t* packed_a, const uint16_t* packed_b, int64_t m0,
                           int64_t m1, int64_t n0, int64_t n1, uint8_t* buffers) const {
  const Bf16Ukernel& uk = *uk_;
  uint16_t* abuf = reinterpret_cast<uint16_t*>(buffers);
  uint16_t* bbuf = reinterpret_cast<uint16_t*>(buffers + a_bytes_);
  float* tmp = reinterpret_cast<float*>(buffers + a_bytes_ + b_bytes_);
  alignas(64) float acc[MR * NR];
  if (uk.amx) bf16_detail::ConfigureAmxTiles();
  const bf16_detail::StoreTileFn store = Hooks().store ? Hooks().store : &StoreTileScalar;
  const int64_t K = g.k, Kp = Bf16PaddedK(K);
  const Epilogue& ep = g.epilogue;
  const bool do_epilogue = !ep.empty();
  const bool fusable = do_epilogue && EpilogueFusable(ep);
  for (int64_t jc = n0; jc < n1; jc += nc_) {
    const int64_t nc = std::min(nc_, n1 - jc);
    for (int64_t pc = 0; pc < K; pc += kc_) {
      const int64_t kc = std::min(kc_, K - pc), kcp = Bf16PaddedK(kc);
      const uint16_t* bblock;
      int64_t b_stride;
      if (packed_b) {
        bblock = packed_b + (jc / NR) * Kp * NR + pc * NR;
        b_stride = Kp * NR;
      } else if (g.pack_b) {
        // The implicit B arrives as float panels, 32 k rows at a time, and is
        // converted into the pairs of the bf16 panels.
        for (int64_t sub = 0; sub < kc; sub += 32) {
          const int64_t rows = std::min<int64_t>(32, kc - sub);
          g.pack_b(g.pack_b_ctx, kImplicitBShape, pc + sub, rows, jc, nc, tmp);
          for (int64_t q = 0; q * NR < nc; ++q)
            PackBPanels(tmp + q * rows * NR, NR, false, NR, rows, 32, bbuf + q * kcp * NR + sub * NR);
        }
        bblock = bbuf;
        b_stride = kcp * NR;
      } else {
        const float* src = g.trans_b ? g.b + jc * g.ldb + pc : g.b + pc * g.ldb + jc;
        PackBPanels(src, g.ldb, g.trans_b, nc, kc, kcp, bbuf);
        bblock = bbuf;
        b_stride = kcp * NR;
      }
      const float beta = pc == 0 ? g.beta : 1.f;
      const bool last = pc + kc >= K;
      for (int64_t ic = m0; ic < m1; ic += mc_) {
        const int64_t mc = std::min(mc_, m1 - ic);
        const uint16_t* ablock;
        int64_t a_stride;
        if (packed_a) {
          ablock = packed_a + (ic / MR) * Kp * MR + pc * MR;
          a_stride = Kp * MR;
        } else {
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t row = ic + ir;
            const float* src = g.trans_a ? g.a + pc * g.lda + row : g.a + row * g.lda + pc;
            PackAPanel(src, g.lda, g.trans_a, std::min<int64_t>(MR, mc - ir), kc, abuf + (ir / MR) * kcp * MR);
          }
          ablock = abuf;
          a_stride = kcp * MR;
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t n = std::min<int64_t>(NR, nc - jr);
          const uint16_t* bp = bblock + (jr / NR) * b_stride;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t m = std::min<int64_t>(MR, mc - ir);
            const int64_t row0 = ic + ir, col0 = jc + jr;
            float* c = g.c + row0 * g.ldc + col0;
            uk.fn(kcp, ablock + (ir / MR) * a_stride, bp, acc, m);
            if (last && fusable) {
              TileEpilogue te;
              if (ep.bias_kind == Epilogue::Bias::kPerRow) te.row_bias = ep.bias + row0;
              else if (ep.bias_kind == Epilogue::Bias::kPerCol) te.col_bias = ep.bias + col0;
              if (ep.residual) te.residual = ep.residual + row0 * ep.ldr + col0, te.ldr = ep.ldr;
              te.act = ep.act.kind, te.act_alpha = ep.act.alpha, te.act_beta = ep.act.beta;
              store(acc, c, g.ldc, m, n, g.alpha, beta, &te);
              continue;
            }
            store(acc, c, g.ldc, m, n, g.alpha, beta, nullptr);
            if (last && do_epilogue) ApplyEpilogue(ep, c, g.ldc, row0, col0, m, n);
          }
        }
      }
    }
  }
}

void Bf16GemmPlan::Run(const SgemmArgs& args, const uint16_t* packed_a, const uint16_t* packed_b,
                       ThreadPool* pool) {
  std::lock_guard<std::mutex> lock(*mu_);
  if (!buffers_) {
    buffers_ = {static_cast<uint8_t*>(::operator new[](std::max<size_t>(ScratchBytes(), 64), std::align_val_t(64))),
                FreeBytes};
  }
  Run(args, packed_a, packed_b, pool, buffers_.get());
}

void Bf16GemmPlan::Run(const SgemmArgs& args_in, const uint16_t* packed_a, const uint16_t* packed_b,
                       ThreadPool* pool, void* scratch) const {
  SgemmArgs g = args_in;
  if (g.m <= 0 || g.n <= 0) return;
  uint8_t* const buffers = static_cast<uint8_t*>(scratch);
  // A residual that is C itself folds into beta (read before the first store).
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
  const int64_t mblocks = (g.m + MR - 1) / MR, nblocks = (g.n + NR - 1) / NR;
  // bf16 work goes about 4x faster than fp32: a thread pays off from ~4 MFLOP.
  const double flops = 2.0 * g.m * g.n * g.k;
  int64_t threads = std::min<int64_t>(pool ? pool->num_threads() : 1, max_threads_);
  threads = std::min<int64_t>(threads, std::max<int64_t>(1, static_cast<int64_t>(flops / 4e6)));
  threads = std::min(threads, mblocks * nblocks);
  int64_t tm = 1, tn = 1;
  double best = -1;
  for (int64_t a = 1; a <= threads; ++a) {
    const int64_t b = threads / a;
    if (a > mblocks || b > nblocks) continue;
    const double rows = static_cast<double>((mblocks + a - 1) / a) * MR;
    const double cols = static_cast<double>((nblocks + b - 1) / b) * NR;
    const double cost = rows * cols * 4 + (rows + cols) * 1e-3;
    if (best < 0 || cost < best) best = cost, tm = a, tn = b;
  }
  const int64_t tasks = tm * tn;
  auto task = [&](int64_t t) {
    const int64_t ti = t / tn, tj = t % tn;
    const int64_t m0 = mblocks * ti / tm * MR, m1 = std::min(g.m, mblocks * (ti + 1) / tm * MR);
    const int64_t n0 = nblocks * tj / tn * NR, n1 = std::min(g.n, nblocks * (tj + 1) / tn * NR);
    if (m0 < m1 && n0 < n1) RunTask(g, packed_a, packed_b, m0, m1, n0, n1, buffers + t * slot_bytes_);
  };
  if (tasks == 1 || !pool) {
    task(0);
    return;
  }
  pool->ParallelFor(tasks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) task(t);
  });
}

}  // namespace oc::gemm

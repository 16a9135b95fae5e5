// Winograd F(4x4, 3x3): see conv_winograd.h. The GEMMs run with the tiles as
// rows: M[xi] (tiles x Cout) = V[xi] (tiles x Cin) * U[xi]^T (Cin x Cout), so
// that the weights are the pre-packed B operand and a layer with few tiles
// (14x14, 7x7 outputs) wastes at most one MR-row panel, not most of an NR-wide
// one. Transforms work on blocks of kLanes channels so that their arithmetic
// vectorises across channels.
#include "ops/cpu/conv/conv_winograd.h"

#include "base/cpu_features.h"
#include "ops/cpu/conv/conv_winograd_impl.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>

namespace oc {

#if defined(__x86_64__) || defined(_M_X64)
void WinogradInputAvx2(const WinogradJob& job, int64_t tb, int64_t te);
void WinogradOutputAvx2(const WinogradJob& job, int64_t tb, int64_t te);
void WinogradInputAvx512(const WinogradJob& job, int64_t tb, int64_t te);
void WinogradOutputAvx512(const WinogradJob& job, int64_t tb, int64_t te);
#endif

namespace {

constexpr int64_t kChunkBytes = int64_t{2} << 20;  // V and M of one GEMM batch

int64_t Round16(int64_t n) { return (n + 15) / 16 * 16; }

// u = G g G^T for one 3x3 kernel (row-major), in double: the weights are
// transformed once, so this costs nothing and keeps U exact to float rounding.
void TransformWeight(const float* g, float* u, int64_t stride) {
  auto col = [](double g0, double g1, double g2, double* o) {
    o[0] = g0 / 4;
    o[1] = -(g0 + g1 + g2) / 6;
    o[2] = -(g0 - g1 + g2) / 6;
    o[3] = g0 / 24 + g1 / 12 + g2 / 6;
    o[4] = g0 / 24 - g1 / 12 + g2 / 6;
    o[5] = g2;
  };
  double t[6][3];  // G g
  for (int j = 0; j < 3; ++j) {
    double o[6];
    col(g[j], g[3 + j], g[6 + j], o);
    for (int i = 0; i < 6; ++i) t[i][j] = o[i];
  }
  for (int i = 0; i < 6; ++i) {
    double o[6];
    col(t[i][0], t[i][1], t[i][2], o);
    for (int j = 0; j < 6; ++j) u[(i * 6 + j) * stride] = static_cast<float>(o[j]);
  }
}

void WinogradInput(const WinogradJob& job, int64_t tb, int64_t te) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (SelectedIsa()) {
    case Isa::kAvx512: return WinogradInputAvx512(job, tb, te);
    case Isa::kAvx2: return WinogradInputAvx2(job, tb, te);
    default: break;
  }
#endif
  WinogradInputImpl(job, tb, te);
}

void WinogradOutput(const WinogradJob& job, int64_t tb, int64_t te) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (SelectedIsa()) {
    case Isa::kAvx512: return WinogradOutputAvx512(job, tb, te);
    case Isa::kAvx2: return WinogradOutputAvx2(job, tb, te);
    default: break;
  }
#endif
  WinogradOutputImpl(job, tb, te);
}

}  // namespace

bool WinogradApplicable(const ConvGeometry& g) {
  return g.nd == 2 && g.group == 1 && g.kernel == std::array<int64_t, 3>{1, 3, 3} &&
         g.stride == std::array<int64_t, 3>{1, 1, 1} && g.dilation == std::array<int64_t, 3>{1, 1, 1} &&
         g.batch > 0 && g.out[1] > 0 && g.out[2] > 0 && g.c_in > 0 && g.c_out > 0;
}

bool WinogradPreferred(const ConvGeometry& g) {
  static const bool enabled = [] {
    const char* e = std::getenv("OPENCANN_WINOGRAD");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  if (!enabled || !WinogradApplicable(g)) return false;
  // Measured at 1 thread (winograd_test's DISABLED_BenchResNetShapes, AVX-512,
  // with the register-transposed transforms): 1.3-3.1x faster than im2col
  // from 16 to 256 channels at 7x7 to 56x56 outputs (32ch 56x56 2.1x, 64ch
  // 7x7 3.1x, 256ch 7x7 1.3x); slower with 8 input channels (0.8x: the
  // transforms dominate short K). The 36 transformed weight matrices are 16x
  // the bytes of W: at 512x512 channels (37.7 MB) the bench, where they stay
  // in cache between runs, shows 1.4-1.9x, but in ResNet-50, where they
  // stream from memory with the other layers' weights, its three 512ch 7x7
  // convs made the model 2.5% slower (1 thread, quiet machine). So AVX-512
  // stops at 256x256, and above 128x128 channels (transformed weights over
  // 2.4 MB) keeps the rule it had before these measurements, outputs from
  // 14x14 (ResNet-50's 256ch 14x14 layers). With AVX2 (a GEMM a third as
  // fast) the bench shows 1.1-2.9x at every width, 1024 included, and a tie
  // at 8 input channels.
  const int64_t min_out = g.c_in * g.c_out > 128 * 128 ? 14 : 7;
  const bool wide_ok = SelectedIsa() != Isa::kAvx512 ||
                       (g.c_in * g.c_out <= 256 * 256 && g.out[1] >= min_out && g.out[2] >= min_out);
  return g.c_in >= 16 && g.c_out >= 16 && wide_ok && g.out[1] >= 7 && g.out[2] >= 7;
}

WinogradConv WinogradConv::Dynamic(const ConvGeometry& g, int max_threads) {
  WinogradConv c(g, nullptr, {}, max_threads);
  c.dynamic_ = true;
  return c;
}

WinogradConv::WinogradConv(const ConvGeometry& g, const float* w, std::span<const uint8_t> prepacked,
                           int max_threads)
    : g_(g), max_threads_(std::max(1, max_threads)) {
  const int64_t cin = g.c_in, cout = g.c_out;
  tiles_h_ = (g.out[1] + 3) / 4;
  tiles_w_ = (g.out[2] + 3) / 4;
  const int64_t tiles = g.batch * tiles_h_ * tiles_w_;
  chunk_ = std::clamp<int64_t>(kChunkBytes / (36 * (cin + cout) * int64_t{sizeof(float)}), 32, 4096);
  const gemm::GemmUkernel& uk = gemm::DefaultUkernel();
  chunk_ = chunk_ / uk.mr * uk.mr;  // whole MR-row panels, except in the last batch
  chunk_ = std::min(chunk_, tiles);
  plan_ = gemm::SgemmPlan(uk, chunk_, cout, cin, 1);
  vm_area_floats_ = VmAreaFloats();
  std::vector<float> u;
  if (w && !gemm::ParsePacked(prepacked, uk, gemm::PackedSide::kB, cout, cin, 36)) {
    // u[xi][co][ci]: 36 matrices Cout x Cin, packed as B = U^T (stored N x K).
    u.resize(static_cast<size_t>(36 * cout * cin));
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t ci = 0; ci < cin; ++ci)
        TransformWeight(w + (co * cin + ci) * 9, u.data() + co * cin + ci, cout * cin);
  }
  u_ = gemm::PackedOperand::Make(uk, gemm::PackedSide::kB, u.empty() ? nullptr : u.data(), cin, true, cout, cin,
                                 prepacked, 36, cout * cin);
}

bool WinogradConv::SplitTiles(int64_t threads) const {
  // Each thread a whole share of the tiles (transforms and all 36 GEMMs of
  // them): one fork/join per conv instead of three per batch of tiles, and no
  // V or M rows written by one core and read by the other. Where the share
  // would leave the GEMMs under two MR-row panels (14x14 outputs: 16 tiles,
  // 8 per thread), the 36 GEMMs are shared out instead. ResNet-50 at 2
  // threads (interleaved A/B): 0.7-1% faster; splitting from one panel per
  // thread on (its 28x28 layers too) was no better.
  const int64_t tiles = g_.batch * tiles_h_ * tiles_w_;
  return threads > 1 && tiles >= threads * 2 * gemm::DefaultUkernel().mr;
}

int64_t WinogradConv::VmFloats(int64_t rows) const {
  return Round16(36 * rows * g_.c_in) + Round16(36 * rows * g_.c_out);
}

int64_t WinogradConv::SplitRows(int64_t threads) const {
  const int64_t tiles = g_.batch * tiles_h_ * tiles_w_;
  return std::min(chunk_, (tiles + threads - 1) / threads);
}

int64_t WinogradConv::VmAreaFloats() const {
  // One V/M of chunk_ tiles where the threads share out the GEMMs; one per
  // thread, of its share of the tiles, for every thread count a pool up to
  // max_threads_ may run with that splits the tiles (a smaller pool than the
  // one planned for may split where the planned one would not).
  int64_t floats = VmFloats(chunk_);
  for (int64_t t = 2; t <= max_threads_; ++t)
    if (SplitTiles(t)) floats = std::max(floats, t * VmFloats(SplitRows(t)));
  return floats;
}

int64_t WinogradConv::DynamicRawFloats() const { return dynamic_ ? Round16(36 * g_.c_out * g_.c_in) : 0; }

int64_t WinogradConv::DynamicPackedFloats() const {
  return dynamic_ ? 36 * Round16(gemm::PackedBSize(gemm::DefaultUkernel(), g_.c_out, g_.c_in)) : 0;
}

size_t WinogradConv::ScratchBytes() const {
  return static_cast<size_t>(vm_area_floats_ + DynamicRawFloats() + DynamicPackedFloats()) * sizeof(float) +
         plan_.ScratchBytes() * max_threads_;
}

void WinogradConv::Run(const float* x, const float* bias, const float* z, float* y, const Activation& act,
                       ThreadPool* pool, void* scratch, const float* w) const {
  if (!dynamic_) return RunLayout(0, x, bias, z, y, act, pool, scratch);
  // The weights' transforms and panels after the buffers RunLayout uses.
  const int64_t cin = g_.c_in, cout = g_.c_out;
  float* raw = static_cast<float*>(scratch) + vm_area_floats_ +
               static_cast<int64_t>(plan_.ScratchBytes() * max_threads_ / sizeof(float));
  float* packed = raw + DynamicRawFloats();
  pool->ParallelFor(cout, 4, [&](int64_t c0, int64_t c1) {
    for (int64_t co = c0; co < c1; ++co)
      for (int64_t ci = 0; ci < cin; ++ci) TransformWeight(w + (co * cin + ci) * 9, raw + co * cin + ci, cout * cin);
  });
  const gemm::GemmUkernel& uk = gemm::DefaultUkernel();
  const int64_t group = Round16(gemm::PackedBSize(uk, cout, cin));
  pool->ParallelFor(36, 1, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) gemm::PackB(uk, raw + k * cout * cin, cin, true, cout, cin, packed + k * group);
  });
  RunLayout(0, x, bias, z, y, act, pool, scratch, packed);
}

void WinogradConv::RunLayout(int block, const float* x, const float* bias, const float* z, float* y,
                             const Activation& act, ThreadPool* pool, void* scratch, const float* packed_u) const {
  assert(block == 0 || block == 8 || block == 16);
  const int64_t cin = g_.c_in, cout = g_.c_out;
  const int64_t IH = g_.in[1], IW = g_.in[2], OH = g_.out[1], OW = g_.out[2];
  const int64_t ph = g_.pad_begin[1], pw = g_.pad_begin[2];
  const int64_t per_image = tiles_h_ * tiles_w_, tiles = g_.batch * per_image;
  const int64_t threads = std::min<int64_t>(pool->num_threads(), max_threads_);
  auto* gemm_scratch = reinterpret_cast<uint8_t*>(static_cast<float*>(scratch) + vm_area_floats_);
  const int64_t packed_group = Round16(gemm::PackedBSize(gemm::DefaultUkernel(), cout, cin));
  // The 36 GEMMs of the tiles [t0, t0 + nt) of V into M, on one thread.
  auto gemm_range = [&](const float* v, float* m, int64_t nt, int64_t k0, int64_t k1, void* buf) {
    for (int64_t k = k0; k < k1; ++k) {
      gemm::SgemmArgs args;
      args.m = nt, args.n = cout, args.k = cin;
      args.a = v + k * nt * cin, args.lda = cin;
      args.packed_b = packed_u ? packed_u + k * packed_group : u_.group(k);
      args.c = m + k * nt * cout, args.ldc = cout;
      plan_.Run(args, nullptr, buf);
    }
  };
  if (SplitTiles(threads)) {
    // One task per thread, its own V, M and packing buffers; batches of at
    // most chunk_ tiles inside its share.
    const int64_t rows = SplitRows(threads);
    pool->ParallelFor(threads, 1, [&](int64_t tb, int64_t te) {
      for (int64_t t = tb; t < te; ++t) {
        float* v = static_cast<float*>(scratch) + t * VmFloats(rows);
        float* m = v + Round16(36 * rows * cin);
        void* buf = gemm_scratch + t * plan_.ScratchBytes();
        const int64_t s0 = tiles * t / threads, s1 = tiles * (t + 1) / threads;
        for (int64_t t0 = s0; t0 < s1; t0 += rows) {
          const int64_t nt = std::min(rows, s1 - t0);
          WinogradJob job{cin, cout, IH, IW, OH, OW, ph, pw, tiles_w_, per_image, t0, nt, x, v, m, bias, z, y, &act,
                          block};
          WinogradInput(job, 0, nt);
          gemm_range(v, m, nt, 0, 36, buf);
          WinogradOutput(job, 0, nt);
        }
      }
    });
    return;
  }
  float* v = static_cast<float*>(scratch);
  float* m = v + Round16(36 * chunk_ * cin);
  // Tasks of a few tiles: each tile costs 36 * (Cin + Cout) * ~10 flops.
  const int64_t grain = std::max<int64_t>(1, 4096 / (cin + cout));

  for (int64_t t0 = 0; t0 < tiles; t0 += chunk_) {
    const int64_t nt = std::min(chunk_, tiles - t0);
    // V[xi][t][ci] = (B^T d B)[xi] for tile t, channel ci.
    WinogradJob job{cin, cout, IH, IW, OH, OW, ph, pw, tiles_w_, per_image, t0, nt, x, v, m, bias, z, y, &act, block};
    pool->ParallelFor(nt, grain, [&](int64_t tb, int64_t te) { WinogradInput(job, tb, te); });
    // The 36 GEMMs in equal shares, one task per thread, each GEMM whole on
    // one thread: splitting each GEMM instead cost 36 fork/joins per batch and
    // halved already small M (16 tiles at 14x14) into under-filled panels.
    const int64_t tasks = std::min<int64_t>(threads, 36);
    auto gemms = [&](int64_t t) {
      gemm_range(v, m, nt, 36 * t / tasks, 36 * (t + 1) / tasks, gemm_scratch + t * plan_.ScratchBytes());
    };
    if (tasks == 1) gemms(0);
    else pool->ParallelFor(tasks, 1, [&](int64_t b, int64_t e) { for (int64_t t = b; t < e; ++t) gemms(t); });
    pool->ParallelFor(nt, grain, [&](int64_t tb, int64_t te) { WinogradOutput(job, tb, te); });
  }
}

}  // namespace oc

// Integer GEMM driver: micro-kernel table, packing with the sign flip, the
// zero-point correction and the threaded tile loop (see integer_gemm.h).
#include "ops/cpu/gemm/integer_gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace oc::igemm {

namespace {

constexpr Ukernel kUkernels[] = {
#if defined(__x86_64__) || defined(_M_X64)
    {"u8s8_igemm_32x32_amx", Isa::kAvx512, true, true, 32, 32, 1024, 128, 256, 64, ALayout::kRow64,
     u8s8_igemm_32x32_amx, s8_colsums_32_avx512vnni},
    {"u8s8_igemm_14x32_avx512vnni", Isa::kAvx512, true, false, 14, 32, 512, 112, 256, 4, ALayout::kGroup4,
     u8s8_igemm_14x32_avx512vnni, s8_colsums_32_avx512vnni},
    {"u8s8_igemm_6x8_avx2", Isa::kAvx2, false, false, 6, 8, 512, 96, 256, 4, ALayout::kGroup4,
     u8s8_igemm_6x8_avx2, nullptr},
#endif
    {"u8s8_igemm_4x8_scalar", Isa::kScalar, false, false, 4, 8, 512, 64, 256, 4, ALayout::kGroup4,
     u8s8_igemm_4x8_scalar, nullptr},
};

inline int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
inline size_t Align64(size_t v) { return (v + 63) / 64 * 64; }

// Stored byte -> converted byte: A to uint8 (int8 + 128), B to int8 (uint8 - 128);
// both are an XOR of the top bit.
inline uint8_t FlipA(bool is_signed) { return is_signed ? 0x80 : 0; }
inline uint8_t FlipB(bool is_signed) { return is_signed ? 0 : 0x80; }

}  // namespace

std::span<const Ukernel> AllUkernels() { return kUkernels; }

bool Supported(const Ukernel& uk) {
  const CpuFeatures& f = GetCpuFeatures();
  switch (uk.isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return f.avx2;
    case Isa::kAvx512:
#if defined(__x86_64__) || defined(_M_X64)
      if (uk.amx && !AmxUsable()) return false;
#endif
      return f.avx512f && f.avx512bw && f.avx512vl && (!uk.vnni || f.avx512_vnni);
    case Isa::kNeon: return f.neon;
  }
  return false;
}

const Ukernel& DefaultUkernel() {
  static const Ukernel* chosen = [] {
    const int cap = static_cast<int>(SelectedIsa());
    for (const Ukernel& uk : kUkernels) {  // best first
      if (uk.isa != Isa::kScalar && uk.isa != Isa::kNeon && static_cast<int>(uk.isa) > cap) continue;
      if (Supported(uk)) return &uk;
    }
    return &kUkernels[std::size(kUkernels) - 1];
  }();
  return *chosen;
}

const Ukernel& UkernelFor(int64_t m, int64_t n, int64_t k) {
  const Ukernel& best = DefaultUkernel();
  if (!best.amx || (m >= 16 && k >= 32)) return best;
  static const Ukernel* fallback = [] {
    const int cap = static_cast<int>(SelectedIsa());
    for (const Ukernel& uk : kUkernels) {
      if (uk.amx || (uk.isa != Isa::kScalar && uk.isa != Isa::kNeon && static_cast<int>(uk.isa) > cap)) continue;
      if (Supported(uk)) return &uk;
    }
    return &kUkernels[std::size(kUkernels) - 1];
  }();
  (void)n;
  return *fallback;
}

void PackA(const Ukernel& uk, const Matrix& a, int64_t k, int64_t r0, int64_t r1, uint8_t* dst,
           int32_t* row_sums) {
  const int mr = uk.mr;
  const int64_t kp = PaddedK(uk, k), full = k / 4;
  const uint8_t flip = FlipA(a.is_signed);
  const uint32_t flip4 = flip * 0x01010101u;
  const uint8_t* src = static_cast<const uint8_t*>(a.data);
  for (int64_t p0 = r0; p0 < r1; p0 += mr) {
    uint8_t* panel = dst + p0 * kp;  // panel p0/mr starts at (p0/mr)*mr*kp
    const int64_t rows = std::min<int64_t>(mr, r1 - p0);
    if (uk.a_layout == ALayout::kRow64) {
      // Row i of each 64-deep block is 64 contiguous bytes: copy with the flip.
      for (int64_t i = 0; i < mr; ++i) {
        const uint8_t* row = i < rows ? src + (p0 + i) * a.ld : nullptr;
        uint32_t sum = 0;
        for (int64_t k0 = 0; k0 < kp; k0 += 64) {
          uint8_t* d = panel + PackedAOffset(uk, i, k0);
          const int64_t n = row ? std::max<int64_t>(0, std::min<int64_t>(64, k - k0)) : 0;
          for (int64_t t = 0; t < n; ++t) {
            d[t] = static_cast<uint8_t>(row[k0 + t] ^ flip);
            sum += d[t];
          }
          std::memset(d + n, 0, static_cast<size_t>(64 - n));
        }
        if (row) row_sums[p0 + i] = static_cast<int32_t>(sum);
      }
      continue;
    }
    for (int64_t i = 0; i < mr; ++i) {
      if (i >= rows) {
        for (int64_t g = 0; g < kp / 4; ++g) std::memset(panel + (g * mr + i) * 4, 0, 4);
        continue;
      }
      const uint8_t* row = src + (p0 + i) * a.ld;
      uint32_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) sum += static_cast<uint8_t>(row[kk] ^ flip);
      row_sums[p0 + i] = static_cast<int32_t>(sum);
      // Each group of four k values is one 32-bit word of the row.
      for (int64_t g = 0; g < full; ++g) {
        uint32_t w;
        std::memcpy(&w, row + g * 4, 4);
        w ^= flip4;
        std::memcpy(panel + (g * mr + i) * 4, &w, 4);
      }
      for (int64_t g = full; g < kp / 4; ++g) {
        uint8_t* d = panel + (g * mr + i) * 4;
        for (int t = 0; t < 4; ++t) d[t] = g * 4 + t < k ? static_cast<uint8_t>(row[g * 4 + t] ^ flip) : 0;
      }
    }
  }
}

namespace {

// Interleaves four rows of 16 bytes into 16 column groups of four bytes
// (out[j*4 + t] = row_t[j] ^ flip): two rounds of byte / word unpacking.
inline void Interleave4x16(const uint8_t* r0, const uint8_t* r1, const uint8_t* r2, const uint8_t* r3, uint8_t flip,
                           uint8_t* out) {
#if defined(__SSE2__)
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  auto ld = [&](const uint8_t* p) { return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), f); };
  const __m128i a = ld(r0), b = ld(r1), c = ld(r2), d = ld(r3);
  const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
  const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_unpackhi_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32), _mm_unpacklo_epi16(ab_hi, cd_hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 48), _mm_unpackhi_epi16(ab_hi, cd_hi));
#else
  for (int j = 0; j < 16; ++j) {
    out[j * 4 + 0] = r0[j] ^ flip;
    out[j * 4 + 1] = r1[j] ^ flip;
    out[j * 4 + 2] = r2[j] ^ flip;
    out[j * 4 + 3] = r3[j] ^ flip;
  }
#endif
}

}  // namespace

void PackB(const Ukernel& uk, const Matrix& b, int64_t k, int64_t c0, int64_t c1, int8_t* dst,
           int32_t* col_sums) {
  const int nr = uk.nr;
  const int64_t kp = PaddedK(uk, k);
  const uint8_t flip = FlipB(b.is_signed);
  const uint8_t* src = static_cast<const uint8_t*>(b.data);
  // Column blocks of at least 64 bytes, so that the strided row reads use
  // whole cache lines: the sums pass brings the lines in, packing reuses them.
  const int64_t block = std::max<int64_t>(nr, 64 / nr * nr);
  for (int64_t s0 = c0; s0 < c1; s0 += block) {
    const int64_t s1 = std::min(c1, s0 + block);
    int32_t* sums = col_sums + s0;
    if (!uk.col_sums) {
      for (int64_t j = 0; j < s1 - s0; ++j) sums[j] = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const uint8_t* row = src + kk * b.ld + s0;
        for (int64_t j = 0; j < s1 - s0; ++j) sums[j] += static_cast<int8_t>(row[j] ^ flip);
      }
    }
    for (int64_t p0 = s0; p0 < s1; p0 += nr) {
      uint8_t* panel = reinterpret_cast<uint8_t*>(dst + p0 * kp);
      const int64_t cols = std::min<int64_t>(nr, s1 - p0);
      for (int64_t g = 0; g < kp / 4; ++g) {
        uint8_t* d = panel + g * nr * 4;
        // Rows past K are zero in the packed (converted) form.
        const uint8_t* rows[4];
        for (int t = 0; t < 4; ++t) rows[t] = g * 4 + t < k ? src + (g * 4 + t) * b.ld + p0 : nullptr;
        if (cols == nr && nr % 16 == 0 && rows[3]) {
          for (int j = 0; j < nr; j += 16)
            Interleave4x16(rows[0] + j, rows[1] + j, rows[2] + j, rows[3] + j, flip, d + j * 4);
          continue;
        }
        for (int64_t j = 0; j < nr; ++j)
          for (int t = 0; t < 4; ++t)
            d[j * 4 + t] = rows[t] && j < cols ? static_cast<uint8_t>(rows[t][j] ^ flip) : 0;
      }
      if (uk.col_sums) {
        // The panel is still in L1: sum it there instead of the strided source.
        int32_t panel_sums[64];
        uk.col_sums(reinterpret_cast<const int8_t*>(panel), kp / 4, panel_sums);
        std::memcpy(col_sums + p0, panel_sums, static_cast<size_t>(cols) * sizeof(int32_t));
      }
    }
  }
}

PackedOperand PackConstA(const Ukernel& uk, const Matrix& a, int64_t m, int64_t k, int64_t groups,
                         int64_t group_stride) {
  PackedOperand p;
  p.is_signed = a.is_signed;
  p.groups = groups;
  p.group_bytes = PackedABytes(uk, m, k);
  p.group_sums = RoundUp(std::max<int64_t>(m, 1), uk.mr);
  p.panels.assign(static_cast<size_t>(p.group_bytes * groups), 0);
  p.sums.assign(static_cast<size_t>(p.group_sums * groups), 0);
  for (int64_t g = 0; g < groups; ++g) {
    Matrix ag = a;
    ag.data = static_cast<const uint8_t*>(a.data) + g * group_stride;
    PackA(uk, ag, k, 0, m, p.panels.data() + g * p.group_bytes, p.sums.data() + g * p.group_sums);
  }
  return p;
}

PackedOperand PackConstB(const Ukernel& uk, const Matrix& b, int64_t k, int64_t n, int64_t groups,
                         int64_t group_stride) {
  PackedOperand p;
  p.is_signed = b.is_signed;
  p.groups = groups;
  p.group_bytes = PackedBBytes(uk, n, k);
  p.group_sums = RoundUp(std::max<int64_t>(n, 1), uk.nr);
  p.panels.assign(static_cast<size_t>(p.group_bytes * groups), 0);
  p.sums.assign(static_cast<size_t>(p.group_sums * groups), 0);
  for (int64_t g = 0; g < groups; ++g) {
    Matrix bg = b;
    bg.data = static_cast<const uint8_t*>(b.data) + g * group_stride;
    PackB(uk, bg, k, 0, n, reinterpret_cast<int8_t*>(p.panels.data() + g * p.group_bytes),
          p.sums.data() + g * p.group_sums);
  }
  return p;
}

Plan::Plan(const Ukernel& uk, int64_t max_m, int64_t max_n, int64_t max_k, bool pack_a, bool pack_b,
           int max_threads)
    : uk_(&uk), max_threads_(std::max(1, max_threads)) {
  max_m = std::max<int64_t>(max_m, 1);
  max_n = std::max<int64_t>(max_n, 1);
  if (pack_a) {
    a_bytes_ = Align64(static_cast<size_t>(PackedABytes(uk, max_m, max_k)));
    a_sums_ = Align64(static_cast<size_t>(RoundUp(max_m, uk.mr)) * sizeof(int32_t));
  }
  if (pack_b) {
    b_bytes_ = Align64(static_cast<size_t>(PackedBBytes(uk, max_n, max_k)));
    b_sums_ = Align64(static_cast<size_t>(RoundUp(max_n, uk.nr)) * sizeof(int32_t));
  }
  const int64_t mc = std::min<int64_t>(uk.mc, RoundUp(max_m, uk.mr));
  const int64_t nc = std::min<int64_t>(uk.nc, RoundUp(max_n, uk.nr));
  tile_bytes_ = Align64(static_cast<size_t>(mc * nc) * sizeof(int32_t));
  scratch_bytes_ = a_bytes_ + a_sums_ + b_bytes_ + b_sums_ + tile_bytes_ * static_cast<size_t>(max_threads_);
}

namespace {

struct Prepared {
  const uint8_t* pa;
  const int32_t* row_sums;
  const int8_t* pb;
  const int32_t* col_sums;
};

// Turns the raw products in `tile` into (A - za)(B - zb) sums (see the header).
void CorrectTile(const Args& g, const Prepared& p, int64_t i0, int64_t j0, int64_t mb, int64_t nb, int32_t* tile,
                 int64_t ldt) {
  const uint32_t a_off = g.a.is_signed ? 128u : 0u;
  const uint32_t b_off = g.b.is_signed ? 0u : 128u;
  const uint32_t k = static_cast<uint32_t>(g.k);
  const uint32_t* cs = reinterpret_cast<const uint32_t*>(p.col_sums + j0);
  const int32_t* zbv = g.b.zp.values ? g.b.zp.values + j0 : nullptr;
  const uint32_t zb_scalar = static_cast<uint32_t>(g.b.zp.scalar) - b_off;
  for (int64_t i = 0; i < mb; ++i) {
    const int64_t row = i0 + i;
    const uint32_t za = static_cast<uint32_t>(g.a.zp.values ? g.a.zp.values[row] : g.a.zp.scalar) + a_off;
    const uint32_t r = k * za - static_cast<uint32_t>(p.row_sums[row]);
    uint32_t* t = reinterpret_cast<uint32_t*>(tile + i * ldt);
    if (zbv) {
      for (int64_t j = 0; j < nb; ++j) t[j] += (static_cast<uint32_t>(zbv[j]) - b_off) * r - za * cs[j];
    } else {
      const uint32_t zr = zb_scalar * r;
      for (int64_t j = 0; j < nb; ++j) t[j] += zr - za * cs[j];
    }
  }
}

void RunTask(const Ukernel& uk, const Args& g, const Prepared& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
             int32_t* tile) {
  const int mr = uk.mr, nr = uk.nr;
  const int64_t kp = PaddedK(uk, g.k);
  const int64_t mc = std::min<int64_t>(uk.mc, RoundUp(g.m, mr));
  const int64_t nc = std::min<int64_t>(uk.nc, RoundUp(g.n, nr));
  const int64_t ldt = nc;
  for (int64_t i0 = m0; i0 < m1; i0 += mc) {
    const int64_t mb = std::min(mc, m1 - i0);
    for (int64_t j0 = n0; j0 < n1; j0 += nc) {
      const int64_t nb = std::min(nc, n1 - j0);
      if (kp == 0)
        for (int64_t i = 0; i < mb; ++i) std::fill(tile + i * ldt, tile + i * ldt + nb, 0);
      for (int64_t k0 = 0; k0 < kp; k0 += uk.kc) {
        const int64_t kb = std::min<int64_t>(uk.kc, kp - k0);
        for (int64_t jr = 0; jr < nb; jr += nr) {
          const int8_t* bp = p.pb + (j0 + jr) * kp + k0 * nr;
          for (int64_t ir = 0; ir < mb; ir += mr) {
            const uint8_t* ap = p.pa + (i0 + ir) * kp + k0 * mr;
            uk.fn(kb / 4, ap, bp, tile + ir * ldt + jr, ldt, std::min<int64_t>(mr, mb - ir),
                  std::min<int64_t>(nr, nb - jr), k0 > 0);
          }
        }
      }
      CorrectTile(g, p, i0, j0, mb, nb, tile, ldt);
      if (g.epilogue) {
        g.epilogue(g.ctx, i0, j0, mb, nb, tile, ldt);
      } else {
        for (int64_t i = 0; i < mb; ++i)
          std::memcpy(g.c + (i0 + i) * g.ldc + j0, tile + i * ldt, static_cast<size_t>(nb) * sizeof(int32_t));
      }
    }
  }
}

}  // namespace

void Plan::Run(const Args& g, ThreadPool* pool, void* scratch) const {
  if (g.m <= 0 || g.n <= 0) return;
  const Ukernel& uk = *uk_;
  const int mr = uk.mr, nr = uk.nr;
  const int64_t kp = PaddedK(uk, g.k);
  const int64_t mpanels = (g.m + mr - 1) / mr, npanels = (g.n + nr - 1) / nr;
  uint8_t* s = static_cast<uint8_t*>(scratch);
  Prepared p{};
  // Packing: enough panels per chunk to be worth a thread (~64 KiB).
  if (g.a.packed) {
    p.pa = g.a.packed;
    p.row_sums = g.a.sums;
  } else {
    uint8_t* pa = s;
    int32_t* sums = reinterpret_cast<int32_t*>(s + a_bytes_);
    Matrix a = g.a.raw;
    a.is_signed = g.a.is_signed;
    auto pack = [&](int64_t b, int64_t e) { PackA(uk, a, g.k, b * mr, std::min(g.m, e * mr), pa, sums); };
    if (pool)
      pool->ParallelFor(mpanels, std::max<int64_t>(1, 65536 / (mr * std::max<int64_t>(kp, 4))),
                        [&](int64_t b, int64_t e) { pack(b, e); });
    else pack(0, mpanels);
    p.pa = pa;
    p.row_sums = sums;
  }
  s += a_bytes_ + a_sums_;
  if (g.b.packed) {
    p.pb = reinterpret_cast<const int8_t*>(g.b.packed);
    p.col_sums = g.b.sums;
  } else {
    int8_t* pb = reinterpret_cast<int8_t*>(s);
    int32_t* sums = reinterpret_cast<int32_t*>(s + b_bytes_);
    Matrix b = g.b.raw;
    b.is_signed = g.b.is_signed;
    auto pack = [&](int64_t bgn, int64_t e) { PackB(uk, b, g.k, bgn * nr, std::min(g.n, e * nr), pb, sums); };
    if (pool)
      pool->ParallelFor(npanels, std::max<int64_t>(1, 65536 / (nr * std::max<int64_t>(kp, 4))),
                        [&](int64_t b, int64_t e) { pack(b, e); });
    else pack(0, npanels);
    p.pb = pb;
    p.col_sums = sums;
  }
  s += b_bytes_ + b_sums_;
  int32_t* const tiles = reinterpret_cast<int32_t*>(s);
  const size_t tile_ints = tile_bytes_ / sizeof(int32_t);

  // Enough work per task to pay for waking a thread (~2 M multiply-adds).
  const double macs = static_cast<double>(g.m) * g.n * std::max<int64_t>(g.k, 1);
  int64_t threads = std::min<int64_t>(pool ? pool->num_threads() : 1, max_threads_);
  threads = std::min<int64_t>(threads, std::max<int64_t>(1, static_cast<int64_t>(macs / 2e6)));
  threads = std::min(threads, mpanels * npanels);
  // Grid tm x tn <= threads minimising the largest task, then its perimeter.
  int64_t tm = 1, tn = 1;
  double best = -1;
  for (int64_t a = 1; a <= threads; ++a) {
    const int64_t b = threads / a;
    if (a > mpanels || b > npanels) continue;
    const double rows = static_cast<double>((mpanels + a - 1) / a) * mr;
    const double cols = static_cast<double>((npanels + b - 1) / b) * nr;
    const double cost = rows * cols * 4 + (rows + cols) * 1e-3;
    if (best < 0 || cost < best) best = cost, tm = a, tn = b;
  }
  const int64_t tasks = tm * tn;
  auto task = [&](int64_t t) {
    const int64_t ti = t / tn, tj = t % tn;
    const int64_t m0 = mpanels * ti / tm * mr, m1 = std::min(g.m, mpanels * (ti + 1) / tm * mr);
    const int64_t n0 = npanels * tj / tn * nr, n1 = std::min(g.n, npanels * (tj + 1) / tn * nr);
    if (m0 < m1 && n0 < n1) RunTask(uk, g, p, m0, m1, n0, n1, tiles + t * tile_ints);
  };
  if (tasks == 1 || !pool) {
    task(0);
    return;
  }
  // tasks <= pool threads, so each chunk is one task and its index names its tile buffer.
  pool->ParallelFor(tasks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) task(t);
  });
}

void ReferenceGemm(const Args& g) {
  auto at = [&](const Operand& o, int64_t r, int64_t c) -> int32_t {
    const uint8_t v = static_cast<const uint8_t*>(o.raw.data)[r * o.raw.ld + c];
    return o.is_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : static_cast<int32_t>(v);
  };
  std::vector<int32_t> row(static_cast<size_t>(std::max<int64_t>(g.n, 0)));
  for (int64_t i = 0; i < g.m; ++i) {
    const int32_t za = g.a.zp.values ? g.a.zp.values[i] : g.a.zp.scalar;
    for (int64_t j = 0; j < g.n; ++j) {
      const int32_t zb = g.b.zp.values ? g.b.zp.values[j] : g.b.zp.scalar;
      uint32_t s = 0;
      for (int64_t kk = 0; kk < g.k; ++kk)
        s += static_cast<uint32_t>((at(g.a, i, kk) - za) * (at(g.b, kk, j) - zb));
      row[static_cast<size_t>(j)] = static_cast<int32_t>(s);
    }
    if (g.epilogue) g.epilogue(g.ctx, i, 0, 1, g.n, row.data(), g.n);
    else std::memcpy(g.c + i * g.ldc, row.data(), static_cast<size_t>(g.n) * sizeof(int32_t));
  }
}

// Portable micro-kernel: MR x NR accumulators in a local array.
void u8s8_igemm_4x8_scalar(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc,
                           int64_t m, int64_t n, bool accumulate) {
  constexpr int kMR = 4, kNR = 8;
  int32_t acc[kMR][kNR] = {};
  for (int64_t g = 0; g < kgroups; ++g) {
    const uint8_t* a = pa + g * kMR * 4;
    const int8_t* b = pb + g * kNR * 4;
    for (int i = 0; i < kMR; ++i)
      for (int j = 0; j < kNR; ++j) {
        int32_t s = 0;
        for (int t = 0; t < 4; ++t) s += static_cast<int32_t>(a[i * 4 + t]) * b[j * 4 + t];
        acc[i][j] = static_cast<int32_t>(static_cast<uint32_t>(acc[i][j]) + static_cast<uint32_t>(s));
      }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t& d = c[i * ldc + j];
      d = accumulate ? static_cast<int32_t>(static_cast<uint32_t>(d) + static_cast<uint32_t>(acc[i][j])) : acc[i][j];
    }
}

}  // namespace oc::igemm

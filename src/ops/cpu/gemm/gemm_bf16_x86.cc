// x86 pieces of the bf16 GEMM: the AMX and AVX512_BF16 micro-kernels, the
// AVX-512 packers (float32 -> bfloat16 with vcvtne2ps2bf16, round to nearest
// even) and the tile store with the fused epilogue. Each function carries its
// own target attribute, so this file builds with the baseline flags and
// nothing here runs before the CPU check in X86Hooks / *Ukernel().
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/cpu/gemm/amx_tiles.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#define OC_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")))
#define OC_AMXBF16_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma,amx-tile,amx-bf16")))

// GCC 12's masked AVX-512 intrinsics trip -Wmaybe-uninitialized inside its
// own headers when inlined into target-attribute functions.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace oc::gemm::bf16_detail {

namespace {

constexpr int MR = kBf16MR, NR = kBf16NR;

// OPENCANN_ISA below avx512 (SelectedIsa) turns the bf16 kernels off too,
// which is how the float32 fallback is tested on this kind of machine.
bool Avx512Bf16Cpu() {
  if (SelectedIsa() != Isa::kAvx512) return false;
  const CpuFeatures& f = GetCpuFeatures();
  return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512_bf16;
}

bool DetectAmxBf16() {
  if (!Avx512Bf16Cpu()) return false;  // the packers and the store need AVX-512
  return GetCpuFeatures().amx_bf16 && amx::EnabledAndPermitted();
}


// C tiles 0-3 (2x2 of 16x16 float), A tiles 4-5 (16 rows x 32 bf16),
// B tiles 6-7 (16 pair rows x 16 columns): every tile is 16 rows of 64 bytes.
// The int8 AMX kernel uses the same configuration.
OC_AMXBF16_TARGET void bf16_gemm_32x32_amx(int64_t kcp, const uint16_t* a, const uint16_t* b, float* acc,
                                           int64_t /*m*/) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t k = 0; k < kcp; k += 32) {
    const uint16_t* ak = a + k * MR;
    const uint16_t* bk = b + k * NR;
    _tile_loadd(4, ak, 64);
    _tile_loadd(5, ak + 16 * 32, 64);
    _tile_loadd(6, bk, NR * 4);
    _tile_loadd(7, bk + 32, NR * 4);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, acc, NR * 4);
  _tile_stored(1, acc + 16, NR * 4);
  _tile_stored(2, acc + 16 * NR, NR * 4);
  _tile_stored(3, acc + 16 * NR + 16, NR * 4);
}

// 8 rows x 32 columns per pass (16 accumulators), up to four passes; rows
// past m are skipped a pass at a time. A pair of bf16 values of one A row is
// broadcast as one 32-bit element.
OC_BF16_TARGET void bf16_gemm_32x32_avx512bf16(int64_t kcp, const uint16_t* a, const uint16_t* b, float* acc,
                                               int64_t m) {
  for (int64_t r0 = 0; r0 < m && r0 < MR; r0 += 8) {
    __m512 c[8][2];
    for (int i = 0; i < 8; ++i) c[i][0] = c[i][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kcp; k += 32) {
      const uint16_t* ak = a + k * MR + r0 * 32;
      const uint16_t* bk = b + k * NR;
      for (int p = 0; p < 16; ++p) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(bk + p * NR * 2);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512(bk + p * NR * 2 + 32);
        for (int i = 0; i < 8; ++i) {
          int32_t pair;
          std::memcpy(&pair, ak + i * 32 + 2 * p, 4);
          const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
          c[i][0] = _mm512_dpbf16_ps(c[i][0], av, b0);
          c[i][1] = _mm512_dpbf16_ps(c[i][1], av, b1);
        }
      }
    }
    for (int i = 0; i < 8; ++i) {
      _mm512_storeu_ps(acc + (r0 + i) * NR, c[i][0]);
      _mm512_storeu_ps(acc + (r0 + i) * NR + 16, c[i][1]);
    }
  }
}

// 16 floats -> 16 bf16 (round to nearest even).
OC_BF16_TARGET inline __m256i Cvt16(__m512 v) { return (__m256i)_mm512_cvtneps_pbh(v); }

OC_BF16_TARGET void PackARowsAvx512(const float* a, int64_t lda, int64_t rows, int64_t kc, uint16_t* dst) {
  const int64_t kcp = Bf16PaddedK(kc);
  for (int64_t k0 = 0; k0 < kcp; k0 += 32) {
    uint16_t* blk = dst + k0 * MR;
    const int64_t left = kc - k0;
    const __mmask16 m0 = left >= 16 ? 0xffff : left <= 0 ? 0 : static_cast<__mmask16>((1u << left) - 1);
    const __mmask16 m1 = left >= 32 ? 0xffff : left <= 16 ? 0 : static_cast<__mmask16>((1u << (left - 16)) - 1);
    for (int64_t i = 0; i < MR; ++i) {
      uint16_t* d = blk + i * 32;
      if (i >= rows) {
        _mm512_storeu_si512(d, _mm512_setzero_si512());
        continue;
      }
      const float* s = a + i * lda + k0;
      const __m512 lo = _mm512_maskz_loadu_ps(m0, s);
      const __m512 hi = _mm512_maskz_loadu_ps(m1, s + 16);
      // cvtne2ps: the second operand fills the low half.
      _mm512_storeu_si512(d, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
  }
}

OC_BF16_TARGET void PackBRowsAvx512(const float* b, int64_t ldb, int64_t cols, int64_t kc, int64_t kcp,
                                    uint16_t* dst) {
  // Interleaves the low half (row k) and the high half (row k+1) of one
  // cvtne2ps result into 16 (k, k+1) pairs.
  alignas(64) static constexpr uint16_t kIdx[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                    8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i idx = _mm512_load_si512(kIdx);
  for (int64_t j0 = 0; j0 < cols; j0 += NR) {
    uint16_t* panel = dst + (j0 / NR) * kcp * NR;
    for (int64_t h = 0; h < 2; ++h) {
      const int64_t c0 = j0 + h * 16;
      const int64_t n = std::min<int64_t>(16, cols - c0);
      const __mmask16 mask = n >= 16 ? 0xffff : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
      for (int64_t k = 0; k < kcp; k += 2) {
        const __m512 r0 = k < kc ? _mm512_maskz_loadu_ps(mask, b + k * ldb + c0) : _mm512_setzero_ps();
        const __m512 r1 = k + 1 < kc ? _mm512_maskz_loadu_ps(mask, b + (k + 1) * ldb + c0) : _mm512_setzero_ps();
        const __m512i both = (__m512i)_mm512_cvtne2ps_pbh(r1, r0);
        _mm512_storeu_si512(panel + k * NR + h * 32, _mm512_permutexvar_epi16(idx, both));
      }
    }
  }
}

OC_BF16_TARGET inline __m512 Activate(__m512 v, const TileEpilogue& ep) {
  switch (ep.act) {
    case ActivationKind::kRelu: return _mm512_max_ps(v, _mm512_setzero_ps());
    case ActivationKind::kLeakyRelu: {
      const __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
      return _mm512_mask_mul_ps(v, neg, v, _mm512_set1_ps(ep.act_alpha));
    }
    case ActivationKind::kClip:
      return _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(ep.act_alpha)), _mm512_set1_ps(ep.act_beta));
    default: return v;
  }
}

OC_BF16_TARGET void StoreTileAvx512(const float* acc, float* c, int64_t ldc, int64_t m, int64_t n, float alpha,
                                    float beta, const TileEpilogue* ep) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    for (int64_t j = 0; j < n; j += 16) {
      const int64_t w = std::min<int64_t>(16, n - j);
      const __mmask16 mask = w >= 16 ? 0xffff : static_cast<__mmask16>((1u << w) - 1);
      __m512 v = _mm512_mul_ps(va, _mm512_loadu_ps(acc + i * NR + j));
      if (beta != 0.f) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask, ci + j), v);
      if (ep) {
        if (ep->row_bias) v = _mm512_add_ps(v, _mm512_set1_ps(ep->row_bias[i]));
        if (ep->col_bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, ep->col_bias + j));
        if (ep->residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, ep->residual + i * ep->ldr + j));
        v = Activate(v, *ep);
      }
      _mm512_mask_storeu_ps(ci + j, mask, v);
    }
  }
}

constexpr Bf16Ukernel kAmx{"bf16_gemm_32x32_amx", 1024, 128, 256, &bf16_gemm_32x32_amx, true};
constexpr Bf16Ukernel kAvx512Bf16{"bf16_gemm_32x32_avx512bf16", 512, 128, 256, &bf16_gemm_32x32_avx512bf16, false};

}  // namespace


OC_AMXBF16_TARGET void ConfigureAmxTiles() { _tile_loadconfig(&amx::kTileConfig); }

IsaHooks X86Hooks() {
  if (!Avx512Bf16Cpu()) return {};
  return {&PackARowsAvx512, &PackBRowsAvx512, &StoreTileAvx512};
}

const Bf16Ukernel* AmxUkernel() {
  static const bool usable = DetectAmxBf16();
  return usable ? &kAmx : nullptr;
}

const Bf16Ukernel* Avx512Bf16Ukernel() { return Avx512Bf16Cpu() ? &kAvx512Bf16 : nullptr; }

}  // namespace oc::gemm::bf16_detail

#else  // not x86-64

namespace oc::gemm::bf16_detail {
IsaHooks X86Hooks() { return {}; }
const Bf16Ukernel* AmxUkernel() { return nullptr; }
const Bf16Ukernel* Avx512Bf16Ukernel() { return nullptr; }
void ConfigureAmxTiles() {}
}  // namespace oc::gemm::bf16_detail

#endif

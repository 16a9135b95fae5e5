// AVX-512 VNNI integer GEMM micro-kernel, 14x32: 28 zmm int32 accumulators,
// two B vectors (16 columns x 4 k bytes each) per group of four k, and the four
// A bytes of a row broadcast from memory straight into vpdpbusd (u8 x s8, four
// products summed into each int32 lane, exact). A tile of m < 14 rows runs an
// m-row instance of the same loop; columns past n are masked at the store.
// Compiled with the file's AVX-512 flags plus VNNI for these functions only;
// called only when the CPU reports AVX-512 VNNI.
#include <immintrin.h>

#include <cstring>

#include "ops/cpu/gemm/integer_gemm.h"

#define OC_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace oc::igemm {

namespace {

constexpr int kMR = 14;
constexpr int kNR = 32;

template <int M>
OC_VNNI_TARGET void Tile(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c, int64_t ldc,
                         int64_t n, bool accumulate) {
  __m512i c0[M], c1[M];
#pragma GCC unroll 14
  for (int i = 0; i < M; ++i) c0[i] = c1[i] = _mm512_setzero_si512();
  for (int64_t g = 0; g < kgroups; ++g) {
    const __m512i b0 = _mm512_loadu_si512(pb);
    const __m512i b1 = _mm512_loadu_si512(pb + 64);
#pragma GCC unroll 14
    for (int i = 0; i < M; ++i) {
      int32_t a4;
      std::memcpy(&a4, pa + i * 4, 4);
      const __m512i a = _mm512_set1_epi32(a4);
      c0[i] = _mm512_dpbusd_epi32(c0[i], a, b0);
      c1[i] = _mm512_dpbusd_epi32(c1[i], a, b1);
    }
    pa += kMR * 4;
    pb += kNR * 4;
  }
  const __mmask16 k0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 k1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
#pragma GCC unroll 14
  for (int i = 0; i < M; ++i) {
    int32_t* ci = c + i * ldc;
    __m512i r0 = c0[i], r1 = c1[i];
    if (accumulate) {
      r0 = _mm512_add_epi32(r0, _mm512_maskz_loadu_epi32(k0, ci));
      r1 = _mm512_add_epi32(r1, _mm512_maskz_loadu_epi32(k1, ci + 16));
    }
    _mm512_mask_storeu_epi32(ci, k0, r0);
    _mm512_mask_storeu_epi32(ci + 16, k1, r1);
  }
}

using TileFn = void (*)(int64_t, const uint8_t*, const int8_t*, int32_t*, int64_t, int64_t, bool);
constexpr TileFn kTiles[kMR + 1] = {nullptr,  Tile<1>,  Tile<2>,  Tile<3>,  Tile<4>,
                                    Tile<5>,  Tile<6>,  Tile<7>,  Tile<8>,  Tile<9>,
                                    Tile<10>, Tile<11>, Tile<12>, Tile<13>, Tile<14>};

}  // namespace

void u8s8_igemm_14x32_avx512vnni(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c,
                                 int64_t ldc, int64_t m, int64_t n, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  kTiles[m > kMR ? kMR : m](kgroups, pa, pb, c, ldc, n, accumulate);
}

// Column sums of a 32-column B panel: vpdpbusd of all-ones bytes with each
// 64-byte half of a group row adds that column's four int8 values.
OC_VNNI_TARGET void s8_colsums_32_avx512vnni(const int8_t* panel, int64_t kgroups, int32_t* sums) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
  for (int64_t g = 0; g < kgroups; ++g) {
    s0 = _mm512_dpbusd_epi32(s0, ones, _mm512_loadu_si512(panel + g * 128));
    s1 = _mm512_dpbusd_epi32(s1, ones, _mm512_loadu_si512(panel + g * 128 + 64));
  }
  _mm512_storeu_si512(sums, s0);
  _mm512_storeu_si512(sums + 16, s1);
}

}  // namespace oc::igemm

// AMX-INT8 integer GEMM micro-kernel, 32x32: the C tile is four 16x16 int32
// tiles (tmm0-3), A two 16-row x 64-k tiles (tmm4-5, kRow64 packing), B two
// 16-group x 16-column tiles (tmm6-7) read straight from the ordinary B
// panels (a group row of a 32-column panel is 128 bytes; each tile takes 64
// of them). Each 64-deep step is four tdpbusd, 16K multiply-adds each.
// Partial tiles compute all 32x32 (packing zero-pads) and store through a
// local buffer. The tile configuration is loaded once per thread.
//
// Using AMX needs the OS's permission for the tile-data state: on Linux a
// process asks once with arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
// without it the first tile instruction would fault, so AmxUsable() asks
// before the micro-kernel is ever selected.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>


#include "base/cpu_features.h"
#include "ops/cpu/gemm/amx_tiles.h"
#include "ops/cpu/gemm/integer_gemm.h"

#define OC_AMX_TARGET __attribute__((target("amx-tile,amx-int8")))

namespace oc::igemm {

namespace {

constexpr int kMR = 32;
constexpr int kNR = 32;

bool DetectAmx() {
  return GetCpuFeatures().amx_int8 && amx::EnabledAndPermitted();
}

OC_AMX_TARGET void ConfigureTiles() {
  thread_local bool configured = false;
  if (configured) return;
  _tile_loadconfig(&amx::kTileConfig);
  configured = true;
}

}  // namespace

bool AmxUsable() {
  static const bool usable = DetectAmx();
  return usable;
}

OC_AMX_TARGET void u8s8_igemm_32x32_amx(int64_t kgroups, const uint8_t* pa, const int8_t* pb, int32_t* c,
                                        int64_t ldc, int64_t m, int64_t n, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  ConfigureTiles();
  const bool full = m == kMR && n == kNR;
  const long cs = static_cast<long>(ldc * sizeof(int32_t));
  if (accumulate && full) {
    _tile_loadd(0, c, cs);
    _tile_loadd(1, c + 16, cs);
    _tile_loadd(2, c + 16 * ldc, cs);
    _tile_loadd(3, c + 16 * ldc + 16, cs);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t g = 0; g < kgroups; g += 16) {
    const uint8_t* a = pa + (g / 16) * kMR * 64;
    const int8_t* b = pb + g * kNR * 4;
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a + 16 * 64, 64);
    _tile_loadd(6, b, kNR * 4);
    _tile_loadd(7, b + 64, kNR * 4);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  if (full) {
    _tile_stored(0, c, cs);
    _tile_stored(1, c + 16, cs);
    _tile_stored(2, c + 16 * ldc, cs);
    _tile_stored(3, c + 16 * ldc + 16, cs);
    return;
  }
  alignas(64) int32_t tmp[kMR * kNR];
  _tile_stored(0, tmp, kNR * 4);
  _tile_stored(1, tmp + 16, kNR * 4);
  _tile_stored(2, tmp + 16 * kNR, kNR * 4);
  _tile_stored(3, tmp + 16 * kNR + 16, kNR * 4);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t& d = c[i * ldc + j];
      const int32_t v = tmp[i * kNR + j];
      d = accumulate ? static_cast<int32_t>(static_cast<uint32_t>(d) + static_cast<uint32_t>(v)) : v;
    }
}

}  // namespace oc::igemm

#endif  // x86-64

// What the AMX micro-kernels (bf16 GEMM, int8 GEMM) share: the OS permission
// for the tile-data state, the OPENCANN_AMX=0 switch, and the one tile
// palette both load (8 tiles of 16 rows x 64 bytes), so a thread may run
// either kernel after the other without reconfiguring.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace oc::amx {

// False when OPENCANN_AMX=0, or when Linux refuses the tile-data permission
// (without it the first tile instruction faults). The caller checks the CPU
// feature bits (GetCpuFeatures().amx_*) first.
inline bool EnabledAndPermitted() {
  if (const char* env = std::getenv("OPENCANN_AMX"); env && std::strcmp(env, "0") == 0) return false;
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

struct TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

constexpr TileConfig MakeTileConfig() {
  TileConfig cfg{};
  cfg.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  return cfg;
}

// Static memory on purpose: GCC's _tile_loadconfig declares an 8-byte read, so
// stores that fill a stack copy may be dropped as dead.
alignas(64) inline constexpr TileConfig kTileConfig = MakeTileConfig();

}  // namespace oc::amx

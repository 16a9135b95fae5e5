/* leaky_relu_custom's tiling, defined once for the host and the kernel with
 * the tiling-data macros: totalLength must split into blockDim blocks of
 * tileNum * 2 tiles of whole 32-byte blocks (16 halves). */
#pragma once
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LeakyReluTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, totalLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileNum);
  TILING_DATA_FIELD_DEF(float, alpha);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(LeakyReluCustom, LeakyReluTilingData)
}  // namespace optiling

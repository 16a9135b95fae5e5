// PNG decode with the rules of the media engine's PNG unit (docs/dvpp.md):
// RGB888 or RGBA8888 output, strides aligned to 128 bytes and 16 rows. The
// decoding itself is libspng's, with limits on picture and chunk sizes.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "dvpp/jpeg.h"  // DecodedGeometry
#include "dvpp/picture.h"

namespace oc::dvpp {

struct PngInfo {
  uint32_t width = 0, height = 0;
  int components = 0;  // 1 gray, 2 gray+alpha, 3 RGB/palette, 4 with alpha or transparency
  bool has_alpha = false;
  int bit_depth = 0, color_type = 0;
};

inline constexpr uint32_t kPngMinSide = 32, kPngMaxSide = 4096;
inline constexpr uint32_t kPngdWidthAlign = 128, kPngdHeightAlign = 16;

Expected<PngInfo> ReadPngInfo(std::span<const uint8_t> file);
// kUnknown requested: RGBA8888 when the file has alpha, else RGB888.
Expected<DecodedGeometry> PngDecodeGeometry(const PngInfo& info, PixelFormat requested);
Status DecodePng(std::span<const uint8_t> file, const DecodedGeometry& geometry, uint8_t* out, uint64_t out_size);

}  // namespace oc::dvpp

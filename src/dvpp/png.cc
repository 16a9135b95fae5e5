#include "dvpp/png.h"

#include <spng.h>

#include <cstring>
#include <memory>
#include <vector>

namespace oc::dvpp {

namespace {

// Bounds on what a hostile file can make the decoder allocate: the picture
// itself is bounded by kPngMaxSide; text and other ancillary chunks by these.
constexpr size_t kChunkLimit = 16u << 20, kChunkCacheLimit = 64u << 20;

struct SpngCtx {
  SpngCtx() : ctx(spng_ctx_new(0)) {}
  ~SpngCtx() {
    if (ctx) spng_ctx_free(ctx);
  }
  SpngCtx(const SpngCtx&) = delete;
  SpngCtx& operator=(const SpngCtx&) = delete;
  spng_ctx* ctx;
};

Status Open(SpngCtx& c, std::span<const uint8_t> file) {
  if (!c.ctx) return ResourceExhausted("cannot create a PNG decoder");
  if (file.size() < 8 || std::memcmp(file.data(), "\x89PNG\r\n\x1a\n", 8) != 0)
    return InvalidArgument("the data is not a PNG file (it does not start with the 8-byte PNG signature)");
  spng_set_image_limits(c.ctx, 1u << 16, 1u << 16);
  spng_set_chunk_limits(c.ctx, kChunkLimit, kChunkCacheLimit);
  if (int e = spng_set_png_buffer(c.ctx, file.data(), file.size()))
    return InvalidArgument("the PNG data cannot be read: ", spng_strerror(e));
  return Status::Ok();
}

}  // namespace

Expected<PngInfo> ReadPngInfo(std::span<const uint8_t> file) {
  SpngCtx c;
  if (Status st = Open(c, file); !st.ok()) return st;
  spng_ihdr ihdr{};
  if (int e = spng_get_ihdr(c.ctx, &ihdr)) return InvalidArgument("the PNG header is invalid: ", spng_strerror(e));
  PngInfo info;
  info.width = ihdr.width;
  info.height = ihdr.height;
  info.bit_depth = ihdr.bit_depth;
  info.color_type = ihdr.color_type;
  spng_trns trns{};
  const int te = spng_get_trns(c.ctx, &trns);
  if (te != 0 && te != SPNG_ECHUNKAVAIL)
    return InvalidArgument("the PNG chunks before the image data are invalid: ", spng_strerror(te));
  const bool has_trns = te == 0;
  switch (ihdr.color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE: info.components = has_trns ? 4 : 1; break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: info.components = 2; break;
    case SPNG_COLOR_TYPE_TRUECOLOR: info.components = has_trns ? 4 : 3; break;
    case SPNG_COLOR_TYPE_INDEXED: info.components = has_trns ? 4 : 3; break;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA: info.components = 4; break;
    default: return InvalidArgument("the PNG colour type ", int(ihdr.color_type), " is invalid");
  }
  info.has_alpha = has_trns || ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
                   ihdr.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  return info;
}

Expected<DecodedGeometry> PngDecodeGeometry(const PngInfo& info, PixelFormat requested) {
  if (info.width < kPngMinSide || info.width > kPngMaxSide || info.height < kPngMinSide ||
      info.height > kPngMaxSide)
    return InvalidArgument("the PNG picture is ", info.width, "x", info.height, "; the decoder takes ", kPngMinSide,
                           "..", kPngMaxSide, " pixels a side");
  PixelFormat f = requested;
  if (f == PixelFormat::kUnknown) f = info.has_alpha ? PixelFormat::kRgba8888 : PixelFormat::kRgb888;
  if (f != PixelFormat::kRgb888 && f != PixelFormat::kRgba8888)
    return InvalidArgument("a PNG cannot be decoded to ", FormatName(static_cast<int>(f)), " (allowed: ",
                           FormatName(12), ", ", FormatName(16), ", or ", FormatName(10000), ")");
  DecodedGeometry g;
  g.format = f;
  g.width = info.width;
  g.height = info.height;
  g.width_stride = AlignUp(info.width * Describe(f)->bytes_per_pixel, kPngdWidthAlign);
  g.height_stride = AlignUp(info.height, kPngdHeightAlign);
  g.bytes = uint64_t(g.width_stride) * g.height_stride;
  return g;
}

Status DecodePng(std::span<const uint8_t> file, const DecodedGeometry& g, uint8_t* out, uint64_t out_size) {
  if (out_size < g.bytes) return Internal("DecodePng: output buffer smaller than the geometry");
  SpngCtx c;
  if (Status st = Open(c, file); !st.ok()) return st;
  const int fmt = g.format == PixelFormat::kRgba8888 ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
  size_t len = 0;
  if (int e = spng_decoded_image_size(c.ctx, fmt, &len))
    return InvalidArgument("the PNG file cannot be decoded: ", spng_strerror(e));
  const size_t row = size_t(g.width) * Describe(g.format)->bytes_per_pixel;
  if (len != row * g.height) return InvalidArgument("the PNG header changed between reads");
  std::vector<uint8_t> pixels(len);
  if (int e = spng_decode_image(c.ctx, pixels.data(), len, fmt, SPNG_DECODE_TRNS))
    return InvalidArgument("the PNG data is corrupt or truncated: ", spng_strerror(e));
  for (uint32_t y = 0; y < g.height; ++y)
    std::memcpy(out + size_t(y) * g.width_stride, pixels.data() + y * row, row);
  return Status::Ok();
}

}  // namespace oc::dvpp

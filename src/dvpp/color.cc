#include "dvpp/color.h"

#include <algorithm>
#include <cstring>

namespace oc::dvpp {

namespace {

// The matrix in 16-bit fixed point (each coefficient * 65536, rounded; each
// row of the forward matrix sums to 65536 or 0 as the real one does).
constexpr int32_t kOne = 1 << 16, kHalf = 1 << 15;
constexpr int32_t kYr = 19595, kYg = 38470, kYb = 7471;
constexpr int32_t kCbR = -11059, kCbG = -21709, kCbB = 32768;
constexpr int32_t kCrR = 32768, kCrG = -27439, kCrB = -5329;
constexpr int32_t kRv = 91881, kGu = -22554, kGv = -46802, kBu = 116130;

uint8_t Clamp8(int32_t fixed) {  // fixed: a value * 65536, rounded to the nearest integer
  return static_cast<uint8_t>(std::clamp((fixed + kHalf) >> 16, 0, 255));
}

bool IsRgb(PixelFormat f) { return f == PixelFormat::kRgb888 || f == PixelFormat::kBgr888; }
bool Is420(PixelFormat f) { return f == PixelFormat::kNv12 || f == PixelFormat::kNv21; }

// The (r, g, b) byte offsets of a packed RGB888/BGR888 pixel.
void RgbOrder(PixelFormat f, int* r, int* b) {
  *r = f == PixelFormat::kRgb888 ? 0 : 2;
  *b = 2 - *r;
}

void CopyLuma(const Picture& in, const Picture& out) {
  for (uint32_t y = 0; y < in.height; ++y) std::memcpy(out.Row(y), in.Row(y), in.width);
}

void YuvToRgb(const Picture& in, const Picture& out) {
  int ro, bo;
  RgbOrder(out.format, &ro, &bo);
  const bool chroma = Is420(in.format);
  const int ui = in.format == PixelFormat::kNv21 ? 1 : 0;
  for (uint32_t y = 0; y < in.height; ++y) {
    const uint8_t* ys = in.Row(y);
    const uint8_t* cs = chroma ? in.ChromaRow(y / 2) : nullptr;
    uint8_t* d = out.Row(y);
    for (uint32_t x = 0; x < in.width; ++x) {
      const int32_t yy = int32_t{ys[x]} << 16;
      const int32_t cb = chroma ? cs[(x / 2) * 2 + ui] - 128 : 0;
      const int32_t cr = chroma ? cs[(x / 2) * 2 + 1 - ui] - 128 : 0;
      d[3 * x + ro] = Clamp8(yy + kRv * cr);
      d[3 * x + 1] = Clamp8(yy + kGu * cb + kGv * cr);
      d[3 * x + bo] = Clamp8(yy + kBu * cb);
    }
  }
}

void RgbToYuv(const Picture& in, const Picture& out) {
  int ro, bo;
  RgbOrder(in.format, &ro, &bo);
  for (uint32_t y = 0; y < in.height; ++y) {
    const uint8_t* s = in.Row(y);
    uint8_t* d = out.Row(y);
    for (uint32_t x = 0; x < in.width; ++x)
      d[x] = Clamp8(kYr * s[3 * x + ro] + kYg * s[3 * x + 1] + kYb * s[3 * x + bo]);
  }
  if (!Is420(out.format)) return;
  const int ui = out.format == PixelFormat::kNv21 ? 1 : 0;
  for (uint32_t cy = 0; cy < (in.height + 1) / 2; ++cy) {
    uint8_t* d = out.ChromaRow(cy);
    for (uint32_t cx = 0; cx < (in.width + 1) / 2; ++cx) {
      int32_t su = 0, sv = 0, n = 0;
      for (uint32_t y = 2 * cy; y < std::min(2 * cy + 2, in.height); ++y)
        for (uint32_t x = 2 * cx; x < std::min(2 * cx + 2, in.width); ++x) {
          const uint8_t* p = in.Row(y) + 3 * x;
          su += kCbR * p[ro] + kCbG * p[1] + kCbB * p[bo];
          sv += kCrR * p[ro] + kCrG * p[1] + kCrB * p[bo];
          ++n;
        }
      // The mean plus 128, rounded: the sums plus n * (128.5 * 65536) are positive.
      d[2 * cx + ui] = static_cast<uint8_t>(std::min((su + n * (128 * kOne + kHalf)) / (n * kOne), 255));
      d[2 * cx + 1 - ui] = static_cast<uint8_t>(std::min((sv + n * (128 * kOne + kHalf)) / (n * kOne), 255));
    }
  }
}

}  // namespace

void ConvertColor(const Picture& in, const Picture& out) {
  const uint32_t cw = (in.width + 1) / 2, ch = (in.height + 1) / 2;
  if (IsRgb(in.format) && IsRgb(out.format)) {
    const bool swap = in.format != out.format;
    for (uint32_t y = 0; y < in.height; ++y) {
      const uint8_t* s = in.Row(y);
      uint8_t* d = out.Row(y);
      for (uint32_t x = 0; x < in.width; ++x) {
        d[3 * x] = s[3 * x + (swap ? 2 : 0)];
        d[3 * x + 1] = s[3 * x + 1];
        d[3 * x + 2] = s[3 * x + (swap ? 0 : 2)];
      }
    }
  } else if (IsRgb(in.format)) {
    RgbToYuv(in, out);
  } else if (IsRgb(out.format)) {
    YuvToRgb(in, out);
  } else {  // YUV400 / NV12 / NV21 to each other: Y as is, chroma swapped, copied or neutral
    CopyLuma(in, out);
    if (!Is420(out.format)) return;
    for (uint32_t cy = 0; cy < ch; ++cy) {
      uint8_t* d = out.ChromaRow(cy);
      if (!Is420(in.format)) {
        std::memset(d, 0x80, size_t(cw) * 2);
        continue;
      }
      const uint8_t* s = in.ChromaRow(cy);
      const bool swap = in.format != out.format;
      for (uint32_t cx = 0; cx < cw; ++cx) {
        d[2 * cx] = s[2 * cx + (swap ? 1 : 0)];
        d[2 * cx + 1] = s[2 * cx + (swap ? 0 : 1)];
      }
    }
  }
}

}  // namespace oc::dvpp

#include "dvpp/color.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace oc::dvpp {

namespace {

uint8_t Clamp8(float v) { return static_cast<uint8_t>(std::clamp(std::floor(v + 0.5f), 0.0f, 255.0f)); }

float Luma(float r, float g, float b) { return 0.299f * r + 0.587f * g + 0.114f * b; }
float Cb(float r, float g, float b) { return -0.168736f * r - 0.331264f * g + 0.5f * b + 128.0f; }
float Cr(float r, float g, float b) { return 0.5f * r - 0.418688f * g - 0.081312f * b + 128.0f; }

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
      const float yy = ys[x];
      const float cb = chroma ? cs[(x / 2) * 2 + ui] - 128.0f : 0.0f;
      const float cr = chroma ? cs[(x / 2) * 2 + 1 - ui] - 128.0f : 0.0f;
      d[3 * x + ro] = Clamp8(yy + 1.402f * cr);
      d[3 * x + 1] = Clamp8(yy - 0.344136f * cb - 0.714136f * cr);
      d[3 * x + bo] = Clamp8(yy + 1.772f * cb);
    }
  }
}

void RgbToYuv(const Picture& in, const Picture& out) {
  int ro, bo;
  RgbOrder(in.format, &ro, &bo);
  for (uint32_t y = 0; y < in.height; ++y) {
    const uint8_t* s = in.Row(y);
    uint8_t* d = out.Row(y);
    for (uint32_t x = 0; x < in.width; ++x) d[x] = Clamp8(Luma(s[3 * x + ro], s[3 * x + 1], s[3 * x + bo]));
  }
  if (!Is420(out.format)) return;
  const int ui = out.format == PixelFormat::kNv21 ? 1 : 0;
  for (uint32_t cy = 0; cy < (in.height + 1) / 2; ++cy) {
    uint8_t* d = out.ChromaRow(cy);
    for (uint32_t cx = 0; cx < (in.width + 1) / 2; ++cx) {
      float su = 0, sv = 0;
      int n = 0;
      for (uint32_t y = 2 * cy; y < std::min(2 * cy + 2, in.height); ++y)
        for (uint32_t x = 2 * cx; x < std::min(2 * cx + 2, in.width); ++x) {
          const uint8_t* p = in.Row(y) + 3 * x;
          su += Cb(p[ro], p[1], p[bo]);
          sv += Cr(p[ro], p[1], p[bo]);
          ++n;
        }
      d[2 * cx + ui] = Clamp8(su / n);
      d[2 * cx + 1 - ui] = Clamp8(sv / n);
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

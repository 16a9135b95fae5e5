// Pictures as the media engine sees them: a pixel format, a size, and a buffer
// laid out with a row stride (widthStride, bytes) and a plane height
// (heightStride, rows). Semi-planar formats keep the chroma plane right after
// heightStride rows of Y. The numbering of PixelFormat is CANN's
// (acldvppPixelFormat), so the API layer passes values through unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oc::dvpp {

enum class PixelFormat : int {
  kYuv400 = 0,
  kNv12 = 1,  // YUV420SP, U first
  kNv21 = 2,  // YUV420SP, V first
  kYuv422Sp = 3,
  kYvu422Sp = 4,
  kYuv444Sp = 5,
  kYvu444Sp = 6,
  kRgb888 = 12,
  kBgr888 = 13,
  kRgba8888 = 16,
  kUnknown = 10000,
};

// How a format is stored. Only the formats this engine reads or writes are
// described; Describe() returns nullptr for the others.
struct FormatInfo {
  PixelFormat format;
  const char* name;        // CANN's enum name, for messages
  bool semi_planar;        // Y plane + interleaved chroma plane
  int chroma_w_div;        // semi-planar: luma columns per chroma sample (1 or 2)
  int chroma_h_div;        // semi-planar: luma rows per chroma row (1 or 2)
  bool v_first;            // semi-planar: chroma pairs stored V,U
  int bytes_per_pixel;     // packed formats (3 or 4); 1 for the Y plane otherwise
  bool has_chroma;         // false for YUV400
};

const FormatInfo* Describe(PixelFormat f);
// "PIXEL_FORMAT_RGB_888 (12)", or "pixel format 99" for values without a name.
std::string FormatName(int value);

inline uint32_t AlignUp(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// Bytes a picture of this format needs with these strides (0 for an
// undescribed format). Computed in 64 bits: strides come from callers.
uint64_t PictureBytes(const FormatInfo& f, uint64_t width_stride, uint64_t height_stride);

// A picture in memory. For semi-planar formats the chroma plane starts at
// data + width_stride * height_stride and has rows of width_stride bytes.
struct Picture {
  uint8_t* data = nullptr;
  uint64_t size = 0;
  PixelFormat format = PixelFormat::kYuv400;
  uint32_t width = 0, height = 0, width_stride = 0, height_stride = 0;

  uint8_t* Row(uint32_t y) const { return data + static_cast<size_t>(y) * width_stride; }
  // Bytes per chroma row: two per chroma sample, width_stride / chroma_w_div samples.
  size_t ChromaStride() const;
  uint8_t* ChromaRow(uint32_t cy) const {
    return data + static_cast<size_t>(width_stride) * height_stride + cy * ChromaStride();
  }
};

// An axis-aligned rectangle of whole pixels: columns [left, left + width),
// rows [top, top + height).
struct Rect {
  uint32_t left = 0, top = 0, width = 0, height = 0;
};

}  // namespace oc::dvpp

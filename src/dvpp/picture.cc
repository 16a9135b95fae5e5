#include "dvpp/picture.h"

#include "base/status.h"

namespace oc::dvpp {

namespace {
constexpr FormatInfo kFormats[] = {
    {PixelFormat::kYuv400, "PIXEL_FORMAT_YUV_400", false, 1, 1, false, 1, false},
    {PixelFormat::kNv12, "PIXEL_FORMAT_YUV_SEMIPLANAR_420", true, 2, 2, false, 1, true},
    {PixelFormat::kNv21, "PIXEL_FORMAT_YVU_SEMIPLANAR_420", true, 2, 2, true, 1, true},
    {PixelFormat::kYuv422Sp, "PIXEL_FORMAT_YUV_SEMIPLANAR_422", true, 2, 1, false, 1, true},
    {PixelFormat::kYvu422Sp, "PIXEL_FORMAT_YVU_SEMIPLANAR_422", true, 2, 1, true, 1, true},
    {PixelFormat::kYuv444Sp, "PIXEL_FORMAT_YUV_SEMIPLANAR_444", true, 1, 1, false, 1, true},
    {PixelFormat::kYvu444Sp, "PIXEL_FORMAT_YVU_SEMIPLANAR_444", true, 1, 1, true, 1, true},
    {PixelFormat::kRgb888, "PIXEL_FORMAT_RGB_888", false, 1, 1, false, 3, true},
    {PixelFormat::kBgr888, "PIXEL_FORMAT_BGR_888", false, 1, 1, false, 3, true},
    {PixelFormat::kRgba8888, "PIXEL_FORMAT_RGBA_8888", false, 1, 1, false, 4, true},
};
}  // namespace

const FormatInfo* Describe(PixelFormat f) {
  for (const FormatInfo& i : kFormats)
    if (i.format == f) return &i;
  return nullptr;
}

std::string FormatName(int value) {
  if (value == static_cast<int>(PixelFormat::kUnknown)) return StrCat("PIXEL_FORMAT_UNKNOWN (", value, ")");
  const FormatInfo* f = Describe(static_cast<PixelFormat>(value));
  return f ? StrCat(f->name, " (", value, ")") : StrCat("pixel format ", value);
}

uint64_t PictureBytes(const FormatInfo& f, uint64_t width_stride, uint64_t height_stride) {
  uint64_t luma = width_stride * height_stride;
  if (!f.semi_planar) return luma;
  // Two chroma bytes per chroma sample: (ws / w_div) * 2 bytes per chroma row.
  return luma + luma * 2 / (f.chroma_w_div * f.chroma_h_div);
}

size_t Picture::ChromaStride() const {
  const FormatInfo* f = Describe(format);
  return f && f->semi_planar ? static_cast<size_t>(width_stride) * 2 / f->chroma_w_div : width_stride;
}

}  // namespace oc::dvpp

#include "dvpp/vpc.h"

#include <algorithm>
#include <string>
#include <utility>

namespace oc::dvpp {

namespace {

enum class Family { kYuv420Sp, kYuv400, kRgb };

Family FamilyOf(PixelFormat f) {
  if (f == PixelFormat::kNv12 || f == PixelFormat::kNv21) return Family::kYuv420Sp;
  if (f == PixelFormat::kYuv400) return Family::kYuv400;
  return Family::kRgb;
}

std::string Name(PixelFormat f) { return FormatName(static_cast<int>(f)); }

// "1/4" or "3" for the ratio to/from.
std::string Ratio(uint32_t from, uint32_t to) {
  if (to >= from) return to % from == 0 ? StrCat(to / from) : StrCat(double(to) / from);
  return from % to == 0 ? StrCat("1/", from / to) : StrCat("1/", double(from) / to);
}

}  // namespace

bool VpcFormat(PixelFormat f) {
  return f == PixelFormat::kYuv400 || f == PixelFormat::kNv12 || f == PixelFormat::kNv21 ||
         f == PixelFormat::kRgb888 || f == PixelFormat::kBgr888;
}

Status CheckVpcPicture(const char* which, const Picture& p, bool output) {
  if (!VpcFormat(p.format))
    return InvalidArgument(which, " format ", Name(p.format), " is not supported by the VPC (allowed: ",
                           Name(PixelFormat::kYuv400), ", ", Name(PixelFormat::kNv12), ", ", Name(PixelFormat::kNv21),
                           ", ", Name(PixelFormat::kRgb888), ", ", Name(PixelFormat::kBgr888), ")");
  if (p.width < kVpcMinWidth || p.width > kVpcMaxSide)
    return InvalidArgument(which, " width ", p.width, " is outside [", kVpcMinWidth, ", ", kVpcMaxSide, "]");
  if (p.height < kVpcMinHeight || p.height > kVpcMaxSide)
    return InvalidArgument(which, " height ", p.height, " is outside [", kVpcMinHeight, ", ", kVpcMaxSide, "]");
  if (output && FamilyOf(p.format) == Family::kYuv420Sp && (p.width % 2 != 0 || p.height % 2 != 0))
    return InvalidArgument(which, " is ", p.width, "x", p.height, "; a YUV420SP output needs even width and height");
  const FormatInfo& f = *Describe(p.format);
  const uint64_t row = uint64_t(p.width) * f.bytes_per_pixel;
  const uint64_t least = std::max<uint64_t>(row, kVpcMinWidthStride);
  if (p.width_stride % kVpcWidthStrideAlign != 0 || p.width_stride < least || p.width_stride > kVpcMaxWidthStride)
    return InvalidArgument(which, " widthStride ", p.width_stride, " must be a multiple of ", kVpcWidthStrideAlign,
                           ", at least ", least, " (width ", p.width,
                           f.bytes_per_pixel > 1 ? StrCat(" * ", f.bytes_per_pixel, " bytes") : std::string(),
                           ", and never below ", kVpcMinWidthStride, ") and at most ", kVpcMaxWidthStride);
  if (p.height_stride % kVpcHeightStrideAlign != 0 || p.height_stride < p.height || p.height_stride > kVpcMaxSide)
    return InvalidArgument(which, " heightStride ", p.height_stride, " must be even, at least the height ", p.height,
                           " and at most ", kVpcMaxSide);
  const uint64_t need = PictureBytes(f, p.width_stride, p.height_stride);
  if (p.size < need)
    return InvalidArgument(which, " size ", p.size, " is smaller than the ", need, " bytes a ", Name(p.format),
                           " picture with widthStride ", p.width_stride, " and heightStride ", p.height_stride,
                           " needs");
  return Status::Ok();
}

Status CheckSameFamily(PixelFormat in, PixelFormat out) {
  if (FamilyOf(in) != FamilyOf(out))
    return InvalidArgument("outputDesc format ", Name(out), " is not of inputDesc format ", Name(in),
                           "'s family: resize and crop keep it (NV12 <-> NV21 and RGB888 <-> BGR888 are allowed); "
                           "acldvppVpcConvertColorAsync changes formats");
  return Status::Ok();
}

Status CheckRoi(const char* which, const Roi& roi, const char* pic, const Picture& p, bool paste, Rect* out) {
  if (roi.right < roi.left)
    return InvalidArgument(which, " right ", roi.right, " is less than left ", roi.left);
  if (roi.bottom < roi.top)
    return InvalidArgument(which, " bottom ", roi.bottom, " is less than top ", roi.top);
  if (roi.right >= p.width)
    return InvalidArgument(which, " right ", roi.right, " is outside the ", p.width, "-pixel-wide ", pic,
                           " picture (columns 0..", p.width - 1, ")");
  if (roi.bottom >= p.height)
    return InvalidArgument(which, " bottom ", roi.bottom, " is outside the ", p.height, "-pixel-high ", pic,
                           " picture (rows 0..", p.height - 1, ")");
  if (paste && roi.left % kVpcPasteLeftAlign != 0)
    return InvalidArgument(which, " left ", roi.left, " must be a multiple of ", kVpcPasteLeftAlign);
  if (FamilyOf(p.format) == Family::kYuv420Sp) {
    const char* rule = " (YUV420SP pictures: left and top even, right and bottom odd)";
    if (roi.left % 2 != 0) return InvalidArgument(which, " left ", roi.left, " must be even", rule);
    if (roi.right % 2 != 1) return InvalidArgument(which, " right ", roi.right, " must be odd", rule);
    if (roi.top % 2 != 0) return InvalidArgument(which, " top ", roi.top, " must be even", rule);
    if (roi.bottom % 2 != 1) return InvalidArgument(which, " bottom ", roi.bottom, " must be odd", rule);
  }
  const uint32_t w = roi.right - roi.left + 1, h = roi.bottom - roi.top + 1;
  if (w < kVpcMinWidth || h < kVpcMinHeight)
    return InvalidArgument(which, " is ", w, "x", h, " pixels; at least ", kVpcMinWidth, "x", kVpcMinHeight,
                           " are needed");
  *out = Rect{roi.left, roi.top, w, h};
  return Status::Ok();
}

Status CheckScale(const Rect& from, const Rect& to) {
  const char* axis[2] = {"width", "height"};
  const uint32_t f[2] = {from.width, from.height}, t[2] = {to.width, to.height};
  for (int i = 0; i < 2; ++i)
    if (uint64_t(t[i]) > uint64_t(f[i]) * kVpcMaxUpscale || uint64_t(t[i]) * kVpcMaxDownscale < f[i])
      return InvalidArgument("resizing ", axis[i], " ", f[i], " to ", t[i], " is a ratio of ", Ratio(f[i], t[i]),
                             "; allowed: [1/", kVpcMaxDownscale, ", ", kVpcMaxUpscale, "]");
  return Status::Ok();
}

void CropResizePaste(const Picture& in, const Rect& crop, const Picture& out, const Rect& paste, Interp interp) {
  const FormatInfo& fi = *Describe(in.format);
  const int bpp = fi.bytes_per_pixel;
  PlaneRef src{in.Row(crop.top) + size_t(crop.left) * bpp, in.width_stride, crop.width, crop.height};
  PlaneRef dst{out.Row(paste.top) + size_t(paste.left) * bpp, out.width_stride, paste.width, paste.height};
  ResizePlane(src, dst, bpp, interp);
  const bool swap = in.format != out.format;  // NV12 <-> NV21 or RGB <-> BGR
  if (bpp == 3 && swap)
    for (uint32_t y = 0; y < paste.height; ++y) {
      uint8_t* d = dst.data + y * dst.stride;
      for (uint32_t x = 0; x < paste.width; ++x) std::swap(d[3 * x], d[3 * x + 2]);
    }
  if (!fi.semi_planar) return;
  // Chroma: crop and paste edges are even, so the chroma rectangle is exact
  // (a crop reaching an odd picture edge takes the last half-covered sample).
  PlaneRef csrc{in.ChromaRow(crop.top / 2) + crop.left, in.width_stride, (crop.width + 1) / 2,
                (crop.height + 1) / 2};
  PlaneRef cdst{out.ChromaRow(paste.top / 2) + paste.left, out.width_stride, paste.width / 2, paste.height / 2};
  ResizePlane(csrc, cdst, 2, interp);
  if (swap)
    for (uint32_t y = 0; y < cdst.height; ++y) {
      uint8_t* d = cdst.data + y * cdst.stride;
      for (uint32_t x = 0; x < cdst.width; ++x) std::swap(d[2 * x], d[2 * x + 1]);
    }
}

}  // namespace oc::dvpp

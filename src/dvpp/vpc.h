// The vision pre-processing core (VPC): the picture, ROI and scaling rules of
// this profile (docs/dvpp.md) and the crop / resize / paste operation every
// VPC call is a form of. Checks return InvalidArgument naming the parameter,
// its value and what is allowed.
#pragma once

#include "base/status.h"
#include "dvpp/picture.h"
#include "dvpp/resize.h"

namespace oc::dvpp {

inline constexpr uint32_t kVpcMinWidth = 10, kVpcMinHeight = 6, kVpcMaxSide = 4096;
inline constexpr uint32_t kVpcWidthStrideAlign = 16, kVpcHeightStrideAlign = 2;
inline constexpr uint32_t kVpcMinWidthStride = 32, kVpcMaxWidthStride = 4096 * 4;
inline constexpr uint32_t kVpcPasteLeftAlign = 16;
inline constexpr uint32_t kVpcMaxUpscale = 16, kVpcMaxDownscale = 32;

// A region as the API gives it: inclusive edges.
struct Roi {
  uint32_t left = 0, right = 0, top = 0, bottom = 0;
};

// Formats the VPC reads and writes: YUV400, NV12, NV21, RGB888, BGR888.
bool VpcFormat(PixelFormat f);
// `which` names the picture in messages ("inputDesc"). YUV420SP outputs
// must have even width and height.
Status CheckVpcPicture(const char* which, const Picture& p, bool output);
// Resize and crop keep the family (YUV420SP, YUV400, packed RGB).
Status CheckSameFamily(PixelFormat in, PixelFormat out);
// Checks `roi` (named `which`: "cropArea", "pasteArea") inside picture `p`
// (named `pic`) and writes it as a Rect.
Status CheckRoi(const char* which, const Roi& roi, const char* pic, const Picture& p, bool paste, Rect* out);
// The ratio from `from` to `to` on each axis lies in [1/32, 16].
Status CheckScale(const Rect& from, const Rect& to);

// Resizes `crop` of `in` into `paste` of `out` (formats checked as above).
void CropResizePaste(const Picture& in, const Rect& crop, const Picture& out, const Rect& paste, Interp interp);

}  // namespace oc::dvpp

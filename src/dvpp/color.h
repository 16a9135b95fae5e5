// Colour conversion between the VPC's formats (YUV400, NV12, NV21, RGB888,
// BGR888) with the BT.601 full-range matrix JPEG/JFIF uses:
//   Y  =  0.299 R + 0.587 G + 0.114 B
//   Cb = -0.168736 R - 0.331264 G + 0.5 B + 128
//   Cr =  0.5 R - 0.418688 G - 0.081312 B + 128
//   R = Y + 1.402 (Cr - 128), G = Y - 0.344136 (Cb - 128) - 0.714136 (Cr - 128),
//   B = Y + 1.772 (Cb - 128)
// in 16-bit fixed point, rounded to nearest and clamped to 0..255 (within 1 of
// the real-valued result). Going to 4:2:0, each chroma sample
// is the mean of the Cb/Cr of its (up to) 2x2 pixels; coming from 4:2:0, each
// pixel takes the chroma sample of its 2x2 block.
#pragma once

#include "dvpp/picture.h"

namespace oc::dvpp {

// `in` and `out` have the same width and height and formats among the five.
void ConvertColor(const Picture& in, const Picture& out);

}  // namespace oc::dvpp

// Resizing one plane of 8-bit samples with 1..4 interleaved channels. These
// are the sampling rules the VPC's interpolation settings name (docs/dvpp.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace oc::dvpp {

enum class Interp {
  kBilinear,           // OpenCV INTER_LINEAR: src = (dst + 0.5) * scale - 0.5
  kNearest,            // OpenCV INTER_NEAREST: src = floor(dst * scale)
  kBilinearAsymmetric, // TensorFlow 1 resize_bilinear: src = dst * scale
  kNearestHalfPixel,   // TensorFlow 2 / OpenCV INTER_NEAREST_EXACT: src = floor((dst + 0.5) * scale)
};

struct PlaneRef {
  uint8_t* data;
  size_t stride;  // bytes per row
  uint32_t width, height;
};

// Resizes src (width x height pixels) to dst's size. Both have `channels`
// interleaved samples per pixel. Bilinear weights are 11-bit fixed point, as
// OpenCV's 8-bit path uses, so results agree with it within 1.
void ResizePlane(const PlaneRef& src, const PlaneRef& dst, int channels, Interp interp);

}  // namespace oc::dvpp

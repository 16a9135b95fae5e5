#include "dvpp/resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace oc::dvpp {

namespace {

constexpr int kCoefBits = 11;
constexpr int kCoefOne = 1 << kCoefBits;

// One destination coordinate: the two source taps and the weight of the first.
struct Tap {
  uint32_t i0, i1;
  int w0;
};

std::vector<Tap> LinearTaps(uint32_t src, uint32_t dst, bool half_pixel) {
  // The scale as OpenCV forms it: the inverse of dst/src.
  const double scale = 1.0 / (static_cast<double>(dst) / src);
  std::vector<Tap> taps(dst);
  for (uint32_t d = 0; d < dst; ++d) {
    float f = half_pixel ? static_cast<float>((d + 0.5) * scale - 0.5) : static_cast<float>(d * scale);
    int s = static_cast<int>(std::floor(f));
    f -= s;
    if (s < 0) s = 0, f = 0;
    if (s >= static_cast<int>(src) - 1) s = static_cast<int>(src) - 1, f = 0;
    const uint32_t s1 = std::min<uint32_t>(s + 1, src - 1);
    int w0 = static_cast<int>(std::lrint((1.0f - f) * kCoefOne));
    taps[d] = {static_cast<uint32_t>(s), s1, w0};
  }
  return taps;
}

std::vector<uint32_t> NearestTaps(uint32_t src, uint32_t dst, bool half_pixel) {
  const double scale = 1.0 / (static_cast<double>(dst) / src);
  std::vector<uint32_t> idx(dst);
  for (uint32_t d = 0; d < dst; ++d) {
    const double f = half_pixel ? (d + 0.5) * scale : d * scale;
    idx[d] = std::min<uint32_t>(static_cast<uint32_t>(std::floor(f)), src - 1);
  }
  return idx;
}

void ResizeNearest(const PlaneRef& src, const PlaneRef& dst, int ch, bool half_pixel) {
  const std::vector<uint32_t> xs = NearestTaps(src.width, dst.width, half_pixel);
  const std::vector<uint32_t> ys = NearestTaps(src.height, dst.height, half_pixel);
  for (uint32_t y = 0; y < dst.height; ++y) {
    const uint8_t* s = src.data + ys[y] * src.stride;
    uint8_t* d = dst.data + y * dst.stride;
    for (uint32_t x = 0; x < dst.width; ++x)
      for (int c = 0; c < ch; ++c) d[x * ch + c] = s[xs[x] * ch + c];
  }
}

void ResizeLinear(const PlaneRef& src, const PlaneRef& dst, int ch, bool half_pixel) {
  const std::vector<Tap> xs = LinearTaps(src.width, dst.width, half_pixel);
  const std::vector<Tap> ys = LinearTaps(src.height, dst.height, half_pixel);
  const size_t n = size_t(dst.width) * ch;
  // Horizontally filtered source rows (scaled by kCoefOne), two kept at a time.
  std::vector<int32_t> rows[2] = {std::vector<int32_t>(n), std::vector<int32_t>(n)};
  int64_t row_of[2] = {-1, -1};
  // The filtered row `sy`, computed into the slot other than `keep` when missing.
  auto filtered = [&](uint32_t sy, int keep, int* slot) -> const int32_t* {
    for (int k = 0; k < 2; ++k)
      if (row_of[k] == sy) return *slot = k, rows[k].data();
    const int k = keep >= 0 ? 1 - keep : (row_of[0] <= row_of[1] ? 0 : 1);
    const uint8_t* s = src.data + sy * src.stride;
    int32_t* r = rows[k].data();
    for (uint32_t x = 0; x < dst.width; ++x) {
      const Tap& t = xs[x];
      for (int c = 0; c < ch; ++c)
        r[x * ch + c] = s[t.i0 * ch + c] * t.w0 + s[t.i1 * ch + c] * (kCoefOne - t.w0);
    }
    row_of[k] = sy;
    return *slot = k, r;
  };
  constexpr int kShift = 2 * kCoefBits;
  for (uint32_t y = 0; y < dst.height; ++y) {
    const Tap& t = ys[y];
    int k0 = -1, k1 = -1;
    const int32_t* r0 = filtered(t.i0, -1, &k0);
    const int32_t* r1 = filtered(t.i1, k0, &k1);
    const int32_t w0 = t.w0, w1 = kCoefOne - t.w0;
    uint8_t* d = dst.data + y * dst.stride;
    for (size_t i = 0; i < n; ++i) {
      const int32_t v = (r0[i] * w0 + r1[i] * w1 + (1 << (kShift - 1))) >> kShift;
      d[i] = static_cast<uint8_t>(std::clamp(v, 0, 255));
    }
  }
}

}  // namespace

void ResizePlane(const PlaneRef& src, const PlaneRef& dst, int channels, Interp interp) {
  switch (interp) {
    case Interp::kBilinear: return ResizeLinear(src, dst, channels, true);
    case Interp::kBilinearAsymmetric: return ResizeLinear(src, dst, channels, false);
    case Interp::kNearest: return ResizeNearest(src, dst, channels, false);
    case Interp::kNearestHalfPixel: return ResizeNearest(src, dst, channels, true);
  }
}

}  // namespace oc::dvpp

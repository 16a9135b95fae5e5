// JPEG decode and encode with the rules of the media engine's JPEG units
// (docs/dvpp.md): what files are accepted, which output formats each chroma
// subsampling may decode to, and how output strides are aligned. The entropy
// coding and DCT are libjpeg-turbo's (TurboJPEG API); header reading, the
// checks and the conversion of its planes to semi-planar pictures are here.
#pragma once

#include <cstdint>
#include <span>

#include "base/status.h"
#include "dvpp/picture.h"

namespace oc::dvpp {

// Values are CANN's acldvppJpegFormat.
enum class JpegSubsampling : int { k444 = 0, k422 = 1, k420 = 2, kGray = 3, k440 = 4, k411 = 5, kUnknown = 1000 };

struct JpegInfo {
  uint32_t width = 0, height = 0;
  int components = 0;
  JpegSubsampling subsampling = JpegSubsampling::kUnknown;
  int sof = 0;        // the frame marker (0xC0 baseline, 0xC1 extended, 0xC2 progressive, ...)
  int precision = 0;  // bits per sample
};

// The geometry of a decoded picture.
struct DecodedGeometry {
  PixelFormat format = PixelFormat::kUnknown;
  uint32_t width = 0, height = 0, width_stride = 0, height_stride = 0;
  uint64_t bytes = 0;
};

// Decoder limits of this profile.
inline constexpr uint32_t kJpegMinSide = 32, kJpegMaxSide = 8192;
inline constexpr uint32_t kJpegdWidthAlign = 128, kJpegdHeightAlign = 16;

// Reads the markers up to the frame header. Any file with a frame header is
// described, including kinds the decoder refuses. Errors name the byte offset.
Expected<JpegInfo> ReadJpegInfo(std::span<const uint8_t> file);

// The picture a decode of `info` to `requested` (kUnknown: the source's own
// format) produces, or why that decode is refused.
Expected<DecodedGeometry> JpegDecodeGeometry(const JpegInfo& info, PixelFormat requested);

// Decodes `file` into `out` (out_size bytes) as `geometry` says. Corrupt or
// truncated data is an InvalidArgument error, never a partial picture.
Status DecodeJpeg(std::span<const uint8_t> file, const DecodedGeometry& geometry, uint8_t* out, uint64_t out_size);

// Encoder limits: NV12/NV21 input, widthStride a multiple of 16.
inline constexpr uint32_t kJpegeStrideAlign = 16;
// Checks `in` can be encoded (format, size, strides); the buffer size is the caller's.
Status CheckJpegEncodable(const Picture& in);
// The largest encoded size of a width x height 4:2:0 picture.
uint64_t JpegEncodeBound(uint32_t width, uint32_t height);
// Encodes `in` at `quality` (1..100) into out (capacity bytes); returns the size.
Expected<uint64_t> EncodeJpeg(const Picture& in, int quality, uint8_t* out, uint64_t capacity);

}  // namespace oc::dvpp

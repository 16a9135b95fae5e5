// libFuzzer target for the media engine's file readers: any bytes given to
// the JPEG or PNG header reader and decoder must give a picture or an error
// message, never a crash, a sanitizer report, or a write past the output the
// decoded geometry asked for. The first byte picks the codec and the output
// format; the rest is the file. Built with the other fuzz targets
// (cmake -DOC_FUZZ=ON, docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "dvpp/jpeg.h"
#include "dvpp/png.h"

namespace {

using oc::dvpp::PixelFormat;

// Larger pictures are valid but slow to fuzz; their header path still runs.
constexpr uint64_t kMaxDecodeBytes = 16u << 20;

template <typename Info>
void Decode(const oc::Expected<Info>& info, PixelFormat f, std::span<const uint8_t> file,
            oc::Expected<oc::dvpp::DecodedGeometry> (*geometry)(const Info&, PixelFormat),
            oc::Status (*decode)(std::span<const uint8_t>, const oc::dvpp::DecodedGeometry&, uint8_t*, uint64_t)) {
  if (!info.ok()) {
    if (info.status().message().empty()) std::abort();
    return;
  }
  auto g = geometry(*info, f);
  if (!g.ok() || g->bytes > kMaxDecodeBytes) return;
  if (g->width_stride < g->width || g->height_stride < g->height) std::abort();
  std::vector<uint8_t> out(g->bytes);  // exactly the size asked for: ASan sees any overrun
  oc::Status st = decode(file, *g, out.data(), out.size());
  if (!st.ok() && st.message().empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const PixelFormat kJpeg[] = {PixelFormat::kNv12, PixelFormat::kNv21, PixelFormat::kYuv400,
                                      PixelFormat::kYuv422Sp, PixelFormat::kYvu444Sp, PixelFormat::kUnknown};
  static const PixelFormat kPng[] = {PixelFormat::kRgb888, PixelFormat::kRgba8888, PixelFormat::kUnknown};
  const uint8_t sel = data[0];
  std::span<const uint8_t> file(data + 1, size - 1);
  if (sel & 0x80) {
    Decode(oc::dvpp::ReadPngInfo(file), kPng[(sel & 0x7F) % 3], file, oc::dvpp::PngDecodeGeometry,
           oc::dvpp::DecodePng);
  } else {
    Decode(oc::dvpp::ReadJpegInfo(file), kJpeg[sel % 6], file, oc::dvpp::JpegDecodeGeometry, oc::dvpp::DecodeJpeg);
  }
  return 0;
}

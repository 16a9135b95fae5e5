// The media engine's rules and kernels on small hand-made inputs (the
// end-to-end checks against OpenCV, PIL and libjpeg are tests/python/test_dvpp.py).
#include "dvpp/vpc.h"

#include <gtest/gtest.h>

#include <vector>

#include "dvpp/jpeg.h"

namespace oc::dvpp {
namespace {

TEST(DvppResize, SameSizeBilinearIsACopy) {
  std::vector<uint8_t> src(16 * 8), dst(16 * 8, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7);
  ResizePlane({src.data(), 16, 16, 8}, {dst.data(), 16, 16, 8}, 1, Interp::kBilinear);
  EXPECT_EQ(src, dst);
}

TEST(DvppResize, BilinearUpscaleByTwoInterpolatesBetweenSamples) {
  // Half-pixel centres: outputs 1 and 2 of a 2x upscale sit 1/4 and 3/4 between inputs 0 and 1.
  std::vector<uint8_t> src = {0, 100}, dst(4);
  ResizePlane({src.data(), 2, 2, 1}, {dst.data(), 4, 4, 1}, 1, Interp::kBilinear);
  EXPECT_EQ(dst, (std::vector<uint8_t>{0, 25, 75, 100}));
}

TEST(DvppResize, NearestDownscaleTakesTheFirstOfEachPair) {
  std::vector<uint8_t> src = {1, 2, 3, 4, 5, 6}, dst(3);
  ResizePlane({src.data(), 6, 6, 1}, {dst.data(), 3, 3, 1}, 1, Interp::kNearest);
  EXPECT_EQ(dst, (std::vector<uint8_t>{1, 3, 5}));
  ResizePlane({src.data(), 6, 6, 1}, {dst.data(), 3, 3, 1}, 1, Interp::kNearestHalfPixel);
  EXPECT_EQ(dst, (std::vector<uint8_t>{2, 4, 6}));
}

TEST(DvppRules, OddCropEdgeOfAYuv420PictureIsRefusedNamingIt) {
  Picture p{nullptr, 0, PixelFormat::kNv12, 64, 32, 64, 32};
  Rect r;
  Status st = CheckRoi("cropArea", Roi{3, 20, 0, 9}, "inputDesc", p, false, &r);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cropArea left 3 must be even"), std::string::npos) << st.message();
  EXPECT_TRUE(CheckRoi("cropArea", Roi{2, 21, 0, 9}, "inputDesc", p, false, &r).ok());
  EXPECT_EQ(r.width, 20u);
  EXPECT_EQ(r.height, 10u);
}

TEST(DvppRules, ScaleOutsideTheRangeIsRefused) {
  EXPECT_FALSE(CheckScale(Rect{0, 0, 640, 480}, Rect{0, 0, 16, 480}).ok());  // 1/40
  EXPECT_FALSE(CheckScale(Rect{0, 0, 10, 10}, Rect{0, 0, 170, 10}).ok());    // 17
  EXPECT_TRUE(CheckScale(Rect{0, 0, 640, 480}, Rect{0, 0, 20, 15}).ok());    // 1/32
}

TEST(DvppJpeg, TruncatedHeaderIsRefusedWithItsOffset) {
  const uint8_t head[] = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F'};
  auto info = ReadJpegInfo(head);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("truncated"), std::string::npos) << info.status().message();
  const uint8_t not_jpeg[] = {0x89, 'P', 'N', 'G'};
  EXPECT_FALSE(ReadJpegInfo(not_jpeg).ok());
}

TEST(DvppJpeg, ProgressiveFrameIsDescribedButNotDecoded) {
  // SOI, SOF2 (progressive) 40x33, 3 components at 4:2:0.
  const uint8_t file[] = {0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x11, 8, 0, 33, 0, 40, 3,
                          1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1};
  auto info = ReadJpegInfo(file);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->width, 40u);
  EXPECT_EQ(info->height, 33u);
  EXPECT_EQ(info->subsampling, JpegSubsampling::k420);
  auto g = JpegDecodeGeometry(*info, PixelFormat::kNv12);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("progressive"), std::string::npos);
}

}  // namespace
}  // namespace oc::dvpp

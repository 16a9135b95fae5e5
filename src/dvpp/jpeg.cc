#include "dvpp/jpeg.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace oc::dvpp {

namespace {

std::string Hex(unsigned v) {
  static const char* d = "0123456789ABCDEF";
  std::string s = "0x";
  s += d[(v >> 4) & 15];
  s += d[v & 15];
  return s;
}

// Sampling factors (h, v) of the luma component with chroma at 1x1.
JpegSubsampling Classify(int nf, const int* h, const int* v) {
  if (nf == 1) return JpegSubsampling::kGray;
  if (nf != 3 || h[1] != 1 || v[1] != 1 || h[2] != 1 || v[2] != 1) return JpegSubsampling::kUnknown;
  if (h[0] == 1 && v[0] == 1) return JpegSubsampling::k444;
  if (h[0] == 2 && v[0] == 1) return JpegSubsampling::k422;
  if (h[0] == 2 && v[0] == 2) return JpegSubsampling::k420;
  if (h[0] == 1 && v[0] == 2) return JpegSubsampling::k440;
  if (h[0] == 4 && v[0] == 1) return JpegSubsampling::k411;
  return JpegSubsampling::kUnknown;
}

const char* SubsamplingName(JpegSubsampling s) {
  switch (s) {
    case JpegSubsampling::k444: return "4:4:4";
    case JpegSubsampling::k422: return "4:2:2";
    case JpegSubsampling::k420: return "4:2:0";
    case JpegSubsampling::kGray: return "4:0:0 (grayscale)";
    case JpegSubsampling::k440: return "4:4:0";
    case JpegSubsampling::k411: return "4:1:1";
    default: return "an unrecognised subsampling";
  }
}

// Luma pixels per native chroma sample, horizontally and vertically.
void NativeFactors(JpegSubsampling s, int* hn, int* vn) {
  *hn = (s == JpegSubsampling::k422 || s == JpegSubsampling::k420) ? 2 : s == JpegSubsampling::k411 ? 4 : 1;
  *vn = (s == JpegSubsampling::k420 || s == JpegSubsampling::k440) ? 2 : 1;
}

struct TjHandle {
  explicit TjHandle(tjhandle h) : h(h) {}
  ~TjHandle() {
    if (h) tjDestroy(h);
  }
  TjHandle(const TjHandle&) = delete;
  TjHandle& operator=(const TjHandle&) = delete;
  tjhandle h;
};

}  // namespace

Expected<JpegInfo> ReadJpegInfo(std::span<const uint8_t> file) {
  const uint8_t* p = file.data();
  const size_t n = file.size();
  if (n < 4) return InvalidArgument("the data is ", n, " bytes, too short for a JPEG file");
  if (p[0] != 0xFF || p[1] != 0xD8)
    return InvalidArgument("the data is not a JPEG file: it starts with ", Hex(p[0]), " ", Hex(p[1]),
                           " instead of the SOI marker 0xFF 0xD8");
  size_t pos = 2;
  for (;;) {
    if (pos >= n) return InvalidArgument("the JPEG data ends at byte ", n, " before its frame header (SOF marker)");
    if (p[pos] != 0xFF)
      return InvalidArgument("expected a JPEG marker at byte ", pos, " but found ", Hex(p[pos]));
    while (pos < n && p[pos] == 0xFF) ++pos;  // fill bytes
    if (pos >= n) return InvalidArgument("the JPEG data ends at byte ", n, " inside a marker");
    const unsigned m = p[pos++];
    if ((m >= 0xD0 && m <= 0xD7) || m == 0x01) continue;  // markers without a segment
    if (m == 0xD9 || m == 0xDA || m == 0xD8 || m == 0x00)
      return InvalidArgument("unexpected marker ", Hex(m), " at byte ", pos - 1, " before the frame header");
    if (pos + 2 > n) return InvalidArgument("the JPEG data ends at byte ", n, " inside the length of marker ", Hex(m));
    const size_t len = (size_t{p[pos]} << 8) | p[pos + 1];
    if (len < 2) return InvalidArgument("marker ", Hex(m), " at byte ", pos - 1, " has an invalid length ", len);
    if (pos + len > n)
      return InvalidArgument("marker ", Hex(m), " at byte ", pos - 1, " needs ", len, " bytes but only ", n - pos,
                             " remain (truncated file)");
    const bool sof = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
    if (!sof) {
      pos += len;
      continue;
    }
    const uint8_t* s = p + pos + 2;
    if (len < 8) return InvalidArgument("the frame header at byte ", pos - 1, " is ", len, " bytes, fewer than 8");
    JpegInfo info;
    info.sof = static_cast<int>(m);
    info.precision = s[0];
    info.height = (uint32_t{s[1]} << 8) | s[2];
    info.width = (uint32_t{s[3]} << 8) | s[4];
    info.components = s[5];
    if (info.components < 1 || info.components > 4 || len != 8 + 3 * size_t(info.components))
      return InvalidArgument("the frame header at byte ", pos - 1, " declares ", info.components,
                             " components in a segment of ", len, " bytes");
    if (info.width == 0) return InvalidArgument("the frame header at byte ", pos - 1, " declares width 0");
    if (info.height == 0)
      return InvalidArgument("the frame header at byte ", pos - 1,
                             " declares height 0 (a height given later by a DNL marker is not supported)");
    int h[4] = {}, v[4] = {};
    for (int i = 0; i < info.components; ++i) {
      h[i] = s[6 + 3 * i + 1] >> 4;
      v[i] = s[6 + 3 * i + 1] & 15;
      if (h[i] < 1 || h[i] > 4 || v[i] < 1 || v[i] > 4)
        return InvalidArgument("component ", i, " of the frame header has sampling factors ", h[i], "x", v[i],
                               " (allowed: 1..4)");
    }
    info.subsampling = Classify(info.components, h, v);
    return info;
  }
}

Expected<DecodedGeometry> JpegDecodeGeometry(const JpegInfo& info, PixelFormat requested) {
  if (info.sof == 0xC2 || info.sof == 0xC6 || info.sof == 0xCA || info.sof == 0xCE)
    return InvalidArgument("progressive JPEG is not supported by the JPEG decoder (baseline and extended "
                           "sequential Huffman files only)");
  if (info.sof != 0xC0 && info.sof != 0xC1)
    return InvalidArgument("JPEG frame type ", Hex(info.sof),
                           " (lossless, hierarchical or arithmetic-coded) is not supported by the JPEG decoder "
                           "(baseline and extended sequential Huffman files only)");
  if (info.precision != 8)
    return InvalidArgument(info.precision, "-bit JPEG samples are not supported (8-bit only)");
  if (info.components == 4 || info.components == 2)
    return InvalidArgument("JPEG files with ", info.components,
                           " components (CMYK/YCCK) are not supported (1 or 3 components only)");
  if (info.subsampling == JpegSubsampling::kUnknown)
    return InvalidArgument("the JPEG file's chroma sampling factors are not one of 4:4:4, 4:2:2, 4:2:0, 4:4:0, "
                           "4:1:1 or grayscale");
  if (info.width < kJpegMinSide || info.width > kJpegMaxSide || info.height < kJpegMinSide ||
      info.height > kJpegMaxSide)
    return InvalidArgument("the JPEG picture is ", info.width, "x", info.height, "; the decoder takes ",
                           kJpegMinSide, "..", kJpegMaxSide, " pixels a side");
  const JpegSubsampling s = info.subsampling;
  PixelFormat f = requested;
  if (f == PixelFormat::kUnknown)
    f = s == JpegSubsampling::k444 ? PixelFormat::kYuv444Sp : s == JpegSubsampling::k422 ? PixelFormat::kYuv422Sp
                                                                                         : PixelFormat::kNv12;
  bool ok = f == PixelFormat::kNv12 || f == PixelFormat::kNv21 || f == PixelFormat::kYuv400 ||
            ((f == PixelFormat::kYuv422Sp || f == PixelFormat::kYvu422Sp) && s == JpegSubsampling::k422) ||
            ((f == PixelFormat::kYuv444Sp || f == PixelFormat::kYvu444Sp) && s == JpegSubsampling::k444);
  if (!ok)
    return InvalidArgument("a ", SubsamplingName(s), " JPEG cannot be decoded to ", FormatName(static_cast<int>(f)),
                           " (allowed: NV12/NV21 (", FormatName(1), ", ", FormatName(2),
                           ") or YUV400 from any file, YUV422SP/YVU422SP from 4:2:2, YUV444SP/YVU444SP from 4:4:4)");
  DecodedGeometry g;
  g.format = f;
  g.width = info.width;
  g.height = info.height;
  g.width_stride = AlignUp(info.width, kJpegdWidthAlign);
  g.height_stride = AlignUp(info.height, kJpegdHeightAlign);
  g.bytes = PictureBytes(*Describe(f), g.width_stride, g.height_stride);
  return g;
}

Status DecodeJpeg(std::span<const uint8_t> file, const DecodedGeometry& g, uint8_t* out, uint64_t out_size) {
  const FormatInfo* fi = Describe(g.format);
  if (!fi || out_size < g.bytes) return Internal("DecodeJpeg: output buffer smaller than the geometry");
  TjHandle tj(tjInitDecompress());
  if (!tj.h) return ResourceExhausted("cannot create a JPEG decoder: ", tjGetErrorStr2(nullptr));
  int w = 0, h = 0, ss = 0, cs = 0;
  if (tjDecompressHeader3(tj.h, file.data(), file.size(), &w, &h, &ss, &cs) != 0)
    return InvalidArgument("the JPEG header is invalid: ", tjGetErrorStr2(tj.h));
  if (static_cast<uint32_t>(w) != g.width || static_cast<uint32_t>(h) != g.height)
    return InvalidArgument("the JPEG header is inconsistent: ", w, "x", h, " against ", g.width, "x", g.height);
  if (cs != TJCS_YCbCr && cs != TJCS_GRAY)
    return InvalidArgument("JPEG files in the ", cs == TJCS_RGB ? "RGB" : "CMYK/YCCK",
                           " colour space are not supported (YCbCr or grayscale only)");
  const int nplanes = ss == TJSAMP_GRAY ? 1 : 3;
  std::vector<std::vector<uint8_t>> planes(nplanes);
  unsigned char* ptrs[3] = {};
  int strides[3] = {};
  for (int i = 0; i < nplanes; ++i) {
    strides[i] = tjPlaneWidth(i, w, ss);
    const int ph = tjPlaneHeight(i, h, ss);
    if (strides[i] <= 0 || ph <= 0) return InvalidArgument("the JPEG subsampling is not supported");
    planes[i].resize(static_cast<size_t>(strides[i]) * ph);
    ptrs[i] = planes[i].data();
  }
  if (tjDecompressToYUVPlanes(tj.h, file.data(), file.size(), ptrs, w, strides, h,
                              TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0)
    return InvalidArgument("the JPEG data is corrupt or truncated: ", tjGetErrorStr2(tj.h));

  Picture pic{out, out_size, g.format, g.width, g.height, g.width_stride, g.height_stride};
  for (uint32_t y = 0; y < g.height; ++y) std::memcpy(pic.Row(y), ptrs[0] + size_t(y) * strides[0], g.width);
  if (!fi->has_chroma) return Status::Ok();

  const int th = fi->chroma_w_div, tv = fi->chroma_h_div;
  const uint32_t cw = (g.width + th - 1) / th, ch = (g.height + tv - 1) / tv;
  const int ui = fi->v_first ? 1 : 0;
  if (nplanes == 1) {  // grayscale: neutral chroma
    for (uint32_t cy = 0; cy < ch; ++cy) std::memset(pic.ChromaRow(cy), 0x80, size_t(cw) * 2);
    return Status::Ok();
  }
  int hn = 1, vn = 1;
  NativeFactors(static_cast<JpegSubsampling>(ss), &hn, &vn);
  // Each output sample is the mean of the native samples under its (at most
  // 2x2) luma block: two columns a, b and two rows, the same one counted twice
  // when a native sample covers both (so the weights stay per luma pixel).
  struct Cols {
    uint32_t a, b, n;
  };
  std::vector<Cols> cols(cw);
  for (uint32_t cx = 0; cx < cw; ++cx) {
    const uint32_t n = std::min<uint32_t>(th, g.width - cx * th);
    cols[cx] = {cx * th / hn, (cx * th + n - 1) / hn, n};
  }
  for (uint32_t cy = 0; cy < ch; ++cy) {
    const uint32_t nr = std::min<uint32_t>(tv, g.height - cy * tv);
    const size_t ra = size_t(cy * tv / vn), rb = size_t((cy * tv + nr - 1) / vn);
    const uint8_t* u0 = ptrs[1] + ra * strides[1];
    const uint8_t* u1 = ptrs[1] + rb * strides[1];
    const uint8_t* v0 = ptrs[2] + ra * strides[2];
    const uint8_t* v1 = ptrs[2] + rb * strides[2];
    uint8_t* row = pic.ChromaRow(cy);
    for (uint32_t cx = 0; cx < cw; ++cx) {
      const Cols& c = cols[cx];
      uint32_t su = u0[c.a], sv = v0[c.a];
      if (c.n == 2) su += u0[c.b], sv += v0[c.b];
      if (nr == 2) {
        su += u1[c.a], sv += v1[c.a];
        if (c.n == 2) su += u1[c.b], sv += v1[c.b];
      }
      const uint32_t sh = nr + c.n - 2;  // 1, 2 or 4 samples: a shift of 0, 1 or 2
      const uint32_t half = (1u << sh) >> 1;
      row[2 * cx + ui] = static_cast<uint8_t>((su + half) >> sh);
      row[2 * cx + 1 - ui] = static_cast<uint8_t>((sv + half) >> sh);
    }
  }
  return Status::Ok();
}

Status CheckJpegEncodable(const Picture& in) {
  if (in.format != PixelFormat::kNv12 && in.format != PixelFormat::kNv21)
    return InvalidArgument("inputDesc format ", FormatName(static_cast<int>(in.format)),
                           " cannot be encoded (allowed: ", FormatName(1), ", ", FormatName(2), ")");
  if (in.width < kJpegMinSide || in.width > kJpegMaxSide || in.height < kJpegMinSide || in.height > kJpegMaxSide)
    return InvalidArgument("inputDesc is ", in.width, "x", in.height, "; the encoder takes ", kJpegMinSide, "..",
                           kJpegMaxSide, " pixels a side");
  if (in.width_stride < in.width || in.width_stride % kJpegeStrideAlign != 0)
    return InvalidArgument("inputDesc widthStride ", in.width_stride, " must be a multiple of ", kJpegeStrideAlign,
                           " and at least the width ", in.width);
  if (in.height_stride < in.height || in.height_stride % 2 != 0)
    return InvalidArgument("inputDesc heightStride ", in.height_stride, " must be even and at least the height ",
                           in.height);
  return Status::Ok();
}

uint64_t JpegEncodeBound(uint32_t width, uint32_t height) {
  return tjBufSize(static_cast<int>(width), static_cast<int>(height), TJSAMP_420);
}

Expected<uint64_t> EncodeJpeg(const Picture& in, int quality, uint8_t* out, uint64_t capacity) {
  if (Status st = CheckJpegEncodable(in); !st.ok()) return st;
  const uint32_t cw = (in.width + 1) / 2, ch = (in.height + 1) / 2;
  std::vector<uint8_t> u(size_t(cw) * ch), v(size_t(cw) * ch);
  const int ui = in.format == PixelFormat::kNv21 ? 1 : 0;
  for (uint32_t cy = 0; cy < ch; ++cy) {
    const uint8_t* row = in.ChromaRow(cy);
    for (uint32_t cx = 0; cx < cw; ++cx) {
      u[size_t(cy) * cw + cx] = row[2 * cx + ui];
      v[size_t(cy) * cw + cx] = row[2 * cx + 1 - ui];
    }
  }
  const unsigned char* planes[3] = {in.data, u.data(), v.data()};
  const int strides[3] = {static_cast<int>(in.width_stride), static_cast<int>(cw), static_cast<int>(cw)};
  TjHandle tj(tjInitCompress());
  if (!tj.h) return ResourceExhausted("cannot create a JPEG encoder: ", tjGetErrorStr2(nullptr));
  unsigned char* jpeg = nullptr;
  unsigned long jpeg_size = 0;
  if (tjCompressFromYUVPlanes(tj.h, planes, static_cast<int>(in.width), strides, static_cast<int>(in.height),
                              TJSAMP_420, &jpeg, &jpeg_size, quality, 0) != 0) {
    std::string msg = tjGetErrorStr2(tj.h);
    tjFree(jpeg);
    return Internal("the JPEG encoder failed: ", msg);
  }
  std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(jpeg, tjFree);
  if (jpeg_size > capacity)
    return InvalidArgument("the encoded picture is ", jpeg_size, " bytes but the output buffer holds ", capacity,
                           " (acldvppJpegPredictEncSize gives a size that always fits)");
  std::memcpy(out, jpeg, jpeg_size);
  return static_cast<uint64_t>(jpeg_size);
}

}  // namespace oc::dvpp

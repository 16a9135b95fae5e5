// JPEG decode/encode and PNG decode calls (src/dvpp/jpeg.h, png.h): header
// queries run at once on host memory; decodes and encodes are stream jobs that
// read the file when they run, so a copy queued before them on the same
// stream is seen.
#include <span>

#include "acl/acl_dvpp_internal.h"
#include "dvpp/jpeg.h"
#include "dvpp/png.h"

using namespace oc::acl;
using oc::StrCat;
namespace dv = oc::dvpp;

namespace {

aclError NullArg(const char* name) { return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument '", name, "' is NULL")); }

std::span<const uint8_t> Bytes(const void* d, uint32_t n) { return {static_cast<const uint8_t*>(d), n}; }

aclError CheckFile(const void* data, uint32_t size) {
  if (!data) return NullArg("data");
  if (size == 0) return Fail(ACL_ERROR_INVALID_PARAM, "size is 0");
  return ACL_SUCCESS;
}

aclError WriteSize(uint64_t bytes, uint32_t* out, const char* what) {
  if (bytes > UINT32_MAX)
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat(what, " would be ", bytes, " bytes, more than a uint32_t holds"));
  *out = static_cast<uint32_t>(bytes);
  return ACL_SUCCESS;
}

// The formats a decoder may be asked for (the file decides the rest at run time).
bool JpegOutputFormat(int f) {
  return f == PIXEL_FORMAT_UNKNOWN || f == PIXEL_FORMAT_YUV_400 || (f >= PIXEL_FORMAT_YUV_SEMIPLANAR_420 &&
                                                                     f <= PIXEL_FORMAT_YVU_SEMIPLANAR_444);
}
bool PngOutputFormat(int f) {
  return f == PIXEL_FORMAT_UNKNOWN || f == PIXEL_FORMAT_RGB_888 || f == PIXEL_FORMAT_RGBA_8888;
}

// The format a decode is asked for: the output description's, or the
// decoder's default when the application never set one.
int Requested(const PicFields& f, int default_format) { return f.format_set ? f.format : default_format; }

// Checks shared by the decode calls; the output description's buffer is DVPP memory.
aclError CheckDecode(acldvppChannelDesc* channel, uint32_t mode, const char* mode_name, const void* data,
                     uint32_t size, acldvppPicDesc* out, int default_format, bool (*format_ok)(int),
                     const char* allowed) {
  if (aclError e = RequireInit()) return e;
  if (aclError e = CheckChannel(channel, mode, mode_name)) return e;
  if (aclError e = CheckFile(data, size)) return e;
  if (aclError e = CheckDvppRange("data", data, size)) return e;
  if (aclError e = CheckPicDesc(out, "outputDesc")) return e;
  const PicFields& f = *out->f;
  if (!format_ok(Requested(f, default_format)))
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat("outputDesc format ", dv::FormatName(f.format), " is not a decoder output (allowed: ", allowed,
                       ")"));
  if (f.size == 0) return Fail(ACL_ERROR_INVALID_PARAM, "outputDesc size is 0");
  return CheckDvppRange("outputDesc data", f.data, f.size);
}

// The decode job: reads the header, checks the output fits, decodes, and
// writes the decoded geometry back into the output description.
template <typename Info, typename ReadInfo, typename Geometry, typename Decode>
oc::Status DecodeJob(const char* kind, std::span<const uint8_t> file, int requested, uint8_t* out, uint64_t out_size,
                     PicFields& desc, ReadInfo read_info, Geometry geometry, Decode decode) {
  oc::Expected<Info> info = read_info(file);
  if (!info.ok()) return info.status();
  oc::Expected<dv::DecodedGeometry> g = geometry(*info, static_cast<dv::PixelFormat>(requested));
  if (!g.ok()) return g.status();
  if (g->bytes > out_size)
    return oc::InvalidArgument("outputDesc size ", out_size, " is smaller than the ", g->bytes, " bytes the ",
                               g->width, "x", g->height, " ", dv::FormatName(static_cast<int>(g->format)),
                               " picture needs (widthStride ", g->width_stride, ", heightStride ", g->height_stride,
                               "; acldvpp", kind, "PredictDecSize gives the size)");
  if (oc::Status st = decode(file, *g, out, out_size); !st.ok()) return st;
  desc.format = static_cast<int>(g->format);
  desc.format_set = true;
  desc.width = g->width;
  desc.height = g->height;
  desc.width_stride = g->width_stride;
  desc.height_stride = g->height_stride;
  return oc::Status::Ok();
}

}  // namespace

// ---- JPEG ----------------------------------------------------------------------------------

namespace {

// Both forms of the header query; `fn` names the call in messages.
aclError JpegImageInfo(const char* fn, const void* data, uint32_t size, uint32_t* width, uint32_t* height,
                       int32_t* components, acldvppJpegFormat* format) {
  return Guard(fn, [&]() -> aclError {
    if (aclError e = CheckFile(data, size)) return e;
    auto info = dv::ReadJpegInfo(Bytes(data, size));
    if (!info.ok()) return FailMedia(info.status());
    if (width) *width = info->width;
    if (height) *height = info->height;
    if (components) *components = info->components;
    if (format) *format = static_cast<acldvppJpegFormat>(info->subsampling);
    return ACL_SUCCESS;
  });
}

}  // namespace

aclError acldvppJpegGetImageInfoV2(const void* data, uint32_t size, uint32_t* width, uint32_t* height,
                                   int32_t* components, acldvppJpegFormat* format) {
  return JpegImageInfo(__func__, data, size, width, height, components, format);
}

aclError acldvppJpegGetImageInfo(const void* data, uint32_t size, uint32_t* width, uint32_t* height,
                                 int32_t* components) {
  return JpegImageInfo(__func__, data, size, width, height, components, nullptr);
}

aclError acldvppJpegPredictDecSize(const void* data, uint32_t dataSize, acldvppPixelFormat outputPixelFormat,
                                   uint32_t* decSize) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckFile(data, dataSize)) return e;
    if (!decSize) return NullArg("decSize");
    auto info = dv::ReadJpegInfo(Bytes(data, dataSize));
    if (!info.ok()) return FailMedia(info.status());
    auto g = dv::JpegDecodeGeometry(*info, static_cast<dv::PixelFormat>(EnumBits(outputPixelFormat)));
    if (!g.ok()) return FailMedia(g.status());
    return WriteSize(g->bytes, decSize, "the decoded picture");
  });
}

aclError acldvppJpegDecodeAsync(acldvppChannelDesc* channelDesc, const void* data, uint32_t size,
                                acldvppPicDesc* outputDesc, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckDecode(channelDesc, DVPP_CHNMODE_JPEGD, "DVPP_CHNMODE_JPEGD", data, size, outputDesc,
                                 PIXEL_FORMAT_YUV_SEMIPLANAR_420, JpegOutputFormat,
                                 "PIXEL_FORMAT_YUV_400, NV12/NV21, YUV422SP/YVU422SP, YUV444SP/YVU444SP or "
                                 "PIXEL_FORMAT_UNKNOWN"))
      return e;
    std::shared_ptr<PicFields> out = outputDesc->f;
    const int requested = Requested(*out, PIXEL_FORMAT_YUV_SEMIPLANAR_420);
    auto* dst = static_cast<uint8_t*>(out->data);
    const uint64_t dst_size = out->size;
    auto file = Bytes(data, size);
    return EnqueueMediaJob(stream, "acldvppJpegDecodeAsync", out, [=]() {
      return DecodeJob<dv::JpegInfo>("Jpeg", file, requested, dst, dst_size, *out, dv::ReadJpegInfo,
                                     dv::JpegDecodeGeometry, dv::DecodeJpeg);
    });
  });
}

aclError acldvppJpegPredictEncSize(const acldvppPicDesc* inputDesc, const acldvppJpegeConfig* config,
                                   uint32_t* size) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckPicDesc(inputDesc, "inputDesc")) return e;
    if (!config) return NullArg("config");
    if (!JpegeConfigs().Contains(config))
      return Fail(ACL_ERROR_INVALID_PARAM, "config is not a live acldvppJpegeConfig (never created or destroyed)");
    if (!size) return NullArg("size");
    const dv::Picture in = PictureOf(inputDesc);
    if (oc::Status st = dv::CheckJpegEncodable(in); !st.ok()) return FailMedia(st);
    return WriteSize(dv::JpegEncodeBound(in.width, in.height), size, "the encoded picture's bound");
  });
}

aclError acldvppJpegEncodeAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc, const void* data,
                                uint32_t* size, acldvppJpegeConfig* config, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (aclError e = CheckChannel(channelDesc, DVPP_CHNMODE_JPEGE, "DVPP_CHNMODE_JPEGE")) return e;
    if (aclError e = CheckPicDesc(inputDesc, "inputDesc")) return e;
    const dv::Picture in = PictureOf(inputDesc);
    if (oc::Status st = dv::CheckJpegEncodable(in); !st.ok()) return FailMedia(st);
    const uint64_t need = dv::PictureBytes(*dv::Describe(in.format), in.width_stride, in.height_stride);
    if (in.size < need)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("inputDesc size ", in.size, " is smaller than the ", need,
                                                  " bytes its strides need"));
    if (aclError e = CheckDvppRange("inputDesc data", in.data, need)) return e;
    if (!data) return NullArg("data");
    if (!size) return NullArg("size");
    if (*size == 0) return Fail(ACL_ERROR_INVALID_PARAM, "*size (the output buffer's size) is 0");
    if (aclError e = CheckDvppRange("data", data, *size)) return e;
    if (!config) return NullArg("config");
    if (!JpegeConfigs().Contains(config))
      return Fail(ACL_ERROR_INVALID_PARAM, "config is not a live acldvppJpegeConfig (never created or destroyed)");
    const int quality = config->level == 0 ? 100 : static_cast<int>(config->level);
    auto* out = static_cast<uint8_t*>(const_cast<void*>(data));
    const uint64_t capacity = *size;
    return EnqueueMediaJob(stream, "acldvppJpegEncodeAsync", nullptr, [=]() -> oc::Status {
      auto n = dv::EncodeJpeg(in, quality, out, capacity);
      if (!n.ok()) return n.status();
      *size = static_cast<uint32_t>(*n);
      return oc::Status::Ok();
    });
  });
}

// ---- PNG ----------------------------------------------------------------------------------

aclError acldvppPngGetImageInfo(const void* data, uint32_t dataSize, uint32_t* width, uint32_t* height,
                                int32_t* components) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckFile(data, dataSize)) return e;
    auto info = dv::ReadPngInfo(Bytes(data, dataSize));
    if (!info.ok()) return FailMedia(info.status());
    if (width) *width = info->width;
    if (height) *height = info->height;
    if (components) *components = info->components;
    return ACL_SUCCESS;
  });
}

aclError acldvppPngPredictDecSize(const void* data, uint32_t dataSize, acldvppPixelFormat outputPixelFormat,
                                  uint32_t* decSize) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckFile(data, dataSize)) return e;
    if (!decSize) return NullArg("decSize");
    auto info = dv::ReadPngInfo(Bytes(data, dataSize));
    if (!info.ok()) return FailMedia(info.status());
    auto g = dv::PngDecodeGeometry(*info, static_cast<dv::PixelFormat>(EnumBits(outputPixelFormat)));
    if (!g.ok()) return FailMedia(g.status());
    return WriteSize(g->bytes, decSize, "the decoded picture");
  });
}

aclError acldvppPngDecodeAsync(acldvppChannelDesc* channelDesc, const void* data, uint32_t size,
                               acldvppPicDesc* outputDesc, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckDecode(channelDesc, DVPP_CHNMODE_PNGD, "DVPP_CHNMODE_PNGD", data, size, outputDesc,
                                 PIXEL_FORMAT_UNKNOWN, PngOutputFormat,
                                 "PIXEL_FORMAT_RGB_888, PIXEL_FORMAT_RGBA_8888 or PIXEL_FORMAT_UNKNOWN"))
      return e;
    std::shared_ptr<PicFields> out = outputDesc->f;
    const int requested = Requested(*out, PIXEL_FORMAT_UNKNOWN);
    auto* dst = static_cast<uint8_t*>(out->data);
    const uint64_t dst_size = out->size;
    auto file = Bytes(data, size);
    return EnqueueMediaJob(stream, "acldvppPngDecodeAsync", out, [=]() {
      return DecodeJob<dv::PngInfo>("Png", file, requested, dst, dst_size, *out, dv::ReadPngInfo,
                                    dv::PngDecodeGeometry, dv::DecodePng);
    });
  });
}

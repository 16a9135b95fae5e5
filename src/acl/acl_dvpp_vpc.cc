// VPC calls: every resize / crop / paste form is one checked crop-resize-paste
// job (src/dvpp/vpc.h); colour conversion is its own job (src/dvpp/color.h).
// All geometry comes from the descriptions, so every rule is checked here, at
// the call; the job only moves pixels.
#include "acl/acl_dvpp_internal.h"
#include "dvpp/color.h"
#include "dvpp/vpc.h"

using namespace oc::acl;
using oc::StrCat;
namespace dv = oc::dvpp;

namespace {

aclError NullArg(const char* name) { return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument '", name, "' is NULL")); }

aclError Check(const oc::Status& st) { return st.ok() ? ACL_SUCCESS : FailMedia(st); }

aclError Roi(const acldvppRoiConfig* roi, const char* which, dv::Roi* out) {
  if (!roi) return NullArg(which);
  if (!RoiConfigs().Contains(roi))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat(which, " ", PtrString(roi),
                                                " is not a live acldvppRoiConfig (never created or destroyed)"));
  *out = dv::Roi{roi->left, roi->right, roi->top, roi->bottom};
  return ACL_SUCCESS;
}

aclError InterpOf(const acldvppResizeConfig* rc, dv::Interp* out) {
  uint32_t v = 0;
  if (rc) {
    if (!ResizeConfigs().Contains(rc))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("resizeConfig ", PtrString(rc),
                                                  " is not a live acldvppResizeConfig (never created or destroyed)"));
    v = rc->interpolation;
  }
  static constexpr dv::Interp kByValue[] = {dv::Interp::kBilinear, dv::Interp::kBilinear, dv::Interp::kNearest,
                                            dv::Interp::kBilinearAsymmetric, dv::Interp::kNearestHalfPixel};
  *out = kByValue[v <= 4 ? v : 0];
  return ACL_SUCCESS;
}

// The pictures of a VPC call, checked, with their buffers in DVPP memory.
aclError Pictures(acldvppChannelDesc* channel, acldvppPicDesc* in, acldvppPicDesc* out, bool same_family,
                  dv::Picture* pi, dv::Picture* po) {
  if (aclError e = RequireInit()) return e;
  if (aclError e = CheckChannel(channel, DVPP_CHNMODE_VPC, "DVPP_CHNMODE_VPC")) return e;
  if (aclError e = CheckPicDesc(in, "inputDesc")) return e;
  if (aclError e = CheckPicDesc(out, "outputDesc")) return e;
  *pi = PictureOf(in);
  *po = PictureOf(out);
  if (aclError e = Check(dv::CheckVpcPicture("inputDesc", *pi, false))) return e;
  if (same_family && dv::VpcFormat(po->format))
    if (aclError e = Check(dv::CheckSameFamily(pi->format, po->format))) return e;
  if (aclError e = Check(dv::CheckVpcPicture("outputDesc", *po, same_family))) return e;
  auto bytes = [](const dv::Picture& p) {
    return dv::PictureBytes(*dv::Describe(p.format), p.width_stride, p.height_stride);
  };
  if (aclError e = CheckDvppRange("inputDesc data", pi->data, bytes(*pi))) return e;
  return CheckDvppRange("outputDesc data", po->data, bytes(*po));
}

// Every resize/crop/paste form: crop (null: the whole input) resized into
// paste (null: the whole output).
aclError CropResizePaste(const char* api, acldvppChannelDesc* channel, acldvppPicDesc* in, acldvppPicDesc* out,
                         const acldvppRoiConfig* crop, bool crop_given, const acldvppRoiConfig* paste,
                         bool paste_given, const acldvppResizeConfig* rc, aclrtStream stream) {
  dv::Picture pi, po;
  if (aclError e = Pictures(channel, in, out, true, &pi, &po)) return e;
  dv::Rect c{0, 0, pi.width, pi.height}, p{0, 0, po.width, po.height};
  dv::Roi roi;
  if (crop_given) {
    if (aclError e = Roi(crop, "cropArea", &roi)) return e;
    if (aclError e = Check(dv::CheckRoi("cropArea", roi, "inputDesc", pi, false, &c))) return e;
  }
  if (paste_given) {
    if (aclError e = Roi(paste, "pasteArea", &roi)) return e;
    if (aclError e = Check(dv::CheckRoi("pasteArea", roi, "outputDesc", po, true, &p))) return e;
  }
  if (aclError e = Check(dv::CheckScale(c, p))) return e;
  dv::Interp interp = dv::Interp::kBilinear;
  if (aclError e = InterpOf(rc, &interp)) return e;
  return EnqueueMediaJob(stream, api, out->f, [=]() {
    dv::CropResizePaste(pi, c, po, p, interp);
    return oc::Status::Ok();
  });
}

aclError NotSupported(const char* alternative) {
  return Fail(ACL_ERROR_FEATURE_UNSUPPORTED,
              StrCat("not supported yet by OpenCANN (docs/dvpp.md)", alternative[0] ? "; " : "", alternative));
}

}  // namespace

aclError acldvppVpcResizeAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                               acldvppPicDesc* outputDesc, acldvppResizeConfig* resizeConfig, aclrtStream stream) {
  const char* api = __func__;
  return Guard(api, [&]() -> aclError {
    return CropResizePaste(api, channelDesc, inputDesc, outputDesc, nullptr, false, nullptr, false, resizeConfig,
                           stream);
  });
}

aclError acldvppVpcCropAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc, acldvppPicDesc* outputDesc,
                             acldvppRoiConfig* cropArea, aclrtStream stream) {
  const char* api = __func__;
  return Guard(api, [&]() -> aclError {
    return CropResizePaste(api, channelDesc, inputDesc, outputDesc, cropArea, true, nullptr, false, nullptr,
                           stream);
  });
}

aclError acldvppVpcCropResizeAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                   acldvppPicDesc* outputDesc, acldvppRoiConfig* cropArea,
                                   acldvppResizeConfig* resizeConfig, aclrtStream stream) {
  const char* api = __func__;
  return Guard(api, [&]() -> aclError {
    return CropResizePaste(api, channelDesc, inputDesc, outputDesc, cropArea, true, nullptr, false, resizeConfig,
                           stream);
  });
}

aclError acldvppVpcCropAndPasteAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                     acldvppPicDesc* outputDesc, acldvppRoiConfig* cropArea,
                                     acldvppRoiConfig* pasteArea, aclrtStream stream) {
  const char* api = __func__;
  return Guard(api, [&]() -> aclError {
    return CropResizePaste(api, channelDesc, inputDesc, outputDesc, cropArea, true, pasteArea, true, nullptr,
                           stream);
  });
}

aclError acldvppVpcCropResizePasteAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                        acldvppPicDesc* outputDesc, acldvppRoiConfig* cropArea,
                                        acldvppRoiConfig* pasteArea, acldvppResizeConfig* resizeConfig,
                                        aclrtStream stream) {
  const char* api = __func__;
  return Guard(api, [&]() -> aclError {
    return CropResizePaste(api, channelDesc, inputDesc, outputDesc, cropArea, true, pasteArea, true,
                           resizeConfig, stream);
  });
}

aclError acldvppVpcConvertColorAsync(acldvppChannelDesc* channelDesc, acldvppPicDesc* inputDesc,
                                     acldvppPicDesc* outputDesc, aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (aclError e = CheckChannel(channelDesc, DVPP_CHNMODE_VPC, "DVPP_CHNMODE_VPC")) return e;
    if (aclError e = CheckPicDesc(inputDesc, "inputDesc")) return e;
    if (aclError e = CheckPicDesc(outputDesc, "outputDesc")) return e;
    // Zeros in the output's geometry take the input's size and the smallest strides.
    PicFields& o = *outputDesc->f;
    const PicFields& i = *inputDesc->f;
    const dv::FormatInfo* of = dv::Describe(static_cast<dv::PixelFormat>(o.format));
    if (o.width == 0) o.width = i.width;
    if (o.height == 0) o.height = i.height;
    if (of && dv::VpcFormat(of->format)) {
      if (o.width_stride == 0) o.width_stride = dv::AlignUp(o.width * of->bytes_per_pixel, dv::kVpcWidthStrideAlign);
      if (o.height_stride == 0) o.height_stride = dv::AlignUp(o.height, dv::kVpcHeightStrideAlign);
    }
    dv::Picture pi, po;
    if (aclError e = Pictures(channelDesc, inputDesc, outputDesc, false, &pi, &po)) return e;
    if (po.width != pi.width || po.height != pi.height)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("outputDesc is ", po.width, "x", po.height, " but inputDesc is ",
                                                  pi.width, "x", pi.height,
                                                  "; colour conversion does not resize (use 0 or the input's size)"));
    return EnqueueMediaJob(stream, "acldvppVpcConvertColorAsync", outputDesc->f, [=]() {
      dv::ConvertColor(pi, po);
      return oc::Status::Ok();
    });
  });
}

// ---- Not implemented yet --------------------------------------------------------------------

aclError acldvppVpcBatchCropAsync(acldvppChannelDesc*, acldvppBatchPicDesc*, uint32_t*, uint32_t,
                                  acldvppBatchPicDesc*, acldvppRoiConfig*[], aclrtStream) {
  return Guard(__func__, [&] { return NotSupported("crop each picture with acldvppVpcCropAsync"); });
}

aclError acldvppVpcBatchCropResizeAsync(acldvppChannelDesc*, acldvppBatchPicDesc*, uint32_t*, uint32_t,
                                        acldvppBatchPicDesc*, acldvppRoiConfig*[], acldvppResizeConfig*,
                                        aclrtStream) {
  return Guard(__func__, [&] { return NotSupported("crop each picture with acldvppVpcCropResizeAsync"); });
}

aclError acldvppVpcBatchCropAndPasteAsync(acldvppChannelDesc*, acldvppBatchPicDesc*, uint32_t*, uint32_t,
                                          acldvppBatchPicDesc*, acldvppRoiConfig*[], acldvppRoiConfig*[],
                                          aclrtStream) {
  return Guard(__func__, [&] { return NotSupported("paste each picture with acldvppVpcCropAndPasteAsync"); });
}

aclError acldvppVpcBatchCropResizePasteAsync(acldvppChannelDesc*, acldvppBatchPicDesc*, uint32_t*, uint32_t,
                                             acldvppBatchPicDesc*, acldvppRoiConfig*[], acldvppRoiConfig*[],
                                             acldvppResizeConfig*, aclrtStream) {
  return Guard(__func__, [&] { return NotSupported("paste each picture with acldvppVpcCropResizePasteAsync"); });
}

aclError acldvppVpcPyrDownAsync(acldvppChannelDesc*, acldvppPicDesc*, acldvppPicDesc*, void*, aclrtStream) {
  return Guard(__func__, [&] { return NotSupported(""); });
}

"""acl.media: the DVPP media calls (include/acl/ops/acl_dvpp.h; docs/dvpp.md),
with pyACL's names and conventions: handles and pointers are ints, a call that
produces values returns them followed by ret.

`dvpp_jpeg_encode_async`'s `size` is the address of a uint32 holding the output
buffer's size (for example from acl.util.numpy_to_ptr of a 1-element uint32
array); when the job has run it holds the encoded size, as in pyACL."""
import ctypes as _ct

from ._lib import lib as _c, ptr as _ptr

P, U32, I32, U64, SZ, ERR = _ct.c_void_p, _ct.c_uint32, _ct.c_int32, _ct.c_uint64, _ct.c_size_t, _ct.c_int
PU32, PI32 = _ct.POINTER(U32), _ct.POINTER(I32)

# Pixel formats (acldvppPixelFormat), channel modes and JPEG subsamplings, as pyACL's constants.
PIXEL_FORMAT_YUV_400 = 0
PIXEL_FORMAT_YUV_SEMIPLANAR_420 = 1
PIXEL_FORMAT_YVU_SEMIPLANAR_420 = 2
PIXEL_FORMAT_YUV_SEMIPLANAR_422 = 3
PIXEL_FORMAT_YVU_SEMIPLANAR_422 = 4
PIXEL_FORMAT_YUV_SEMIPLANAR_444 = 5
PIXEL_FORMAT_YVU_SEMIPLANAR_444 = 6
PIXEL_FORMAT_RGB_888 = 12
PIXEL_FORMAT_BGR_888 = 13
PIXEL_FORMAT_RGBA_8888 = 16
PIXEL_FORMAT_UNKNOWN = 10000
DVPP_CHNMODE_VPC, DVPP_CHNMODE_JPEGD, DVPP_CHNMODE_JPEGE, DVPP_CHNMODE_PNGD = 1, 2, 4, 8

_SIGNATURES = {
    "acldvppMalloc": (ERR, [_ct.POINTER(P), SZ]),
    "acldvppFree": (ERR, [P]),
    "acldvppCreateChannelDesc": (P, []),
    "acldvppDestroyChannelDesc": (ERR, [P]),
    "acldvppGetChannelDescChannelId": (U64, [P]),
    "acldvppSetChannelDescMode": (ERR, [P, U32]),
    "acldvppCreateChannel": (ERR, [P]),
    "acldvppDestroyChannel": (ERR, [P]),
    "acldvppCreatePicDesc": (P, []),
    "acldvppDestroyPicDesc": (ERR, [P]),
    "acldvppSetPicDescData": (ERR, [P, P]),
    "acldvppGetPicDescData": (P, [P]),
    "acldvppCreateBatchPicDesc": (P, [U32]),
    "acldvppGetPicDesc": (P, [P, U32]),
    "acldvppDestroyBatchPicDesc": (ERR, [P]),
    "acldvppCreateRoiConfig": (P, [U32, U32, U32, U32]),
    "acldvppDestroyRoiConfig": (ERR, [P]),
    "acldvppSetRoiConfig": (ERR, [P, U32, U32, U32, U32]),
    "acldvppCreateResizeConfig": (P, []),
    "acldvppDestroyResizeConfig": (ERR, [P]),
    "acldvppSetResizeConfigInterpolation": (ERR, [P, U32]),
    "acldvppGetResizeConfigInterpolation": (U32, [P]),
    "acldvppCreateJpegeConfig": (P, []),
    "acldvppDestroyJpegeConfig": (ERR, [P]),
    "acldvppSetJpegeConfigLevel": (ERR, [P, U32]),
    "acldvppGetJpegeConfigLevel": (U32, [P]),
    "acldvppJpegGetImageInfoV2": (ERR, [P, U32, PU32, PU32, PI32, PI32]),
    "acldvppJpegPredictDecSize": (ERR, [P, U32, _ct.c_int, PU32]),
    "acldvppJpegPredictEncSize": (ERR, [P, P, PU32]),
    "acldvppJpegDecodeAsync": (ERR, [P, P, U32, P, P]),
    "acldvppJpegEncodeAsync": (ERR, [P, P, P, P, P, P]),
    "acldvppPngGetImageInfo": (ERR, [P, U32, PU32, PU32, PI32]),
    "acldvppPngPredictDecSize": (ERR, [P, U32, _ct.c_int, PU32]),
    "acldvppPngDecodeAsync": (ERR, [P, P, U32, P, P]),
    "acldvppVpcResizeAsync": (ERR, [P, P, P, P, P]),
    "acldvppVpcCropAsync": (ERR, [P, P, P, P, P]),
    "acldvppVpcCropResizeAsync": (ERR, [P, P, P, P, P, P]),
    "acldvppVpcCropAndPasteAsync": (ERR, [P, P, P, P, P, P]),
    "acldvppVpcCropResizePasteAsync": (ERR, [P, P, P, P, P, P, P]),
    "acldvppVpcConvertColorAsync": (ERR, [P, P, P, P]),
}
# The picture description's plain fields: a setter and a getter each.
_PIC_FIELDS = {"size": U32, "format": _ct.c_int, "width": U32, "height": U32, "width_stride": U32,
               "height_stride": U32, "ret_code": U32}


def _camel(name):
    return "".join(w.capitalize() for w in name.split("_"))


for _f, _t in _PIC_FIELDS.items():
    _SIGNATURES[f"acldvppSetPicDesc{_camel(_f)}"] = (ERR, [P, _t])
    _SIGNATURES[f"acldvppGetPicDesc{_camel(_f)}"] = (_t, [P])

for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(_c, _name)
    _fn.restype = _res
    _fn.argtypes = _args


def _h(x):
    return x or None


# ---- memory, channels, descriptions -------------------------------------------------

def dvpp_malloc(size):
    p = P()
    ret = _c.acldvppMalloc(_ct.byref(p), size)
    return _ptr(p.value), ret


def dvpp_free(dev_ptr):
    return _c.acldvppFree(_h(dev_ptr))


def dvpp_create_channel_desc():
    return _ptr(_c.acldvppCreateChannelDesc())


def dvpp_destroy_channel_desc(channel_desc):
    return _c.acldvppDestroyChannelDesc(_h(channel_desc))


def dvpp_get_channel_desc_channel_id(channel_desc):
    return _c.acldvppGetChannelDescChannelId(_h(channel_desc))


def dvpp_set_channel_desc_mode(channel_desc, mode):
    return _c.acldvppSetChannelDescMode(_h(channel_desc), mode)


def dvpp_create_channel(channel_desc):
    return _c.acldvppCreateChannel(_h(channel_desc))


def dvpp_destroy_channel(channel_desc):
    return _c.acldvppDestroyChannel(_h(channel_desc))


def dvpp_create_pic_desc():
    return _ptr(_c.acldvppCreatePicDesc())


def dvpp_destroy_pic_desc(pic_desc):
    return _c.acldvppDestroyPicDesc(_h(pic_desc))


def dvpp_set_pic_desc_data(pic_desc, data):
    return _c.acldvppSetPicDescData(_h(pic_desc), _h(data))


def dvpp_get_pic_desc_data(pic_desc):
    return _ptr(_c.acldvppGetPicDescData(_h(pic_desc)))


def _pic_accessors(field):
    setter = getattr(_c, f"acldvppSetPicDesc{_camel(field)}")
    getter = getattr(_c, f"acldvppGetPicDesc{_camel(field)}")
    return (lambda pic_desc, value: setter(_h(pic_desc), value)), (lambda pic_desc: getter(_h(pic_desc)))


for _f in _PIC_FIELDS:
    globals()[f"dvpp_set_pic_desc_{_f}"], globals()[f"dvpp_get_pic_desc_{_f}"] = _pic_accessors(_f)


def dvpp_create_batch_pic_desc(batch_size):
    return _ptr(_c.acldvppCreateBatchPicDesc(batch_size))


def dvpp_get_pic_desc(batch_pic_desc, index):
    return _ptr(_c.acldvppGetPicDesc(_h(batch_pic_desc), index))


def dvpp_destroy_batch_pic_desc(batch_pic_desc):
    return _c.acldvppDestroyBatchPicDesc(_h(batch_pic_desc))


def dvpp_create_roi_config(left, right, top, bottom):
    return _ptr(_c.acldvppCreateRoiConfig(left, right, top, bottom))


def dvpp_destroy_roi_config(roi_config):
    return _c.acldvppDestroyRoiConfig(_h(roi_config))


def dvpp_set_roi_config(roi_config, left, right, top, bottom):
    return _c.acldvppSetRoiConfig(_h(roi_config), left, right, top, bottom)


def dvpp_create_resize_config():
    return _ptr(_c.acldvppCreateResizeConfig())


def dvpp_destroy_resize_config(resize_config):
    return _c.acldvppDestroyResizeConfig(_h(resize_config))


def dvpp_set_resize_config_interpolation(resize_config, interpolation):
    return _c.acldvppSetResizeConfigInterpolation(_h(resize_config), interpolation)


def dvpp_get_resize_config_interpolation(resize_config):
    return _c.acldvppGetResizeConfigInterpolation(_h(resize_config))


def dvpp_create_jpege_config():
    return _ptr(_c.acldvppCreateJpegeConfig())


def dvpp_destroy_jpege_config(jpege_config):
    return _c.acldvppDestroyJpegeConfig(_h(jpege_config))


def dvpp_set_jpege_config_level(jpege_config, level):
    return _c.acldvppSetJpegeConfigLevel(_h(jpege_config), level)


def dvpp_get_jpege_config_level(jpege_config):
    return _c.acldvppGetJpegeConfigLevel(_h(jpege_config))


# ---- JPEG and PNG ---------------------------------------------------------------------

def dvpp_jpeg_get_image_info_v2(data, size):
    w, h, c, f = U32(), U32(), I32(), I32()
    ret = _c.acldvppJpegGetImageInfoV2(_h(data), size, _ct.byref(w), _ct.byref(h), _ct.byref(c), _ct.byref(f))
    return w.value, h.value, c.value, f.value, ret


def dvpp_jpeg_get_image_info(data, size):
    w, h, c, _, ret = dvpp_jpeg_get_image_info_v2(data, size)
    return w, h, c, ret


def dvpp_jpeg_predict_dec_size(data, data_size, output_pixel_format):
    n = U32()
    ret = _c.acldvppJpegPredictDecSize(_h(data), data_size, output_pixel_format, _ct.byref(n))
    return n.value, ret


def dvpp_jpeg_predict_enc_size(input_desc, config):
    n = U32()
    ret = _c.acldvppJpegPredictEncSize(_h(input_desc), _h(config), _ct.byref(n))
    return n.value, ret


def dvpp_jpeg_decode_async(channel_desc, data, size, output_desc, stream):
    return _c.acldvppJpegDecodeAsync(_h(channel_desc), _h(data), size, _h(output_desc), _h(stream))


def dvpp_jpeg_encode_async(channel_desc, input_desc, data, size, config, stream):
    return _c.acldvppJpegEncodeAsync(_h(channel_desc), _h(input_desc), _h(data), _h(size), _h(config), _h(stream))


def dvpp_png_get_image_info(data, size):
    w, h, c = U32(), U32(), I32()
    ret = _c.acldvppPngGetImageInfo(_h(data), size, _ct.byref(w), _ct.byref(h), _ct.byref(c))
    return w.value, h.value, c.value, ret


def dvpp_png_predict_dec_size(data, data_size, output_pixel_format):
    n = U32()
    ret = _c.acldvppPngPredictDecSize(_h(data), data_size, output_pixel_format, _ct.byref(n))
    return n.value, ret


def dvpp_png_decode_async(channel_desc, data, size, output_desc, stream):
    return _c.acldvppPngDecodeAsync(_h(channel_desc), _h(data), size, _h(output_desc), _h(stream))


# ---- VPC --------------------------------------------------------------------------------

def dvpp_vpc_resize_async(channel_desc, input_desc, output_desc, resize_config, stream):
    return _c.acldvppVpcResizeAsync(_h(channel_desc), _h(input_desc), _h(output_desc), _h(resize_config), _h(stream))


def dvpp_vpc_crop_async(channel_desc, input_desc, output_desc, crop_area, stream):
    return _c.acldvppVpcCropAsync(_h(channel_desc), _h(input_desc), _h(output_desc), _h(crop_area), _h(stream))


def dvpp_vpc_crop_resize_async(channel_desc, input_desc, output_desc, crop_area, resize_config, stream):
    return _c.acldvppVpcCropResizeAsync(_h(channel_desc), _h(input_desc), _h(output_desc), _h(crop_area),
                                        _h(resize_config), _h(stream))


def dvpp_vpc_crop_and_paste_async(channel_desc, input_desc, output_desc, crop_area, paste_area, stream):
    return _c.acldvppVpcCropAndPasteAsync(_h(channel_desc), _h(input_desc), _h(output_desc), _h(crop_area),
                                          _h(paste_area), _h(stream))


def dvpp_vpc_crop_resize_paste_async(channel_desc, input_desc, output_desc, crop_area, paste_area, resize_config,
                                     stream):
    return _c.acldvppVpcCropResizePasteAsync(_h(channel_desc), _h(input_desc), _h(output_desc), _h(crop_area),
                                             _h(paste_area), _h(resize_config), _h(stream))


def dvpp_vpc_convert_color_async(channel_desc, input_desc, output_desc, stream):
    return _c.acldvppVpcConvertColorAsync(_h(channel_desc), _h(input_desc), _h(output_desc), _h(stream))


def __getattr__(name):
    # pyACL media functions this module does not have (video decode/encode, batch crops, ...).
    raise AttributeError(f"{__name__}.{name} is not supported by OpenCANN's acl module "
                         "(docs/python.md and docs/dvpp.md list what is)")

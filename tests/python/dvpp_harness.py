"""Helpers for the DVPP tests: pictures in DVPP memory through the pyACL
`acl.media` module (in this process), and the independent references
(PIL/libjpeg's decoded YCbCr, libjpeg's documented chroma upsampling)."""
import io
import os
import sys

import numpy as np

import oc_harness

sys.path.insert(0, os.path.join(oc_harness.SOURCE_DIR, "python"))
os.environ.setdefault("OC_BUILD_DIR", oc_harness.BUILD_DIR)

import acl  # noqa: E402
from acl import media as m  # noqa: E402

H2D, D2H = 1, 2
NV12, NV21, YUV400 = m.PIXEL_FORMAT_YUV_SEMIPLANAR_420, m.PIXEL_FORMAT_YVU_SEMIPLANAR_420, m.PIXEL_FORMAT_YUV_400
RGB, BGR, RGBA, UNKNOWN = m.PIXEL_FORMAT_RGB_888, m.PIXEL_FORMAT_BGR_888, m.PIXEL_FORMAT_RGBA_8888, m.PIXEL_FORMAT_UNKNOWN
INVALID_PARAM = 100000


def align(v, a):
    return (v + a - 1) // a * a


def to_dev(data):
    """Bytes or a uint8 array copied into a new DVPP block: (pointer, size)."""
    data = bytes(data) if not isinstance(data, bytes) else data
    ptr, ret = m.dvpp_malloc(len(data))
    assert ret == 0, acl.get_recent_err_msg()
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), H2D) == 0
    return ptr, len(data)


def from_dev(ptr, size):
    out = np.empty(size, np.uint8)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), size, ptr, size, D2H) == 0, acl.get_recent_err_msg()
    return out


class Pic:
    """A picture description over a DVPP buffer."""

    def __init__(self, fmt, w=0, h=0, ws=0, hs=0, size=None, fill=None):
        self.desc = m.dvpp_create_pic_desc()
        if size is None:
            size = ws * hs * 3 // 2 if fmt in (NV12, NV21) else ws * hs
        self.size = size
        self.ptr, ret = m.dvpp_malloc(max(size, 1))
        assert ret == 0
        if fill is not None:
            self.write(np.full(size, fill, np.uint8))
        m.dvpp_set_pic_desc_data(self.desc, self.ptr)
        m.dvpp_set_pic_desc_size(self.desc, size)
        m.dvpp_set_pic_desc_format(self.desc, fmt)
        for name, v in (("width", w), ("height", h), ("width_stride", ws), ("height_stride", hs)):
            getattr(m, f"dvpp_set_pic_desc_{name}")(self.desc, v)

    def write(self, arr):
        arr = np.ascontiguousarray(arr, np.uint8).ravel()
        assert acl.rt.memcpy(self.ptr, self.size, acl.util.numpy_to_ptr(arr), arr.size, H2D) == 0

    def get(self, name):
        return getattr(m, f"dvpp_get_pic_desc_{name}")(self.desc)

    def raw(self):
        return from_dev(self.ptr, self.size)

    def geometry(self):
        return tuple(self.get(n) for n in ("width", "height", "width_stride", "height_stride"))

    def yuv420(self):
        """(Y, UV) of an NV12/NV21 picture: h x w and ceil(h/2) x ceil(w/2) x 2."""
        w, h, ws, hs = self.geometry()
        buf = self.raw()
        y = buf[:ws * hs].reshape(hs, ws)[:h, :w]
        cw, ch = (w + 1) // 2, (h + 1) // 2
        uv = buf[ws * hs:ws * hs + ws * hs // 2].reshape(hs // 2, ws)[:ch, :2 * cw].reshape(ch, cw, 2)
        return y, uv

    def packed(self, bpp):
        w, h, ws, hs = self.geometry()
        return self.raw()[:ws * hs].reshape(hs, ws)[:h, :w * bpp].reshape(h, w, bpp)

    def destroy(self):
        m.dvpp_destroy_pic_desc(self.desc)
        m.dvpp_free(self.ptr)


def nv12_pic(y, uv, ws=None, hs=None, fmt=NV12):
    """An NV12 picture holding planes y (h x w) and uv (h/2 x w/2 x 2)."""
    h, w = y.shape
    ws, hs = ws or align(w, 16), hs or align(h, 2)
    p = Pic(fmt, w, h, ws, hs)
    buf = np.zeros(ws * hs * 3 // 2, np.uint8)
    buf[:ws * hs].reshape(hs, ws)[:h, :w] = y
    buf[ws * hs:].reshape(hs // 2, ws)[:uv.shape[0], :uv.shape[1] * 2] = uv.reshape(uv.shape[0], -1)
    p.write(buf)
    return p


def packed_pic(arr, fmt, ws=None, hs=None):
    h, w, bpp = arr.shape
    ws, hs = ws or align(w * bpp, 16), hs or align(h, 2)
    p = Pic(fmt, w, h, ws, hs, size=ws * hs)
    buf = np.zeros(ws * hs, np.uint8)
    buf.reshape(hs, ws)[:h, :w * bpp] = arr.reshape(h, -1)
    p.write(buf)
    return p


# ---- references --------------------------------------------------------------------------

def jpeg_bytes(arr, subsampling=2, quality=90, **kw):
    from PIL import Image
    b = io.BytesIO()
    img = Image.fromarray(arr)
    if img.mode == "L":
        img.save(b, "JPEG", quality=quality, **kw)
    else:
        img.save(b, "JPEG", quality=quality, subsampling=subsampling, **kw)
    return b.getvalue()


def pil_ycbcr(data):
    """libjpeg's decoded YCbCr through PIL (no colour conversion): h x w x 3, or h x w for grayscale."""
    from PIL import Image
    im = Image.open(io.BytesIO(data))
    if im.mode != "L":
        im.draft("YCbCr", im.size)
        assert im.mode == "YCbCr"
    return np.asarray(im)


def box_down(c, fy, fx):
    """Mean (rounded half up) over fy x fx blocks, the last ones clipped at the edge."""
    h, w = c.shape
    out = np.zeros(((h + fy - 1) // fy, (w + fx - 1) // fx))
    cnt = np.zeros_like(out)
    for dy in range(fy):
        for dx in range(fx):
            part = c[dy::fy, dx::fx].astype(np.int64)
            out[:part.shape[0], :part.shape[1]] += part
            cnt[:part.shape[0], :part.shape[1]] += 1
    return ((out + cnt // 2) // cnt).astype(np.int64)


def fancy_h2v1(c, width):
    """libjpeg's 'fancy' horizontal 2x chroma upsampling (triangle filter, edges replicated)."""
    c = c.astype(np.int64)
    left = np.concatenate([c[:, :1], c[:, :-1]], axis=1)
    right = np.concatenate([c[:, 1:], c[:, -1:]], axis=1)
    out = np.empty((c.shape[0], 2 * c.shape[1]), np.int64)
    out[:, 0::2] = (3 * c + left + 1) >> 2
    out[:, 1::2] = (3 * c + right + 2) >> 2
    out[:, 0] = c[:, 0]
    out[:, 2 * c.shape[1] - 1] = c[:, -1]
    return out[:, :width]


def fancy_h2v2(c, width, height):
    """libjpeg's 'fancy' 2x2 chroma upsampling: vertical 3:1 sums, then horizontal 3:1 with rounding."""
    c = c.astype(np.int64)
    up = np.concatenate([c[:1], c[:-1]], axis=0)
    down = np.concatenate([c[1:], c[-1:]], axis=0)
    rows = np.empty((2 * c.shape[0], c.shape[1]), np.int64)
    rows[0::2] = 3 * c + up
    rows[1::2] = 3 * c + down
    left = np.concatenate([rows[:, :1], rows[:, :-1]], axis=1)
    right = np.concatenate([rows[:, 1:], rows[:, -1:]], axis=1)
    out = np.empty((rows.shape[0], 2 * rows.shape[1]), np.int64)
    out[:, 0::2] = (3 * rows + left + 8) >> 4
    out[:, 1::2] = (3 * rows + right + 7) >> 4
    out[:, 0] = (4 * rows[:, 0] + 8) >> 4
    out[:, 2 * rows.shape[1] - 1] = (4 * rows[:, -1] + 7) >> 4
    return out[:height, :width]


def ycbcr_to_rgb(y, cb, cr):
    y, cb, cr = (np.asarray(a, np.float64) for a in (y, cb, cr))
    r = y + 1.402 * (cr - 128)
    g = y - 0.344136 * (cb - 128) - 0.714136 * (cr - 128)
    b = y + 1.772 * (cb - 128)
    return np.clip(np.floor(np.stack([r, g, b], -1) + 0.5), 0, 255).astype(np.int64)

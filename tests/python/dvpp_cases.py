"""The DVPP tests (collected through test_dvpp.py): media calls
(include/acl/ops/acl_dvpp.h, docs/dvpp.md) through pyACL's acl.media, in this
process, against independent references: libjpeg's own decoded YCbCr (via
PIL) for JPEG, PIL for PNG, OpenCV for VPC resizing, numpy for the documented
colour matrix. Every size/alignment rule is provoked and its message checked;
corrupt files are refused without crashing."""
import io
import os
import subprocess

import numpy as np
import pytest
from PIL import Image, JpegImagePlugin

import acl_models
from dvpp_harness import (BGR, INVALID_PARAM, NV12, NV21, RGB, RGBA, UNKNOWN, YUV400, Pic, acl, align,
                          box_down, fancy_h2v1, fancy_h2v2, from_dev, jpeg_bytes, m, nv12_pic, packed_pic,
                          pil_ycbcr, to_dev, ycbcr_to_rgb)

cv2 = pytest.importorskip("cv2")
R = np.random.default_rng(18)


@pytest.fixture(scope="module")
def dv():
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_create_channel(ch) == 0
    yield type("Dvpp", (), {"stream": stream, "ch": ch})
    m.dvpp_destroy_channel(ch)
    m.dvpp_destroy_channel_desc(ch)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(0)
    acl.finalize()


def sync(dv):
    ret = acl.rt.synchronize_stream(dv.stream)
    return ret, acl.get_recent_err_msg() if ret else ""


def photo(h=120, w=160):
    """A smooth picture with texture: gradients, a disc and noise."""
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([xx * 255 / w, yy * 255 / h, 128 + 100 * np.sin(xx / 7.0) * np.cos(yy / 5.0)], -1)
    base[(yy - h / 2) ** 2 + (xx - w / 3) ** 2 < (h / 4) ** 2] = (250, 30, 60)
    return np.clip(base + R.normal(0, 6, base.shape), 0, 255).astype(np.uint8)


def decode(dv, data, fmt=NV12, size=None):
    """Decodes JPEG bytes; returns (Pic, async ret, sync ret, message)."""
    ptr, n = to_dev(data)
    if size is None:
        size, ret = m.dvpp_jpeg_predict_dec_size(data, len(data), fmt if fmt != YUV400 else NV12)
        assert ret == 0, acl.get_recent_err_msg()
    out = Pic(fmt, size=size)
    r1 = m.dvpp_jpeg_decode_async(dv.ch, ptr, n, out.desc, dv.stream)
    msg = acl.get_recent_err_msg() if r1 else ""
    r2, msg2 = sync(dv)
    m.dvpp_free(ptr)
    return out, r1, r2, msg or msg2


def sample_images():
    import sklearn.datasets
    d = os.path.join(os.path.dirname(sklearn.datasets.__file__), "images")
    files = [os.path.join(d, f) for f in ("china.jpg", "flower.jpg")]
    try:
        import skimage
        sd = os.path.join(os.path.dirname(skimage.__file__), "data")
        files += sorted(os.path.join(sd, f) for f in os.listdir(sd) if f.endswith(".jpg"))[:3]
    except ImportError:
        pass
    return files


def check_420(ours_uv, ref, sub, w, h):
    """Chroma of a 4:2:0 output against libjpeg's decoded (upsampled) chroma of the source."""
    for k in range(2):
        c, r = ours_uv[..., k].astype(np.int64), ref[..., 1 + k].astype(np.int64)
        if sub == 0:  # 4:4:4: the output is the 2x2 mean of the full-resolution chroma, exactly
            np.testing.assert_array_equal(c, box_down(r, 2, 2))
        elif sub == 2:  # 4:2:0: the file's own samples; libjpeg's triangle upsampling of them gives PIL's
            assert np.abs(fancy_h2v2(c, w, h) - r).max() <= 1
        else:  # 4:2:2: vertical mean of sample pairs; upsampled, within 2 of the pairs' mean in PIL's
            pad = np.concatenate([r, r[-1:]], axis=0) if h % 2 else r  # an odd last row pairs with itself
            pair_mean = (pad[0::2] + pad[1::2]) / 2
            assert np.abs(fancy_h2v1(c, w) - pair_mean).max() <= 2


# ---- JPEG decode --------------------------------------------------------------------------

@pytest.mark.parametrize("path", sample_images(), ids=os.path.basename)
def test_jpeg_decode_of_photographs_matches_libjpeg(dv, path):
    data = open(path, "rb").read()
    sub = JpegImagePlugin.get_sampling(Image.open(path))
    out, r1, r2, msg = decode(dv, data)
    assert r1 == 0 and r2 == 0, msg
    ref = pil_ycbcr(data)
    h, w = ref.shape[:2]
    assert out.geometry() == (w, h, align(w, 128), align(h, 16))
    y, uv = out.yuv420()
    np.testing.assert_array_equal(y, ref[..., 0])  # the same IDCT: exact
    check_420(uv, ref, sub, w, h)


@pytest.mark.parametrize("size", [(64, 48), (33, 35), (101, 67)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("sub", [0, 1, 2, "gray"], ids=["444", "422", "420", "400"])
def test_jpeg_decode_of_each_subsampling_and_odd_sizes(dv, size, sub):
    w, h = size
    img = photo(h, w)
    if sub == "gray":
        img = img[..., 1].copy()
    data = jpeg_bytes(img, subsampling=0 if sub == "gray" else sub)
    for fmt in (NV12, NV21):
        out, r1, r2, msg = decode(dv, data, fmt)
        assert r1 == 0 and r2 == 0, msg
        assert out.get("format") == fmt and out.geometry() == (w, h, align(w, 128), align(h, 16))
        ref = pil_ycbcr(data)
        y, uv = out.yuv420()
        if fmt == NV21:
            uv = uv[..., ::-1]
        if sub == "gray":
            np.testing.assert_array_equal(y, ref)
            assert (uv == 0x80).all()
        else:
            np.testing.assert_array_equal(y, ref[..., 0])
            check_420(uv, ref, sub, w, h)
        out.destroy()


@pytest.mark.parametrize("factor", ["440", "411"])
def test_jpeg_decode_of_440_and_411_files_written_by_opencv(dv, factor):
    w, h = 45, 37
    ok, enc = cv2.imencode(".jpg", photo(h, w), [cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                                                 getattr(cv2, f"IMWRITE_JPEG_SAMPLING_FACTOR_{factor}")])
    data = enc.tobytes()
    assert m.dvpp_jpeg_get_image_info_v2(data, len(data))[3] == {"440": 4, "411": 5}[factor]
    out, r1, r2, msg = decode(dv, data, NV12)
    assert r1 == 0 and r2 == 0, msg
    ref = pil_ycbcr(data).astype(np.int64)
    y, uv = out.yuv420()
    np.testing.assert_array_equal(y, ref[..., 0])
    uv = uv.astype(np.int64)
    for k in range(2):
        r = ref[..., 1 + k]
        if factor == "411":
            # libjpeg repeats 4:1:1 samples 4 times (no smoothing): the file's samples are every 4th
            # column; the output is the mean of each vertical pair, each sample covering 2 columns.
            native = r[:, ::4]
            pad = np.concatenate([native, native[-1:]], axis=0)
            pair = (pad[0::2] + pad[1::2] + 1) // 2
            np.testing.assert_array_equal(uv[..., k], np.repeat(pair, 2, axis=1)[:, :uv.shape[1]])
        else:
            # 4:4:0: the mean of each horizontal pair; libjpeg's vertical triangle upsampling of the
            # output is within 2 of the pairs' mean in PIL's chroma.
            c = uv[..., k]
            up, down = np.concatenate([c[:1], c[:-1]]), np.concatenate([c[1:], c[-1:]])
            rows = np.empty((2 * c.shape[0], c.shape[1]), np.int64)
            rows[0::2], rows[1::2] = (3 * c + up + 1) >> 2, (3 * c + down + 2) >> 2
            padc = np.concatenate([r, r[:, -1:]], axis=1)
            pair_mean = (padc[:, 0::2] + padc[:, 1::2]) / 2
            assert np.abs(rows[:h] - pair_mean).max() <= 2


def test_jpeg_decode_to_native_semi_planar_formats(dv):
    # 4:2:2 -> YUV422SP keeps the file's samples (libjpeg's upsampling of them is PIL's chroma);
    # 4:4:4 -> YUV444SP is PIL's chroma exactly; PIXEL_FORMAT_UNKNOWN picks these by itself.
    for sub, fmt in ((1, m.PIXEL_FORMAT_YUV_SEMIPLANAR_422), (0, m.PIXEL_FORMAT_YUV_SEMIPLANAR_444)):
        w, h = 45, 37
        data = jpeg_bytes(photo(h, w), subsampling=sub)
        size, ret = m.dvpp_jpeg_predict_dec_size(data, len(data), UNKNOWN)
        assert ret == 0 and size == align(w, 128) * align(h, 16) * (2 if sub == 1 else 3)
        out, r1, r2, msg = decode(dv, data, UNKNOWN, size)
        assert r1 == 0 and r2 == 0, msg
        assert out.get("format") == fmt
        ws, hs = align(w, 128), align(h, 16)
        cw = (w + 1) // 2 if sub == 1 else w
        uv = out.raw()[ws * hs:].reshape(hs, -1)[:h, :2 * cw].reshape(h, cw, 2).astype(np.int64)
        ref = pil_ycbcr(data).astype(np.int64)
        for k in range(2):
            if sub == 1:
                assert np.abs(fancy_h2v1(uv[..., k], w) - ref[..., 1 + k]).max() <= 1
            else:
                np.testing.assert_array_equal(uv[..., k], ref[..., 1 + k])
    # A 4:2:0 file cannot give 4:4:4.
    data = jpeg_bytes(photo(40, 40), subsampling=2)
    size, ret = m.dvpp_jpeg_predict_dec_size(data, len(data), m.PIXEL_FORMAT_YUV_SEMIPLANAR_444)
    assert ret == INVALID_PARAM and "4:2:0 JPEG cannot be decoded to PIXEL_FORMAT_YUV_SEMIPLANAR_444" in \
        acl.get_recent_err_msg()


def test_decoders_default_to_nv12_and_the_source_s_rgb_layout_when_no_format_is_set(dv):
    data = jpeg_bytes(photo(40, 50), subsampling=0)
    ptr, n = to_dev(data)
    out = Pic(NV12, size=align(50, 128) * 48 * 3 // 2)
    bare = m.dvpp_create_pic_desc()  # format never set: reads PIXEL_FORMAT_YUV_400 but decodes to NV12
    assert m.dvpp_get_pic_desc_format(bare) == YUV400
    m.dvpp_set_pic_desc_data(bare, out.ptr)
    m.dvpp_set_pic_desc_size(bare, out.size)
    assert m.dvpp_jpeg_decode_async(dv.ch, ptr, n, bare, dv.stream) == 0
    assert sync(dv) == (0, "")
    assert m.dvpp_get_pic_desc_format(bare) == NV12 and m.dvpp_get_pic_desc_width(bare) == 50
    png = io.BytesIO()
    Image.fromarray(np.dstack([photo(40, 50), np.full((40, 50), 9, np.uint8)])).save(png, "PNG")
    pdata = png.getvalue()
    pptr, pn = to_dev(pdata)
    bare2 = m.dvpp_create_pic_desc()
    buf, _ = m.dvpp_malloc(align(50 * 4, 128) * 48)
    m.dvpp_set_pic_desc_data(bare2, buf)
    m.dvpp_set_pic_desc_size(bare2, align(50 * 4, 128) * 48)
    assert m.dvpp_png_decode_async(dv.ch, pptr, pn, bare2, dv.stream) == 0
    assert sync(dv) == (0, "")
    assert m.dvpp_get_pic_desc_format(bare2) == RGBA
    # Set explicitly, YUV400 means Y only.
    gray = Pic(YUV400, size=align(50, 128) * 48)
    assert m.dvpp_jpeg_decode_async(dv.ch, ptr, n, gray.desc, dv.stream) == 0
    assert sync(dv) == (0, "")
    w, h, ws, hs = gray.geometry()
    np.testing.assert_array_equal(gray.raw().reshape(hs, ws)[:h, :w], pil_ycbcr(data)[..., 0])


def test_jpeg_image_info(dv):
    for sub, css in ((0, 0), (1, 1), (2, 2)):
        data = jpeg_bytes(photo(50, 70), subsampling=sub)
        assert m.dvpp_jpeg_get_image_info_v2(data, len(data)) == (70, 50, 3, css, 0)
    gray = jpeg_bytes(photo(50, 70)[..., 0].copy())
    assert m.dvpp_jpeg_get_image_info_v2(gray, len(gray)) == (70, 50, 1, 3, 0)
    w, h, c, ret = m.dvpp_jpeg_get_image_info(b"\x89PNG....", 8)
    assert ret == INVALID_PARAM and "not a JPEG file" in acl.get_recent_err_msg()


def test_jpeg_decode_refuses_bad_files_without_crashing(dv):
    good = jpeg_bytes(photo(64, 64))
    b = io.BytesIO()
    Image.fromarray(photo(64, 64)).save(b, "JPEG", progressive=True)
    progressive = b.getvalue()
    b = io.BytesIO()
    Image.fromarray(photo(64, 64)).convert("CMYK").save(b, "JPEG")
    cmyk = b.getvalue()
    corrupt = bytearray(good)
    corrupt[len(good) // 2:len(good) // 2 + 40] = bytes(R.integers(0, 256, 40, dtype=np.uint8))
    cases = [
        (good[:len(good) * 3 // 5], "corrupt or truncated"),
        (good[:100], "truncated"),
        (bytes(corrupt), "JPEG data is corrupt"),
        (b"not a jpeg at all", "not a JPEG file"),
        (progressive, "progressive JPEG is not supported"),
        (cmyk, "4 components (CMYK/YCCK) are not supported"),
        (jpeg_bytes(photo(16, 16)), "the decoder takes 32..8192 pixels a side"),
    ]
    size = align(64, 128) * 64 * 3 // 2
    for data, want in cases:
        out, r1, r2, msg = decode(dv, data, NV12, size)
        assert r1 == 0, msg  # the file is read when the job runs
        assert r2 == INVALID_PARAM and want in msg and "acldvppJpegDecodeAsync" in msg, (want, msg)
        assert out.get("ret_code") != 0
        out.destroy()
    # Random damage anywhere: each decode succeeds or is refused; the process survives.
    for i in range(60):
        bad = bytearray(good)
        for pos in R.integers(2, len(good), 4):
            bad[pos] = int(R.integers(0, 256))
        out, r1, r2, msg = decode(dv, bytes(bad), NV12, size)
        assert r1 == 0 and r2 in (0, INVALID_PARAM), msg
        out.destroy()
    # And a buffer too small for the picture.
    out, r1, r2, msg = decode(dv, good, NV12, 1000)
    assert r2 == INVALID_PARAM and "outputDesc size 1000 is smaller than the 12288 bytes" in msg


def test_jpeg_decode_reads_the_file_in_stream_order(dv):
    # The input is copied by an asynchronous copy queued on the same stream before the decode.
    data = jpeg_bytes(photo(48, 64))
    ptr, ret = m.dvpp_malloc(len(data))
    assert ret == 0
    assert acl.rt.memcpy_async(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 1, dv.stream) == 0
    size, _ = m.dvpp_jpeg_predict_dec_size(data, len(data), NV12)
    out = Pic(NV12, size=size)
    assert m.dvpp_jpeg_decode_async(dv.ch, ptr, len(data), out.desc, dv.stream) == 0
    assert sync(dv) == (0, "")
    np.testing.assert_array_equal(out.yuv420()[0], pil_ycbcr(data)[..., 0])


def test_decode_resize_encode_queued_on_one_stream_run_in_order(dv):
    # A pipeline as a CANN application queues it: copy in, decode, resize, encode, one
    # synchronisation. The decoded geometry is set from the header, as the 310 samples do.
    data = jpeg_bytes(photo(90, 120), subsampling=2)
    w, h, _, _, ret = m.dvpp_jpeg_get_image_info_v2(data, len(data))
    size, _ = m.dvpp_jpeg_predict_dec_size(data, len(data), NV12)
    src, _ = m.dvpp_malloc(len(data))
    assert acl.rt.memcpy_async(src, len(data), acl.util.bytes_to_ptr(data), len(data), 1, dv.stream) == 0
    dec = Pic(NV12, w, h, align(w, 128), align(h, 16), size=size)
    out = Pic(NV12, 64, 48, 64, 48)
    cfg = m.dvpp_create_jpege_config()
    bound, _ = m.dvpp_jpeg_predict_enc_size(out.desc, cfg)
    jpg, _ = m.dvpp_malloc(bound)
    n = np.array([bound], np.uint32)
    assert m.dvpp_jpeg_decode_async(dv.ch, src, len(data), dec.desc, dv.stream) == 0
    assert m.dvpp_vpc_resize_async(dv.ch, dec.desc, out.desc, 0, dv.stream) == 0
    assert m.dvpp_jpeg_encode_async(dv.ch, out.desc, jpg, acl.util.numpy_to_ptr(n), cfg, dv.stream) == 0
    assert sync(dv) == (0, "")
    y = pil_ycbcr(data)[..., 0]
    assert_close(out.yuv420()[0], cv2.resize(y, (64, 48), interpolation=cv2.INTER_LINEAR), 1)
    assert Image.open(io.BytesIO(from_dev(jpg, int(n[0])).tobytes())).size == (64, 48)


# ---- JPEG encode --------------------------------------------------------------------------

def test_jpeg_encode_round_trips_through_pil(dv):
    w, h = 96, 64
    img = photo(h, w)
    ycc = np.asarray(Image.fromarray(img).convert("YCbCr")).astype(np.int64)
    y = ycc[..., 0].astype(np.uint8)
    uv = np.stack([box_down(ycc[..., 1], 2, 2), box_down(ycc[..., 2], 2, 2)], -1).astype(np.uint8)
    src = nv12_pic(y, uv)
    cfg = m.dvpp_create_jpege_config()
    sizes = {}
    for level in (95, 20):
        assert m.dvpp_set_jpege_config_level(cfg, level) == 0 and m.dvpp_get_jpege_config_level(cfg) == level
        bound, ret = m.dvpp_jpeg_predict_enc_size(src.desc, cfg)
        assert ret == 0 and bound > 0
        out, ret = m.dvpp_malloc(bound)
        size = np.array([bound], np.uint32)
        assert m.dvpp_jpeg_encode_async(dv.ch, src.desc, out, acl.util.numpy_to_ptr(size), cfg, dv.stream) == 0
        assert sync(dv) == (0, "")
        assert 0 < size[0] <= bound
        data = to_host(out, int(size[0]))
        sizes[level] = len(data)
        im = Image.open(io.BytesIO(data))
        assert im.size == (w, h) and JpegImagePlugin.get_sampling(im) == 2
        dec = pil_ycbcr(data).astype(np.int64)
        mse = ((dec[..., 0] - y) ** 2).mean()
        psnr = 10 * np.log10(255 ** 2 / max(mse, 1e-9))
        assert psnr > (38 if level == 95 else 25), (level, psnr)
        m.dvpp_free(out)
    assert sizes[20] < sizes[95]
    # A buffer too small fails the job and says so.
    out, _ = m.dvpp_malloc(64)
    size = np.array([64], np.uint32)
    assert m.dvpp_jpeg_encode_async(dv.ch, src.desc, out, acl.util.numpy_to_ptr(size), cfg, dv.stream) == 0
    ret, msg = sync(dv)
    assert ret == INVALID_PARAM and "the output buffer holds 64" in msg
    assert m.dvpp_set_jpege_config_level(cfg, 101) == INVALID_PARAM
    m.dvpp_destroy_jpege_config(cfg)


def to_host(ptr, n):
    return from_dev(ptr, n).tobytes()


# ---- PNG decode ----------------------------------------------------------------------------

def png_bytes(img):
    b = io.BytesIO()
    img.save(b, "PNG")
    return b.getvalue()


def png_cases():
    rgb = photo(41, 67)
    alpha = R.integers(0, 256, (41, 67), dtype=np.uint8)
    pal = Image.fromarray(rgb).quantize(16)
    pal_t = pal.copy()
    pal_t.info["transparency"] = 3
    return {
        "rgb": Image.fromarray(rgb),
        "rgba": Image.fromarray(np.dstack([rgb, alpha])),
        "gray": Image.fromarray(rgb[..., 0]),
        "gray_alpha": Image.fromarray(rgb[..., 0]).convert("LA"),
        "palette": pal,
        "palette_transparent": pal_t,
    }


@pytest.mark.parametrize("name", list(png_cases()))
def test_png_decode_matches_pil_exactly(dv, name):
    img = png_cases()[name]
    data = png_bytes(img)
    w, h, comps, ret = m.dvpp_png_get_image_info(data, len(data))
    assert ret == 0 and (w, h) == img.size
    has_alpha = name in ("rgba", "gray_alpha", "palette_transparent")
    assert comps == {"rgb": 3, "rgba": 4, "gray": 1, "gray_alpha": 2, "palette": 3, "palette_transparent": 4}[name]
    for fmt, mode, bpp in ((RGB, "RGB", 3), (RGBA, "RGBA", 4), (UNKNOWN, "RGBA" if has_alpha else "RGB", 0)):
        size, ret = m.dvpp_png_predict_dec_size(data, len(data), fmt)
        bpp = bpp or len(mode)
        assert ret == 0 and size == align(w * bpp, 128) * align(h, 16)
        ptr, n = to_dev(data)
        out = Pic(fmt, size=size)
        assert m.dvpp_png_decode_async(dv.ch, ptr, n, out.desc, dv.stream) == 0
        assert sync(dv) == (0, "")
        assert out.get("format") == (RGB if mode == "RGB" else RGBA)
        assert out.geometry() == (w, h, align(w * bpp, 128), align(h, 16))
        np.testing.assert_array_equal(out.packed(bpp), np.asarray(img.convert(mode)))
        out.destroy()
        m.dvpp_free(ptr)


def test_png_decode_of_16_bit_keeps_the_high_byte(dv):
    v = R.integers(0, 65536, (40, 48), dtype=np.uint16)
    data = png_bytes(Image.fromarray(v))  # uint16: a 16-bit grayscale PNG
    ptr, n = to_dev(data)
    size, _ = m.dvpp_png_predict_dec_size(data, len(data), RGB)
    out = Pic(RGB, size=size)
    assert m.dvpp_png_decode_async(dv.ch, ptr, n, out.desc, dv.stream) == 0
    assert sync(dv) == (0, "")
    got = out.packed(3)
    for k in range(3):
        np.testing.assert_array_equal(got[..., k], (v >> 8).astype(np.uint8))


def test_png_decode_refuses_bad_files(dv):
    good = png_bytes(Image.fromarray(photo(40, 40)))
    crc = bytearray(good)
    idat = good.index(b"IDAT")
    crc[idat + 10] ^= 0xFF
    cases = [(good[:len(good) // 2], "corrupt or truncated"), (bytes(crc), "corrupt or truncated"),
             (b"\x89PNG\r\n\x1a\n" + b"\0" * 30, "PNG"), (png_bytes(Image.fromarray(photo(20, 20))), "32..4096")]
    for data, want in cases:
        ptr, n = to_dev(data)
        out = Pic(RGB, size=align(40 * 3, 128) * 48)
        assert m.dvpp_png_decode_async(dv.ch, ptr, n, out.desc, dv.stream) == 0
        ret, msg = sync(dv)
        assert ret == INVALID_PARAM and want in msg and "acldvppPngDecodeAsync" in msg, (want, msg)
        out.destroy()
        m.dvpp_free(ptr)
    w, h, c, ret = m.dvpp_png_get_image_info(b"GIF89a....", 10)
    assert ret == INVALID_PARAM and "not a PNG file" in acl.get_recent_err_msg()


# ---- VPC ----------------------------------------------------------------------------------

def nv12_random(h, w):
    """Random NV12 planes: the worst case for rounding differences."""
    return R.integers(0, 256, (h, w), dtype=np.uint8), R.integers(0, 256, ((h + 1) // 2, (w + 1) // 2, 2),
                                                                   dtype=np.uint8)


def resize_job(dv, src, out, interp, crop=None, paste=None):
    cfg = m.dvpp_create_resize_config()
    assert m.dvpp_set_resize_config_interpolation(cfg, interp) == 0
    if crop is None and paste is None:
        ret = m.dvpp_vpc_resize_async(dv.ch, src.desc, out.desc, cfg, dv.stream)
    elif paste is None:
        roi = m.dvpp_create_roi_config(*crop)
        ret = m.dvpp_vpc_crop_resize_async(dv.ch, src.desc, out.desc, roi, cfg, dv.stream)
    else:
        roi, proi = m.dvpp_create_roi_config(*crop), m.dvpp_create_roi_config(*paste)
        ret = m.dvpp_vpc_crop_resize_paste_async(dv.ch, src.desc, out.desc, roi, proi, cfg, dv.stream)
    msg = acl.get_recent_err_msg() if ret else ""
    return ret, msg


def tf1_bilinear(img, oh, ow):
    """TensorFlow 1 resize_bilinear (align_corners=False, no half-pixel offset), in float."""
    h, w = img.shape[:2]
    ys, xs = np.arange(oh) * (h / oh), np.arange(ow) * (w / ow)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    if img.ndim == 3:
        fy, fx = fy[..., None], fx[..., None]
    a = img.astype(np.float64)
    top = a[y0][:, x0] * (1 - fx) + a[y0][:, x1] * fx
    bot = a[y1][:, x0] * (1 - fx) + a[y1][:, x1] * fx
    return np.floor(top * (1 - fy) + bot * fy + 0.5)


def nearest_half_pixel(img, oh, ow):
    h, w = img.shape[:2]
    ys = np.minimum(np.floor((np.arange(oh) + 0.5) * (h / oh)).astype(int), h - 1)
    xs = np.minimum(np.floor((np.arange(ow) + 0.5) * (w / ow)).astype(int), w - 1)
    return img[ys][:, xs]


def reference(img, oh, ow, interp):
    if interp in (0, 1):
        return cv2.resize(img, (ow, oh), interpolation=cv2.INTER_LINEAR)
    if interp == 2:
        return cv2.resize(img, (ow, oh), interpolation=cv2.INTER_NEAREST)
    if interp == 3:
        return tf1_bilinear(img, oh, ow)
    return nearest_half_pixel(img, oh, ow)


def assert_close(got, ref, interp):
    diff = np.abs(got.astype(np.int64) - np.asarray(ref).astype(np.int64))
    # Bilinear: 11-bit fixed-point weights, as OpenCV's 8-bit path; within 1. Nearest: exact.
    assert diff.max() <= (1 if interp in (0, 1, 3) else 0), diff.max()


@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("shape", [((75, 100), (224, 224)), ((480, 640), (96, 128)), ((427, 640), (300, 202))],
                         ids=["up", "down4x", "odd"])
def test_vpc_resize_nv12_matches_opencv(dv, interp, shape):
    (h, w), (oh, ow) = shape
    y, uv = nv12_random(h, w)
    src = nv12_pic(y, uv)
    out = Pic(NV12, ow, oh, align(ow, 16), oh)
    ret, msg = resize_job(dv, src, out, interp)
    assert ret == 0, msg
    assert sync(dv) == (0, "")
    gy, guv = out.yuv420()
    assert_close(gy, reference(y, oh, ow, interp), interp)
    assert_close(guv, reference(uv, oh // 2, ow // 2, interp), interp)
    src.destroy()
    out.destroy()


@pytest.mark.parametrize("fmt", [RGB, BGR, YUV400])
def test_vpc_resize_packed_and_gray_match_opencv(dv, fmt):
    bpp = 1 if fmt == YUV400 else 3
    img = R.integers(0, 256, (90, 70, bpp), dtype=np.uint8)
    src = packed_pic(img, fmt)
    oh, ow = 33, 130
    ws = align(ow * bpp, 16)
    out = Pic(fmt, ow, oh, ws, align(oh, 2), size=ws * align(oh, 2))
    ret, msg = resize_job(dv, src, out, 1)
    assert ret == 0 and sync(dv) == (0, ""), msg
    ref = cv2.resize(img if bpp == 3 else img[..., 0], (ow, oh), interpolation=cv2.INTER_LINEAR)
    assert_close(out.packed(bpp), ref.reshape(oh, ow, bpp), 1)


def test_vpc_crop_and_paste_write_only_the_paste_area(dv):
    y, uv = nv12_random(200, 300)
    src = nv12_pic(y, uv)
    oh, ow = 160, 256
    out = Pic(NV12, ow, oh, ow, oh, fill=7)
    crop, paste = (20, 139, 10, 99), (32, 191, 40, 129)  # 120x90 -> 160x90
    ret, msg = resize_job(dv, src, out, 1, crop, paste)
    assert ret == 0 and sync(dv) == (0, ""), msg
    gy, guv = out.yuv420()
    ry = cv2.resize(y[10:100, 20:140], (160, 90), interpolation=cv2.INTER_LINEAR)
    assert_close(gy[40:130, 32:192], ry, 1)
    ruv = cv2.resize(uv[5:50, 10:70], (80, 45), interpolation=cv2.INTER_LINEAR)
    assert_close(guv[20:65, 16:96], ruv, 1)
    mask = np.ones_like(gy, bool)
    mask[40:130, 32:192] = False
    assert (gy[mask] == 7).all()
    # Crop alone resizes the area to the whole output; NV12 -> NV21 swaps the chroma.
    out2 = Pic(NV21, 60, 46, 64, 46)
    roi = m.dvpp_create_roi_config(100, 159, 50, 95)
    assert m.dvpp_vpc_crop_async(dv.ch, src.desc, out2.desc, roi, dv.stream) == 0
    assert sync(dv) == (0, "")
    gy2, guv2 = out2.yuv420()
    np.testing.assert_array_equal(gy2, y[50:96, 100:160])
    np.testing.assert_array_equal(guv2, uv[25:48, 50:80][..., ::-1])


def test_vpc_convert_color_follows_the_bt601_full_range_matrix(dv):
    h, w = 36, 50
    y, uv = nv12_random(h, w)
    src = nv12_pic(y, uv)
    out = Pic(RGB, w, h, 0, 0, size=align(w * 3, 16) * h)
    for n in ("width", "height"):
        getattr(m, f"dvpp_set_pic_desc_{n}")(out.desc, 0)
    assert m.dvpp_vpc_convert_color_async(dv.ch, src.desc, out.desc, dv.stream) == 0
    assert sync(dv) == (0, "")
    assert out.geometry() == (w, h, align(w * 3, 16), h)  # zeros became the input's size
    up = lambda c: np.repeat(np.repeat(c, 2, 0), 2, 1)[:h, :w]  # noqa: E731
    ref = ycbcr_to_rgb(y, up(uv[..., 0]), up(uv[..., 1]))
    rgb = out.packed(3).astype(np.int64)
    assert np.abs(rgb - ref).max() <= 1
    # RGB -> NV21: Y per pixel; chroma the mean of each 2x2 block's Cb/Cr.
    back = Pic(NV21, w, h, align(w, 16), h)
    assert m.dvpp_vpc_convert_color_async(dv.ch, out.desc, back.desc, dv.stream) == 0
    assert sync(dv) == (0, "")
    f = rgb.astype(np.float64)
    ry = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]
    cb = -0.168736 * f[..., 0] - 0.331264 * f[..., 1] + 0.5 * f[..., 2] + 128
    cr = 0.5 * f[..., 0] - 0.418688 * f[..., 1] - 0.081312 * f[..., 2] + 128
    mean = lambda c: c.reshape(h // 2, 2, w // 2, 2).mean((1, 3))  # noqa: E731
    gy, guv = back.yuv420()
    assert np.abs(gy - np.floor(ry + 0.5)).max() <= 1
    assert np.abs(guv[..., 1] - np.floor(mean(cb) + 0.5)).max() <= 1
    assert np.abs(guv[..., 0] - np.floor(mean(cr) + 0.5)).max() <= 1
    # RGB -> BGR and YUV400 -> NV12 are exact.
    bgr = Pic(BGR, w, h, align(w * 3, 16), h, size=align(w * 3, 16) * h)
    assert m.dvpp_vpc_convert_color_async(dv.ch, out.desc, bgr.desc, dv.stream) == 0
    gray = packed_pic(y[..., None], YUV400)
    nv = Pic(NV12, w, h, align(w, 16), h)
    assert m.dvpp_vpc_convert_color_async(dv.ch, gray.desc, nv.desc, dv.stream) == 0
    assert sync(dv) == (0, "")
    np.testing.assert_array_equal(bgr.packed(3), out.packed(3)[..., ::-1])
    ny, nuv = nv.yuv420()
    np.testing.assert_array_equal(ny, y)
    assert (nuv == 128).all()


def rule_cases():
    """(what to change, the message expected). Base: a 64x48 NV12 input resized to 32x24."""
    return [
        ("in.width_stride=70", "inputDesc widthStride 70 must be a multiple of 16"),
        ("in.height_stride=49", "inputDesc heightStride 49 must be even"),
        ("out.width=10;out.width_stride=16", "outputDesc widthStride 16 must be a multiple of 16, at least 32"),
        ("in.width=8", "inputDesc width 8 is outside [10, 4096]"),
        ("in.size=100", "inputDesc size 100 is smaller than the 4608 bytes"),
        ("out.width=31;out.width_stride=32", "a YUV420SP output needs even width and height"),
        ("out.format=12", "is not of inputDesc format PIXEL_FORMAT_YUV_SEMIPLANAR_420 (1)'s family"),
        ("out.format=3", "outputDesc format PIXEL_FORMAT_YUV_SEMIPLANAR_422 (3) is not supported by the VPC"),
        ("out.width=1030;out.width_stride=1040;out.height=24", "resizing width 64 to 1030 is a ratio of 16.09"),
        ("crop=1,31,0,23", "cropArea left 1 must be even"),
        ("crop=0,30,0,23", "cropArea right 30 must be odd"),
        ("crop=0,31,1,23", "cropArea top 1 must be even"),
        ("crop=0,31,0,22", "cropArea bottom 22 must be odd"),
        ("crop=0,65,0,23", "cropArea right 65 is outside the 64-pixel-wide inputDesc picture (columns 0..63)"),
        ("crop=0,7,0,23", "cropArea is 8x24 pixels; at least 10x6 are needed"),
        ("crop=0,31,0,23;paste=8,23,0,11", "pasteArea left 8 must be a multiple of 16"),
        ("crop=0,63,0,47;paste=0,1,0,1", "pasteArea is 2x2 pixels"),
        ("interp=9", "interpolation 9 is not one of"),
        ("in.data=plain", "inputDesc data"),
    ]


@pytest.mark.parametrize("change,want", rule_cases(), ids=[c[0] for c in rule_cases()])
def test_vpc_rules_are_refused_naming_the_parameter(dv, change, want):
    y, uv = nv12_random(48, 64)
    src = nv12_pic(y, uv)
    out = Pic(NV12, 32, 24, 32, 24, size=1040 * 24 * 3 // 2)
    crop = paste = None
    interp = 1
    for part in change.split(";"):
        key, val = part.split("=")
        if key == "crop":
            crop = tuple(int(v) for v in val.split(","))
        elif key == "paste":
            paste = tuple(int(v) for v in val.split(","))
        elif key == "interp":
            interp = int(val)
        else:
            pic, field = key.split(".")
            p = src if pic == "in" else out
            if field == "data":
                plain, _ = acl.rt.malloc(8192, 0)
                m.dvpp_set_pic_desc_data(p.desc, plain)
            else:
                getattr(m, f"dvpp_set_pic_desc_{field}")(p.desc, int(val))
    if interp == 9:
        cfg = m.dvpp_create_resize_config()
        assert m.dvpp_set_resize_config_interpolation(cfg, 9) == INVALID_PARAM
        ret, msg = INVALID_PARAM, acl.get_recent_err_msg()
    else:
        ret, msg = resize_job(dv, src, out, interp, crop, paste) if crop else resize_job(dv, src, out, interp)
    assert ret == INVALID_PARAM and want in msg, msg


def test_channel_modes_and_unsupported_calls_say_so(dv):
    ch = m.dvpp_create_channel_desc()
    assert m.dvpp_set_channel_desc_mode(ch, m.DVPP_CHNMODE_JPEGD) == 0
    assert m.dvpp_create_channel(ch) == 0 and m.dvpp_get_channel_desc_channel_id(ch) > 0
    y, uv = nv12_random(48, 64)
    src, out = nv12_pic(y, uv), Pic(NV12, 32, 24, 32, 24)
    assert m.dvpp_vpc_resize_async(ch, src.desc, out.desc, 0, dv.stream) == INVALID_PARAM
    assert "needs a channel with DVPP_CHNMODE_VPC" in acl.get_recent_err_msg()
    assert m.dvpp_destroy_channel(ch) == 0 and m.dvpp_destroy_channel_desc(ch) == 0
    lib = acl._lib.lib
    assert lib.acldvppVpcBatchCropAsync(None, None, None, 0, None, None, None) == 200006
    assert "acldvppVpcBatchCropAsync: not supported yet" in acl.get_recent_err_msg()
    with pytest.raises(AttributeError, match="not supported by OpenCANN"):
        m.vdec_create_channel_desc
    # Batches own their descriptions.
    batch = m.dvpp_create_batch_pic_desc(3)
    p = m.dvpp_get_pic_desc(batch, 2)
    assert p and m.dvpp_get_pic_desc(batch, 3) == 0
    assert m.dvpp_destroy_pic_desc(p) == INVALID_PARAM and "belongs to a batch" in acl.get_recent_err_msg()
    assert m.dvpp_destroy_batch_pic_desc(batch) == 0


# ---- The C sample ------------------------------------------------------------------------

def test_c_sample_decodes_and_resizes_like_a_cann_sample(tmp_path):
    import sklearn.datasets
    path = os.path.join(os.path.dirname(sklearn.datasets.__file__), "images", "china.jpg")
    exe = acl_models.app_path("acl_dvpp")
    proc = subprocess.run([exe, path, str(tmp_path / "dec.yuv"), str(tmp_path / "out.yuv")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "PASS" in proc.stdout, proc.stdout + proc.stderr
    ref = pil_ycbcr(open(path, "rb").read())
    h, w = ref.shape[:2]
    dec = np.fromfile(tmp_path / "dec.yuv", np.uint8)
    y = dec[:w * h].reshape(h, w)
    uv = dec[w * h:].reshape((h + 1) // 2, w // 2, 2)
    np.testing.assert_array_equal(y, ref[..., 0])
    out = np.fromfile(tmp_path / "out.yuv", np.uint8)
    assert_close(out[:224 * 224].reshape(224, 224), cv2.resize(y, (224, 224), interpolation=cv2.INTER_LINEAR), 1)
    assert_close(out[224 * 224:].reshape(112, 112, 2), cv2.resize(uv, (112, 112), interpolation=cv2.INTER_LINEAR), 1)

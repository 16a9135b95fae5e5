"""Static AIPP (atc --insert_op_conf): uint8 images preprocessed inside the
model. Each case feeds msame the raw image and compares with onnxruntime on the
original float model fed with the same image preprocessed by numpy, following
the documented AIPP arithmetic (docs/aipp.md): channel swap, crop, colour-space
conversion with integer >> 8 and clipping, (p - mean - min) * var_reci, NCHW."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import oc_harness

R = np.random.default_rng(5)


def convnet(c=3, h=16, w=20):
    wts = (R.standard_normal((4, c, 3, 3)) * 0.2).astype(np.float32)
    nodes = [helper.make_node("Conv", ["img", "w"], ["y"], pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, c, h, w])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, h, w])],
                          [numpy_helper.from_array(wts, "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def config(**kv):
    body = "\n".join(f"  {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in kv.items())
    return "aipp_op {\n  aipp_mode: static\n" + body + "\n}\n"


def normalise(x, kv, channels):
    mean = np.array([kv.get(f"mean_chn_{k}", 0) for k in range(channels)], np.float32)
    mn = np.array([kv.get(f"min_chn_{k}", 0) for k in range(channels)], np.float32)
    var = np.array([kv.get(f"var_reci_chn_{k}", 1) for k in range(channels)], np.float32)
    return ((x.astype(np.float32) - mean - mn) * var).transpose(0, 3, 1, 2)


def run(tmp_path, model, cfg_text, image):
    (tmp_path / "aipp.cfg").write_text(cfg_text)
    path = oc_harness.save_model(model, str(tmp_path), "net")
    om, proc = oc_harness.atc_compile(path, str(tmp_path / "net"), extra=[f"--insert_op_conf={tmp_path / 'aipp.cfg'}"])
    outs, _ = oc_harness.msame_run(om, [image], str(tmp_path))
    return outs[0]


def test_rgb888_with_swap_crop_and_normalisation(tmp_path):
    kv = dict(input_format="RGB888_U8", src_image_size_w=28, src_image_size_h=24, crop=True, load_start_pos_w=5,
              load_start_pos_h=3, crop_size_w=20, crop_size_h=16, rbuv_swap_switch=True,
              mean_chn_0=10, mean_chn_1=20, mean_chn_2=30, min_chn_0=0.5, min_chn_1=1.5, min_chn_2=2.5,
              var_reci_chn_0=0.017, var_reci_chn_1=0.0175, var_reci_chn_2=0.0174)
    img = R.integers(0, 256, (1, 24, 28, 3), dtype=np.uint8)
    x = img[..., ::-1][:, 3:19, 5:25, :]  # swap R/B, then crop
    m = convnet()
    (want,) = oc_harness.ort_run(m, {"img": normalise(x, kv, 3)})
    got = run(tmp_path, m, config(**kv), img)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("swap", [False, True])
def test_yuv420sp_with_colour_space_conversion(tmp_path, swap):
    h, w = 16, 20
    mat = [[256, 0, 359], [256, -88, -183], [256, 454, 0]]
    kv = dict(input_format="YUV420SP_U8", src_image_size_w=w, src_image_size_h=h, csc_switch=True,
              rbuv_swap_switch=swap, input_bias_0=0, input_bias_1=128, input_bias_2=128,
              var_reci_chn_0=0.0039, var_reci_chn_1=0.0039, var_reci_chn_2=0.0039, mean_chn_1=3)
    for r in range(3):
        for c in range(3):
            kv[f"matrix_r{r}c{c}"] = mat[r][c]
    nv12 = R.integers(0, 256, (1, h * 3 // 2, w, 1), dtype=np.uint8)
    y = nv12[0, :h, :, 0].astype(np.int64)
    uv = nv12[0, h:, :, 0].reshape(h // 2, w // 2, 2).astype(np.int64)
    uv = uv.repeat(2, axis=0).repeat(2, axis=1)
    u, v = (uv[..., 1], uv[..., 0]) if swap else (uv[..., 0], uv[..., 1])
    p = np.stack([y - 0, u - 128, v - 128], -1)
    rgb = np.clip(np.floor_divide(p @ np.array(mat, np.int64).T, 256), 0, 255)[None]
    m = convnet(h=h, w=w)
    (want,) = oc_harness.ort_run(m, {"img": normalise(rgb, kv, 3)})
    got = run(tmp_path, m, config(**kv), nv12)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-4)


def test_yuv400_grey(tmp_path):
    kv = dict(input_format="YUV400_U8", mean_chn_0=128, var_reci_chn_0=0.0078125)
    img = R.integers(0, 256, (1, 16, 20, 1), dtype=np.uint8)
    m = convnet(c=1)
    (want,) = oc_harness.ort_run(m, {"img": normalise(img, kv, 1)})
    got = run(tmp_path, m, config(**kv), img)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cfg,fragment", [
    ("aipp_op {\n aipp_mode: dynamic\n input_format: RGB888_U8\n}\n", "dynamic"),
    ("aipp_op {\n input_format: XRGB8888_U8\n}\n", "XRGB8888_U8"),
    ("aipp_op {\n input_format: RGB888_U8\n padding: true\n}\n", "padding"),
    ("aipp_op {\n input_format: RGB888_U8\n crop: true\n crop_size_w: 10\n crop_size_h: 16\n}\n", "resizing"),
    ("aipp_op {\n input_format: RGB888_U8\n frobnicate: 3\n}\n", "frobnicate"),
    ("aipp_op {\n input_format: YUV400_U8\n}\n", "channels"),
    ("aipp_op {\n csc_switch: true\n}\n", "input_format is required"),
    ("aipp_op {\n input_format: RGB888_U8\n", "not closed"),
])
def test_bad_configs_are_refused_with_the_reason(tmp_path, cfg, fragment):
    (tmp_path / "aipp.cfg").write_text(cfg)
    path = oc_harness.save_model(convnet(), str(tmp_path), "net")
    _, proc = oc_harness.atc_compile(path, str(tmp_path / "net"), extra=[f"--insert_op_conf={tmp_path / 'aipp.cfg'}"],
                                     check=False)
    assert proc.returncode != 0 and fragment in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_rgb888_to_yuv_with_the_default_matrix_and_the_input_name_kept(tmp_path):
    kv = dict(input_format="RGB888_U8", csc_switch=True)
    img = R.integers(0, 256, (1, 16, 20, 3), dtype=np.uint8)
    img[0, 0, 0] = 255  # white: (235, 128, 128) in GE's RGB->YUV
    m_rgb2yuv = np.array([[66, 129, 25], [-38, -74, 112], [112, -94, -18]], np.int64)
    yuv = np.clip(np.floor_divide(img.astype(np.int64) @ m_rgb2yuv.T, 256) + np.array([16, 128, 128]), 0, 255)
    assert yuv[0, 0, 0].tolist() == [235, 128, 128]
    m = convnet()
    (want,) = oc_harness.ort_run(m, {"img": normalise(yuv, kv, 3)})
    got = run(tmp_path, m, config(**kv), img)
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-4)
    info = oc_harness.run_tool([oc_harness.ATC, "--mode=6", f"--om={tmp_path / 'net.om'}"]).stdout
    assert "img: uint8 [1,16,20,3]" in info and "aipp (input:fmt): 0:RGB888_U8" in info, info


def test_colour_conversion_stays_exact_in_a_bf16_precision_mode(tmp_path):
    """The CSC sums run as element-wise float32 ops: a bf16 mode (MatMul/Conv in
    bfloat16) must not round the matrix; only the model's conv differs."""
    h, w = 8, 8
    kv = dict(input_format="YUV420SP_U8", csc_switch=True)
    nv12 = R.integers(0, 256, (1, h * 3 // 2, w, 1), dtype=np.uint8)
    ident = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["img"], ["y"])], "id",
        [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, h, w])]),
        opset_imports=[helper.make_opsetid("", 13)])
    (tmp_path / "aipp.cfg").write_text(config(**kv))
    path = oc_harness.save_model(ident, str(tmp_path), "id")
    om, _ = oc_harness.atc_compile(path, str(tmp_path / "id"), extra=[f"--insert_op_conf={tmp_path / 'aipp.cfg'}",
                                                                     "--precision_mode=allow_fp32_to_bf16"])
    (got,), _ = oc_harness.msame_run(om, [nv12], str(tmp_path))
    y = nv12[0, :h, :, 0].astype(np.int64)
    uv = nv12[0, h:, :, 0].reshape(h // 2, w // 2, 2).astype(np.int64).repeat(2, 0).repeat(2, 1)
    p = np.stack([y - 16, uv[..., 0] - 128, uv[..., 1] - 128], -1)
    mat = np.array([[298, 516, 0], [298, -100, -208], [298, 0, 409]], np.int64)
    want = np.clip(np.floor_divide(p @ mat.T, 256), 0, 255).transpose(2, 0, 1)[None].astype(np.float32)
    np.testing.assert_array_equal(got.reshape(want.shape), want)


def test_source_size_must_match_without_crop(tmp_path):
    (tmp_path / "aipp.cfg").write_text(config(input_format="RGB888_U8", src_image_size_w=32, src_image_size_h=16))
    path = oc_harness.save_model(convnet(), str(tmp_path), "net")
    _, proc = oc_harness.atc_compile(path, str(tmp_path / "net"), extra=[f"--insert_op_conf={tmp_path / 'aipp.cfg'}"],
                                     check=False)
    assert proc.returncode != 0 and "without crop they must agree" in proc.stdout + proc.stderr

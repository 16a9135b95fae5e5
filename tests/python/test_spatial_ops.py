"""Spatial and signal ops (GridSample, AffineGrid, RoiAlign, DFT, STFT, Resize
antialias, BatchNormalization training mode) through atc + msame, compared with
onnxruntime. DeformConv, which onnxruntime's CPU provider lacks, is compared with
a numpy formula of the operator (bilinear sampling at offset taps)."""
import os
import tempfile

import numpy as np
import pytest
from onnx import TensorProto, helper

from oc_harness import atc_compile, compile_and_compare, msame_run, save_model
from test_ops import f32, single

R = np.random.default_rng(11)


def compile_and_run(model, feeds):
    with tempfile.TemporaryDirectory() as d:
        om, _ = atc_compile(save_model(model, d), os.path.join(d, "model"),
                            {k: list(v.shape) for k, v in feeds.items()})
        outs, _ = msame_run(om, list(feeds.values()), d)
    return outs


def grid(*shape, lo=-1.2, hi=1.2):
    return (R.random(shape) * (hi - lo) + lo).astype(np.float32)


def i64(v):
    return np.array(v, dtype=np.int64)


CASES = {}
for mode in ("linear", "nearest", "cubic"):
    for pad in ("zeros", "border", "reflection"):
        for align in (0, 1):
            CASES[f"gridsample_{mode}_{pad}_a{align}"] = (
                lambda mode=mode, pad=pad, align=align: single(
                    "GridSample", [("x", f32(2, 3, 7, 9)), ("g", grid(2, 5, 6, 2, lo=-1.6, hi=1.6))],
                    attrs={"mode": mode, "padding_mode": pad, "align_corners": align}, opset=20))
CASES.update({
    "gridsample_opset16_bicubic": lambda: single(
        "GridSample", [("x", f32(1, 4, 6, 5)), ("g", grid(1, 8, 3, 2))], attrs={"mode": "bicubic"}, opset=16),
    "gridsample_volumetric_linear": lambda: single(
        "GridSample", [("x", f32(2, 2, 4, 5, 6)), ("g", grid(2, 3, 4, 5, 3))],
        attrs={"mode": "linear", "padding_mode": "border"}, opset=20),
    "gridsample_volumetric_nearest": lambda: single(
        "GridSample", [("x", f32(1, 3, 3, 4, 5)), ("g", grid(1, 2, 6, 3, 3))], attrs={"mode": "nearest"}, opset=20),
    "gridsample_many_channels": lambda: single(
        "GridSample", [("x", f32(1, 40, 16, 16)), ("g", grid(1, 33, 35, 2))], opset=20),
    "affine_grid_2d": lambda: single("AffineGrid", [("t", f32(3, 2, 3))], [("s", i64([3, 5, 7, 9]))], opset=20),
    "affine_grid_3d_align": lambda: single("AffineGrid", [("t", f32(2, 3, 4))], [("s", i64([2, 1, 3, 4, 5]))],
                                           attrs={"align_corners": 1}, opset=20),
    "roialign_avg_half_pixel": lambda: single(
        "RoiAlign", [("x", f32(2, 5, 12, 14))],
        [("rois", np.array([[0, 0, 9, 9], [2.5, 1.5, 13.2, 11.7], [-3, -2, 5, 4], [4, 4, 4.5, 30]], np.float32)),
         ("idx", i64([0, 1, 1, 0]))],
        attrs={"output_height": 3, "output_width": 4, "sampling_ratio": 2, "spatial_scale": 0.9}, opset=16),
    "roialign_adaptive_output_half_pixel": lambda: single(
        "RoiAlign", [("x", f32(1, 3, 10, 10))],
        [("rois", np.array([[0, 0, 9, 9], [1, 2, 3, 8]], np.float32)), ("idx", i64([0, 0]))],
        attrs={"output_height": 5, "output_width": 5, "coordinate_transformation_mode": "output_half_pixel"},
        opset=16),
    "roialign_max": lambda: single(
        "RoiAlign", [("x", f32(1, 2, 9, 9, lo=0.1, hi=1))],
        [("rois", np.array([[1, 1, 7, 6], [0, 3, 8, 8]], np.float32)), ("idx", i64([0, 0]))],
        attrs={"output_height": 2, "output_width": 3, "mode": "max", "sampling_ratio": 2}, opset=16),
    # Past the per-ROI sample table: an adaptive grid of a huge ROI, and 40x40 bins x 16 samples.
    "roialign_huge_roi_adaptive": lambda: single(
        "RoiAlign", [("x", f32(1, 2, 10, 10))],
        [("rois", np.array([[-50, -50, 150, 150], [2, 2, 5, 5]], np.float32)), ("idx", i64([0, 0]))],
        attrs={"output_height": 2, "output_width": 2}, opset=16),
    "roialign_many_bins": lambda: single(
        "RoiAlign", [("x", f32(1, 2, 20, 20))], [("rois", np.array([[1, 1, 17, 18]], np.float32)), ("idx", i64([0]))],
        attrs={"output_height": 40, "output_width": 40, "sampling_ratio": 4}, opset=16),
    "dft_real_opset17": lambda: single("DFT", [("x", f32(2, 12, 3, 1))], attrs={"axis": 1}, opset=17),
    "dft_complex_inverse_opset17": lambda: single("DFT", [("x", f32(3, 16, 2))], attrs={"axis": 1, "inverse": 1},
                                                  opset=17),
    "dft_onesided_length_opset17": lambda: single("DFT", [("x", f32(2, 9, 1))], [("n", i64(12))],
                                                  attrs={"axis": 1, "onesided": 1}, opset=17),
    "dft_axis_input_opset20": lambda: single("DFT", [("x", f32(2, 5, 7, 2))], [("n", i64(5)), ("a", i64(1))],
                                             opset=20),
    "dft_pow2_opset20": lambda: single("DFT", [("x", f32(4, 64, 2))], [("n", i64(64)), ("a", i64(-2))],
                                       opset=20),
    "stft_window_onesided": lambda: single("STFT", [("x", f32(2, 100, 1))],
                                           [("step", i64(7)), ("w", np.hanning(16).astype(np.float32))],
                                           attrs={"_order": ["x", "step", "w"]}, opset=17),
    "stft_length_complex": lambda: single("STFT", [("x", f32(1, 50, 2))],
                                          [("step", i64(5)), ("len", i64(10))],
                                          attrs={"_order": ["x", "step", "", "len"], "onesided": 0}, opset=17),
    "dft_prime_length_opset20": lambda: single("DFT", [("x", f32(3, 37, 2))], [("n", i64(41)), ("a", i64(1))],
                                               attrs={"inverse": 1}, opset=20),
    "resize_linear_antialias_scales": lambda: single(
        "Resize", [("x", f32(1, 2, 13, 17))], [("roi", np.array([], np.float32)),
                                               ("sc", np.array([1, 1, 0.45, 0.6], np.float32))],
        attrs={"mode": "linear", "antialias": 1}, opset=18),
    "resize_cubic_antialias_sizes": lambda: single(
        "Resize", [("x", f32(1, 3, 20, 11))], [("roi", np.array([], np.float32)), ("sc", np.array([], np.float32)),
                                               ("sz", i64([1, 3, 7, 5]))],
        attrs={"mode": "cubic", "antialias": 1, "cubic_coeff_a": -0.5}, opset=18),
    "resize_cubic_antialias_exclude_outside": lambda: single(
        "Resize", [("x", f32(1, 1, 16, 16))], [("roi", np.array([], np.float32)),
                                               ("sc", np.array([1, 1, 0.3, 0.7], np.float32))],
        attrs={"mode": "cubic", "antialias": 1, "exclude_outside": 1}, opset=18),
    "batchnorm_training": lambda: single(
        "BatchNormalization", [("x", f32(3, 4, 5, 6))],
        [("s", f32(4)), ("b", f32(4)), ("m", f32(4)), ("v", f32(4, lo=0.5, hi=2))],
        attrs={"training_mode": 1, "momentum": 0.8, "epsilon": 1e-3}, n_out=3, opset=15),
})


@pytest.mark.parametrize("case", sorted(CASES))
def test_spatial_op_matches_onnxruntime(case):
    model, feeds = CASES[case]()
    compile_and_compare(model, feeds, rtol=1e-3, atol=1e-5)


def _bilinear_zero(img, y, x):
    h, w = img.shape
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    ty, tx = y - y0, x - x0
    v = 0.0
    for dy, wy in ((0, 1 - ty), (1, ty)):
        for dx, wx in ((0, 1 - tx), (1, tx)):
            yy, xx = y0 + dy, x0 + dx
            if 0 <= yy < h and 0 <= xx < w:
                v += wy * wx * img[yy, xx]
    return v


def _deform_conv_ref(x, w, off, b, mask, stride, pad, dil, group, og):
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    y = np.zeros((n, oc, oh, ow))
    off = off.reshape(n, og, kh, kw, 2, oh, ow)
    mask = mask.reshape(n, og, kh, kw, oh, ow)
    for bi in range(n):
        for o in range(oc):
            g = o // (oc // group)
            for ci in range(cg):
                cin = g * cg + ci
                ogi = cin // (c // og)
                for i in range(oh):
                    for j in range(ow):
                        for a in range(kh):
                            for bb in range(kw):
                                py = i * stride - pad + a * dil + off[bi, ogi, a, bb, 0, i, j]
                                px = j * stride - pad + bb * dil + off[bi, ogi, a, bb, 1, i, j]
                                y[bi, o, i, j] += (w[o, ci, a, bb] * mask[bi, ogi, a, bb, i, j]
                                                   * _bilinear_zero(x[bi, cin], py, px))
            y[bi, o] += b[o]
    return y.astype(x.dtype)


@pytest.mark.parametrize("dtype,stride,dil", [(np.float32, 1, 1), (np.float64, 2, 2)])
def test_deform_conv_matches_formula(dtype, stride, dil):
    x = f32(2, 4, 9, 8).astype(dtype)
    w = f32(6, 2, 3, 3).astype(dtype)
    b = f32(6).astype(dtype)
    pad, group, og = 1, 2, 2
    oh, ow = (9 + 2 * pad - (2 * dil + 1)) // stride + 1, (8 + 2 * pad - (2 * dil + 1)) // stride + 1
    off = (R.random((2, og * 9 * 2, oh, ow)) * 3 - 1.5).astype(dtype)
    mask = R.random((2, og * 9, oh, ow)).astype(dtype)
    node = helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"], ["y"], group=group, offset_group=og,
                            pads=[pad] * 4, strides=[stride] * 2, dilations=[dil] * 2, kernel_shape=[3, 3])
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        [node], "deform", [helper.make_tensor_value_info(k, elem, v.shape)
                           for k, v in (("x", x), ("w", w), ("off", off), ("b", b), ("mask", mask))],
        [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    outs = compile_and_run(model, {"x": x, "w": w, "off": off, "b": b, "mask": mask})
    want = _deform_conv_ref(x, w, off, b, mask, stride, pad, dil, group, og)
    np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=1e-5)


def test_dropout_training_mask_matches_numpy_legacy_generator():
    # The reference draws np.random.seed(seed); uniform(0, 1, shape) >= ratio.
    x = f32(4, 5, 6)
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], seed=3)
    graph = helper.make_graph(
        [node], "drop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("m", TensorProto.BOOL, None)],
        initializer=[helper.make_tensor("r", TensorProto.FLOAT, [], [0.3]),
                     helper.make_tensor("t", TensorProto.BOOL, [], [True])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    outs = compile_and_run(model, {"x": x})
    keep = np.random.RandomState(3).uniform(0, 1, x.shape) >= np.float32(0.3)
    np.testing.assert_array_equal(outs[1], keep)
    np.testing.assert_allclose(outs[0], x * keep / np.float32(0.7), rtol=1e-6)


def test_stft_audio_frames_match_numpy_fft():
    # n_fft 400 (= 4 * 4 * 5 * 5, the mixed-radix path), hop 160: a speech
    # front end. onnxruntime sums in float32 (errors ~1e-4 on cancelling bins),
    # so the reference here is numpy's FFT in float64.
    x = f32(1, 16000, 1)
    w = np.hanning(400).astype(np.float32)
    model, feeds = single("STFT", [("x", x)], [("step", i64(160)), ("w", w)],
                          attrs={"_order": ["x", "step", "w"]}, opset=17)
    outs = compile_and_run(model, feeds)
    frames = np.stack([x[0, i * 160:i * 160 + 400, 0].astype(np.float64) * w for i in range(1 + (16000 - 400) // 160)])
    spec = np.fft.rfft(frames, axis=-1)
    want = np.stack([spec.real, spec.imag], axis=-1)[None].astype(np.float32)
    np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("xshape,gshape,mode,pad", [
    ((2, 3, 9), (2, 7, 1), "linear", "reflection"),        # 1 spatial axis
    ((1, 2, 4, 5, 6), (1, 3, 2, 4, 3), "cubic", "zeros"),  # tricubic: 64 taps
    ((1, 2, 3, 4, 3, 5), (1, 2, 3, 2, 2, 4), "nearest", "border"),  # 4 spatial axes
    ((1, 1, 3, 4, 5, 2), (1, 2, 2, 3, 2, 4), "linear", "zeros"),  # 16 taps
])
def test_gridsample_nd_matches_onnx_reference(xshape, gshape, mode, pad):
    # onnxruntime implements 2-D and 3-D only; the ONNX reference evaluator is
    # written for any rank.
    from onnx.reference import ReferenceEvaluator
    x = f32(*xshape)
    g = grid(*gshape, lo=-1.3, hi=1.3)
    model, feeds = single("GridSample", [("x", x), ("g", g)], attrs={"mode": mode, "padding_mode": pad}, opset=22)
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    outs = compile_and_run(model, feeds)
    np.testing.assert_allclose(outs[0], want, rtol=1e-4, atol=1e-5)


def test_spatial_transformer_block_matches_onnxruntime():
    # AffineGrid sized by Shape(x) (folded at compile time) feeding GridSample:
    # the sampler of a spatial transformer network.
    x = f32(2, 3, 10, 12)
    theta = (np.tile(np.array([[0.9, 0.1, 0.05], [-0.1, 1.1, -0.2]], np.float32), (2, 1, 1))
             + f32(2, 2, 3, lo=-0.05, hi=0.05))
    nodes = [helper.make_node("Shape", ["x"], ["size"]),
             helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0),
             helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear", padding_mode="border")]
    graph = helper.make_graph(
        nodes, "stn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                       helper.make_tensor_value_info("theta", TensorProto.FLOAT, theta.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    compile_and_compare(model, {"x": x, "theta": theta})

"""atc --precision_mode=int8: post-training calibration on sample inputs.

A small conv net (Conv+BN+Relu, strided Conv, MaxPool, residual Add, global
pool, Gemm head) and an MLP (MatMul+Add+Relu, Gemm with transB) are compiled
with calibration data and run with msame; outputs are compared with onnxruntime
running the float32 model: the error must stay a small fraction of the output's
range and the top-1 class must mostly agree. The .om must hold the integer ops."""
import json
import os
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from oc_harness import ATC, atc_compile, msame_run, ort_run, run_tool, save_model

R = np.random.default_rng(5)


def he(shape):
    fan_in = int(np.prod(shape[1:]))
    return (R.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def smooth_images(n, c=3, h=32, w=32):
    """Low-frequency random images (a sum of a few random 2-D cosines), like photos
    rather than white noise, so that activations have realistic spatial structure."""
    yy, xx = np.meshgrid(np.linspace(0, 1, h), np.linspace(0, 1, w), indexing="ij")
    out = np.zeros((n, c, h, w), np.float32)
    for i in range(n):
        for ch in range(c):
            for _ in range(4):
                fy, fx, ph = R.uniform(0, 3), R.uniform(0, 3), R.uniform(0, 2 * np.pi)
                out[i, ch] += R.uniform(0.3, 1.0) * np.cos(2 * np.pi * (fy * yy + fx * xx) + ph)
    return out


def make(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(
        nodes, "int8",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def conv_net(batch):
    c1, c2, k = 16, 32, 10
    inits = [
        ("w1", he((c1, 3, 3, 3))), ("b1", (R.standard_normal(c1) * 0.1).astype(np.float32)),
        ("bn_s", R.uniform(0.5, 1.5, c1).astype(np.float32)), ("bn_b", (R.standard_normal(c1) * 0.1).astype(np.float32)),
        ("bn_m", (R.standard_normal(c1) * 0.1).astype(np.float32)), ("bn_v", R.uniform(0.5, 1.5, c1).astype(np.float32)),
        ("w2", he((c2, c1, 3, 3))), ("b2", (R.standard_normal(c2) * 0.1).astype(np.float32)),
        ("w3", he((c2, c2, 3, 3))), ("b3", (R.standard_normal(c2) * 0.1).astype(np.float32)),
        ("wf", he((k, c2))), ("bf", (R.standard_normal(k) * 0.1).astype(np.float32)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["n1"]),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["c3", "p2"], ["s"]),
        helper.make_node("Relu", ["s"], ["r3"]),
        helper.make_node("GlobalAveragePool", ["r3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    return make(nodes, [("x", [batch, 3, 32, 32])], ["y"], inits)


def mlp(batch):
    inits = [("w1", he((128, 64)).T.copy()), ("b1", (R.standard_normal(128) * 0.1).astype(np.float32)),
             ("w2", he((10, 128))), ("b2", (R.standard_normal(10) * 0.1).astype(np.float32))]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"]),
        helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("Gemm", ["r1", "w2", "b2"], ["y"], transB=1),
    ]
    return make(nodes, [("x", [batch, 64])], ["y"], inits)


def op_counts(om, d):
    js = os.path.join(d, "model.json")
    run_tool([ATC, "--mode=1", f"--om={om}", f"--json={js}"])
    text = open(js).read()
    return {op: text.count(f'"{op}"') for op in ("QLinearConv", "QLinearMatMul", "Conv", "MatMul")}, text


def compile_int8(model, d, shape, calib, extra=()):
    path = save_model(model, d)
    cal = os.path.join(d, "calib.npy")
    np.save(cal, calib)
    return atc_compile(path, os.path.join(d, "model"), {"x": shape},
                       extra=["--precision_mode=int8", f"--calibration_data=x:{cal}", *extra])


def check_accuracy(model, om, d, x, max_rel, min_top1):
    ours = msame_run(om, [x], d)[0][0]
    ref = ort_run(model, {"x": x})[0]
    span = float(ref.max() - ref.min())
    rel = float(np.abs(ours - ref).max()) / span
    mean_rel = float(np.abs(ours - ref).mean()) / span
    top1 = float(np.mean(ours.argmax(-1) == ref.argmax(-1)))
    print(f"max abs error / output range = {rel:.4f}, mean {mean_rel:.4f}, top-1 agreement {top1:.3f}")
    # Inputs outside the calibrated range saturate, so the worst element may be
    # well off; the typical one must be close.
    assert rel < max_rel, f"int8 max error {rel:.4f} of the output range (limit {max_rel})"
    assert mean_rel < max_rel / 5, f"int8 mean error {mean_rel:.4f} of the output range (limit {max_rel / 5})"
    assert top1 >= min_top1, f"top-1 agreement {top1:.3f} < {min_top1}"
    return rel, top1


@pytest.mark.parametrize("method", ["minmax", "percentile"])
def test_conv_net_int8(method):
    batch = 8
    model = conv_net(batch)
    with tempfile.TemporaryDirectory() as d:
        # 64 calibration images given as 8 batches of the input's batch 8.
        om, proc = compile_int8(model, d, [batch, 3, 32, 32], smooth_images(64),
                                [f"--calibration_method={method}"])
        assert "Precision: int8: 4 of 4 Conv/MatMul/Gemm nodes quantized (4 QLinearConv/QLinearMatMul" \
            in proc.stdout, proc.stdout
        assert "top-1 agreement" in proc.stdout
        counts, _ = op_counts(om, d)
        assert counts["QLinearConv"] == 3 and counts["QLinearMatMul"] == 1, counts
        assert counts["Conv"] == 0, counts
        check_accuracy(model, om, d, smooth_images(4 * batch)[:batch], max_rel=0.12, min_top1=0.75)


def test_int8_honours_the_fusion_switch_file():
    """fold-conv-batchnorm switched off must also hold for the graph that is
    calibrated and quantized (not only for the pipeline after it)."""
    batch = 8
    model = conv_net(batch)
    with tempfile.TemporaryDirectory() as d:
        sw = os.path.join(d, "switch.cfg")
        with open(sw, "w") as f:
            f.write("fold-conv-batchnorm:off\n")
        om, proc = compile_int8(model, d, [batch, 3, 32, 32], smooth_images(32),
                                [f"--fusion_switch_file={sw}"])
        assert "Fusion switch: passes off: fold-conv-batchnorm" in proc.stdout, proc.stdout
        _, text = op_counts(om, d)
        assert '"BatchNormalization"' in text, "BatchNormalization was folded despite the switch"
        check_accuracy(model, om, d, smooth_images(batch), max_rel=0.12, min_top1=0.75)


def test_mlp_int8_leading_sample_dim():
    batch = 16
    model = mlp(batch)
    with tempfile.TemporaryDirectory() as d:
        calib = R.standard_normal((6, batch, 64)).astype(np.float32)  # 6 samples along a new first dim
        om, proc = compile_int8(model, d, [batch, 64], calib)
        assert "on 6 samples" in proc.stdout, proc.stdout
        counts, _ = op_counts(om, d)
        assert counts["QLinearMatMul"] == 2, counts
        assert counts["MatMul"] == 0, counts
        check_accuracy(model, om, d, R.standard_normal((batch, 64)).astype(np.float32), max_rel=0.05,
                       min_top1=0.8)


def test_int8_several_files():
    model = mlp(4)
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        files = []
        for i in range(3):
            files.append(os.path.join(d, f"c{i}.npy"))
            np.save(files[-1], R.standard_normal((4, 64)))  # float64 is accepted
        _, proc = atc_compile(path, os.path.join(d, "model"), {"x": [4, 64]},
                              extra=["--precision_mode=int8", "--calibration_data=x:" + ",".join(files)])
        assert "on 3 samples" in proc.stdout, proc.stdout


@pytest.mark.parametrize("extra,code,words", [
    (["--precision_mode=int8"], "E10003", "--calibration_data"),
    (["--precision_mode=int8", "--calibration_data=nosuch:{cal}"], "E10001", "not an input"),
    (["--precision_mode=int8", "--calibration_data=x:{d}/missing.npy"], "E10001", "cannot open"),
    (["--precision_mode=int8", "--calibration_data=x:{bad}"], "E10001", "has shape [5,63]"),
    (["--precision_mode=int8", "--calibration_data=x:{cal};x"], "E10001", "entry 'x' is not name:file.npy"),
    (["--precision_mode=int8", "--calibration_data=x:"], "E10001", "entry 'x:' is not name:file.npy"),
    (["--calibration_data=x:{cal}"], "E10001", "only used with --precision_mode=int8"),
    (["--precision_mode=int8", "--calibration_data=x:{cal}", "--calibration_method=kl"], "E10001", "minmax"),
])
def test_int8_flag_errors(extra, code, words):
    model = mlp(4)
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        cal, bad = os.path.join(d, "cal.npy"), os.path.join(d, "bad.npy")
        np.save(cal, np.zeros((4, 64), np.float32))
        np.save(bad, np.zeros((5, 63), np.float32))
        args = [a.format(cal=cal, bad=bad, d=d) for a in extra]
        _, proc = atc_compile(path, os.path.join(d, "model"), {"x": [4, 64]}, extra=args, check=False)
        assert proc.returncode != 0
        out = proc.stdout + proc.stderr
        assert code in out and words in out, out

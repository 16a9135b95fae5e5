"""Quantization ops and a QDQ model through atc + msame, compared with onnxruntime.

Integer outputs of the integer-only ops (MatMulInteger, ConvInteger, QuantizeLinear,
DynamicQuantizeLinear) must match exactly. QLinearMatMul / QLinearConv requantize
with a float multiplier: we follow the ONNX reference (int32 * multiplier in
float64, round half to even), onnxruntime multiplies in float32, so an output
that lies within float32 rounding of a .5 tie may differ by one; the check allows
|diff| <= 1 on at most 1% of the elements and exact equality elsewhere."""
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from oc_harness import atc_compile, msame_run, save_model

R = np.random.default_rng(11)


def q8(shape, dtype):
    info = np.iinfo(dtype)
    return R.integers(info.min, info.max + 1, size=shape).astype(dtype)


def make_model(nodes, inputs, outputs, inits=(), opset=21):
    graph = helper.make_graph(
        nodes, "quant",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def run_ours(model, feeds, profile=None):
    """Our outputs; with `profile` (a dict) also the node count per op type that
    ran (OPENCANN_PROFILE_NODES), to see what the passes made of the graph."""
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        om, _ = atc_compile(path, os.path.join(d, "model"), {k: list(v.shape) for k, v in feeds.items()})
        old = os.environ.get("OPENCANN_PROFILE_NODES")
        os.environ["OPENCANN_PROFILE_NODES"] = "1" if profile is not None else "0"
        try:
            outs, proc = msame_run(om, list(feeds.values()), d)
        finally:
            if old is None:
                del os.environ["OPENCANN_PROFILE_NODES"]
            else:
                os.environ["OPENCANN_PROFILE_NODES"] = old
    if profile is not None:
        table = proc.stderr.split("op type", 1)[1].split("slowest", 1)[0]
        for line in table.splitlines():
            parts = line.replace("[profile]", "").split()
            if len(parts) >= 2 and parts[1].isdigit():
                profile[parts[0]] = int(parts[1])
    return outs


def run_ort(model, feeds, optimize=True):
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check(model, feeds, requant=False, rtol=1e-6, atol=1e-6, optimize=True):
    want = run_ort(model, feeds, optimize)
    got = run_ours(model, feeds)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert g.shape == w.shape, f"output {i}: shape {g.shape} vs {w.shape}"
        assert g.dtype == w.dtype, f"output {i}: dtype {g.dtype} vs {w.dtype}"
        if w.dtype.kind in "iu":
            diff = np.abs(g.astype(np.int64) - w.astype(np.int64))
            if requant:
                assert diff.max() <= 1, f"output {i}: max diff {diff.max()}"
                assert np.count_nonzero(diff) <= max(1, w.size // 100), f"output {i}: {np.count_nonzero(diff)} off"
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"output {i}")
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")
    return got


# --- QuantizeLinear / DequantizeLinear

@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16])
def test_quantize_per_tensor(dtype):
    x = (R.standard_normal((3, 5, 17)) * 40).astype(np.float32)
    x[0, 0, :6] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5]  # ties round to even
    zp = np.array(3 if dtype in (np.uint8, np.uint16) else -2, dtype=dtype)
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], [("x", x)], ["y"],
                   [("s", np.float32(0.37 if dtype in (np.uint8, np.int8) else 0.001)), ("z", zp)])
    check(m, {"x": x})


def test_quantize_per_axis_and_dequantize_roundtrip():
    x = (R.standard_normal((2, 4, 6)) * 5).astype(np.float32)
    s = np.array([0.02, 0.05, 0.1, 0.07], np.float32)
    z = np.array([-3, 0, 5, 100], np.int8)
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
                    helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)],
                   [("x", x)], ["q", "y"], [("s", s), ("z", z)])
    check(m, {"x": x})


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32])
def test_dequantize_runtime_inputs(dtype):
    x = q8((4, 9), dtype) if dtype != np.int32 else R.integers(-100000, 100000, (4, 9)).astype(np.int32)
    s = np.float32(0.0123)
    inputs = [("x", x), ("s", np.array([s]))]  # 1-element 1-D: per tensor
    names = ["x", "s"]
    if dtype != np.int32:
        inputs.append(("z", q8((1,), dtype)))
        names.append("z")
    m = make_model([helper.make_node("DequantizeLinear", names, ["y"])], inputs, ["y"])
    check(m, dict(inputs))


def test_quantize_blocked():
    x = (R.standard_normal((3, 10, 4)) * 3).astype(np.float32)
    s = (R.random((3, 4, 4)) * 0.05 + 0.01).astype(np.float32)  # ceil(10 / 3) = 4 blocks on axis 1
    z = q8((3, 4, 4), np.int8)
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, block_size=3),
                    helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1, block_size=3)],
                   [("x", x)], ["q", "y"], [("s", s), ("z", z)])
    check(m, {"x": x})


def test_quantize_float16_input_matches_onnx_reference():
    # float16 x / float16 scale divides in float16 (the scale's type sets the
    # precision); onnxruntime divides in float32, so the ONNX reference
    # implementation is the reference here.
    from onnx.reference import ReferenceEvaluator
    x = (R.standard_normal((5, 33)) * 10).astype(np.float16)
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                    helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
                   [("x", x)], ["q", "y"], [("s", np.float16(0.1)), ("z", np.uint8(128))])
    want = ReferenceEvaluator(m).run(None, {"x": x})
    got = run_ours(m, {"x": x})
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_dynamic_quantize_linear():
    for x in [(R.standard_normal((4, 37)) * 3).astype(np.float32),
              (R.random((6, 5)) * 2 + 0.5).astype(np.float32),  # all positive: min widened to 0
              np.zeros((3, 3), np.float32)]:
        m = make_model([helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], [("x", x)],
                       ["y", "s", "z"], opset=11)
        check(m, {"x": x})


# --- MatMulInteger / QLinearMatMul

@pytest.mark.parametrize("a_t,b_t", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize("const_b", [False, True])
def test_matmul_integer(a_t, b_t, const_b):
    if a_t == np.int8 and b_t == np.int8 and not const_b:
        pass
    a, b = q8((2, 37, 70), a_t), q8((70, 45), b_t)
    za, zb = q8((), a_t), q8((45,), b_t)
    inputs = [("a", a)] + ([] if const_b else [("b", b)])
    inits = [("za", za), ("zb", zb)] + ([("b", b)] if const_b else [])
    m = make_model([helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])], inputs, ["y"], inits,
                   opset=10)
    check(m, dict(inputs))


def test_matmul_integer_batched_b_no_zero_points():
    a, b = q8((3, 5, 16), np.uint8), q8((3, 16, 7), np.int8)
    m = make_model([helper.make_node("MatMulInteger", ["a", "b"], ["y"])], [("a", a), ("b", b)], ["y"], opset=10)
    check(m, {"a": a, "b": b})


@pytest.mark.parametrize("a_t,b_t", [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
def test_qlinear_matmul(a_t, b_t):
    a, b = q8((64, 200), a_t), q8((200, 48), b_t)
    consts = [("sa", np.float32(0.02)), ("za", q8((), a_t)), ("b", b),
              ("sb", (R.random(48) * 0.01 + 0.001).astype(np.float32)), ("zb", q8((48,), b_t)),
              ("sy", np.float32(0.9)), ("zy", q8((), a_t))]
    m = make_model([helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
                   [("a", a)], ["y"], consts)
    check(m, {"a": a}, requant=True)


# --- ConvInteger / QLinearConv

@pytest.mark.parametrize("attrs,xs,ws", [
    ({"pads": [1, 1, 1, 1]}, (2, 3, 9, 11), (8, 3, 3, 3)),
    ({"strides": [2, 2], "pads": [0, 1, 2, 1], "dilations": [1, 2]}, (1, 4, 12, 13), (6, 4, 3, 3)),
    ({"group": 2}, (1, 4, 7, 7), (6, 2, 1, 1)),
    ({}, (1, 16, 5, 6), (20, 16, 1, 1)),
])
def test_conv_integer(attrs, xs, ws):
    x, w = q8(xs, np.uint8), q8(ws, np.uint8)
    m = make_model([helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **attrs)], [("x", x)], ["y"],
                   [("w", w), ("zx", np.uint8(7)), ("zw", np.uint8(130))], opset=10)
    check(m, {"x": x})


@pytest.mark.parametrize("x_t", [np.uint8, np.int8])
@pytest.mark.parametrize("case", ["plain", "depthwise", "pointwise", "strided"])
def test_qlinear_conv(x_t, case):
    c, mo, group, attrs = {"plain": (8, 16, 1, {"pads": [1, 1, 1, 1]}),
                           "depthwise": (12, 12, 12, {"pads": [1, 1, 1, 1]}),
                           "pointwise": (24, 40, 1, {}),
                           "strided": (6, 10, 2, {"strides": [2, 2], "pads": [1, 0, 1, 2]})}[case]
    k = 1 if case == "pointwise" else 3
    x = q8((2, c, 10, 9), x_t)
    w = q8((mo, c // group, k, k), np.int8)
    consts = [("sx", np.float32(0.05)), ("zx", q8((), x_t)), ("w", w),
              ("sw", (R.random(mo) * 0.02 + 0.002).astype(np.float32)), ("zw", np.zeros(mo, np.int8)),
              ("sy", np.float32(0.3)), ("zy", q8((), x_t)), ("b", R.integers(-2000, 2000, mo).astype(np.int32))]
    m = make_model([helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"], ["y"],
                                     group=group, **attrs)], [("x", x)], ["y"], consts, opset=10)
    check(m, {"x": x}, requant=True)


# --- a QDQ model (QuantizeLinear -> DequantizeLinear around conv weights and activations)

def qdq_convnet(relu_zero_point=0):
    nodes, inits = [], []

    def qdq(name, scale, zp):
        inits.extend([numpy_helper.from_array(np.float32(scale), f"{name}_s"),
                      numpy_helper.from_array(np.uint8(zp), f"{name}_z")])
        nodes.append(helper.make_node("QuantizeLinear", [name, f"{name}_s", f"{name}_z"], [f"{name}_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s", f"{name}_z"], [f"{name}_dq"]))
        return f"{name}_dq"

    def conv(x, name, cin, cout, k, x_scale, relu=True, **attrs):
        w = R.standard_normal((cout, cin // attrs.get("group", 1), k, k)).astype(np.float32) * 0.2
        ws = (np.abs(w).reshape(cout, -1).max(axis=1) / 127).astype(np.float32)
        wq = np.clip(np.rint(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
        b = (R.standard_normal(cout) * 0.1).astype(np.float32)
        bq = np.rint(b / (x_scale * ws)).astype(np.int32)  # bias quantized with x_scale * w_scale
        inits.extend([numpy_helper.from_array(wq, f"{name}_wq"), numpy_helper.from_array(ws, f"{name}_ws"),
                      numpy_helper.from_array(np.zeros(cout, np.int8), f"{name}_wz"),
                      numpy_helper.from_array(bq, f"{name}_bq"),
                      numpy_helper.from_array((x_scale * ws).astype(np.float32), f"{name}_bs")])
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}_wq", f"{name}_ws", f"{name}_wz"], [f"{name}_w"],
                                      axis=0))
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}_bq", f"{name}_bs"], [f"{name}_b"], axis=0))
        nodes.append(helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [f"{name}_y"],
                                      pads=[k // 2] * 4, **attrs))
        out = f"{name}_y"
        if relu:
            nodes.append(helper.make_node("Relu", [out], [f"{name}_r"]))
            out = f"{name}_r"
        return out

    h = qdq("x", 0.02, 128)
    h = qdq(conv(h, "c1", 3, 16, 3, 0.02), 0.05, 0)
    h = qdq(conv(h, "c2", 16, 16, 3, 0.05, group=16), 0.05, relu_zero_point)
    h = qdq(conv(h, "c3", 16, 24, 1, 0.05), 0.04, 0)
    h = qdq(conv(h, "c4", 24, 8, 3, 0.04, relu=False, strides=[2, 2]), 0.06, 128)
    nodes.append(helper.make_node("Identity", [h], ["y"]))
    graph = helper.make_graph(nodes, "qdq_convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                     [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


@pytest.mark.parametrize("relu_zero_point,fused_convs", [(0, 4), (3, 3)])
def test_qdq_convnet_matches_onnxruntime(relu_zero_point, fused_convs):
    # With a Relu before a Q whose zero point is not the type's minimum, that
    # conv stays in float (the fuse-qdq pass does not fuse it).
    model = qdq_convnet(relu_zero_point)
    x = (R.random((1, 3, 32, 32)) * 4 - 2).astype(np.float32)
    # The output is quantized with scale 0.06: agree to one quantum (onnxruntime
    # fuses the QDQ groups into QLinearConv and rounds once in integer space;
    # without graph optimisations it computes in float between Q and DQ).
    want_fused = run_ort(model, {"x": x})[0]
    want_float = run_ort(model, {"x": x}, optimize=False)[0]
    profile = {}
    got = run_ours(model, {"x": x}, profile)[0]
    assert profile.get("QLinearConv", 0) == fused_convs, profile
    assert got.shape == want_float.shape
    for want in (want_float, want_fused):
        diff = np.abs(got - want)
        assert diff.max() <= 0.06 * 1.001 + 1e-6, diff.max()
        assert np.count_nonzero(diff > 1e-6) <= want.size // 50, np.count_nonzero(diff > 1e-6)


def test_qdq_matmul_fuses_to_qlinear_matmul():
    a = (R.standard_normal((4, 6, 64)) * 2).astype(np.float32)
    w = (R.standard_normal((64, 40)) * 0.1).astype(np.float32)
    ws = (np.abs(w).max(axis=0) / 127).astype(np.float32)
    wq = np.clip(np.rint(w / ws), -127, 127).astype(np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
             helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["af"]),
             helper.make_node("DequantizeLinear", ["wq", "ws"], ["wf"], axis=1),
             helper.make_node("MatMul", ["af", "wf"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    m = make_model(nodes, [("a", a)], ["y"],
                   [("sa", np.float32(0.03)), ("za", np.uint8(128)), ("wq", wq), ("ws", ws),
                    ("sy", np.float32(0.05)), ("zy", np.uint8(120))], opset=13)
    profile = {}
    got = run_ours(m, {"a": a}, profile)[0]
    assert profile.get("QLinearMatMul", 0) == 1 and "MatMul" not in profile, profile
    for want in (run_ort(m, {"a": a})[0], run_ort(m, {"a": a}, optimize=False)[0]):
        diff = np.abs(got - want)
        assert diff.max() <= 0.05 * 1.001, diff.max()
        assert np.count_nonzero(diff) <= want.size // 50


@pytest.mark.parametrize("qtype,saturate", [(TensorProto.INT4, 1), (TensorProto.UINT4, 1),
                                            (TensorProto.FLOAT8E4M3FN, 1), (TensorProto.FLOAT8E4M3FN, 0),
                                            (TensorProto.FLOAT8E5M2, 1)])
def test_low_precision_roundtrip(qtype, saturate):
    # The 4-bit / float8 tensor stays inside the model (Q -> DQ), so only float
    # crosses the tool boundary. Odd sizes exercise the packed-nibble tail.
    x = (R.standard_normal((3, 7, 5)) * 6).astype(np.float32)
    x[0, 0, :4] = [1e6, -1e6, 0.25, -0.25]  # overflow (saturate or inf/NaN) and small values
    is_float = qtype in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2)
    s = np.array([0.5, 0.25, 1.0, 2.0, 0.75, 1.5, 0.125], np.float32)
    q_attrs = {"axis": 1, "output_dtype": qtype}
    if is_float:
        q_attrs["saturate"] = saturate
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], **q_attrs),
             helper.make_node("DequantizeLinear", ["q", "s"], ["y"], axis=1)]
    m = make_model(nodes, [("x", x)], ["y"], [("s", s)], opset=21)
    want = run_ort(m, {"x": x})[0]
    got = run_ours(m, {"x": x})[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.nan_to_num(got), np.nan_to_num(want))


@pytest.mark.parametrize("xs,ws,attrs", [
    ((2, 3, 20), (5, 3, 4), {"pads": [2, 1], "strides": [3]}),                 # 1-D
    ((1, 4, 5, 6, 7), (6, 2, 2, 3, 2), {"group": 2, "pads": [1, 0, 1, 0, 1, 1]}),  # 3-D, grouped
])
def test_conv_integer_1d_3d(xs, ws, attrs):
    x, w = q8(xs, np.uint8), q8(ws, np.uint8)
    m = make_model([helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], **attrs)], [("x", x)], ["y"],
                   [("w", w), ("zx", np.uint8(200)), ("zw", np.uint8(3))], opset=10)
    check(m, {"x": x})


@pytest.mark.parametrize("a_shape,b_shape", [((70,), (70, 9)), ((3, 70), (70,)), ((2, 1, 4, 70), (3, 70, 5))])
def test_matmul_integer_1d_and_broadcast(a_shape, b_shape):
    a, b = q8(a_shape, np.uint8), q8(b_shape, np.int8)
    m = make_model([helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"])], [("a", a), ("b", b)], ["y"],
                   [("za", np.uint8(100))], opset=10)
    check(m, {"a": a, "b": b})


def test_quantize_negative_axis_and_int16_saturation():
    x = (R.standard_normal((3, 4, 5)) * 1e4).astype(np.float32)
    x[0, 0, 0], x[0, 0, 1] = 1e9, -1e9
    s = np.array([0.01, 0.5, 1.0, 2.0, 0.1], np.float32)
    z = np.array([0, -5, 7, 100, -32768], np.int16)
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=-1),
                    helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=-1)],
                   [("x", x)], ["q", "y"], [("s", s), ("z", z)])
    check(m, {"x": x})


# --- models from onnxruntime's quantization tool (what users bring)

def _float_cnn():
    def init(name, shape, s=0.2):
        return numpy_helper.from_array((R.standard_normal(shape) * s).astype(np.float32), name)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], group=16),
             helper.make_node("GlobalAveragePool", ["c3"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("MatMul", ["f", "wf"], ["y"])]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                          [init("w1", (8, 3, 3, 3)), init("b1", (8,)), init("w2", (16, 8, 3, 3)), init("b2", (16,)),
                           init("w3", (16, 1, 1, 1)), init("b3", (16,)), init("wf", (16, 10))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_ort_quantize_static_qdq_model(tmp_path):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": R.standard_normal((1, 3, 16, 16)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    onnx.save(_float_cnn(), str(tmp_path / "f.onnx"))
    quantize_static(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    model = onnx.load(str(tmp_path / "q.onnx"))
    y_scale = [numpy_helper.to_array(i) for i in model.graph.initializer
               if i.name == model.graph.node[-1].input[1]][0]
    x = R.standard_normal((1, 3, 16, 16)).astype(np.float32)
    profile = {}
    got = run_ours(model, {"x": x}, profile)[0]
    assert profile.get("QLinearConv", 0) == 3 and profile.get("QLinearMatMul", 0) == 1, profile
    for want in (run_ort(model, {"x": x})[0], run_ort(model, {"x": x}, optimize=False)[0]):
        assert np.abs(got - want).max() <= float(y_scale) * 1.001, np.abs(got - want).max()


def test_ort_quantize_dynamic_model(tmp_path):
    # DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast -> Mul (scales) -> Add (bias).
    from onnxruntime.quantization import QuantType, quantize_dynamic

    onnx.save(_float_cnn(), str(tmp_path / "f.onnx"))
    quantize_dynamic(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), weight_type=QuantType.QInt8,
                     op_types_to_quantize=["Conv", "MatMul"])
    model = onnx.load(str(tmp_path / "q.onnx"))
    assert {"ConvInteger", "MatMulInteger", "DynamicQuantizeLinear"} <= {n.op_type for n in model.graph.node}
    x = R.standard_normal((1, 3, 16, 16)).astype(np.float32)
    check(model, {"x": x}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs", [{"strides": [2, 2], "pads": [1, 1, 1, 1]},             # strided columns
                                   {"strides": [2, 1], "pads": [0, 2, 1, 0]},             # wide plane, row stride
                                   {"dilations": [2, 3], "pads": [2, 3, 2, 3]},           # dilated
                                   {"kernel_shape": [5, 5], "pads": [2, 2, 2, 2]}])
def test_depthwise_direct_path(attrs):
    c = 24
    k = attrs.get("kernel_shape", [3, 3])
    x = q8((2, c, 11, 13), np.int8)
    w = q8((c, 1, *k), np.int8)
    consts = [("sx", np.float32(0.05)), ("zx", np.int8(-3)), ("w", w),
              ("sw", (R.random(c) * 0.02 + 0.002).astype(np.float32)), ("zw", np.zeros(c, np.int8)),
              ("sy", np.float32(0.2)), ("zy", np.int8(5)), ("b", R.integers(-500, 500, c).astype(np.int32))]
    m = make_model([helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"], ["y"],
                                     group=c, **attrs)], [("x", x)], ["y"], consts, opset=10)
    check(m, {"x": x}, requant=True)
    # Per-channel weight zero points: onnxruntime's ConvInteger takes only a
    # scalar, so the ONNX reference implementation is the reference here.
    from onnx.reference import ReferenceEvaluator
    xu, wu = q8((1, c, 9, 8), np.uint8), q8((c, 1, *k), np.uint8)
    m = make_model([helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], group=c, **attrs)],
                   [("x", xu)], ["y"], [("w", wu), ("zx", np.uint8(90)), ("zw", q8((c,), np.uint8))], opset=10)
    np.testing.assert_array_equal(run_ours(m, {"x": xu})[0], ReferenceEvaluator(m).run(None, {"x": xu})[0])


@pytest.mark.parametrize("precision", [TensorProto.FLOAT16, TensorProto.BFLOAT16])
def test_quantize_precision_attribute_matches_onnx_reference(precision):
    # opset 23+: x and the scale are cast to `precision` and divided there.
    from onnx.reference import ReferenceEvaluator
    x = (R.standard_normal((4, 33)) * 20).astype(np.float32)
    m = make_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], precision=precision)],
                   [("x", x)], ["q"], [("s", np.float32(0.0731)), ("z", np.int8(3))], opset=23)
    np.testing.assert_array_equal(run_ours(m, {"x": x})[0], ReferenceEvaluator(m).run(None, {"x": x})[0])


@pytest.mark.parametrize("width,pad", [(70, 0), (71, 1), (97, 2)])
def test_depthwise_stride2_wide_rows(width, pad):
    # Rows of 32+ columns take the vector even/odd split of the stride-2 phase planes.
    c = 8
    x = q8((1, c, 6, width), np.uint8)
    consts = [("sx", np.float32(0.05)), ("zx", np.uint8(77)), ("w", q8((c, 1, 3, 3), np.int8)),
              ("sw", np.float32(0.01)), ("zw", np.int8(0)), ("sy", np.float32(0.1)), ("zy", np.uint8(128))]
    m = make_model([helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"], group=c,
                                     strides=[2, 2], pads=[1, pad, 1, pad])], [("x", x)], ["y"], consts, opset=10)
    check(m, {"x": x}, requant=True)

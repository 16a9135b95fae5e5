"""Element types end to end: one-node models through the conformance driver (parse ->
passes -> .om -> load -> run), outputs compared bit for bit with ml_dtypes / the ONNX
reference (onnx.reference), never with our own results.

- Every code of each float8 / float4 / E8M0 / 4-bit / 2-bit type cast to float32.
- Dense float32 sets (every float16 value, every code's neighbours and midpoints, the
  specials) cast to each float8 / float4 type, with saturate on and off.
- Packed tensors with odd element counts; integer arithmetic and bitwise ops on every
  integer type; float16 / bfloat16 ops that only have float32 kernels (legalize-types).

Needs OC_BUILD_DIR (default build/) with tests/conformance/oc_conformance_driver built."""
import json
import os
import shutil
import sys
import tempfile
import warnings

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, defs, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("OC_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
DRIVER = os.path.join(BUILD_DIR, "tests", "conformance", "oc_conformance_driver")
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "conformance"))
from run_conformance import DriverWorker, load_tensor  # noqa: E402

pytestmark = pytest.mark.skipif(not os.path.exists(DRIVER), reason=f"{DRIVER} not built")

LOW = {
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
    TensorProto.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
}
INTS_SUB = {
    TensorProto.INT4: ml_dtypes.int4,
    TensorProto.UINT4: ml_dtypes.uint4,
    TensorProto.INT2: ml_dtypes.int2,
    TensorProto.UINT2: ml_dtypes.uint2,
}
BITS = {TensorProto.FLOAT4E2M1: 4, TensorProto.INT4: 4, TensorProto.UINT4: 4, TensorProto.INT2: 2,
        TensorProto.UINT2: 2}


@pytest.fixture(scope="module")
def driver():
    out = tempfile.mkdtemp(prefix="oc_dtypes_")
    w = DriverWorker(DRIVER, out, timeout=120, threads=2)
    yield w, out
    w.close()
    shutil.rmtree(out, ignore_errors=True)


def run_and_read(driver, model, feeds):
    """Runs `model` on `feeds` through the driver; returns (our outputs, onnx.reference outputs)."""
    worker, out_root = driver
    case = tempfile.mkdtemp(prefix="case_", dir=out_root)
    name = os.path.basename(case)
    onnx.save(model, os.path.join(case, "model.onnx"))
    ds = os.path.join(case, "test_data_set_0")
    os.makedirs(ds)
    for i, inp in enumerate(model.graph.input):
        with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[inp.name], inp.name).SerializeToString())
    ref = ReferenceEvaluator(model).run(None, feeds)
    if worker.proc is None:
        worker._start()
    worker.proc.stdin.write(case + "\n")
    worker.proc.stdin.flush()
    line = worker.lines.get(timeout=120)
    assert line is not None, "the driver crashed"
    r = json.loads(line)
    assert "stage" not in r, f"[{r.get('stage')}] {r.get('message')}"
    outs = [load_tensor(os.path.join(out_root, name, "test_data_set_0", f"output_{j}.pb")) for j in range(len(ref))]
    shutil.rmtree(os.path.join(out_root, name), ignore_errors=True)
    shutil.rmtree(case, ignore_errors=True)
    return outs, ref


def cast_model(src, dst, shape, **attrs):
    node = helper.make_node("Cast", ["x"], ["y"], to=dst, **attrs)
    g = helper.make_graph([node], "cast", [helper.make_tensor_value_info("x", src, shape)],
                          [helper.make_tensor_value_info("y", dst, shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])
    m.ir_version = 11
    return m


def bits_of(a):
    a = np.asarray(a)
    if a.dtype.itemsize == 1:
        return a.view(np.uint8).astype(np.int64)
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint16).astype(np.int64)


def assert_same_float(got, want, what):
    """Bit-exact, except that any NaN matches any NaN."""
    g = np.asarray(got).astype(np.float64)
    w = np.asarray(want).astype(np.float64)
    assert g.shape == w.shape, what
    both_nan = np.isnan(g) & np.isnan(w)
    same = (g == w) & (np.signbit(g) == np.signbit(w))
    bad = ~(both_nan | same)
    if bad.any():
        i = np.argwhere(bad)[0][0]
        pytest.fail(f"{what}: {int(bad.sum())} of {g.size} differ, first at {i}: {g.flat[i]} vs {w.flat[i]}")


@pytest.mark.parametrize("t", list(LOW) + list(INTS_SUB), ids=lambda t: TensorProto.DataType.Name(t))
def test_every_code_to_float(driver, t):
    npt = LOW.get(t) or INTS_SUB[t]
    if BITS.get(t, 8) == 8:
        x = np.arange(256, dtype=np.uint8).view(npt)
    elif t in INTS_SUB:
        info = ml_dtypes.iinfo(npt)
        x = np.arange(int(info.min), int(info.max) + 1).astype(npt)
    else:  # float4: the 16 codes are the 8 magnitudes with either sign
        mags = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)
        x = np.concatenate([mags, -mags]).astype(npt)
    if BITS.get(t, 8) < 8:
        x = np.concatenate([x, x[:3]])  # odd length: the last byte is part used
    for dst in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32):
        (got,), _ = run_and_read(driver, cast_model(t, dst, list(x.shape)), {"x": x})
        what = f"{TensorProto.DataType.Name(t)} -> {TensorProto.DataType.Name(dst)}"
        if dst == TensorProto.INT32:
            f = x.astype(np.float64)
            ok = np.isfinite(f) & (np.abs(f) < 2 ** 31)
            np.testing.assert_array_equal(np.asarray(got)[ok], np.trunc(f[ok]).astype(np.int32), what)
            continue
        want = x.astype(np.float32)
        if dst == TensorProto.FLOAT16:
            want = want.astype(np.float16)
        assert_same_float(got, want, what)


def dense_floats():
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    extra = []
    for npt in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2,
                ml_dtypes.float8_e5m2fnuz):
        v = np.sort(np.unique(np.arange(256, dtype=np.uint8).view(npt).astype(np.float32)))
        v = v[np.isfinite(v)]
        mids = (v[:-1] + v[1:]) / 2
        extra += [v, mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf)),
                  v * 1.5, v * 0.75]
    f = np.concatenate([h] + extra + [np.array([np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30, -1e-30, 0.0, -0.0],
                                              np.float32)]).astype(np.float32)
    return f


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("t", [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
                               TensorProto.FLOAT8E5M2FNUZ, TensorProto.FLOAT4E2M1],
                         ids=lambda t: TensorProto.DataType.Name(t))
def test_float_to_low_float(driver, t, saturate):
    x = dense_floats()
    if BITS.get(t) == 4:
        x = x[:-1] if x.size % 2 == 0 else x  # odd count: a half byte at the end
    (got,), (want,) = run_and_read(driver, cast_model(TensorProto.FLOAT, t, [x.size], saturate=saturate), {"x": x})
    assert got.dtype == want.dtype
    assert_same_float(got, want, f"float -> {TensorProto.DataType.Name(t)} saturate={saturate}")


@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_float_to_e8m0(driver, mode, saturate):
    x = np.concatenate([dense_floats(), np.array([3.4e38, 1.7e38, 2.0 ** -127, 2.0 ** -149], np.float32)])
    m = cast_model(TensorProto.FLOAT, TensorProto.FLOAT8E8M0, [x.size], saturate=saturate, round_mode=mode)
    (got,), (want,) = run_and_read(driver, m, {"x": x})
    np.testing.assert_array_equal(bits_of(got), bits_of(want))


@pytest.mark.parametrize("t", list(INTS_SUB), ids=lambda t: TensorProto.DataType.Name(t))
@pytest.mark.parametrize("src", [TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT8],
                         ids=lambda t: TensorProto.DataType.Name(t))
def test_to_packed_int(driver, t, src):
    x = np.arange(-20, 21, dtype=np.int64)  # 41 elements: odd
    x = x.astype(helper.tensor_dtype_to_np_dtype(src))
    if src == TensorProto.FLOAT:
        x = (x * 0.75).astype(np.float32)  # fractions truncate toward zero
    (got,), _ = run_and_read(driver, cast_model(src, t, [x.size]), {"x": x})
    npt = INTS_SUB[t]
    bits = BITS[t]
    # ml_dtypes conversion is the ONNX reference: truncate, keep the low bits.
    want = (np.trunc(x.astype(np.float64)).astype(np.int64) & ((1 << bits) - 1))
    if t in (TensorProto.INT4, TensorProto.INT2):
        want = np.where(want >= (1 << (bits - 1)), want - (1 << bits), want)
    np.testing.assert_array_equal(np.asarray(got).astype(np.int64), want)
    # Against ml_dtypes itself: for integer sources everywhere (wrapping is defined); for
    # floats only in range, since Cast leaves out-of-range floats undefined and ml_dtypes
    # changed its answer there (0.7 gives 0).
    ref = x.astype(np.float64)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t in (TensorProto.INT4, TensorProto.INT2) else (0, (1 << bits) - 1)
    defined = np.ones(x.shape, bool) if src != TensorProto.FLOAT else (np.trunc(ref) >= lo) & (np.trunc(ref) <= hi)
    assert defined.sum() >= 3
    with np.errstate(invalid="ignore"):
        theirs = x.astype(npt).astype(np.int64)
    np.testing.assert_array_equal(np.asarray(got).astype(np.int64)[defined], theirs[defined])


def binary_model(op, t, sa, sb, **attrs):
    node = helper.make_node(op, ["a", "b"], ["y"], **attrs)
    g = helper.make_graph([node], op.lower(), [helper.make_tensor_value_info("a", t, sa),
                                               helper.make_tensor_value_info("b", t, sb)],
                          [helper.make_empty_tensor_value_info("y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 28)])
    m.ir_version = 11
    return onnx.shape_inference.infer_shapes(m)


INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
RNG = np.random.default_rng(5)


def ints(dt, shape, nonzero=False):
    info = np.iinfo(dt)
    x = RNG.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dt)
    x.flat[0] = info.max
    if info.min < 0:
        x.flat[1] = info.min
    if nonzero:
        x[x == 0] = 1
    return x


@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op,attrs", [("Add", {}), ("Sub", {}), ("Mul", {}), ("Div", {}), ("Mod", {}),
                                      ("Mod", {"fmod": 1}), ("Max", {}), ("Min", {}), ("BitwiseAnd", {}),
                                      ("BitwiseOr", {}), ("BitwiseXor", {}), ("Equal", {}), ("Less", {})],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_integer_binary(driver, op, attrs, dt):
    a = ints(dt, (3, 5))
    b = ints(dt, (5,), nonzero=True)
    if op == "Div" and np.dtype(dt).kind == "i":
        a[0, 1] = np.iinfo(dt).min + 1  # MIN / -1 overflows; the reference raises on it
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    (got,), (want,) = run_and_read(driver, binary_model(op, t, [3, 5], [5], **attrs), {"a": a, "b": b})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift(driver, dt, direction):
    a = ints(dt, (4, 6))
    bits = np.dtype(dt).itemsize * 8
    b = np.array([0, 1, 3, bits - 1, bits, bits + 3], dtype=dt)
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    (got,), (want,) = run_and_read(driver, binary_model("BitShift", t, [4, 6], [6], direction=direction),
                                   {"a": a, "b": b})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("t", [TensorProto.FLOAT16, TensorProto.BFLOAT16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["Add", "Mul", "Div", "Max", "Pow"])
def test_half_binary_via_float32(driver, t, op):
    npt = np.float16 if t == TensorProto.FLOAT16 else ml_dtypes.bfloat16
    a = RNG.uniform(0.5, 3, (4, 8)).astype(npt)
    b = RNG.uniform(0.5, 3, (8,)).astype(npt)
    (got,), _ = run_and_read(driver, binary_model(op, t, [4, 8], [8]), {"a": a, "b": b})
    f = {"Add": np.add, "Mul": np.multiply, "Div": np.divide, "Max": np.maximum, "Pow": np.power}[op]
    want = f(a.astype(np.float32), b.astype(np.float32)).astype(npt)  # computed in float32, rounded once
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(bits_of(got), bits_of(want))


@pytest.mark.parametrize("dt", [np.float64, np.int32, np.int64, np.uint32, np.uint64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("sa,sb", [((3, 5), (5, 4)), ((2, 1, 3, 5), (4, 5, 6)), ((5,), (2, 5, 3)), ((2, 3, 5), (5,))],
                         ids=["2d", "batch_bcast", "1d_a", "1d_b"])
def test_matmul_double_and_integers(driver, dt, sa, sb):
    if np.dtype(dt).kind == "f":
        a, b = RNG.standard_normal(sa).astype(dt), RNG.standard_normal(sb).astype(dt)
    else:
        a, b = RNG.integers(0, 50, sa).astype(dt), RNG.integers(0, 50, sb).astype(dt)
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    (got,), _ = run_and_read(driver, binary_model("MatMul", t, list(sa), list(sb)), {"a": a, "b": b})
    want = np.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    if np.dtype(dt).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)  # computed in double
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", [np.float64, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ta,tb,cshape", [(0, 0, (4,)), (1, 0, (3, 1)), (0, 1, ()), (1, 1, (3, 4))])
def test_gemm_double_and_integers(driver, dt, ta, tb, cshape):
    a = RNG.integers(-9, 9, (5, 3) if ta else (3, 5)).astype(dt)
    b = RNG.integers(-9, 9, (4, 5) if tb else (5, 4)).astype(dt)
    c = RNG.integers(-9, 9, cshape).astype(dt)
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    alpha, beta = (0.5, 2.0) if np.dtype(dt).kind == "f" else (1.0, 1.0)
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb, alpha=alpha, beta=beta)
    g = helper.make_graph([node], "gemm", [helper.make_tensor_value_info(n, t, x.shape)
                                            for n, x in (("a", a), ("b", b), ("c", c))],
                          [helper.make_tensor_value_info("y", t, [3, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    (got,), _ = run_and_read(driver, m, {"a": a, "b": b, "c": c})
    want = alpha * ((a.T if ta else a) @ (b.T if tb else b)) + beta * c
    np.testing.assert_allclose(got, want.astype(dt), rtol=1e-13)


@pytest.mark.parametrize("t", [TensorProto.INT4, TensorProto.UINT2, TensorProto.FLOAT4E2M1],
                         ids=lambda t: TensorProto.DataType.Name(t))
def test_packed_reshape_and_identity_keep_bytes(driver, t):
    npt = INTS_SUB.get(t) or LOW[t]
    x = (np.arange(15) % 2).astype(npt).reshape(3, 5)  # odd count: the last byte is part used
    shape = numpy_helper.from_array(np.array([5, 3], np.int64), "shape")
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Identity", ["r"], ["y"])]
    g = helper.make_graph(nodes, "packed", [helper.make_tensor_value_info("x", t, [3, 5])],
                          [helper.make_tensor_value_info("y", t, [5, 3])], initializer=[shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    (got,), _ = run_and_read(driver, m, {"x": x})
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), x.reshape(5, 3).astype(np.float32))


ALL_TYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.INT8,
             TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16, TensorProto.INT32, TensorProto.UINT32,
             TensorProto.INT64, TensorProto.UINT64, TensorProto.BOOL] + list(LOW) + list(INTS_SUB)


@pytest.mark.parametrize("src", ALL_TYPES, ids=lambda t: TensorProto.DataType.Name(t))
def test_cast_every_pair(driver, src):
    """Cast from `src` to every type, saturate on and off, against onnx.reference. NaN
    and out-of-range floats into an integer are undefined in ONNX: we give what float ->
    int gives on x86 (as onnxruntime), ml_dtypes gives 0, so those elements are not
    compared (_compare_cast). Pairs the
    reference cannot run (E8M0 or a packed integer into another low-precision type)
    are checked against the two-step cast through float32 instead."""
    vals = np.array([0, 1, -1, 2.5, -3.75, 7, -8, 15, 100.4, -129, 0.3, 1e-3, 6, 3, 448, 1000, 0.75], np.float64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        npt = helper.tensor_dtype_to_np_dtype(src)
        x = (np.abs(vals).astype(np.float32) if src == TensorProto.FLOAT8E8M0 else vals).astype(npt)
    for dst in ALL_TYPES:
        for sat in ([1, 0] if dst in LOW else [1]):
            m = cast_model(src, dst, [x.size], saturate=sat)
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ReferenceEvaluator(m).run(None, {"x": x})
            except Exception:
                # Reference lacks the pair: compare with src -> float32 -> dst, both by the reference.
                if src in INTS_SUB or src == TensorProto.FLOAT8E8M0:
                    m1 = cast_model(src, TensorProto.FLOAT, [x.size])
                    mid = ReferenceEvaluator(m1).run(None, {"x": x})[0]
                    want = ReferenceEvaluator(cast_model(TensorProto.FLOAT, dst, [x.size], saturate=sat)).run(
                        None, {"x": mid})[0]
                    got = _run_only(driver, m, {"x": x})
                    _compare_cast(got, want, src, dst, sat, x)
                continue
            (got,), (want,) = run_and_read(driver, m, {"x": x})
            _compare_cast(got, want, src, dst, sat, x)


def _compare_cast(got, want, src, dst, sat, x):
    g = np.asarray(got).astype(np.float64)
    w = np.asarray(want).astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    if helper.tensor_dtype_to_np_dtype(dst).kind in "iub" or dst in INTS_SUB:
        same |= np.isnan(np.asarray(x).astype(np.float64))
    src_is_float = not (helper.tensor_dtype_to_np_dtype(src).kind in "iub" or src in INTS_SUB)
    if src_is_float and (helper.tensor_dtype_to_np_dtype(dst).kind in "iu" or dst in INTS_SUB):
        # Floating point into a fixed-point type out of its range is undefined in ONNX
        # (Cast's doc); ml_dtypes changed its answer there (0.7 gives 0), so only the
        # elements in range are compared.
        if dst in INTS_SUB:
            bits = BITS[dst]
            signed = dst in (TensorProto.INT4, TensorProto.INT2)
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        else:
            info = np.iinfo(helper.tensor_dtype_to_np_dtype(dst))
            lo, hi = info.min, info.max
        with np.errstate(invalid="ignore"):
            t = np.trunc(np.asarray(x).astype(np.float64))
        same |= (t < lo) | (t > hi)
    if not same.all():
        i = np.argwhere(~same)[0][0]
        pytest.fail(f"{TensorProto.DataType.Name(src)} -> {TensorProto.DataType.Name(dst)} saturate={sat}: "
                    f"x={x[i]} got {g[i]} want {w[i]} ({int((~same).sum())} differ)")


def _run_only(driver, model, feeds):
    """run_and_read without the reference (for pairs onnx.reference cannot run)."""
    worker, out_root = driver
    case = tempfile.mkdtemp(prefix="case_", dir=out_root)
    name = os.path.basename(case)
    onnx.save(model, os.path.join(case, "model.onnx"))
    ds = os.path.join(case, "test_data_set_0")
    os.makedirs(ds)
    for i, inp in enumerate(model.graph.input):
        with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[inp.name], inp.name).SerializeToString())
    if worker.proc is None:
        worker._start()
    worker.proc.stdin.write(case + "\n")
    worker.proc.stdin.flush()
    line = worker.lines.get(timeout=120)
    assert line is not None, "the driver crashed"
    r = json.loads(line)
    assert "stage" not in r, f"[{r.get('stage')}] {r.get('message')}"
    out = load_tensor(os.path.join(out_root, name, "test_data_set_0", "output_0.pb"))
    shutil.rmtree(os.path.join(out_root, name), ignore_errors=True)
    shutil.rmtree(case, ignore_errors=True)
    return out


@pytest.mark.parametrize("dt", INT_TYPES + [np.float64], ids=lambda d: np.dtype(d).name)
def test_clip_every_numeric_type(driver, dt):
    x = ints(np.dtype(dt).type if np.dtype(dt).kind != "f" else np.int32, (3, 5)).astype(dt)
    lo, hi = np.array(3, dt), np.array(100, dt)
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    g = helper.make_graph([node], "clip", [helper.make_tensor_value_info(n, t, s)
                                           for n, s in (("x", [3, 5]), ("lo", []), ("hi", []))],
                          [helper.make_tensor_value_info("y", t, [3, 5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    (got,), (want,) = run_and_read(driver, m, {"x": x, "lo": lo, "hi": hi})
    np.testing.assert_array_equal(got, want)


def one_input_model(op, t, shape, inits=(), extra_inputs=(), **attrs):
    node = helper.make_node(op, ["x", *[n for n, _ in inits], *extra_inputs], ["y"], **attrs)
    g = helper.make_graph([node], op.lower(), [helper.make_tensor_value_info("x", t, shape)],
                          [helper.make_empty_tensor_value_info("y")],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                                "ReduceSumSquare", "ArgMax", "ArgMin"])
def test_integer_reductions(driver, op, dt):
    allowed = [t[len("tensor("):-1] for t in defs.get_schema(op).type_constraints[0].allowed_type_strs]
    if np.dtype(dt).name not in allowed:
        pytest.skip(f"{op} does not take {np.dtype(dt).name}")
    x = RNG.integers(0, 6, (3, 4, 5)).astype(dt)
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    if op.startswith("Arg"):
        m = one_input_model(op, t, [3, 4, 5], axis=1)
    else:
        m = one_input_model(op, t, [3, 4, 5], inits=[("axes", np.array([1], np.int64))])
    (got,), (want,) = run_and_read(driver, m, {"x": x})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda d: np.dtype(d).name)
def test_einsum_integers(driver, dt):
    a = RNG.integers(0, 5, (2, 3, 4)).astype(dt)
    b = RNG.integers(0, 5, (2, 4, 5)).astype(dt)
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")
    g = helper.make_graph([node], "einsum", [helper.make_tensor_value_info("a", t, a.shape),
                                             helper.make_tensor_value_info("b", t, b.shape)],
                          [helper.make_empty_tensor_value_info("y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
    m.ir_version = 8
    (got,), _ = run_and_read(driver, m, {"a": a, "b": b})
    np.testing.assert_array_equal(got, np.einsum("bij,bjk->bik", a, b))


@pytest.mark.parametrize("t", [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
                               TensorProto.FLOAT8E5M2FNUZ], ids=lambda t: TensorProto.DataType.Name(t))
@pytest.mark.parametrize("op,attrs", [("IsNaN", {}), ("IsInf", {}), ("IsInf", {"detect_negative": 0})],
                         ids=["isnan", "isinf", "isinf_positive"])
def test_float8_predicates_every_code(driver, t, op, attrs):
    x = np.arange(256, dtype=np.uint8).view(LOW[t])
    m = one_input_model(op, t, [256], **attrs)
    m.opset_import[0].version = 20
    (got,), (want,) = run_and_read(driver, m, {"x": x})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("half", [TensorProto.FLOAT16, TensorProto.BFLOAT16], ids=["float16", "bfloat16"])
def test_half_model_end_to_end(driver, half):
    """The bundled digits MLP (Div, Flatten, Gemm, Relu, Softmax) converted to a half
    type runs through legalize-types; its probabilities stay within a few half ulps of
    the float32 model (onnxruntime as the reference) and every prediction agrees."""
    import onnxruntime as ort

    npt = np.float16 if half == TensorProto.FLOAT16 else ml_dtypes.bfloat16
    m32 = onnx.load(os.path.join(SOURCE_DIR, "models", "digits", "digits_mlp.onnx"))
    m = onnx.ModelProto()
    m.CopyFrom(m32)
    for init in m.graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(npt), init.name))
    for v in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = half
    x = np.load(os.path.join(SOURCE_DIR, "models", "digits", "samples.npy"))[:64].astype(npt)
    name = m.graph.input[0].name
    sess = ort.InferenceSession(m32.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {name: x.astype(np.float32)})[0]
    got = _run_only(driver, m, {name: x})
    assert got.dtype == npt
    g = np.asarray(got).astype(np.float32)
    eps = 2.0 ** -10 if half == TensorProto.FLOAT16 else 2.0 ** -7
    assert np.abs(g - want).max() <= 4 * eps
    np.testing.assert_array_equal(g.argmax(-1), want.argmax(-1))

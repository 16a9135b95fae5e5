"""msame and the model descriptions on the edge cases a new user meets running
the tools (issue 24): inputs with no elements, the sizes of sub-byte and 8-bit
float tensors, shapes taken from .npy files and output sizes from the run,
ml_dtypes .npy files, and the order of the log. Each case runs atc and msame
(or pyACL over libascendcl) as a user does; the references are onnx's
ReferenceEvaluator, onnxruntime, numpy and ml_dtypes."""
import os
import re
import subprocess

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import oc_harness
from pyacl_harness import run_snippet

R = np.random.default_rng(24)
OUTPUT_LINE = re.compile(r"^\[INFO\] output (\d+) \('.*', \(([-\d,]*)\)\) written to (.*)$", re.M)


def model(nodes, inputs, outputs, opset=21, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def compile_(m, tmp_path, name, shapes=None):
    om, _ = oc_harness.atc_compile(oc_harness.save_model(m, str(tmp_path), name), str(tmp_path / name), shapes)
    return om


def msame(args, merge=False):
    return subprocess.run([oc_harness.MSAME] + [str(a) for a in args], capture_output=not merge, text=True,
                          timeout=300, stdout=subprocess.PIPE if merge else None,
                          stderr=subprocess.STDOUT if merge else None)


def save(tmp_path, arrays, prefix="in"):
    """Each array as a .npy file, or raw bytes as .bin for a `bytes` entry."""
    paths = []
    for i, a in enumerate(arrays):
        if isinstance(a, bytes):
            p = tmp_path / f"{prefix}{i}.bin"
            p.write_bytes(a)
        else:
            p = tmp_path / f"{prefix}{i}.npy"
            np.save(p, a)
        paths.append(str(p))
    return ",".join(paths)


def run(om, tmp_path, arrays, extra=(), out="out"):
    """msame on `arrays`; returns ({index: (path, printed shape)}, proc). Fails on a non-zero exit."""
    args = ["--model", om, "--output", tmp_path / out, "--outfmt", "NPY"] + list(extra)
    if arrays:
        args += ["--input", save(tmp_path, arrays)]
    proc = msame(args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outs = {int(m.group(1)): (m.group(3), tuple(int(d) for d in m.group(2).split(",") if d))
            for m in OUTPUT_LINE.finditer(proc.stdout)}
    return outs, proc


def expect_failure(proc, *fragments):
    assert proc.returncode != 0, proc.stdout
    for frag in fragments:
        assert frag in proc.stderr, f"{frag!r} not in:\n{proc.stderr}"


def packed(arr):
    """The bytes ONNX stores `arr` as (4-bit types two per byte): an msame .bin input."""
    return numpy_helper.from_array(arr).raw_data


# ---- 1. inputs with no elements --------------------------------------------------------


def test_empty_input_keeps_the_next_input_on_its_file(tmp_path):
    # ReduceMax over an empty set (the node suite's test_reduce_max_empty_set): the
    # zero-element 'data' must still take in0.npy, so 'axes' gets in1.npy.
    m = model([helper.make_node("ReduceMax", ["data", "axes"], ["r"], keepdims=1)],
              [vi("data", T.FLOAT, [2, 0, 4]), vi("axes", T.INT64, [1])], [vi("r", T.FLOAT, None)], opset=18)
    om = compile_(m, tmp_path, "rmax")
    data, axes = np.zeros((2, 0, 4), np.float32), np.array([1], np.int64)
    outs, _ = run(om, tmp_path, [data, axes])
    (want,) = ReferenceEvaluator(m).run(None, {"data": data, "axes": axes})
    got = np.load(outs[0][0])
    assert got.shape == want.shape == (2, 1, 4)
    np.testing.assert_array_equal(got, want)


def test_empty_input_between_others_is_checked_against_its_own_file(tmp_path):
    m = model([helper.make_node("Concat", ["a", "e"], ["c"], axis=0),
               helper.make_node("Cast", ["b"], ["bf"], to=T.FLOAT),
               helper.make_node("Add", ["c", "bf"], ["y"])],
              [vi("a", T.FLOAT, [2, 3]), vi("e", T.FLOAT, [0, 3]), vi("b", T.INT32, [2, 3])], [vi("y", T.FLOAT, [2, 3])])
    om = compile_(m, tmp_path, "concat_empty")
    a, e, b = R.standard_normal((2, 3)).astype(np.float32), np.zeros((0, 3), np.float32), np.arange(6, dtype=np.int32).reshape(2, 3)
    outs, _ = run(om, tmp_path, [a, e, b])
    np.testing.assert_allclose(np.load(outs[0][0]), oc_harness.ort_run(m, {"a": a, "e": e, "b": b})[0], rtol=1e-6)
    # A file of the wrong shape for the empty input is refused as that input's.
    proc = msame(["--model", om, "--input", save(tmp_path, [a, np.zeros((1, 3), np.float32), b])])
    expect_failure(proc, "input 1 ('e'): shape mismatch", "(0,3)", "(1,3)")


# ---- 2. sizes of sub-byte and 8-bit float tensors ------------------------------------------

# (ONNX type, ml_dtypes type, element count, AscendCL code; -1: none, ACL_DT_UNDEFINED)
LOW_PRECISION = [
    (T.FLOAT4E2M1, ml_dtypes.float4_e2m1fn, 30, 40),
    (T.INT4, ml_dtypes.int4, 5, 29),
    (T.UINT4, ml_dtypes.uint4, 5, -1),
    (T.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, 7, 36),
    (T.FLOAT8E5M2, ml_dtypes.float8_e5m2, 7, 35),
    (T.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, 7, -1),
]


def exact_values(mltype, n):
    """n values of `mltype`, each exact in it (so Cast to and from float32 is exact)."""
    if mltype in (ml_dtypes.int4, ml_dtypes.uint4):
        info = ml_dtypes.iinfo(mltype)
        return (np.arange(n) % (int(info.max) - int(info.min) + 1) + int(info.min)).astype(mltype)
    top = float(ml_dtypes.finfo(mltype).max)
    return R.uniform(-top, top, n).astype(np.float32).astype(mltype)


def npy_descr(path):
    """The dtype descr in a .npy file's header, as written."""
    return re.search(rb"'descr': '([^']*)'", open(path, "rb").read(256)).group(1).decode()


@pytest.mark.parametrize("onnx_type,mltype,n,acl_code", LOW_PRECISION, ids=lambda v: getattr(v, "__name__", None))
def test_sub_byte_and_float8_sizes_are_packed_bytes(tmp_path, onnx_type, mltype, n, acl_code):
    to_f = model([helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], [vi("x", onnx_type, [n])], [vi("y", T.FLOAT, [n])],
                 opset=25)
    from_f = model([helper.make_node("Cast", ["x"], ["y"], to=onnx_type)], [vi("x", T.FLOAT, [n])],
                   [vi("y", onnx_type, [n])], opset=25)
    om_to, om_from = compile_(to_f, tmp_path, "to_float"), compile_(from_f, tmp_path, "from_float")
    x = exact_values(mltype, n)
    want_bytes = len(packed(x))  # what ONNX stores n elements of this type in

    # The C API (through pyACL) states the packed sizes and the type.
    got = run_snippet(f"""
        import json, acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        res = {{}}
        for key, om, out in (("in", {om_to!r}, False), ("out", {om_from!r}, True)):
            mid, ret = acl.mdl.load_from_file(om); assert ret == 0
            desc = acl.mdl.create_desc(); assert acl.mdl.get_desc(desc, mid) == 0
            size = acl.mdl.get_output_size_by_index(desc, 0) if out else acl.mdl.get_input_size_by_index(desc, 0)
            dtype = acl.mdl.get_output_data_type(desc, 0) if out else acl.mdl.get_input_data_type(desc, 0)
            res[key] = [size, dtype]
        d = acl.create_tensor_desc({acl_code}, [{n}], 2)
        res["desc"] = acl.get_tensor_desc_size(d)
        res["elem"] = acl.data_type_size({acl_code})
        print(json.dumps(res))
    """)
    assert got["in"] == [want_bytes, acl_code] and got["out"] == [want_bytes, acl_code]
    assert got["desc"] == (want_bytes if acl_code >= 0 else 0)
    # Bytes per element: 1 for the 8-bit floats, 0 (no whole byte) for the 4-bit types.
    assert got["elem"] == (1 if acl_code >= 0 and want_bytes == n else 0)

    # msame takes the packed bytes as a .bin and says so when a file is a byte off.
    outs, _ = run(om_to, tmp_path, [packed(x)])
    np.testing.assert_array_equal(np.load(outs[0][0]), x.astype(np.float32))
    proc = msame(["--model", om_to, "--input", save(tmp_path, [packed(x) + b"\0"], prefix="bad")])
    expect_failure(proc, "input 0 ('x'): size mismatch", f"expects {want_bytes} bytes", f"holds {want_bytes + 1}")

    # Outputs of the type: ml_dtypes .npy where AscendCL has the type, else its packed bytes as .bin.
    outs, proc = run(om_from, tmp_path, [x.astype(np.float32)])
    path, shape = outs[0]
    assert shape == (n,)
    if acl_code >= 0:
        got = np.load(path)
        assert got.dtype == np.dtype(mltype)
        np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))
    else:
        assert path.endswith(".bin") and "which .npy cannot hold" in proc.stdout
        assert open(path, "rb").read() == packed(x)


# ---- 3. shapes from .npy files, output sizes from the run -----------------------------------


def test_npy_inputs_give_the_shapes_of_unknown_dims(tmp_path):
    w = R.standard_normal((4, 3)).astype(np.float32)
    m = model([helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Relu", ["mm"], ["y"])],
              [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 3])], inits=[numpy_helper.from_array(w, "w")])
    om = compile_(m, tmp_path, "dyn")
    for n in (3, 5):
        x = R.standard_normal((n, 4)).astype(np.float32)
        outs, _ = run(om, tmp_path, [x], extra=["--loop", "2"], out=f"out{n}")
        got = np.load(outs[0][0])
        assert got.shape == (n, 3)
        np.testing.assert_allclose(got, oc_harness.ort_run(m, {"x": x})[0], rtol=1e-5, atol=1e-6)
    # --dymShape still overrides: a .npy of another shape is then refused.
    proc = msame(["--model", om, "--input", save(tmp_path, [x]), "--dymShape", "x:3,4"])
    expect_failure(proc, "input 0 ('x'): shape mismatch", "(3,4)", "(5,4)")
    # A raw file states no shape.
    proc = msame(["--model", om, "--input", save(tmp_path, [x.tobytes()])])
    expect_failure(proc, "input 0 ('x') has unknown dims (-1,4)", "--dymShape", ".npy")


def test_data_dependent_output_is_sized_by_the_run(tmp_path):
    m = model([helper.make_node("NonZero", ["x"], ["idx"])], [vi("x", T.FLOAT, [3, 4])], [vi("idx", T.INT64, None)])
    om = compile_(m, tmp_path, "nonzero")
    x = (R.random((3, 4)) > 0.5).astype(np.float32) * R.standard_normal((3, 4)).astype(np.float32)
    outs, _ = run(om, tmp_path, [x], extra=["--loop", "3"])
    want = np.array(np.nonzero(x), dtype=np.int64)
    got = np.load(outs[0][0])
    assert outs[0][1] == want.shape
    np.testing.assert_array_equal(got, want)
    # --outputSize still overrides: too small a buffer is an error naming the sizes.
    proc = msame(["--model", om, "--input", save(tmp_path, [x]), "--outputSize", "8"])
    expect_failure(proc, "output 0 ('idx')", f"({want.nbytes} bytes) but its buffer holds 8 bytes")


def test_shape_setting_input_runs_without_freezing_it(tmp_path):
    # Reshape's shape as a graph input: atc writes a dynamic .om, and msame sizes the
    # output from the run for each shape the input file asks for.
    m = model([helper.make_node("Reshape", ["data", "shape"], ["y"])],
              [vi("data", T.FLOAT, [2, 6]), vi("shape", T.INT64, [2])], [vi("y", T.FLOAT, None)])
    om = compile_(m, tmp_path, "reshape")
    data = R.standard_normal((2, 6)).astype(np.float32)
    for shape in ([3, 4], [6, 2], [-1, 1]):
        s = np.array(shape, np.int64)
        outs, _ = run(om, tmp_path, [data, s], out=f"out{shape[0]}")
        np.testing.assert_array_equal(np.load(outs[0][0]), data.reshape(shape))


def test_execute_allocates_outputs_given_null_buffers(tmp_path):
    # The C API behind msame: an output buffer of (NULL, 0) gets device memory of the
    # size the run needs, from shape inference (dynamic dims) or from the run (NonZero).
    dyn = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, ["n", 4])], [vi("y", T.FLOAT, ["n", 4])])
    nz = model([helper.make_node("NonZero", ["x"], ["idx"])], [vi("x", T.FLOAT, [3, 4])], [vi("idx", T.INT64, None)])
    om_dyn, om_nz = compile_(dyn, tmp_path, "relu_dyn"), compile_(nz, tmp_path, "nz")
    x = R.standard_normal((3, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    got = run_snippet(f"""
        import json, numpy as np, acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        x = np.load({str(tmp_path / 'x.npy')!r})
        res = {{}}
        for key, om, dynamic in (("dyn", {om_dyn!r}, True), ("nz", {om_nz!r}, False)):
            mid, ret = acl.mdl.load_from_file(om); assert ret == 0
            dev, ret = acl.rt.malloc(x.nbytes, 0); assert ret == 0
            assert acl.rt.memcpy(dev, x.nbytes, acl.util.numpy_to_ptr(x), x.nbytes, 1) == 0
            ins, outs = acl.mdl.create_dataset(), acl.mdl.create_dataset()
            acl.mdl.add_dataset_buffer(ins, acl.create_data_buffer(dev, x.nbytes))
            if dynamic:
                d = acl.create_tensor_desc(0, [3, 4], 2)
                assert acl.mdl.set_dataset_tensor_desc(ins, d, 0)[1] == 0
            buf = acl.create_data_buffer(0, 0)
            acl.mdl.add_dataset_buffer(outs, buf)
            async_ret = None
            if not dynamic:  # the async form does not allocate: the run reports the size it needed
                stream, _ = acl.rt.create_stream()
                assert acl.mdl.execute_async(mid, ins, outs, stream) == 0
                async_ret = [acl.rt.synchronize_stream(stream), acl.get_recent_err_msg()]
            assert acl.mdl.execute(mid, ins, outs) == 0, acl.get_recent_err_msg()
            addr, size = acl.get_data_buffer_addr(buf), acl.get_data_buffer_size_v2(buf)
            desc = acl.mdl.get_dataset_tensor_desc(outs, 0)
            shape = [acl.get_tensor_desc_dim_v2(desc, i)[0] for i in range(acl.get_tensor_desc_num_dims(desc))]
            host = np.zeros(size, np.uint8)
            assert acl.rt.memcpy(acl.util.numpy_to_ptr(host), size, addr, size, 2) == 0
            assert acl.rt.free(addr) == 0  # the caller's memory
            res[key] = {{"size": size, "shape": shape, "data": host.tolist(), "async": async_ret}}
        print(json.dumps(res))
    """)
    relu = np.maximum(x, 0)
    assert got["dyn"]["size"] == relu.nbytes and got["dyn"]["shape"] == [3, 4]
    np.testing.assert_array_equal(np.array(got["dyn"]["data"], np.uint8).view(np.float32).reshape(3, 4), relu)
    idx = np.array(np.nonzero(x), np.int64)
    assert got["nz"]["size"] == idx.nbytes and got["nz"]["shape"] == list(idx.shape)
    np.testing.assert_array_equal(np.array(got["nz"]["data"], np.uint8).view(np.int64).reshape(idx.shape), idx)
    assert got["nz"]["async"][0] != 0 and "aclmdlExecute allocates" in got["nz"]["async"][1]


# ---- 4. bfloat16 / float8 / int4 .npy files of numpy + ml_dtypes --------------------------

ML_TYPES = [(T.BFLOAT16, ml_dtypes.bfloat16), (T.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
            (T.FLOAT8E5M2, ml_dtypes.float8_e5m2), (T.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu),
            (T.INT4, ml_dtypes.int4), (T.FLOAT4E2M1, ml_dtypes.float4_e2m1fn)]


@pytest.mark.parametrize("onnx_type,mltype", ML_TYPES, ids=lambda v: getattr(v, "__name__", None))
def test_ml_dtypes_npy_files_in_and_out(tmp_path, onnx_type, mltype):
    m = model([helper.make_node("Identity", ["x"], ["same"]), helper.make_node("Cast", ["x"], ["f"], to=T.FLOAT)],
              [vi("x", onnx_type, [2, 3])], [vi("same", onnx_type, [2, 3]), vi("f", T.FLOAT, [2, 3])], opset=25)
    om = compile_(m, tmp_path, "ident")
    if mltype is ml_dtypes.float8_e8m0fnu:
        x = np.array([[0.25, 1, 2], [4, 8, 2 ** 20]], np.float32).astype(mltype)
    else:
        x = exact_values(mltype, 6).reshape(2, 3)
    outs, _ = run(om, tmp_path, [x])
    assert npy_descr(tmp_path / "in0.npy") in ("<V2", "<V1", "<f1")  # numpy's raw forms for ml_dtypes
    assert npy_descr(outs[0][0]) == np.dtype(mltype).name  # msame writes the name
    same = np.load(outs[0][0])  # ml_dtypes is imported: the named dtype loads as itself
    assert same.dtype == np.dtype(mltype) and same.shape == (2, 3)
    np.testing.assert_array_equal(same.view(np.uint8), x.view(np.uint8))
    np.testing.assert_array_equal(np.load(outs[1][0]), x.astype(np.float32))
    # msame's own output file (named dtype) is a valid input again.
    outs2, _ = run(om, tmp_path, [same], out="again")
    np.testing.assert_array_equal(np.load(outs2[0][0]).view(np.uint8), x.view(np.uint8))
    # As text: the values, one row per innermost dimension.
    proc = msame(["--model", om, "--input", save(tmp_path, [x]), "--output", tmp_path / "txt", "--outfmt", "TXT"])
    assert proc.returncode == 0, proc.stderr
    text = np.loadtxt(tmp_path / "txt" / "ident_output_0.txt", dtype=np.float64, ndmin=2)
    np.testing.assert_allclose(text, x.astype(np.float64), rtol=1e-6)


def test_ml_dtypes_npy_of_another_type_is_refused(tmp_path):
    m = model([helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], [vi("x", T.BFLOAT16, [3])], [vi("y", T.FLOAT, [3])])
    om = compile_(m, tmp_path, "bf")
    proc = msame(["--model", om, "--input", save(tmp_path, [np.zeros(3, ml_dtypes.float8_e4m3fn)])])
    expect_failure(proc, "input 0 ('x'): dtype mismatch", "expects bfloat16", "raw 1-byte elements")
    proc = msame(["--model", om, "--input", save(tmp_path, [np.zeros(3, np.float32)])])
    expect_failure(proc, "expects bfloat16", "holds float32")
    # A type without an AscendCL code takes raw bytes only.
    m = model([helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], [vi("x", T.UINT4, [4])], [vi("y", T.FLOAT, [4])],
              opset=25)
    om = compile_(m, tmp_path, "u4")
    proc = msame(["--model", om, "--input", save(tmp_path, [np.zeros(4, ml_dtypes.uint4)])])
    expect_failure(proc, "input 0 ('x'): its element type has no AscendCL code", "as a raw .bin file", "2 bytes")


# ---- 5. the order of the log -----------------------------------------------------------------


def test_log_lines_come_in_the_order_they_happen(tmp_path):
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    om = compile_(m, tmp_path, "relu")
    proc = msame(["--model", om, "--input", save(tmp_path, [np.zeros(2, np.int32)])], merge=True)
    assert proc.returncode != 0
    lines = proc.stdout.splitlines()
    loaded = next(i for i, l in enumerate(lines) if l.startswith("[INFO] model ") and " loaded in " in l)
    error = next(i for i, l in enumerate(lines) if l.startswith("[ERROR] input 0"))
    assert loaded < error, proc.stdout

"""Single-operator execution (aclop*, include/acl/acl_op.h) through pyACL's
acl.op in a separate process (tests/python/pyacl/op_runner.py), each result
against numpy or onnxruntime."""
import json
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import oc_harness
from pyacl_harness import APPS_DIR, run_py

RUNNER = os.path.join(APPS_DIR, "op_runner.py")
R = np.random.default_rng(31)
ACL = {np.float32: 0, np.int32: 3, np.int64: 9, np.bool_: 12}
ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022
ACL_ERROR_OP_NOT_FOUND = 100024
ACL_ERROR_FEATURE_UNSUPPORTED = 200006


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def run_op(tmp_path, op, inputs, outputs, attrs=(), mode="v2", runs=1, const=()):
    """inputs: arrays (None: an absent optional input); outputs: (numpy dtype, dims) per output."""
    case = {"op": op, "mode": mode, "runs": runs, "attrs": [list(a) for a in attrs], "inputs": [], "outputs": []}
    for i, a in enumerate(inputs):
        if a is None:
            case["inputs"].append(None)
            continue
        p = str(tmp_path / f"in{i}.npy")
        np.save(p, a)
        case["inputs"].append({"npy": p, "const": i in const})
    for k, (dt, dims) in enumerate(outputs):
        case["outputs"].append({"dtype": ACL[dt], "dims": list(dims), "npy": str(tmp_path / f"out{k}.npy")})
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    result = json.loads(run_py([RUNNER, str(path)]).stdout.strip().splitlines()[-1])
    outs = [np.load(tmp_path / f"out{k}.npy") for k in range(len(outputs))] if result["ret"] == 0 else None
    return result, outs


def ort_single(op, inputs, attrs=None, consts=None, out_types=(TensorProto.FLOAT,), opset=18):
    """onnxruntime's result for one ONNX node (the reference for ops numpy lacks)."""
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, [f"y{k}" for k in range(len(out_types))], **(attrs or {}))
    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in zip(names, inputs)]
    outs = [helper.make_tensor_value_info(f"y{k}", t, None) for k, t in enumerate(out_types)]
    m = helper.make_model(helper.make_graph([node], "op", ins, outs), opset_imports=[helper.make_opsetid("", opset)])
    return oc_harness.ort_run(m, dict(zip(names, inputs)))


@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Mul", np.multiply), ("Sub", np.subtract),
                                   ("RealDiv", np.divide), ("Maximum", np.maximum), ("Minimum", np.minimum)])
def test_binary_ops_with_broadcasting(tmp_path, op, fn):
    a, b = f32(2, 3, 4), f32(4) + 3.0
    result, (y,) = run_op(tmp_path, op, [a, b], [(np.float32, (2, 3, 4))])
    assert result["ret"] == 0 and result["sync"] == 0, result
    np.testing.assert_allclose(y, fn(a, b), rtol=1e-6)


@pytest.mark.parametrize("op,ref", [
    ("Relu", lambda x: np.maximum(x, 0)), ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("Exp", np.exp),
    ("Tanh", np.tanh), ("Square", np.square), ("Relu6", lambda x: np.clip(x, 0, 6)),
])
def test_unary_ops(tmp_path, op, ref):
    x = f32(3, 5) * 4
    result, (y,) = run_op(tmp_path, op, [x], [(np.float32, (3, 5))])
    assert result["ret"] == 0, result
    np.testing.assert_allclose(y, ref(x), rtol=1e-5, atol=1e-6)


def test_cann_attribute_forms(tmp_path):
    x = f32(4, 6)
    cases = [
        ("LeakyRelu", [x], [("float", "negative_slope", 0.2)], (4, 6), np.where(x > 0, x, 0.2 * x)),
        ("SoftmaxV2", [x], [("list_int", "axes", [-1])], (4, 6),
         np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
        ("ReduceSumD", [x], [("list_int", "axes", [1]), ("bool", "keep_dims", False)], (4,), x.sum(1)),
        ("ReduceMeanD", [x], [("list_int", "axes", [0]), ("bool", "keep_dims", True)], (1, 6), x.mean(0, keepdims=True)),
        ("TransposeD", [x], [("list_int", "perm", [1, 0])], (6, 4), x.T),
        ("ConcatD", [x, x * 2], [("int", "concat_dim", 1), ("int", "N", 2)], (4, 12), np.concatenate([x, 2 * x], 1)),
    ]
    for k, (op, ins, attrs, dims, want) in enumerate(cases):
        d = tmp_path / str(k)
        d.mkdir()
        result, outs = run_op(d, op, ins, [(np.float32, dims)], attrs)
        assert result["ret"] == 0, (op, result)
        np.testing.assert_allclose(outs[0], want, rtol=1e-5, atol=1e-6, err_msg=op)


def test_cast_with_dst_type(tmp_path):
    x = f32(3, 4) * 10
    result, (y,) = run_op(tmp_path, "Cast", [x], [(np.int32, (3, 4))], [("data_type", "dst_type", 3)])
    assert result["ret"] == 0, result
    np.testing.assert_array_equal(y, x.astype(np.int32))


@pytest.mark.parametrize("ta,tb,bias", [(False, False, False), (False, True, True), (True, False, False)])
def test_cann_matmul_transposes_and_bias(tmp_path, ta, tb, bias):
    a, b, c = f32(5, 3), f32(3, 7), f32(7)
    a_in, b_in = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
    ins = [a_in, b_in] + ([c] if bias else [])
    result, (y,) = run_op(tmp_path, "MatMul", ins, [(np.float32, (5, 7))],
                          [("bool", "transpose_x1", ta), ("bool", "transpose_x2", tb)])
    assert result["ret"] == 0, result
    np.testing.assert_allclose(y, a @ b + (c if bias else 0), rtol=1e-5, atol=1e-5)


def test_batch_matmul_with_adjoint(tmp_path):
    a, b = f32(2, 4, 3), f32(2, 4, 5)
    result, (y,) = run_op(tmp_path, "BatchMatMul", [a, b], [(np.float32, (2, 3, 5))], [("bool", "adj_x1", True)])
    assert result["ret"] == 0, result
    np.testing.assert_allclose(y, np.swapaxes(a, 1, 2) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride,pad,groups", [(1, 1, 1), (2, 0, 1), (1, 1, 2)])
def test_conv2d_matches_onnxruntime_conv(tmp_path, stride, pad, groups):
    x, w, b = f32(1, 4, 9, 9), f32(6, 4 // groups, 3, 3) * 0.3, f32(6)
    (want,) = ort_single("Conv", [x, w, b], {"strides": [stride] * 2, "pads": [pad] * 4, "group": groups})
    attrs = [("list_int", "strides", [1, 1, stride, stride]), ("list_int", "pads", [pad] * 4),
             ("list_int", "dilations", [1, 1, 1, 1]), ("int", "groups", groups), ("string", "data_format", "NCHW")]
    result, (y,) = run_op(tmp_path, "Conv2D", [x, w, b], [(np.float32, want.shape)], attrs)
    assert result["ret"] == 0, result
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)


def test_onnx_op_with_onnx_attributes_and_a_constant_input(tmp_path):
    """Reshape's shape decides the output shape: given with aclSetTensorConst it compiles;
    without, the error says to make it constant."""
    x, shape = f32(2, 6), np.array([3, -1], np.int64)
    result, (y,) = run_op(tmp_path, "Reshape", [x, shape], [(np.float32, (3, 4))], const={1})
    assert result["ret"] == 0, result
    np.testing.assert_array_equal(y, x.reshape(3, 4))
    result, _ = run_op(tmp_path, "Reshape", [x, shape], [(np.float32, (3, 4))])
    assert result["ret"] == ACL_ERROR_FEATURE_UNSUPPORTED and "aclSetTensorConst" in result["msg"], result


def test_gemm_with_onnx_attributes_and_an_absent_optional_input(tmp_path):
    a, b = f32(4, 3), f32(5, 3)
    (want,) = ort_single("Gemm", [a, b], {"transB": 1, "alpha": 0.5})
    result, (y,) = run_op(tmp_path, "Gemm", [a, b, None], [(np.float32, (4, 5))],
                          [("int", "transB", 1), ("float", "alpha", 0.5)])
    assert result["ret"] == 0, result
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_execute_v2_fills_unknown_output_dims(tmp_path):
    a, b = f32(3, 1), f32(1, 4)
    result, (y,) = run_op(tmp_path, "Add", [a, b], [(np.float32, (-1, -1))])
    assert result["ret"] == 0 and result["out_dims"] == [[3, 4]], result
    np.testing.assert_allclose(y, a + b)


def test_handle_runs_repeatedly_and_compile_warms_the_cache(tmp_path):
    x = f32(8, 16)
    result, (y,) = run_op(tmp_path, "Softmax", [x], [(np.float32, (8, 16))], [("int", "axis", 1)], mode="handle",
                          runs=20)
    assert result["ret"] == 0 and result["short"] != 0, result
    np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-5)
    result, (y,) = run_op(tmp_path, "Abs", [x], [(np.float32, (8, 16))], mode="compile_v2")
    assert result["ret"] == 0, result
    np.testing.assert_array_equal(y, np.abs(x))
    result, (y,) = run_op(tmp_path, "Neg", [x], [(np.float32, (8, 16))], mode="v1")
    assert result["ret"] == 0, result
    np.testing.assert_array_equal(y, -x)


def test_errors_name_the_problem(tmp_path):
    x = f32(2, 3)
    r, _ = run_op(tmp_path, "NoSuchOp", [x], [(np.float32, (2, 3))])
    assert r["ret"] == ACL_ERROR_OP_NOT_FOUND and "NoSuchOp" in r["msg"], r
    r, _ = run_op(tmp_path, "Relu", [x], [(np.float32, (3, 2))])
    assert r["ret"] == ACL_ERROR_OP_OUTPUT_NOT_MATCH and "[2,3]" in r["msg"] and "[3,2]" in r["msg"], r
    r, _ = run_op(tmp_path, "Relu", [x], [(np.int64, (2, 3))])
    assert r["ret"] == ACL_ERROR_OP_OUTPUT_NOT_MATCH, r
    r, _ = run_op(tmp_path, "Add", [x, f32(4)], [(np.float32, (2, 4))])
    assert r["ret"] != 0 and "Add" in r["msg"], r
    r, _ = run_op(tmp_path, "Conv2D", [f32(1, 4, 5, 5), f32(2, 4, 3, 3)], [(np.float32, (1, 2, 3, 3))],
                  [("string", "data_format", "NHWC")])
    assert r["ret"] == ACL_ERROR_FEATURE_UNSUPPORTED and "NHWC" in r["msg"], r


def run_op_with(tmp_path, op, inputs, outputs, attrs=(), **case_extra):
    """run_op with extra case fields (model_dir, input formats)."""
    case = {"op": op, "mode": "v2", "attrs": [list(a) for a in attrs], "inputs": [], "outputs": []}
    case.update({k: v for k, v in case_extra.items() if k != "formats"})
    for i, a in enumerate(inputs):
        p = str(tmp_path / f"in{i}.npy")
        np.save(p, a)
        entry = {"npy": p}
        if "formats" in case_extra:
            entry["format"] = case_extra["formats"][i]
        case["inputs"].append(entry)
    for k, (dt, dims) in enumerate(outputs):
        case["outputs"].append({"dtype": ACL[dt], "dims": list(dims), "npy": str(tmp_path / f"out{k}.npy")})
    (tmp_path / "case.json").write_text(json.dumps(case))
    result = json.loads(run_py([RUNNER, str(tmp_path / "case.json")]).stdout.strip().splitlines()[-1])
    outs = [np.load(tmp_path / f"out{k}.npy") for k in range(len(outputs))] if result["ret"] == 0 else None
    return result, outs


def test_atc_singleop_models_load_through_set_model_dir(tmp_path):
    ops = [
        {"op": "Add", "input_desc": [{"format": "ND", "shape": [4, 4], "type": "float32"}] * 2,
         "output_desc": [{"format": "ND", "shape": [4, 4], "type": "float32"}]},
        {"op": "Conv2D",
         "input_desc": [{"format": "NCHW", "shape": [1, 2, 6, 6], "type": "float"},
                        {"format": "NCHW", "shape": [3, 2, 3, 3], "type": "float"}],
         "output_desc": [{"format": "NCHW", "shape": [1, 3, 3, 3], "type": "float"}],
         "attr": [{"name": "strides", "type": "list_int", "value": [1, 1, 2, 2]},
                  {"name": "pads", "type": "list_int", "value": [1, 0, 1, 0]},
                  {"name": "dilations", "type": "list_int", "value": [1, 1, 1, 1]},
                  {"name": "groups", "type": "int", "value": 1},
                  {"name": "data_format", "type": "string", "value": "NCHW"}]},
        {"op": "Cast", "input_desc": [{"format": "ND", "shape": [5], "type": "float32"}],
         "output_desc": [{"format": "ND", "shape": [5], "type": "int32"}],
         "attr": [{"name": "dst_type", "type": "data_type", "value": "DT_INT32"}]},
    ]
    (tmp_path / "ops.json").write_text(json.dumps(ops))
    out_dir = tmp_path / "op_models"
    proc = oc_harness.run_tool([oc_harness.ATC, f"--singleop={tmp_path / 'ops.json'}", f"--output={out_dir}"])
    assert "Single op 2: Cast" in proc.stdout, proc.stdout
    assert sorted(os.listdir(out_dir)) == ["0_Add.om", "1_Conv2D.om", "2_Cast.om"]
    a, b = f32(4, 4), f32(4, 4)
    d = tmp_path / "add"
    d.mkdir()
    r, (y,) = run_op_with(d, "Add", [a, b], [(np.float32, (4, 4))], model_dir=str(out_dir))
    assert r["ret"] == 0, r
    np.testing.assert_allclose(y, a + b)
    x, w = f32(1, 2, 6, 6), f32(3, 2, 3, 3)
    (want,) = ort_single("Conv", [x, w], {"strides": [2, 2], "pads": [1, 1, 0, 0]})
    d = tmp_path / "conv"
    d.mkdir()
    conv_attrs = [(a["type"], a["name"], a["value"]) for a in ops[1]["attr"]]
    r, (y,) = run_op_with(d, "Conv2D", [x, w], [(np.float32, (1, 3, 3, 3))], conv_attrs, model_dir=str(out_dir),
                          formats=[0, 0])
    assert r["ret"] == 0, r
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    d = tmp_path / "cast"
    d.mkdir()
    v = np.array([1.5, -2.5, 3.9, 0, 7], np.float32)
    r, (y,) = run_op_with(d, "Cast", [v], [(np.int32, (5,))], [("data_type", "dst_type", 3)], model_dir=str(out_dir))
    assert r["ret"] == 0, r
    np.testing.assert_array_equal(y, v.astype(np.int32))


@pytest.mark.parametrize("entry,code,fragment", [
    ({"op": "Frobnicate", "input_desc": [{"shape": [2], "type": "float"}], "output_desc": [{"shape": [2], "type": "float"}]},
     "E11003", "Frobnicate"),
    ({"op": "Add", "input_desc": [{"shape": [2], "type": "complex"}], "output_desc": []}, "E10001", "complex"),
    ({"input_desc": []}, "E10001", "\"op\""),
    ({"op": "Relu", "input_desc": [{"shape": [2], "type": "float"}], "output_desc": [{"shape": [3], "type": "float"}]},
     "E12001", "[2]"),
])
def test_atc_singleop_errors(tmp_path, entry, code, fragment):
    (tmp_path / "ops.json").write_text(json.dumps([entry]))
    proc = oc_harness.run_tool([oc_harness.ATC, f"--singleop={tmp_path / 'ops.json'}", f"--output={tmp_path / 'o'}"],
                               check=False)
    assert proc.returncode != 0 and code in proc.stdout + proc.stderr and fragment in proc.stdout + proc.stderr, \
        proc.stdout + proc.stderr


def test_set_model_dir_errors(tmp_path):
    from pyacl_harness import run_snippet
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]),
                          opset_imports=[helper.make_opsetid("", 17)])
    models = tmp_path / "models"
    models.mkdir()
    oc_harness.atc_compile(oc_harness.save_model(m, str(tmp_path), "relu"), str(models / "relu"))
    r = run_snippet(f"""
        import json, acl
        acl.init()
        out = {{}}
        out["missing"] = [acl.op.set_model_dir({str(tmp_path / 'nope')!r}), acl.get_recent_err_msg()]
        out["plain_model"] = [acl.op.set_model_dir({str(models)!r}), acl.get_recent_err_msg()]
        print(json.dumps(out))
    """)
    assert r["missing"][0] == 100000 and "nope" in r["missing"][1], r
    assert r["plain_model"][0] == 100013 and "not a single-operator model" in r["plain_model"][1], r


def test_float_attributes_close_in_value_compile_to_different_operators():
    from pyacl_harness import run_snippet
    r = run_snippet("""
        import json, numpy as np, acl
        acl.init(); acl.rt.set_device(0)
        x = np.array([-1000.0, 2.0], np.float32)
        d = acl.create_tensor_desc(0, [2], 2)
        px, _ = acl.rt.malloc(8, 0); py, _ = acl.rt.malloc(8, 0)
        acl.rt.memcpy(px, 8, acl.util.numpy_to_ptr(x), 8, 1)
        bx, by = acl.create_data_buffer(px, 8), acl.create_data_buffer(py, 8)
        got = []
        for slope in (0.1, 0.1000001, 0.1):
            attr = acl.op.create_attr()
            acl.op.set_attr_float(attr, "negative_slope", slope)
            assert acl.op.execute_v2("LeakyRelu", [d], [bx], [d], [by], attr, 0) == 0
            acl.rt.synchronize_stream(0)
            got.append(float(acl.util.ptr_to_numpy(py, (2,), 11)[0]))
            acl.op.destroy_attr(attr)
        print(json.dumps(got))
    """)
    want = [np.float32(-1000.0) * np.float32(s) for s in (0.1, 0.1000001, 0.1)]
    np.testing.assert_array_equal(np.array(r, np.float32), np.array(want, np.float32))
    assert r[0] != r[1]


def test_review_cases_get_the_documented_codes(tmp_path):
    x = f32(2, 3)
    r, _ = run_op(tmp_path, "MatMul", [x, f32(3, 2)], [(np.float32, (2, 2))],
                  [("bool", "transpose_x2", False), ("bool", "transpose_a", True)])
    assert r["ret"] == 100023 and "transpose_a" in r["msg"], r
    r, _ = run_op(tmp_path, "Relu", [x], [(np.float32, (2, 3)), (np.float32, (2, 3))])
    assert r["ret"] == ACL_ERROR_OP_OUTPUT_NOT_MATCH and "output 1" in r["msg"], r
    r, _ = run_op(tmp_path, "Relu", [x], [])
    assert r["ret"] == ACL_ERROR_OP_OUTPUT_NOT_MATCH, r
    d = tmp_path / "nhwc"
    d.mkdir()
    r, _ = run_op_with(d, "Conv2D", [f32(1, 5, 5, 4), f32(2, 4, 3, 3)], [(np.float32, (1, 3, 3, 2))],
                       formats=[1, 1])
    assert r["ret"] == ACL_ERROR_FEATURE_UNSUPPORTED and "NHWC" in r["msg"], r
    # aclopSetAttrDataType on an ONNX op: an aclDataType, translated (ACL_INT32 = 3, ONNX's 3 is int8).
    r, outs = run_op(tmp_path, "Cast", [x * 10], [(np.int32, (2, 3))], [("data_type", "to", 3)])
    assert r["ret"] == 0, r
    np.testing.assert_array_equal(outs[0], (x * 10).astype(np.int32))


def test_huge_constant_dims_are_refused_not_crashed():
    from pyacl_harness import run_snippet
    r = run_snippet("""
        import json, acl
        acl.init(); acl.rt.set_device(0)
        d = acl.create_tensor_desc(0, [2 ** 62], 2)
        ret = acl.set_tensor_const(d, 0, 0)
        e = acl.create_tensor_desc(0, [4], 2)
        count_ret = acl.op.execute_v2("Relu", [e, e], [0], [e], [0], 0, 0)
        print(json.dumps({"ret": ret, "msg": acl.get_recent_err_msg(), "counts": count_ret}))
    """)
    assert r["ret"] == 100000 and "overflow" in r["msg"], r
    assert r["counts"] == 100000

"""Ascend C custom operators inside models (docs/ascendc.md, "Custom operators
in models"): samples/ascendc/leaky_relu_custom_op built into a package, an
ONNX model with a LeakyReluCustom node compiled by atc and run by msame
against onnxruntime running the same model with ONNX's LeakyRelu; the .om
records the package and version; loading it without the package, or with
another version, fails naming both; aclopCompile / aclopExecuteV2 by op type
through pyACL."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import pyacl_harness
from ascendc_harness import BUILD, SAMPLES, SRC

ATC = os.path.join(BUILD, "atc")
MSAME = os.path.join(BUILD, "msame")
DOMAIN = "opencann.samples"


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """The sample built as vendor 'samples', version 1.2."""
    out = pathlib.Path(tmp_path_factory.mktemp("opp"))
    proc = subprocess.run([os.path.join(BUILD, "ascendc-opp-build"), os.path.join(SAMPLES, "leaky_relu_custom_op"),
                           "--out", str(out), "--vendor", "samples", "--version", "1.2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "vendors" / "samples"


def conv_model(path, custom, dtype=np.float32, shape=(1, 3, 30, 30), slope=0.2):
    """Conv -> LeakyRelu(Custom) -> MaxPool; the custom node in its own domain."""
    rng = np.random.default_rng(0)
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    w = numpy_helper.from_array(rng.standard_normal((8, shape[1], 3, 3)).astype(dtype), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(dtype), "b")
    attrs = {} if slope is None else ({"negative_slope": slope} if custom else {"alpha": slope})
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("LeakyReluCustom" if custom else "LeakyRelu", ["c"], ["r"], name="lrelu",
                              domain=DOMAIN if custom else "", **attrs),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="pool")]
    graph = helper.make_graph(nodes, "conv_lrelu", [helper.make_tensor_value_info("x", elem, list(shape))],
                              [helper.make_tensor_value_info("y", elem, None)], [w, b])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(DOMAIN, 1)] if custom else [])
    onnx.save(helper.make_model(graph, opset_imports=opsets), str(path))


def lrelu_model(path, dtype, shape, slope):
    """A lone LeakyReluCustom node (no default-slope attribute when slope is None)."""
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    attrs = {} if slope is None else {"negative_slope": slope}
    node = helper.make_node("LeakyReluCustom", ["x"], ["y"], name="lrelu", domain=DOMAIN, **attrs)
    graph = helper.make_graph([node], "lrelu", [helper.make_tensor_value_info("x", elem, list(shape))],
                              [helper.make_tensor_value_info("y", elem, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]),
              str(path))


def env_with(pkg):
    env = dict(os.environ)
    env.pop("ASCEND_CUSTOM_OPP_PATH", None)
    if pkg is not None:
        env["ASCEND_CUSTOM_OPP_PATH"] = str(pkg)
    return env


def atc(model, out, pkg):
    return subprocess.run([ATC, f"--model={model}", "--framework=5", f"--output={out}"], capture_output=True,
                          text=True, timeout=300, env=env_with(pkg))


def msame(om, x, out_dir, pkg):
    """Runs the .om on x with msame; returns (process, output 0 or None)."""
    np.save(out_dir / "x.npy", x)
    proc = subprocess.run([MSAME, "--model", str(om), "--input", str(out_dir / "x.npy"), "--output", str(out_dir),
                           "--outfmt", "NPY"], capture_output=True, text=True, timeout=300, env=env_with(pkg))
    outs = sorted(out_dir.glob("*_output_0.npy"))
    return proc, (np.load(outs[0]) if outs else None)


def test_custom_operator_in_an_onnx_model_through_atc_and_msame(package, tmp_path):
    conv_model(tmp_path / "custom.onnx", custom=True)
    conv_model(tmp_path / "std.onnx", custom=False)
    proc = atc(tmp_path / "custom.onnx", tmp_path / "custom", package)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    x = np.random.default_rng(1).standard_normal((1, 3, 30, 30)).astype(np.float32)
    proc, y = msame(tmp_path / "custom.om", x, tmp_path, package)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = ort.InferenceSession(str(tmp_path / "std.onnx")).run(None, {"x": x})[0]
    assert y.shape == want.shape == (1, 8, 15, 15)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype,shape,slope", [
    (np.float32, (3, 5, 7), 0.3),       # 105 elements: every block's last tile padded (DataCopyPad)
    (np.float32, (2, 64, 1000), 0.05),  # several tiles per block
    (np.float16, (1, 1, 999), 0.25),    # the half branch (tiling key 2)
    (np.float32, (4, 16), None),        # negative_slope's default, 0.01
])
def test_custom_operator_shapes_types_and_default_attribute(package, tmp_path, dtype, shape, slope):
    lrelu_model(tmp_path / "m.onnx", dtype, shape, slope)
    proc = atc(tmp_path / "m.onnx", tmp_path / "m", package)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    x = np.random.default_rng(2).uniform(-4, 4, shape).astype(dtype)
    proc, y = msame(tmp_path / "m.om", x, tmp_path, package)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s = 0.01 if slope is None else slope
    if dtype == np.float16:  # the vector unit multiplies halves: the product rounded to half
        want = np.where(x > 0, x, (x * np.float16(s)).astype(np.float16))
    else:
        want = np.where(x > 0, x, x * np.float32(s))
    assert y.dtype == dtype and y.shape == shape
    np.testing.assert_allclose(y.astype(np.float32), want.astype(np.float32), rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_the_om_records_the_package_and_loading_checks_it(package, tmp_path):
    lrelu_model(tmp_path / "m.onnx", np.float32, (64,), 0.1)
    assert atc(tmp_path / "m.onnx", tmp_path / "m", package).returncode == 0
    dump = subprocess.run([ATC, "--mode=1", f"--om={tmp_path / 'm.om'}", f"--json={tmp_path / 'm.json'}"],
                          capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stdout + dump.stderr
    text = (tmp_path / "m.json").read_text()
    json.loads(text)
    for field in ('"_oc_custom_op_type"', '"LeakyReluCustom"', '"_oc_custom_package"', '"samples"',
                  '"_oc_custom_package_version"', '"1.2"'):
        assert field in text, field
    x = np.linspace(-1, 1, 64, dtype=np.float32)

    # No package: the load fails, naming the node, the operator and the package.
    proc, _ = msame(tmp_path / "m.om", x, tmp_path, None)
    assert proc.returncode != 0
    assert "aclmdlLoadFromFile failed with error 100014" in proc.stdout + proc.stderr  # ACL_ERROR_READ_MODEL_FAILURE
    assert ("node 'lrelu' is the custom operator LeakyReluCustom of package 'samples' version 1.2, which is not "
            "loaded: set ASCEND_CUSTOM_OPP_PATH") in proc.stdout + proc.stderr

    # Another version of the package.
    other = tmp_path / "other" / "samples"
    shutil.copytree(package, other)
    info = (other / "version.info").read_text().replace("custom_opp_compiler_version=1.2",
                                                         "custom_opp_compiler_version=2.0")
    (other / "version.info").write_text(info)
    proc, _ = msame(tmp_path / "m.om", x, tmp_path, other)
    assert proc.returncode != 0
    assert ("was compiled against LeakyReluCustom of package 'samples' version 1.2; the loaded package 'samples' "
            f"({other}) is version 2.0") in proc.stdout + proc.stderr


def test_atc_without_the_package_names_the_operator(package, tmp_path):
    lrelu_model(tmp_path / "m.onnx", np.float32, (64,), 0.1)
    proc = atc(tmp_path / "m.onnx", tmp_path / "m", None)
    assert proc.returncode != 0
    assert f"{DOMAIN}::LeakyReluCustom(opset 1)" in proc.stdout + proc.stderr
    proc = atc(tmp_path / "m.onnx", tmp_path / "m", tmp_path / "nowhere")
    assert proc.returncode != 0
    assert "holds no operator package" in proc.stderr


def test_atc_reports_the_operators_own_refusal(package, tmp_path):
    """An int32 input: the package's definition takes float and float16."""
    node = helper.make_node("LeakyReluCustom", ["x"], ["y"], name="lrelu", domain=DOMAIN)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT32, [8])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]),
              str(tmp_path / "m.onnx"))
    proc = atc(tmp_path / "m.onnx", tmp_path / "m", package)
    assert proc.returncode != 0
    assert "input 'x' has data type 3; LeakyReluCustom takes 0, 1" in proc.stdout + proc.stderr


PYACL_SCRIPT = r"""
import sys
import numpy as np
import acl
n = 1000
x = np.random.default_rng(3).uniform(-4, 4, n).astype(np.float32)
assert acl.init() == 0 and acl.rt.set_device(0) == 0
stream, _ = acl.rt.create_stream()
dx, _ = acl.rt.malloc(n * 4, 0)
dy, _ = acl.rt.malloc(n * 4, 0)
acl.rt.memcpy(dx, n * 4, acl.util.numpy_to_ptr(x), n * 4, 1)
desc = lambda t: acl.create_tensor_desc(t, [n], 2)
attr = acl.op.create_attr()
acl.op.set_attr_float(attr, "negative_slope", 0.5)
print("compile", acl.op.compile("LeakyReluCustom", [desc(0)], [desc(0)], attr, 0, 0, None))
print("compile_int", acl.op.compile("LeakyReluCustom", [desc(3)], [desc(3)], attr, 0, 0, None), acl.get_recent_err_msg())
bad_out = acl.create_tensor_desc(0, [n - 1], 2)
print("compile_shape", acl.op.compile("LeakyReluCustom", [desc(0)], [bad_out], attr, 0, 0, None), acl.get_recent_err_msg())
bx, by = acl.create_data_buffer(dx, n * 4), acl.create_data_buffer(dy, n * 4)
print("execute", acl.op.execute_v2("LeakyReluCustom", [desc(0)], [bx], [desc(0)], [by], attr, stream))
print("sync", acl.rt.synchronize_stream(stream))
y = np.zeros(n, np.float32)
acl.rt.memcpy(acl.util.numpy_to_ptr(y), n * 4, dy, n * 4, 2)
np.save(sys.argv[1], y)
"""


def test_aclop_compile_and_execute_by_op_type(package, tmp_path):
    script = tmp_path / "run.py"
    script.write_text(PYACL_SCRIPT)
    env = pyacl_harness.pyacl_env()  # the acl package; under make asan, the sanitizer runtime preloaded
    env["ASCEND_CUSTOM_OPP_PATH"] = str(package)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "y.npy")], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert lines["compile"] == "0"
    assert lines["compile_int"].startswith("100000 ") and "input 'x' has data type 3" in lines["compile_int"]
    assert lines["compile_shape"].startswith("100000 ") and "output 'y' is [999] but LeakyReluCustom infers [1000]" \
        in lines["compile_shape"]
    assert lines["execute"] == "0" and lines["sync"] == "0"
    x = np.random.default_rng(3).uniform(-4, 4, 1000).astype(np.float32)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), np.where(x > 0, x, x * np.float32(0.5)), rtol=1e-6)


def test_the_samples_own_commands(package, tmp_path):
    """samples/ascendc/leaky_relu_custom_op/README.md's steps: model.py make,
    atc, msame, model.py check (onnxruntime with ONNX's LeakyRelu)."""
    script = os.path.join(SAMPLES, "leaky_relu_custom_op", "model.py")
    d = tmp_path / "lrelu"
    assert subprocess.run([sys.executable, script, "make", str(d)], timeout=120).returncode == 0
    proc = atc(d / "lrelu_custom.onnx", d / "lrelu_custom", package)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([MSAME, "--model", str(d / "lrelu_custom.om"), "--input", str(d / "x.npy"), "--output",
                           str(d), "--outfmt", "NPY"], capture_output=True, text=True, timeout=300,
                          env=env_with(package))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check = subprocess.run([sys.executable, script, "check", str(d), str(d / "lrelu_custom_output_0.npy")],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "max |msame - onnxruntime|" in check.stdout

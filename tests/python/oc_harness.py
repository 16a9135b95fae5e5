"""Helpers for the end-to-end tests: compile with atc, run with msame, and
compare with onnxruntime (the independent reference)."""
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

SOURCE_DIR = os.environ.get("OC_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("OC_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
ATC = os.path.join(BUILD_DIR, "atc")
MSAME = os.path.join(BUILD_DIR, "msame")


class ToolError(Exception):
    def __init__(self, cmd, proc):
        super().__init__(f"{' '.join(cmd)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        self.proc = proc


def run_tool(cmd, timeout=600, check=True, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise ToolError(cmd, proc)
    return proc


def sanitized_build():
    """True for a make asan / make tsan build (OC_SANITIZE set in its CMake cache)."""
    try:
        with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(r"OC_SANITIZE:\w+=(.*)", line.strip())
                if m:
                    return m.group(1).upper() not in ("", "OFF", "FALSE", "NO", "0")
    except OSError:
        pass
    return False


def save_model(model, directory, name="model"):
    path = os.path.join(directory, f"{name}.onnx")
    onnx.save(model, path)
    return path


def atc_compile(onnx_path, out_stem, input_shapes=None, extra=(), check=True):
    """Runs atc; returns (om_path, CompletedProcess)."""
    cmd = [ATC, f"--model={onnx_path}", "--framework=5", f"--output={out_stem}"]
    if input_shapes:
        cmd.append("--input_shape=" + ";".join(f"{k}:{','.join(str(d) for d in v)}"
                                             for k, v in input_shapes.items()))
    cmd += list(extra)
    proc = run_tool(cmd, check=check)
    return out_stem + ".om", proc


def msame_run(om_path, inputs, workdir, loop=1, extra=(), check=True):
    """Runs msame on a list of numpy arrays; returns (outputs, CompletedProcess)."""
    paths = []
    for i, arr in enumerate(inputs):
        p = os.path.join(workdir, f"input_{i}.npy")
        np.save(p, np.asarray(arr, order="C"))  # not ascontiguousarray: it makes a 0-d array 1-d
        paths.append(p)
    out_dir = os.path.join(workdir, "out")
    os.makedirs(out_dir, exist_ok=True)
    cmd = [MSAME, "--model", om_path, "--output", out_dir, "--outfmt", "NPY", "--loop", str(loop)]
    if paths:
        cmd += ["--input", ",".join(paths)]
    cmd += list(extra)
    proc = run_tool(cmd, check=check)
    if proc.returncode != 0:
        return None, proc
    stem = os.path.splitext(os.path.basename(om_path))[0]
    outs = []
    i = 0
    while os.path.exists(os.path.join(out_dir, f"{stem}_output_{i}.npy")):
        outs.append(np.load(os.path.join(out_dir, f"{stem}_output_{i}.npy")))
        i += 1
    return outs, proc


def ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_close(actual, expected, rtol=1e-3, atol=1e-5, what="output"):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} vs reference {expected.shape}"
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} vs reference {expected.dtype}"
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def compile_and_compare(model, feeds, rtol=1e-3, atol=1e-5, input_shapes=None, extra_atc=()):
    """Compiles `model` with atc, runs it with msame on `feeds` (dict name->array,
    in graph-input order) and compares every output with onnxruntime's."""
    expected = ort_run(model, feeds)
    with tempfile.TemporaryDirectory() as d:
        path = save_model(model, d)
        if input_shapes is None:
            input_shapes = {k: list(v.shape) for k, v in feeds.items()}
        om, _ = atc_compile(path, os.path.join(d, "model"), input_shapes, extra_atc)
        outs, _ = msame_run(om, list(feeds.values()), d)
    assert len(outs) == len(expected), f"{len(outs)} outputs vs reference {len(expected)}"
    for i, (a, e) in enumerate(zip(outs, expected)):
        assert_close(a, e, rtol, atol, what=f"output {i} ({model.graph.output[i].name})")
    return outs

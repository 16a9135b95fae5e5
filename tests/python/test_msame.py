"""msame end to end: correct runs in every output format (checked against
onnxruntime), and refusal of bad inputs with a clear message and a non-zero
exit code."""
import os
import subprocess

import numpy as np
import pytest

import acl_models
import oc_harness


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("msame_model")
    m = acl_models.two_io_model()
    _, om = acl_models.compile_model(m, str(d))
    return m, om


def inputs():
    rng = np.random.default_rng(3)
    return rng.standard_normal((2, 8)).astype(np.float32), rng.standard_normal((2, 4)).astype(np.float32)


def msame(args, timeout=300):
    return subprocess.run([oc_harness.MSAME] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout)


def save_inputs(tmp_path, x, y):
    px, py = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(px, x)
    np.save(py, y)
    return f"{px},{py}"


def test_npy_outputs_match_onnxruntime(model, tmp_path):
    m, om = model
    x, y = inputs()
    outs, proc = oc_harness.msame_run(om, [x, y], str(tmp_path), loop=5)
    ref = oc_harness.ort_run(m, {"x": x, "y": y})
    assert len(outs) == 2
    for got, want in zip(outs, ref):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for word in ("latency ms min", "max", "mean", "median", "p99", "throughput", "inferences/s"):
        assert word in proc.stdout


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_flag(model, tmp_path, threads):
    # --threads sets the kernel pool through aclrtSetOpExecuteThreads; results
    # must not depend on the thread count.
    m, om = model
    x, y = inputs()
    outs, proc = oc_harness.msame_run(om, [x, y], str(tmp_path), loop=3, extra=("--threads", str(threads)))
    assert proc.returncode == 0, proc.stderr
    assert f"kernel threads: {threads}" in proc.stdout
    for got, want in zip(outs, oc_harness.ort_run(m, {"x": x, "y": y})):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bin_and_txt_outputs(model, tmp_path):
    m, om = model
    x, y = inputs()
    ref = oc_harness.ort_run(m, {"x": x, "y": y})
    for fmt in ("BIN", "TXT"):
        out = tmp_path / fmt
        proc = msame(["--model", om, "--input", save_inputs(tmp_path, x, y), "--output", out, "--outfmt", fmt])
        assert proc.returncode == 0, proc.stderr
        stem = os.path.splitext(os.path.basename(om))[0]
        for i, want in enumerate(ref):
            path = out / f"{stem}_output_{i}.{fmt.lower()}"
            got = np.fromfile(path, dtype=np.float32) if fmt == "BIN" else np.loadtxt(path, dtype=np.float32)
            np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-5)


def test_raw_bin_inputs_and_npy_v2_v3(model, tmp_path):
    m, om = model
    x, y = inputs()
    px = tmp_path / "x.bin"
    x.tofile(px)
    py = tmp_path / "y_v3.npy"
    with open(py, "wb") as f:
        np.lib.format.write_array(f, y, version=(3, 0))
    proc = msame(["--model", om, "--input", f"{px},{py}", "--output", tmp_path / "o", "--outfmt", "NPY"])
    assert proc.returncode == 0, proc.stderr
    stem = os.path.splitext(os.path.basename(om))[0]
    got = np.load(tmp_path / "o" / f"{stem}_output_0.npy")
    np.testing.assert_allclose(got, oc_harness.ort_run(m, {"x": x, "y": y})[0], rtol=1e-5, atol=1e-5)
    py2 = tmp_path / "y_v2.npy"
    with open(py2, "wb") as f:
        np.lib.format.write_array(f, y, version=(2, 0))
    assert msame(["--model", om, "--input", f"{px},{py2}"]).returncode == 0


def test_zero_filled_inputs_without_input_flag(model, tmp_path):
    m, om = model
    proc = msame(["--model", om, "--output", tmp_path, "--outfmt", "NPY", "--loop", "3"])
    assert proc.returncode == 0, proc.stderr
    assert "zero-filled" in proc.stdout
    zeros = {"x": np.zeros((2, 8), np.float32), "y": np.zeros((2, 4), np.float32)}
    stem = os.path.splitext(os.path.basename(om))[0]
    np.testing.assert_allclose(np.load(tmp_path / f"{stem}_output_0.npy"), oc_harness.ort_run(m, zeros)[0])


def expect_failure(proc, *fragments):
    assert proc.returncode != 0, proc.stdout
    for frag in fragments:
        assert frag in proc.stderr, f"{frag!r} not in:\n{proc.stderr}"


def test_wrong_size_bin_is_refused(model, tmp_path):
    _, om = model
    x, y = inputs()
    bad = tmp_path / "x.bin"
    np.zeros(15, np.float32).tofile(bad)
    np.save(tmp_path / "y.npy", y)
    proc = msame(["--model", om, "--input", f"{bad},{tmp_path / 'y.npy'}"])
    expect_failure(proc, "input 0 ('x')", "size mismatch", "expects 64 bytes", "holds 60")


def test_wrong_dtype_npy_is_refused(model, tmp_path):
    _, om = model
    x, y = inputs()
    proc = msame(["--model", om, "--input", save_inputs(tmp_path, x.astype(np.float64), y)])
    expect_failure(proc, "input 0 ('x')", "dtype mismatch", "float32", "float64")


def test_wrong_shape_npy_is_refused(model, tmp_path):
    _, om = model
    x, y = inputs()
    proc = msame(["--model", om, "--input", save_inputs(tmp_path, x, y.reshape(4, 2))])
    expect_failure(proc, "input 1 ('y')", "shape mismatch", "(2,4)", "(4,2)")


def test_fortran_order_and_big_endian_npy_are_refused(model, tmp_path):
    _, om = model
    x, y = inputs()
    proc = msame(["--model", om, "--input", save_inputs(tmp_path, np.asfortranarray(x), y)])
    expect_failure(proc, "fortran_order")
    proc = msame(["--model", om, "--input", save_inputs(tmp_path, x.astype(">f4"), y)])
    expect_failure(proc, "big-endian")
    save_inputs(tmp_path, x, y)
    trunc = tmp_path / "trunc.npy"
    trunc.write_bytes((tmp_path / "x.npy").read_bytes()[:-4])
    proc = msame(["--model", om, "--input", f"{trunc},{tmp_path / 'y.npy'}"])
    expect_failure(proc, "data bytes")


def test_missing_input_file_and_wrong_count(model, tmp_path):
    _, om = model
    proc = msame(["--model", om, "--input", f"{tmp_path / 'nope.bin'},{tmp_path / 'nope2.bin'}"])
    expect_failure(proc, "cannot open", "nope.bin")
    x, _ = inputs()
    np.save(tmp_path / "x.npy", x)
    proc = msame(["--model", om, "--input", tmp_path / "x.npy"])
    expect_failure(proc, "lists 1 files", "2 inputs")


def test_corrupt_and_missing_model(tmp_path):
    bad = tmp_path / "bad.om"
    bad.write_bytes(np.random.default_rng(5).bytes(3000))
    expect_failure(msame(["--model", bad]), "aclmdlLoadFromFile failed", str(bad))
    expect_failure(msame(["--model", tmp_path / "missing.om"]), "aclmdlLoadFromFile failed", "missing.om")


def test_command_line_errors(model, tmp_path):
    _, om = model
    proc = msame(["--help"])
    assert proc.returncode == 0 and "--model" in proc.stdout
    expect_failure(msame(["--model", om, "--bogus"]), "unknown argument")
    expect_failure(msame(["--model", om, "--loop", "0"]), "--loop")
    expect_failure(msame(["--model", om, "--outfmt", "XML"]), "--outfmt")
    for bad in ("0", "257", "two", ""):
        expect_failure(msame(["--model", om, "--threads", bad]), "--threads")
    expect_failure(msame([]), "--model is required")
    expect_failure(msame(["--model", om, "--device", "8"]), "aclrtSetDevice failed", "deviceId 8")
    # Another of the 8 logical CPU devices runs the model.
    proc = msame(["--model", om, "--device", "3"])
    assert proc.returncode == 0, proc.stdout + proc.stderr

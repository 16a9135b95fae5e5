"""AscendCL applications (tests/acl_app/*.c, built against the public headers
and -lascendcl) run on a model compiled by atc; results are checked against
onnxruntime."""
import os
import subprocess

import numpy as np
import pytest

import acl_models
import oc_harness


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("acl_model")
    m = acl_models.two_io_model()
    onnx_path, om_path = acl_models.compile_model(m, str(d))
    return m, om_path


def run_app(name, args, cwd, env=None, timeout=300):
    exe = acl_models.app_path(name)
    if not os.path.exists(exe):
        pytest.fail(f"{exe} is not built (ninja {name})")
    return subprocess.run([exe] + list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_canonical_flow_matches_onnxruntime(model, tmp_path):
    m, om = model
    proc = run_app("acl_canonical", [om, str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout
    x = np.fromfile(tmp_path / "input_0.bin", dtype=np.float32).reshape(2, 8)
    y = np.fromfile(tmp_path / "input_1.bin", dtype=np.float32).reshape(2, 4)
    ref = oc_harness.ort_run(m, {"x": x, "y": y})
    out = np.fromfile(tmp_path / "output_0.bin", dtype=np.float32).reshape(2, 4)
    sq = np.fromfile(tmp_path / "output_1.bin", dtype=np.float32).reshape(2, 8)
    np.testing.assert_allclose(out, ref[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sq, ref[1], rtol=1e-6, atol=0)


def test_misuse_returns_documented_codes(model, tmp_path):
    _, om = model
    proc = run_app("acl_misuse", [om], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout


def test_misuse_without_model(tmp_path):
    proc = run_app("acl_misuse", [], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_concurrent_executions_of_one_model(model, tmp_path):
    _, om = model
    proc = run_app("acl_concurrency", [om, "6", "60"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout


def test_library_logging_is_off_by_default_and_follows_env(model, tmp_path):
    _, om = model
    env = dict(os.environ)
    env.pop("ASCEND_GLOBAL_LOG_LEVEL", None)
    quiet = run_app("acl_misuse", [om], cwd=tmp_path, env=env)
    assert quiet.returncode == 0
    assert "[OpenCANN]" not in quiet.stderr
    env["ASCEND_GLOBAL_LOG_LEVEL"] = "3"
    loud = run_app("acl_misuse", [om], cwd=tmp_path, env=env)
    assert loud.returncode == 0
    assert "[OpenCANN][ERROR] aclrtSetDevice: AscendCL is not initialised" in loud.stderr
    assert "[OpenCANN][INFO]" not in loud.stderr
    env["ASCEND_GLOBAL_LOG_LEVEL"] = "1"
    info = run_app("acl_canonical", [om], cwd=tmp_path, env=env)
    assert info.returncode == 0
    assert "[OpenCANN][INFO] loaded model file" in info.stderr


def test_host_callbacks_run_on_the_subscribed_thread_in_stream_order(tmp_path):
    proc = run_app("acl_callback", [], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout

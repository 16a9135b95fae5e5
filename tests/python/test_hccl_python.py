"""The Python hccl package: a data-parallel training script on 3 ranks ends
with the weights of full-batch gradient descent computed here with numpy."""
import os
import subprocess
import sys

import numpy as np

import pyacl_harness

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hccl_py", "data_parallel_sgd.py")


def test_data_parallel_sgd_matches_full_batch_numpy(tmp_path):
    env = pyacl_harness.pyacl_env()
    procs = [subprocess.Popen([sys.executable, SCRIPT, str(r), "3", str(tmp_path / "root"), str(tmp_path)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) for r in range(3)]
    for p in procs:
        out, _ = p.communicate(timeout=180)
        assert p.returncode == 0, out
    rng = np.random.default_rng(7)
    x = rng.standard_normal((96, 5))
    y = x @ np.array([1.5, -2.0, 0.5, 3.0, -1.0]) + 0.1 * rng.standard_normal(96)
    w = np.zeros(5)
    for _ in range(40):
        w -= 0.01 * (2 * x.T @ (x @ w - y)) / 96
    for r in range(3):
        got = np.load(tmp_path / f"w{r}.npy")
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)


def test_errors_are_return_codes(tmp_path):
    code = ("import hccl, acl; acl.init(); "
            "c, r = hccl.comm_init_root_info(1, b'x' * hccl.HCCL_ROOT_INFO_BYTES, 0); "
            "print('RET', r, hccl.get_error_string(r)); "
            "print('SIZE', hccl.get_rank_size(0)[1])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=pyacl_harness.pyacl_env(),
                       timeout=60)
    assert "RET 1 parameter error" in p.stdout, p.stdout + p.stderr  # HCCL_E_PARA: not a root info
    assert "SIZE 1" in p.stdout, p.stdout

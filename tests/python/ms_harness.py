"""Running the mindspore package's tests in the test process, or — on a
sanitizer build, whose libms_backend.so needs the sanitizer runtime loaded
before it — in a child interpreter that preloads it (as test_dvpp.py does)."""
import os
import subprocess
import sys

import oc_harness

HERE = os.path.dirname(os.path.abspath(__file__))


def needs_child():
    return oc_harness.sanitized_build() and "LD_PRELOAD" not in os.environ


def preloaded_test(cases_file, timeout=1800):
    """A test running every test of `cases_file` in a child with the runtime preloaded."""
    def test_cases_with_the_sanitizer_runtime_preloaded():
        from pyacl_harness import pyacl_env
        env = pyacl_env()
        env["PYTHONPATH"] = os.pathsep.join([HERE, env.get("PYTHONPATH", "")])
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               os.path.join(HERE, cases_file)], cwd=HERE, env=env, capture_output=True, text=True,
                              timeout=timeout)
        assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-4000:]
    return test_cases_with_the_sanitizer_runtime_preloaded

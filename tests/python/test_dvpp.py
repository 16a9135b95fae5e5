"""DVPP media calls through pyACL's acl.media against PIL, libjpeg, OpenCV and
numpy (the tests are in dvpp_cases.py; docs/dvpp.md lists them).

They load libascendcl.so into the test process. A sanitizer build's library
needs the sanitizer runtime loaded first, so there the same tests run in a
child interpreter that preloads it (as tests/python/pyacl_harness.py does for
pyACL applications)."""
import os
import subprocess
import sys

import oc_harness

if oc_harness.sanitized_build() and "LD_PRELOAD" not in os.environ:
    from pyacl_harness import pyacl_env

    def test_dvpp_cases_with_the_sanitizer_runtime_preloaded():
        here = os.path.dirname(os.path.abspath(__file__))
        env = pyacl_env()
        env["PYTHONPATH"] = os.pathsep.join([here, env.get("PYTHONPATH", "")])
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               os.path.join(here, "test_dvpp.py")], cwd=here, env=env, capture_output=True,
                              text=True, timeout=1200)
        assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-4000:]
else:
    from dvpp_cases import *  # noqa: F401,F403  (the tests and their fixture)

"""Running pyACL-style applications in their own interpreter (as users run
them), with the `acl` package of python/ and the build's libascendcl.so."""
import json
import os
import subprocess
import sys
import textwrap

import oc_harness

PYTHON_DIR = os.path.join(oc_harness.SOURCE_DIR, "python")
APPS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyacl")


def pyacl_env():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, APPS_DIR]), OC_BUILD_DIR=oc_harness.BUILD_DIR)
    if oc_harness.sanitized_build():
        # The sanitizer runtime must be loaded before the instrumented library.
        cache = open(os.path.join(oc_harness.BUILD_DIR, "CMakeCache.txt")).read()
        runtime = "libtsan.so" if "OC_SANITIZE:STRING=thread" in cache else "libasan.so"
        lib = subprocess.run(["c++", f"-print-file-name={runtime}"], capture_output=True, text=True).stdout.strip()
        env["LD_PRELOAD"] = lib
        env["ASAN_OPTIONS"] = "detect_leaks=0"  # the interpreter's own allocations
    return env


def run_py(args, check=True):
    proc = subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=300, env=pyacl_env())
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def run_snippet(code):
    """Runs `code` (which prints one JSON line last) in a fresh interpreter."""
    proc = run_py(["-c", textwrap.dedent(code)])
    return json.loads(proc.stdout.strip().splitlines()[-1])

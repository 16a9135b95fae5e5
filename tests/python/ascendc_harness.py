"""Where the Ascend C tests find the build, and how they compile a program with
build/ascendc++ as a user does."""
import os
import subprocess

BUILD = os.environ.get("OC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
SRC = os.environ.get("OC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
DRIVER = os.path.join(BUILD, "ascendc++")
SAMPLES = os.path.join(SRC, "samples", "ascendc")


def compile_program(out_dir, name, *sources, flags=(), libs=()):
    """ascendc++ FLAGS SOURCES LIBS -o out_dir/name; fails the test with the compiler's output."""
    exe = os.path.join(out_dir, name)
    proc = subprocess.run([DRIVER, *flags, *sources, *libs, "-o", exe], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return exe

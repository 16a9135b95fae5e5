"""Compiles the stress test's two models (a small ResNet and a BERT-style
encoder from tests/python/model_zoo.py) with atc and runs acl_stress on them.

Usage: run_stress.py PATH/TO/acl_stress [extra acl_stress arguments]
Environment: OC_BUILD_DIR (where atc is), OC_ATC (another atc, e.g. a
Release one when this build is sanitized), OC_STRESS_RUNS (runs per thread),
OC_STRESS_CYCLES (load/unload cycles), OC_STRESS_FIXED (fixed-shape runs),
OC_STRESS_THREADS, OC_STRESS_RSS_BOUND_KIB (allowed RSS growth; sanitizer
runtimes hold freed memory in quarantine, so their builds raise it). Defaults size the run at ~30-60 s in a Release build; the
sanitizer targets (make asan / make tsan) lower them."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import model_zoo  # noqa: E402
import oc_harness  # noqa: E402


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    exe = sys.argv[1]
    env = os.environ
    if env.get("OC_ATC"):
        oc_harness.ATC = env["OC_ATC"]
    with tempfile.TemporaryDirectory(prefix="oc_stress_") as d:
        oms = []
        for name, model in (("resnet", model_zoo.resnet(batch=1, size=64)),
                            ("transformer", model_zoo.transformer_encoder())):
            onnx_path = oc_harness.save_model(model, d, name)
            om, _ = oc_harness.atc_compile(onnx_path, os.path.join(d, name))
            oms.append(om)
        cmd = [exe, *oms,
               "--threads", env.get("OC_STRESS_THREADS", "8"),
               "--runs", env.get("OC_STRESS_RUNS", "12000"),
               "--streams", "4",
               "--cycles", env.get("OC_STRESS_CYCLES", "1000"),
               "--fixed", env.get("OC_STRESS_FIXED", "2000"),
               "--rss-bound-kib", env.get("OC_STRESS_RSS_BOUND_KIB", "4096"),
               *sys.argv[2:]]
        print(" ".join(cmd), flush=True)
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())

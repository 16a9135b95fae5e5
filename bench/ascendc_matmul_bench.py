#!/usr/bin/env python3
"""The Ascend C Matmul sample (samples/ascendc/matmul, the high-level Matmul API
on the CPU) against the project's own sgemm at the same shape, in the same
run, alternating (docs/benchmarks.md, "Ascend C Matmul"). Builds the sample
with build/ascendc++ (fast mode) and bench/ascendc_matmul_sgemm.cc against
build/liboc_core.a (the GEMM the Matmul API calls), then runs them in
alternating rounds and prints the median time of each and their ratio.
Usage: python3 bench/ascendc_matmul_bench.py [--rounds 5] [--threads 2] [--repeats 15]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

import ml_dtypes
import numpy as np

from bench_host import cpu_model  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.environ.get("OC_BUILD_DIR", os.path.join(ROOT, "build"))
DRIVER = os.path.join(BUILD, "ascendc++")
SAMPLE = os.path.join(ROOT, "samples", "ascendc", "matmul")
SHAPES = [(1024, 1024, 1024), (512, 2048, 768)]




def build(tmp):
    sample = os.path.join(tmp, "matmul_custom")
    subprocess.run([DRIVER, "--fast", os.path.join(SAMPLE, "main.cpp"), os.path.join(SAMPLE, "matmul_custom.cpp"),
                    "-o", sample], check=True)
    sgemm = os.path.join(tmp, "sgemm")
    subprocess.run(["g++", "-std=c++20", "-O2", "-pthread", "-I" + os.path.join(ROOT, "src"),
                    "-I" + os.path.join(ROOT, "include"), os.path.join(ROOT, "bench", "ascendc_matmul_sgemm.cc"),
                    os.path.join(BUILD, "liboc_core.a"), "-o", sgemm], check=True)
    return sample, sgemm


def ms(cmd, env):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median ([\d.]+) ms", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--blocks", type=int, nargs="+", default=[2, 8])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ascendc_matmul_bench")
    sample, sgemm = build(tmp)
    env = dict(os.environ, OPENCANN_NUM_THREADS=str(a.threads))
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_model()}, {a.threads} threads, {a.rounds} rounds x {a.repeats} launches, median of medians")
    print(f"{'M x N x K':>18} {'dtype':>6} {'blocks':>6} {'Matmul ms':>10} {'sgemm ms':>9} {'GFLOP/s':>8} "
          f"{'vs sgemm':>8}")
    for (m, n, k) in SHAPES:
        files = {}
        for dtype, t in (("float", np.float32), ("half", np.float16), ("bf16", ml_dtypes.bfloat16)):
            pa, pb = os.path.join(tmp, f"a_{dtype}.bin"), os.path.join(tmp, f"b_{dtype}.bin")
            rng.uniform(-1, 1, (m, k)).astype(t).tofile(pa)
            rng.uniform(-1, 1, (k, n)).astype(t).tofile(pb)
            files[dtype] = (pa, pb)
        pbias = os.path.join(tmp, "bias.bin")
        rng.uniform(-1, 1, n).astype(np.float32).tofile(pbias)
        cases = [(d, blocks) for d in ("float", "half", "bf16") for blocks in a.blocks]
        times = {c: [] for c in cases}
        ref = []
        for _ in range(a.rounds):
            for (dtype, blocks) in cases:  # alternate: sgemm, then each Matmul case
                ref.append(ms([sgemm, str(m), str(n), str(k), str(a.repeats)], env))
                pa, pb = files[dtype]
                times[(dtype, blocks)].append(ms([sample, "--dtype", dtype, str(m), str(n), str(k), str(blocks), pa,
                                                  pb, pbias, os.path.join(tmp, "c.bin"), str(a.repeats)], env))
        s = statistics.median(ref)
        for (dtype, blocks), v in times.items():
            t = statistics.median(v)
            print(f"{f'{m} x {n} x {k}':>18} {dtype:>6} {blocks:>6} {t:>10.2f} {s:>9.2f} "
                  f"{2.0 * m * n * k / (t * 1e6):>8.1f} {s / t:>7.0%}")


if __name__ == "__main__":
    main()

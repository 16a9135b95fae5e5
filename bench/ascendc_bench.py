#!/usr/bin/env python3
"""Ascend C kernels on the CPU against the machine's memory bandwidth
(docs/benchmarks.md, "Ascend C"). Builds the samples with build/ascendc++ in
fast and checking mode and bench/membw.cc (the bandwidth probe: memcpy, a plain
add loop and an add loop with non-temporal stores over the same bytes), then
runs them in alternating rounds and prints medians. Usage: python3 bench/ascendc_bench.py [--rounds 5] [--threads 2]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

import numpy as np

from bench_host import cpu_model  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.environ.get("OC_BUILD_DIR", os.path.join(ROOT, "build"))
DRIVER = os.path.join(BUILD, "ascendc++")
S = os.path.join(ROOT, "samples", "ascendc")




def build(tmp):
    exe = {}
    for mode in ("fast", "check"):
        for name in ("leaky_relu", "add_tiled"):
            out = os.path.join(tmp, f"{name}_{mode}")
            subprocess.run([DRIVER, f"--{mode}", os.path.join(S, name, "main.cpp"), os.path.join(S, name, name + ".cpp"),
                            "-o", out], check=True)
            exe[(name, mode)] = out
    exe["membw"] = os.path.join(tmp, "membw")
    subprocess.run(["g++", "-O2", "-march=native", "-pthread", os.path.join(ROOT, "bench", "membw.cc"), "-o",
                    exe["membw"]], check=True)
    return exe


def gbs(cmd, env, cwd):
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"([\d.]+) GB/s", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mib", type=int, default=64)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ascendc_bench")
    exe = build(tmp)
    env = dict(os.environ, OPENCANN_NUM_THREADS=str(a.threads))
    halves = a.mib * 1024 * 1024 // 2
    floats = a.mib * 1024 * 1024 // 4
    rng = np.random.default_rng(0)
    rng.standard_normal(halves).astype(np.float16).tofile(os.path.join(tmp, "h.bin"))
    rng.standard_normal(floats).astype(np.float32).tofile(os.path.join(tmp, "x.bin"))
    rng.standard_normal(floats).astype(np.float32).tofile(os.path.join(tmp, "y.bin"))
    # One block per thread (as blockDim is the AI core count on the NPU); LeakyReLU
    # in tiles of 16 Ki halves, add in tiles of 8 Ki floats (double-buffered,
    # 128 and 192 KiB of the Unified Buffer).
    blocks = str(a.threads)
    runs = {
        "memcpy": [exe["membw"], "copy", str(a.threads), str(a.mib), "20"],
        "plain add loop": [exe["membw"], "add", str(a.threads), str(a.mib), "20"],
        "add loop, non-temporal stores": [exe["membw"], "add_nt", str(a.threads), str(a.mib), "20"],
    }
    for mode in ("fast", "check"):
        runs[f"LeakyReLU half ({mode})"] = [exe[("leaky_relu", mode)], str(halves), blocks,
                                            str(halves // a.threads // 2 // 16384),
                                            "0.1", "h.bin", "o.bin", "20"]
        runs[f"Add float ({mode})"] = [exe[("add_tiled", mode)], str(floats), blocks, "8192", "x.bin", "y.bin", "z.bin",
                                       "20"]
    results = {k: [] for k in runs}
    for _ in range(a.rounds):
        for k, cmd in runs.items():
            results[k].append(gbs(cmd, env, tmp))
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"CPU: {cpu_model()}; {a.threads} threads; {a.mib} MiB per tensor; medians of {a.rounds} alternating rounds "
          "(each the median of 20 launches)\n")
    # Each kernel also against the plainest code moving the same streams at
    # the machine's best (memcpy for LeakyReLU's read + write, the
    # non-temporal add loop for add's two reads + write).
    same = {"LeakyReLU": "memcpy", "Add": "add loop, non-temporal stores"}
    print("| run | GB/s (bytes read + written / time) | share of memcpy | share of the same traffic's best loop |")
    print("| --- | --- | --- | --- |")
    for k, v in med.items():
        ref = next((r for op, r in same.items() if k.startswith(op)), None)
        print(f"| {k} | {v:.2f} | {v / med['memcpy']:.2f} | {f'{v / med[ref]:.2f}' if ref else ''} |")
    for op in ("LeakyReLU half", "Add float"):
        print(f"\nchecking mode costs {op}: {med[op + ' (fast)'] / med[op + ' (check)']:.2f}x")


if __name__ == "__main__":
    main()

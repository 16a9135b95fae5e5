#!/usr/bin/env python3
"""Bus bandwidth of our HCCL (hccl_test binaries) against OpenMPI's collectives
(bench/mpi_collectives_bench.c) on this host, in the same run, alternating
rounds; medians per size. Also a one-thread memcpy for scale.

    python3 bench/hccl_bench.py --ranks 2,4 --ops allreduce,allgather,reducescatter,alltoall \
        --min 1K --max 64M --rounds 3

Prints a markdown table (docs/benchmarks.md keeps the results)."""
import argparse
import os
import platform
import statistics
import subprocess
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = {"allreduce": "all_reduce_test", "allgather": "all_gather_test", "reducescatter": "reduce_scatter_test",
        "alltoall": "alltoall_test"}


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def run(cmd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HCCL_LOG="0")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    rows = {}
    for line in p.stdout.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 5 and cells[0].replace(".", "").isdigit():
            rows[int(float(cells[0]))] = (float(cells[1]), float(cells[4]))
    return rows


def memcpy_gbs(nbytes=64 << 20, reps=20):
    a = np.ones(nbytes, np.uint8)
    b = np.empty_like(a)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        np.copyto(b, a)
        times.append(time.perf_counter() - t)
    return nbytes / statistics.median(times) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--ops", default="allreduce,allgather,reducescatter,alltoall")
    ap.add_argument("--min", default="1K")
    ap.add_argument("--max", default="64M")
    ap.add_argument("--factor", default="8")
    ap.add_argument("--iters", default="10")
    ap.add_argument("--warmup", default="3")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(f"host: {cpu_model()}, {os.cpu_count()} cores; one-thread memcpy of 64 MiB: {memcpy_gbs():.1f} GB/s\n")
    print("| op | ranks | size | ours us | MPI us | ours bus GB/s | MPI bus GB/s | ours / MPI bus bw |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    common = ["-b", a.min, "-e", a.max, "-f", a.factor, "-n", a.iters, "-w", a.warmup]
    for op in a.ops.split(","):
        for n in [int(x) for x in a.ranks.split(",")]:
            mpirun = ["mpirun", "--oversubscribe", "-n", str(n)]
            ours, theirs = [], []
            for _ in range(a.rounds):  # alternating, so both see the same host state
                ours.append(run(mpirun + [os.path.join(a.build, OURS[op])] + common + ["-c", "0", "-d", "fp32"]))
                theirs.append(run(mpirun + [os.path.join(a.build, "mpi_collectives_bench"), op] + common))
            for size in sorted(ours[0]):
                o_us = statistics.median(r[size][0] for r in ours)
                o_bw = statistics.median(r[size][1] for r in ours)
                m_us = statistics.median(r[size][0] for r in theirs if size in r)
                m_bw = statistics.median(r[size][1] for r in theirs if size in r)
                ratio = o_bw / m_bw if m_bw else float("nan")
                print(f"| {op} | {n} | {size} | {o_us:.1f} | {m_us:.1f} | {o_bw:.3f} | {m_bw:.3f} | {ratio:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()

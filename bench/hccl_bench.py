#!/usr/bin/env python3
"""Bus bandwidth of our HCCL (hccl_test binaries) against OpenMPI's collectives
(bench/mpi_collectives_bench.c) and, when torch is installed, torch.distributed's
gloo backend (bench/torch_gloo_bench.py) on this host, in the same run,
alternating rounds; medians per size. Also a one-thread memcpy for scale.

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
    if "unsupported:" in p.stdout:
        return rows
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
    try:
        import torch  # noqa: F401
        torch_ok = True
    except ImportError:
        torch_ok = False
    print("| op | ranks | size | ours us | MPI us | torch gloo us | ours bus GB/s | MPI bus GB/s | torch gloo bus GB/s "
          "| ours / best peer bus bw |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    common = ["-b", a.min, "-e", a.max, "-f", a.factor, "-n", a.iters, "-w", a.warmup]
    for op in a.ops.split(","):
        for n in [int(x) for x in a.ranks.split(",")]:
            mpirun = ["mpirun", "--oversubscribe", "-n", str(n)]
            ours, mpi, tg = [], [], []
            for _ in range(a.rounds):  # alternating, so every peer sees the same host state
                ours.append(run(mpirun + [os.path.join(a.build, OURS[op])] + common + ["-c", "0", "-d", "fp32"]))
                mpi.append(run(mpirun + [os.path.join(a.build, "mpi_collectives_bench"), op] + common))
                if torch_ok:
                    tg.append(run(["python3", os.path.join(ROOT, "bench", "torch_gloo_bench.py"), op, str(n)] + common))

            def med(results, size, k):
                vals = [r[size][k] for r in results if size in r]
                return statistics.median(vals) if vals else float("nan")

            for size in sorted(ours[0]):
                o_us, o_bw = med(ours, size, 0), med(ours, size, 1)
                m_us, m_bw = med(mpi, size, 0), med(mpi, size, 1)
                t_us, t_bw = med(tg, size, 0), med(tg, size, 1)
                best = max(b for b in (m_bw, t_bw) if b == b) if m_bw == m_bw or t_bw == t_bw else float("nan")
                print(f"| {op} | {n} | {size} | {o_us:.1f} | {m_us:.1f} | {t_us:.1f} | {o_bw:.3f} | {m_bw:.3f} | "
                      f"{t_bw:.3f} | {o_bw / best:.2f} |", flush=True)


if __name__ == "__main__":
    main()

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
import statistics
import subprocess
import time

import numpy as np

from bench_host import cpu_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = {"allreduce": "all_reduce_test", "allgather": "all_gather_test", "reducescatter": "reduce_scatter_test",
        "alltoall": "alltoall_test"}




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
    ap.add_argument("--small", default="64K",
                    help="sizes up to this run in their own sweep with --small-iters iterations (latency)")
    ap.add_argument("--small-iters", default="1000")
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
    def size(text):
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)

    # Two sweeps per peer and round: the small sizes with many iterations
    # (their time is latency: a few iterations would mostly time the start),
    # the rest with --iters.
    lo, hi, split, factor = size(a.min), size(a.max), size(a.small), int(a.factor)
    sweeps = []
    if lo <= split:
        sweeps.append(["-b", str(lo), "-e", str(min(hi, split)), "-f", a.factor, "-n", a.small_iters, "-w", "50"])
    first_large = lo
    while first_large <= split:
        first_large *= factor
    if first_large <= hi:
        sweeps.append(["-b", str(first_large), "-e", str(hi), "-f", a.factor, "-n", a.iters, "-w", a.warmup])
    for op in a.ops.split(","):
        for n in [int(x) for x in a.ranks.split(",")]:
            mpirun = ["mpirun", "--oversubscribe", "-n", str(n)]
            ours, mpi, tg = [], [], []
            for _ in range(a.rounds):  # alternating, so every peer sees the same host state
                o, m, t = {}, {}, {}
                for common in sweeps:
                    o.update(run(mpirun + [os.path.join(a.build, OURS[op])] + common + ["-c", "0", "-d", "fp32"]))
                    m.update(run(mpirun + [os.path.join(a.build, "mpi_collectives_bench"), op] + common))
                    if torch_ok:  # at most 100 iterations: its small sizes take milliseconds each
                        tcommon = list(common)
                        tcommon[tcommon.index("-n") + 1] = str(min(int(tcommon[tcommon.index("-n") + 1]), 100))
                        t.update(run(["python3", os.path.join(ROOT, "bench", "torch_gloo_bench.py"), op, str(n)] + tcommon))
                ours.append(o)
                mpi.append(m)
                if torch_ok:
                    tg.append(t)

            def med(results, size, k):
                vals = [r[size][k] for r in results if size in r]
                return statistics.median(vals) if vals else float("nan")

            for nbytes in sorted(ours[0]):
                o_us, o_bw = med(ours, nbytes, 0), med(ours, nbytes, 1)
                m_us, m_bw = med(mpi, nbytes, 0), med(mpi, nbytes, 1)
                t_us, t_bw = med(tg, nbytes, 0), med(tg, nbytes, 1)
                best = max(b for b in (m_bw, t_bw) if b == b) if m_bw == m_bw or t_bw == t_bw else float("nan")
                print(f"| {op} | {n} | {nbytes} | {o_us:.1f} | {m_us:.1f} | {t_us:.1f} | {o_bw:.3f} | {m_bw:.3f} | "
                      f"{t_bw:.3f} | {o_bw / best:.2f} |", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What profiling costs: one model's aclmdlExecute latency (bench/model_bench)
with profiling off, on (run under msprof: every node, API call and copy
recorded), and from a build without the hooks (cmake -DOC_NO_TRACE=ON).

The three variants alternate round by round (so load drift on a shared machine
falls on all three) and the latencies of all rounds are pooled; the figure is
the median. The CPU seconds of each whole process (load, warm-up, runs; for
"on" also msprof's merge and report writing) are less sensitive to other load
than wall time. docs/profiling.md quotes the output.

  python3 bench/prof_overhead.py --model resnet50.om --build build \\
      --nohook-build build-notrace --rounds 8 --runs 10
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def bench(build, model, runs, warmup, msprof=None, env=None):
    """(run latencies in ms, CPU seconds of the whole process, msprof output dir)."""
    cmd = [os.path.join(build, "model_bench"), model, "--warmup", str(warmup), "--runs", str(runs)]
    out_dir = None
    if msprof:
        out_dir = tempfile.mkdtemp(prefix="prof_overhead_")
        cmd = [msprof, f"--output={out_dir}"] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = next(l for l in proc.stdout.splitlines() if l.startswith("{"))
    return json.loads(line)["run_ms"], cpu, out_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help=".om compiled by atc")
    ap.add_argument("--build", default="build", help="build directory with model_bench and msprof")
    ap.add_argument("--nohook-build", help="build configured with -DOC_NO_TRACE=ON (model_bench)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--runs", type=int, default=10, help="timed runs per round and variant")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="OPENCANN_NUM_THREADS (0: library default)")
    args = ap.parse_args()
    env = dict(os.environ)
    env.pop("OPENCANN_PROF_DIR", None)
    if args.threads:
        env["OPENCANN_NUM_THREADS"] = str(args.threads)
    msprof = os.path.join(args.build, "msprof")
    variants = [("off", lambda: bench(args.build, args.model, args.runs, args.warmup, env=env)),
                ("on (msprof)", lambda: bench(args.build, args.model, args.runs, args.warmup, msprof=msprof, env=env))]
    if args.nohook_build:
        variants.append(("no hooks (OC_NO_TRACE)",
                         lambda: bench(args.nohook_build, args.model, args.runs, args.warmup, env=env)))
    samples = {name: [] for name, _ in variants}
    cpu = {name: [] for name, _ in variants}
    nodes = None
    for r in range(args.rounds):
        order = variants if r % 2 == 0 else list(reversed(variants))
        for name, fn in order:
            ms, cpu_s, out_dir = fn()
            samples[name].extend(ms)
            cpu[name].append(cpu_s)
            if out_dir and nodes is None:
                import glob
                summary = glob.glob(os.path.join(out_dir, "PROF_*", "op_summary_*.csv"))
                if summary:
                    with open(summary[0]) as f:
                        nodes = sum(1 for _ in f) - 1
    base = statistics.median(samples["off"])
    base_cpu = statistics.median(cpu["off"])
    print(f"model {args.model}, {args.rounds} rounds x {args.runs} runs per variant, threads "
          f"{args.threads or 'default'}")
    for name, ms in samples.items():
        med = statistics.median(ms)
        print(f"  {name:24s} median {med:9.3f} ms  p10 {sorted(ms)[len(ms) // 10]:9.3f}  "
              f"p90 {sorted(ms)[(9 * len(ms)) // 10]:9.3f}  vs off {100.0 * (med - base) / base:+6.2f}%   "
              f"process CPU s median {statistics.median(cpu[name]):7.3f} "
              f"({100.0 * (statistics.median(cpu[name]) - base_cpu) / base_cpu:+6.2f}%)")
    if nodes:
        print(f"  (one msprof run recorded {nodes} node executions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

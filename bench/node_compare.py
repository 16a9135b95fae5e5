#!/usr/bin/env python3
"""Where a model's time goes, ours against onnxruntime, stage by stage.

Runs the compiled model with our per-node profile (OPENCANN_PROFILE_NODES,
bench/model_bench through the AscendCL API) and the ONNX model in onnxruntime
with enable_profiling, alternately for --rounds rounds, and prints per group of
nodes the median over rounds of each engine's time per run and the ratio.

Nodes are grouped by a regular expression over the ONNX node name (its first
group is the key; default: the first path component, so a torchvision export
groups as conv1 / layer1 .. layer4 / fc). Both engines rename some nodes:
onnxruntime names a fused node after an output (ResNet's stem shows up as
"relu", its 1x1 convs with a fused Relu as the Relu's output) and ours keeps
the first node of a fusion. --alias a=b merges group a into b. Totals cover
every node either side ran; the stage split is only as exact as the names.

Both engines' figures are means per call of steady-state calls, wall time, at
the same thread count (OPENCANN_NUM_THREADS / intra_op_num_threads, sequential
execution): ours from two processes of --runs and 2 x --runs calls (our
profile averages every call of a process, the first one included, so the
difference of the two totals is the cost of the extra --runs calls alone);
onnxruntime's from the calls after its first 5 (its profile marks each call).
Our profile prints whole microseconds per node, so nodes faster than ~1 us
count as 0.

  python3 bench/node_compare.py resnet50                      # ~/.cache/opencann/bench/resnet50.{om,onnx}
  python3 bench/node_compare.py resnet50 --threads 2 --rounds 5
  python3 bench/node_compare.py m --om m.om --onnx m.onnx --input x.bin --group '^/([^/]+/[^/]+)'
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.expanduser("~/.cache/opencann/bench")
PROFILE_LINE = re.compile(r"\[profile\]\s+([\d.]+) ms\s+(\S+)\s+(.*?)\s+-> ")
RUNS_LINE = re.compile(r"\[profile\] model '.*': (\d+) runs, ([\d.]+) ms per run in (\d+) nodes")


def group_of(name, pattern, aliases):
    m = pattern.search(name)
    key = m.group(1) if m else "(other)"
    return aliases.get(key, key)


def ours_process(args, runs, pattern, aliases):
    """Per-group ms per call over all `runs` calls of one process, and the call count."""
    env = dict(os.environ, OPENCANN_NUM_THREADS=str(args.threads), OPENCANN_PROFILE_NODES="1000000",
               OPENCANN_PROFILE_CLOCK="wall")
    out = subprocess.run([os.path.join(args.build, "model_bench"), args.om, "--input", args.input,
                          "--runs", str(runs), "--warmup", "0"], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("model_bench failed:\n" + out.stderr[-2000:])
    groups = collections.defaultdict(float)
    calls, nodes, listed = 0, 0, 0
    for line in out.stderr.splitlines():
        if m := RUNS_LINE.match(line):
            calls, nodes = int(m.group(1)), int(m.group(3))
        elif m := PROFILE_LINE.match(line):
            groups[group_of(m.group(3), pattern, aliases)] += float(m.group(1))
            listed += 1
    if not calls or listed != nodes:
        sys.exit(f"model_bench's profile listed {listed} of {nodes} nodes (calls {calls}): format changed?")
    return groups, calls


def ours_round(args, pattern, aliases):
    a, ca = ours_process(args, args.runs, pattern, aliases)
    b, cb = ours_process(args, 2 * args.runs, pattern, aliases)
    return {k: max(0.0, (b.get(k, 0.0) * cb - a.get(k, 0.0) * ca) / (cb - ca)) for k in set(a) | set(b)}


def ort_round(args, pattern, aliases):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(args.onnx, so, providers=["CPUExecutionProvider"])
        feeds = {}
        raw = np.fromfile(args.input, dtype=np.uint8)
        offset = 0
        for i in sess.get_inputs():  # the .bin holds the first input only (model_bench's --input)
            if feeds:
                sys.exit("node_compare.py handles single-input models")
            dtype = {"tensor(float)": np.float32, "tensor(int64)": np.int64}[i.type]
            shape = [d if isinstance(d, int) else 1 for d in i.shape]
            count = int(np.prod(shape))
            feeds[i.name] = raw[offset:offset + count * np.dtype(dtype).itemsize].view(dtype).reshape(shape)
        for _ in range(args.runs + 5):
            sess.run(None, feeds)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    # Each call is a "model_run" event; node events inside the first 5 are warm-up.
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name") == "model_run")
    if len(runs) < 6:
        sys.exit("onnxruntime's profile has no per-call model_run events")
    kept_from = runs[5][0]
    groups = collections.defaultdict(float)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= kept_from:
            groups[group_of(e["name"][:-len("_kernel_time")], pattern, aliases)] += e["dur"] / 1000.0
    return {k: v / (len(runs) - 5) for k, v in groups.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="name of a model in ~/.cache/opencann/bench (as bench/model_bench.py caches them)")
    p.add_argument("--om"), p.add_argument("--onnx"), p.add_argument("--input")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=40, help="calls per round and engine")
    p.add_argument("--rounds", type=int, default=3, help="alternating ours / onnxruntime processes")
    p.add_argument("--group", default=r"^/?([^/]+)", help="regex over node names; group 1 is the key")
    p.add_argument("--alias", action="append", default=[], help="a=b: count group a as b (repeatable)")
    args = p.parse_args()
    args.om = args.om or os.path.join(CACHE, args.model + ".om")
    args.onnx = args.onnx or os.path.join(CACHE, args.model + ".onnx")
    args.input = args.input or os.path.join(CACHE, args.model + "_input0.bin")
    for path in (args.om, args.onnx, args.input):
        if not os.path.exists(path):
            sys.exit(f"{path} not found (bench/model_bench.py writes the cached models)")
    pattern = re.compile(args.group)
    aliases = dict(a.split("=", 1) for a in args.alias)
    rounds = {"ours": [], "ort": []}
    for _ in range(args.rounds):
        rounds["ours"].append(ours_round(args, pattern, aliases))
        rounds["ort"].append(ort_round(args, pattern, aliases))

    def med(engine, key):
        return statistics.median(r.get(key, 0.0) for r in rounds[engine])

    keys = sorted({k for e in rounds.values() for r in e for k in r},
                  key=lambda k: -max(med("ours", k), med("ort", k)))
    print(f"{args.model}: {args.threads} thread(s), {args.rounds} rounds x {args.runs} runs, ms per run "
          f"(median over rounds), load average {os.getloadavg()[0]:.1f}")
    print(f"| group | ours | onnxruntime | ours / onnxruntime |\n| --- | ---: | ---: | ---: |")
    for k in keys:
        a, b = med("ours", k), med("ort", k)
        print(f"| {k} | {a:.3f} | {b:.3f} | {a / b:.2f} |" if b > 0 else f"| {k} | {a:.3f} | {b:.3f} | - |")
    ta = statistics.median(sum(r.values()) for r in rounds["ours"])
    tb = statistics.median(sum(r.values()) for r in rounds["ort"])
    print(f"| all nodes | {ta:.3f} | {tb:.3f} | {ta / tb:.2f} |" if tb > 0 else f"| all nodes | {ta:.3f} | {tb:.3f} | - |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Whole-model CPU benchmark: OpenCANN (atc -> .om -> libascendcl) against
onnxruntime on the same machine, in one run, and docs/benchmarks.md from it.

For each model and thread count, each engine runs in its own subprocess (so
that its peak RSS is its own): ours is bench/model_bench (the public AscendCL
API: aclmdlLoadFromFile, then synchronous aclmdlExecute), onnxruntime is this
script in --ort-child mode (InferenceSession with intra_op_num_threads = the
same count, inter-op 1, sequential execution, graph optimisation level ALL).
Both get the same input bytes. Latency: median and p90 over --runs runs after
--warmup runs. Our thread count is set through OPENCANN_NUM_THREADS.

Models: ResNet-50 and MobileNetV2 exported from torchvision (224x224) when
torch is installed (reusing ~/.cache/opencann/zoo exports when present), else
the onnx package's light_resnet50 and tests/python/model_zoo's MobileNetV2;
a BERT-base-sized encoder from model_zoo.transformer_encoder (dim 768, 12
heads, 12 layers, seq 128); GPT-2 small (transformers GPT2Config() defaults,
random weights, prefill of 128 tokens, LM head included) exported with torch.
Exports are cached in --work (outside the repository). --batches 1,8 adds
batch-8 variants (named *_b8).

  python3 bench/model_bench.py                    # full run (~10 min), writes docs/benchmarks.md
  python3 bench/model_bench.py --quick            # small models, few runs, no doc
  python3 bench/model_bench.py --only bert --threads 1 --no-doc
  python3 bench/model_bench.py --batches 1,8      # the issue's targets: batch 1 and 8
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))


# ---------------------------------------------------------------- onnxruntime child

def peak_rss_mb():
    """VmHWM of this process (ru_maxrss would include the parent's size, inherited
    through fork + exec); -1 where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return -1.0


def time_engine(load, run, warmup, runs):
    """The timing loop every engine child shares: `load()` (what it returns is
    handed to `run`) timed once, then --warmup + --runs calls of `run`, wall and
    process CPU time; prints the child's JSON report."""
    t0, c0 = time.perf_counter(), time.process_time()
    handle = load()
    load_ms = (time.perf_counter() - t0) * 1e3
    load_cpu_ms = (time.process_time() - c0) * 1e3
    ms, cpu_ms = [], []
    for r in range(warmup + runs):
        t, c = time.perf_counter(), time.process_time()
        run(handle)
        if r >= warmup:
            ms.append((time.perf_counter() - t) * 1e3)
            cpu_ms.append((time.process_time() - c) * 1e3)
    print(json.dumps({"load_ms": load_ms, "load_cpu_ms": load_cpu_ms, "run_ms": ms, "run_cpu_ms": cpu_ms,
                      "peak_rss_mb": peak_rss_mb()}))


def ort_child(model, inputs_npz, threads, warmup, runs):
    """Runs in its own process: times InferenceSession creation and Run."""
    import onnxruntime as ort
    if model is None:  # baseline: the interpreter + numpy + onnxruntime alone
        print(json.dumps({"peak_rss_mb": peak_rss_mb()}))
        return
    feeds = dict(np.load(inputs_npz))
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    time_engine(lambda: ort.InferenceSession(model, so, providers=["CPUExecutionProvider"]),
                lambda sess: sess.run(None, feeds), warmup, runs)


def ov_child(model, inputs_npz, threads, warmup, runs):
    """Runs in its own process: times OpenVINO read + compile and inference.
    f32 inference precision is forced: on CPUs with AMX / AVX512_BF16 OpenVINO
    otherwise runs in bf16 by default, which would not be an fp32 comparison."""
    import openvino as ov
    feeds = dict(np.load(inputs_npz))
    core = ov.Core()
    core.set_property("CPU", {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
                              "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"})
    time_engine(lambda: core.compile_model(core.read_model(model), "CPU").create_infer_request(),
                lambda req: req.infer(feeds), warmup, runs)


def have_openvino():
    try:
        import openvino  # noqa: F401
        return True
    except Exception:
        return False


# ---------------------------------------------------------------- models

class Model:
    def __init__(self, name, desc, make, feeds):
        self.name, self.desc, self.make, self.feeds = name, desc, make, feeds


def have_torch():
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        return True
    except Exception:
        return False


def light_path(stem):
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", f"light_{stem}.onnx")


def torchvision_maker(arch, zoo_dir, batch=1):
    """Writes the torchvision export (batch x 3x224x224, opset 17), reusing the
    model-zoo script's cached export when there is one (batch 1)."""
    def make(path):
        cached = os.path.join(zoo_dir, f"{arch}.onnx")
        if batch == 1 and os.path.exists(cached):
            return cached
        if os.path.exists(path):
            return path
        import torch
        import torchvision
        torch.manual_seed(0)
        m = getattr(torchvision.models, arch)(weights=None).eval()
        with torch.no_grad():
            try:
                torch.onnx.export(m, (torch.rand(batch, 3, 224, 224),), path + ".tmp", opset_version=17,
                                  input_names=["input"], dynamo=False)
            except TypeError:
                torch.onnx.export(m, (torch.rand(batch, 3, 224, 224),), path + ".tmp", opset_version=17,
                                  input_names=["input"])
        os.replace(path + ".tmp", path)
        return path
    return make


def gpt2_maker(batch, seq):
    """GPT-2 small with random weights (transformers GPT2Config() defaults: 12
    layers, 12 heads, 768 wide, vocabulary 50257), one prefill of `seq` tokens
    returning the logits; no KV cache. Eager attention and an explicit all-ones
    mask keep the export on the TorchScript exporter's opset-17 ops."""
    def make(path):
        if os.path.exists(path):
            return path
        import torch
        import transformers
        torch.manual_seed(0)
        cfg = transformers.GPT2Config()
        cfg.use_cache = False
        cfg._attn_implementation = "eager"
        lm = transformers.GPT2LMHeadModel(cfg).eval()

        class Prefill(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, ids):
                return self.m(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False,
                              return_dict=False)[0]

        with torch.no_grad():
            torch.onnx.export(Prefill(lm), (torch.zeros(batch, seq, dtype=torch.long),), path + ".tmp",
                              opset_version=17, input_names=["input_ids"], output_names=["logits"], dynamo=False)
        os.replace(path + ".tmp", path)
        return path
    return make


def builder_maker(fn, **kw):
    def make(path):
        if not os.path.exists(path):  # deterministic (fixed seeds): built once per --work dir
            import onnx
            onnx.save(fn(**kw), path + ".tmp")
            os.replace(path + ".tmp", path)
        return path
    return make


def image_feeds(rng, size, batch=1):
    return {"input": rng.random((batch, 3, size, size), dtype=np.float32)}


def bert_feeds(rng, seq, vocab, batch=1):
    return {"input_ids": rng.integers(0, vocab, size=(batch, seq)).astype(np.int64),
            "attention_mask": np.ones((batch, seq), np.int64)}


def gpt2_feeds(rng, seq, batch=1):
    return {"input_ids": rng.integers(0, 50257, size=(batch, seq)).astype(np.int64)}


def all_models(args):
    import model_zoo as zoo
    if args.quick:
        return [
            Model("resnet_small", "model_zoo.resnet(size=64, widths 16/32/64)",
                  builder_maker(zoo.resnet, size=64), lambda r: image_feeds(r, 64)),
            Model("mobilenet_v2_small", "model_zoo.mobilenet_v2(size=64)",
                  builder_maker(zoo.mobilenet_v2, size=64), lambda r: image_feeds(r, 64)),
            Model("bert_small", "model_zoo.transformer_encoder(dim=128, heads=4, layers=2, seq=32)",
                  builder_maker(zoo.transformer_encoder, dim=128, heads=4, layers=2, seq=32),
                  lambda r: bert_feeds(r, 32, 100)),
        ]
    models = []
    torch = have_torch()
    for b in args.batches:
        sfx = "" if b == 1 else f"_b{b}"
        if torch:
            models.append(Model(f"resnet50{sfx}", f"torchvision resnet50, {b}x3x224x224",
                                torchvision_maker("resnet50", args.zoo, b), lambda r, b=b: image_feeds(r, 224, b)))
            models.append(Model(f"mobilenet_v2{sfx}", f"torchvision mobilenet_v2, {b}x3x224x224",
                                torchvision_maker("mobilenet_v2", args.zoo, b),
                                lambda r, b=b: image_feeds(r, 224, b)))
        elif b == 1:  # the fallbacks have a fixed batch of 1
            models.append(Model("resnet50", "onnx light_resnet50 (constant weights), 1x3x224x224",
                                lambda path: light_path("resnet50"), lambda r: image_feeds(r, 224)))
            models.append(Model("mobilenet_v2", "model_zoo.mobilenet_v2(size=224) (reduced widths)",
                                builder_maker(zoo.mobilenet_v2, size=224), lambda r: image_feeds(r, 224)))
        models.append(Model(f"bert_base{sfx}", f"model_zoo.transformer_encoder(batch={b}, dim=768, heads=12, "
                            "layers=12, seq=128, vocab=30522)",
                            builder_maker(zoo.transformer_encoder, batch=b, dim=768, heads=12, layers=12, seq=128,
                                          vocab=30522),
                            lambda r, b=b: bert_feeds(r, 128, 30522, b)))
        if torch:
            models.append(Model(f"gpt2_small{sfx}", f"transformers GPT2LMHeadModel(GPT2Config()), random weights, "
                                f"prefill {b}x128 tokens", gpt2_maker(b, 128), lambda r, b=b: gpt2_feeds(r, 128, b)))
    return models


# ---------------------------------------------------------------- measuring

def run_measured(cmd, env=None, timeout=900):
    """Runs cmd; returns (the JSON object on its last stdout line, the child's
    peak RSS in MiB: its own VmHWM report, else ru_maxrss from wait4)."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env)
        deadline = time.time() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                raise RuntimeError(f"{shlex.join(cmd)} timed out after {timeout} s")
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read().decode(), fe.read().decode(errors="replace")
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({p.returncode}): {err[-2000:]}")
    res = json.loads(out.strip().splitlines()[-1])
    rss = res.get("peak_rss_mb", -1)
    return res, rss if rss > 0 else ru.ru_maxrss / 1024.0


def stats(ms):
    a = np.sort(np.asarray(ms))
    return float(np.median(a)), float(np.percentile(a, 90))


def bench_model(m, args, work, rng):
    onnx_path = m.make(os.path.join(work, f"{m.name}.onnx"))
    feeds = m.feeds(rng)
    import onnx
    model = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    names = [vi.name for vi in model.graph.input if vi.name not in inits]
    if set(names) != set(feeds):  # exports name their inputs their own way
        if len(names) != len(feeds):
            raise RuntimeError(f"{m.name}: inputs {names} do not match feeds {list(feeds)}")
        feeds = dict(zip(names, feeds.values()))
    del model
    npz = os.path.join(work, f"{m.name}_inputs.npz")
    np.savez(npz, **feeds)
    bins = []
    for i, n in enumerate(names):
        b = os.path.join(work, f"{m.name}_input{i}.bin")
        np.ascontiguousarray(feeds[n]).tofile(b)
        bins.append(b)

    om_stem = os.path.join(work, m.name)
    t0 = time.perf_counter()
    cp = subprocess.run([os.path.join(args.build, "atc"), f"--model={onnx_path}", "--framework=5",
                         f"--output={om_stem}", f"--precision_mode={args.precision_mode}"],
                        capture_output=True, text=True)
    compile_s = time.perf_counter() - t0
    if cp.returncode != 0:
        raise RuntimeError(f"{m.name}: atc failed: {(cp.stderr or cp.stdout)[-2000:]}")
    om = om_stem + ".om"
    row = {"model": m.name, "desc": m.desc, "compile_s": compile_s, "om_mb": os.path.getsize(om) / 2**20,
           "onnx_mb": os.path.getsize(onnx_path) / 2**20, "threads": {}}
    for t in args.threads:
        env = dict(os.environ, OPENCANN_NUM_THREADS=str(t))
        per_round = max(1, -(-args.runs // args.rounds))
        ours_cmd = [os.path.join(args.build, "model_bench"), om, "--warmup", str(args.warmup),
                    "--runs", str(per_round)]
        for b in bins:
            ours_cmd += ["--input", b]
        ort_cmd = [sys.executable, os.path.abspath(__file__), "--ort-child", onnx_path, npz, str(t),
                   str(args.warmup), str(per_round)]
        # Alternate the engines over --rounds processes each, so that a change
        # in the machine's load during the run falls on both; latencies pooled.
        ov_cmd = [sys.executable, os.path.abspath(__file__), "--ov-child", onnx_path, npz, str(t),
                  str(args.warmup), str(per_round)]
        got = {"ours": [], "ort": []}
        if args.openvino:
            got["ov"] = []
        for _ in range(args.rounds):
            got["ours"].append(run_measured(ours_cmd, env))
            got["ort"].append(run_measured(ort_cmd, dict(os.environ, OMP_NUM_THREADS=str(t))))
            if args.openvino:
                got["ov"].append(run_measured(ov_cmd))
        r = {}
        for key, results in got.items():
            med, p90 = stats([ms for res, _ in results for ms in res["run_ms"]])
            r[key] = {"load_ms": float(np.median([res["load_ms"] for res, _ in results])), "median_ms": med,
                      "p90_ms": p90, "rss_mb": max(rss for _, rss in results),
                      # process CPU time (all threads): steadier than wall time on a loaded machine at
                      # 1 thread; at more threads it also counts onnxruntime's spinning workers
                      "cpu_median_ms": float(np.median([c for res, _ in results for c in res.get("run_cpu_ms", [])]
                                                       or [float("nan")])),
                      "load_cpu_ms": float(np.median([res.get("load_cpu_ms", float("nan")) for res, _ in results]))}
        row["threads"][t] = r
        print(f"  {m.name:<20} threads={t}: ours {r['ours']['median_ms']:8.2f} ms (p90 {r['ours']['p90_ms']:.2f})"
              f"  ort {r['ort']['median_ms']:8.2f} ms (p90 {r['ort']['p90_ms']:.2f})"
              f"  ratio {r['ours']['median_ms'] / r['ort']['median_ms']:.2f}"
              f"  load {r['ours']['load_ms']:.0f}/{r['ort']['load_ms']:.0f} ms"
              f"  rss {r['ours']['rss_mb']:.0f}/{r['ort']['rss_mb']:.0f} MiB"
              f"  cpu {r['ours']['cpu_median_ms']:.2f}/{r['ort']['cpu_median_ms']:.2f} ms"
              f" (ratio {r['ours']['cpu_median_ms'] / r['ort']['cpu_median_ms']:.2f})"
              f"  load cpu {r['ours']['load_cpu_ms']:.0f}/{r['ort']['load_cpu_ms']:.0f} ms"
              + (f"  openvino {r['ov']['median_ms']:.2f} ms (ours/ov {r['ours']['median_ms'] / r['ov']['median_ms']:.2f})"
                 if "ov" in r else "")
              + f"  (load avg {os.getloadavg()[0]:.1f})",
              flush=True)
    return row


# ---------------------------------------------------------------- report

def machine():
    info = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "isa": ""}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        kv = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        kv = {k.strip(): v.strip() for k, v in kv.items()}
        info["cpu"] = kv.get("Model name", info["cpu"])
        flags = set(kv.get("Flags", "").split())
        isa = [name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("fma", "FMA"),
                                       ("f16c", "F16C"), ("avx512_vnni", "AVX512-VNNI"),
                                       ("amx_tile", "AMX"), ("asimd", "NEON")) if flag in flags]
        info["isa"] = ", ".join(isa)
        info["cores"] = f"{kv.get('CPU(s)', os.cpu_count())} ({kv.get('Hypervisor vendor', 'bare metal')} guest)" \
            if "Hypervisor vendor" in kv else kv.get("CPU(s)", os.cpu_count())
    except (OSError, ValueError):
        pass
    return info


def versions(args):
    import onnxruntime as ort
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no", "src"],
                           capture_output=True, text=True).stdout.strip()
    cc = ""
    cache = os.path.join(args.build, "CMakeCache.txt")
    if os.path.exists(cache):
        m = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.*)$", open(cache).read(), re.M)
        if m:
            cc = subprocess.run([m.group(1), "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    ov_version = ""
    if args.openvino:
        import openvino
        ov_version = openvino.__version__.split("-")[0]
    return {"ours": f"OpenCANN {rev}{' (+ uncommitted src changes)' if dirty else ''}", "ort": ort.__version__,
            "ov": ov_version, "cc": cc, "python": platform.python_version()}


def write_doc(rows, args, command, load_before, load_after, ort_base_rss):
    mi, ve = machine(), versions(args)
    lines = [
        "# Benchmarks: OpenCANN vs onnxruntime on CPU",
        "",
        "Generated by `bench/model_bench.py`; do not edit the tables by hand, re-run the script.",
        "",
        f"- Date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}",
        f"- Machine: {mi['cpu']}, {mi['cores']} CPUs; ISA: {mi['isa']}",
        f"- Load average (1 min) before / after the run: {load_before:.1f} / {load_after:.1f}"
        + ("  (the machine was shared with other jobs: absolute figures are noisy)" if load_before > 1.5 else ""),
        f"- Versions: {ve['ours']} built with {ve['cc']}; onnxruntime {ve['ort']}"
        + (f"; OpenVINO {ve['ov']}" if ve.get("ov") else "") + f" (Python {ve['python']})",
        f"- Command: `{command}`" + (f" (our models compiled with --precision_mode={args.precision_mode})"
                                     if args.precision_mode != "force_fp32" else ""),
        f"- Each figure: {args.runs} timed runs (pooled over {args.rounds} processes per engine, started "
        f"alternately ours / onnxruntime), each process after {args.warmup} warm-up runs; batch 1 unless the model's name ends in _bN. "
        "onnxruntime: CPU provider, intra_op_num_threads = threads, sequential execution, ORT_ENABLE_ALL; "
        "ours: OPENCANN_NUM_THREADS = threads, aclmdlExecute.",
        "- Load: aclmdlLoadFromFile of the .om vs InferenceSession creation from the .onnx "
        "(which includes onnxruntime's graph optimisation).",
        f"- Peak RSS: VmHWM of each process (largest over its rounds). Ours maps the .om and verifies its "
        f"checksum chunk by chunk, dropping each chunk's pages afterwards, so what stays resident is what the "
        f"kernels read (pre-packed panels rather than the raw weights they came from). "
        f"The onnxruntime process is a Python interpreter; "
        f"importing numpy + onnxruntime alone peaks at {ort_base_rss:.0f} MiB.",
        "- Ratio = ours / onnxruntime median latency (below 1 = we are faster). onnxruntime's worker threads "
        "spin while waiting (its default); ours poll for up to 200 us after each job (OPENCANN_SPIN_US), then sleep.",
    ]
    has_ov = any("ov" in r for row in rows for r in row["threads"].values())
    if has_ov:
        lines.append("- OpenVINO (third engine, same .onnx, same inputs, its own process): CPU plugin, "
                     "INFERENCE_NUM_THREADS = threads, NUM_STREAMS 1, LATENCY hint, INFERENCE_PRECISION_HINT f32 "
                     "(it would pick bf16 on this CPU otherwise); load = read_model + compile_model.")
    lines += [
        "",
        "| model | threads | ours median ms | ours p90 ms | ORT median ms | ORT p90 ms | ratio | CPU-time ratio | "
        "ours load ms | ORT load ms | ours RSS MiB | ORT RSS MiB |"
        + (" OpenVINO median ms | ours / OpenVINO | OpenVINO load ms | OpenVINO RSS MiB |" if has_ov else ""),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        + (" ---: | ---: | ---: | ---: |" if has_ov else ""),
    ]
    for row in rows:
        for t, r in row["threads"].items():
            o, x = r["ours"], r["ort"]
            line = (f"| {row['model']} | {t} | {o['median_ms']:.2f} | {o['p90_ms']:.2f} | {x['median_ms']:.2f} | "
                    f"{x['p90_ms']:.2f} | **{o['median_ms'] / x['median_ms']:.2f}** | "
                    f"{o['cpu_median_ms'] / x['cpu_median_ms']:.2f} | {o['load_ms']:.0f} | "
                    f"{x['load_ms']:.0f} | {o['rss_mb']:.0f} | {x['rss_mb']:.0f} |")
            if has_ov:
                v = r.get("ov")
                line += (f" {v['median_ms']:.2f} | {o['median_ms'] / v['median_ms']:.2f} | {v['load_ms']:.0f} | "
                         f"{v['rss_mb']:.0f} |" if v else " - | - | - | - |")
            lines.append(line)
    lines += ["", "| model | source | .onnx MiB | .om MiB | atc compile s |", "| --- | --- | ---: | ---: | ---: |"]
    for row in rows:
        lines.append(f"| {row['model']} | {row['desc']} | {row['onnx_mb']:.1f} | {row['om_mb']:.1f} | "
                     f"{row['compile_s']:.1f} |")
    big = max(rows, key=lambda r: r["om_mb"])
    lines += [
        "",
        "## Reading these figures",
        "",
        "- Run it yourself: `ninja -C build atc model_bench && python3 bench/model_bench.py` (about 10 minutes; "
        "`--quick` for small models in seconds, `--only REGEX`, `--threads 1,2,4`).",
        "- Where the time goes: `OPENCANN_PROFILE_NODES=1` (or `=N` for the N slowest nodes) makes the executor "
        "print per-op-type totals at exit, e.g. `OPENCANN_PROFILE_NODES=20 OPENCANN_NUM_THREADS=1 "
        "build/model_bench model.om --input x.bin --runs 50` (`OPENCANN_PROFILE_CLOCK=cpu`: CPU time instead of wall "
        "time, for a loaded machine). Off, it costs one branch per run.",
        "- The .om stores float32 GEMM/Conv/MatMul weights once, as the kernels' pre-packed panels "
        "(docs/om_format.md); Winograd layers keep their raw weights next to the transformed ones "
        f"({big['model']}: {big['om_mb']:.0f} MiB .om for a {big['onnx_mb']:.0f} MiB .onnx).",
        "- On a shared machine prefer the ratios to the absolute times, and the 1-thread ones to the 2-thread ones. "
        "CPU-time ratio: medians of each run's process CPU time (getrusage / time.process_time); at 1 thread it "
        "does not count time spent waiting for a core, so it is the steadier figure on a loaded machine; at more "
        "threads it also counts onnxruntime's spinning workers.",
        "",
    ]
    # Keep the bf16 section (bench/bf16_bench.py writes it) across re-runs.
    old = open(args.doc).read() if os.path.exists(args.doc) else ""
    begin, end = "<!-- bf16 section: generated by bench/bf16_bench.py -->", "<!-- end of bf16 section -->"
    if begin in old and end in old:
        lines += [old[old.index(begin):old.index(end) + len(end)], ""]
    # And the hand-written engineering notes (measurements taken while changing the code), and the
    # int8 section (bench/int8_bench.py's figures, copied by hand).
    for begin, end in (("<!-- engineering notes: written by hand -->", "<!-- end of engineering notes -->"),
                       ("<!-- int8 section: from bench/int8_bench.py (hand-copied) -->", "<!-- end of int8 section -->")):
        if begin in old and end in old:
            lines += [old[old.index(begin):old.index(end) + len(end)], ""]
    with open(args.doc, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.doc}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--ort-child":
        a = sys.argv[2:]
        if a == ["baseline"]:
            return ort_child(None, None, 1, 0, 0)
        return ort_child(a[0], a[1], int(a[2]), int(a[3]), int(a[4]))
    if len(sys.argv) > 1 and sys.argv[1] == "--ov-child":
        a = sys.argv[2:]
        return ov_child(a[0], a[1], int(a[2]), int(a[3]), int(a[4]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("OC_BUILD_DIR", os.path.join(REPO, "build")),
                    help="build directory holding atc and model_bench")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--runs", type=int, default=None, help="timed runs (default 30; 10 with --quick)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up runs (default 5; 2 with --quick)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="processes per engine, alternating ours/onnxruntime; --runs are split over them "
                         "(default 3; 1 with --quick)")
    ap.add_argument("--only", default=None, help="regex over model names")
    ap.add_argument("--batches", default="1", help="comma-separated batch sizes (1,8 for the issue's targets)")
    ap.add_argument("--quick", action="store_true", help="small models and few runs; no doc unless --doc")
    ap.add_argument("--zoo", default=os.path.expanduser("~/.cache/opencann/zoo"),
                    help="scripts/model_zoo.py export cache to reuse")
    ap.add_argument("--work", default=os.path.expanduser("~/.cache/opencann/bench"),
                    help="where exported/built models, inputs and .om files go")
    ap.add_argument("--doc", default=None, help="markdown to write (default docs/benchmarks.md)")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--precision_mode", default="force_fp32",
                    help="atc --precision_mode for our models (allow_fp32_to_bf16: Conv/MatMul/Gemm in bfloat16; "
                         "bench/bf16_bench.py compares the two modes)")
    ap.add_argument("--no-openvino", action="store_true",
                    help="skip OpenVINO (it runs as a third engine when `import openvino` works: pip install openvino)")
    args = ap.parse_args()
    args.openvino = not args.no_openvino and have_openvino()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.batches = [int(b) for b in args.batches.split(",")]
    args.runs = args.runs or (10 if args.quick else 30)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 5)
    args.rounds = max(1, args.rounds or (1 if args.quick else 3))
    write = not args.no_doc and (args.doc is not None or not args.quick)
    args.doc = args.doc or os.path.join(REPO, "docs", "benchmarks.md")
    for tool in ("atc", "model_bench"):
        if not os.path.exists(os.path.join(args.build, tool)):
            sys.exit(f"{tool} not found in {args.build}: ninja -C {args.build} atc model_bench (or --build DIR)")
    os.makedirs(args.work, exist_ok=True)
    command = "python3 bench/model_bench.py " + shlex.join(sys.argv[1:])
    load_before = os.getloadavg()[0]
    _, ort_base_rss = run_measured([sys.executable, os.path.abspath(__file__), "--ort-child", "baseline"])
    rows = []
    for m in all_models(args):
        if args.only and not re.search(args.only, m.name):
            continue
        rng = np.random.default_rng(0)
        print(f"{m.name}: {m.desc}", flush=True)
        rows.append(bench_model(m, args, args.work, rng))
    load_after = os.getloadavg()[0]
    if write and rows:
        write_doc(rows, args, command, load_before, load_after, ort_base_rss)


if __name__ == "__main__":
    main()

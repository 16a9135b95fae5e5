#!/usr/bin/env python3
"""Single-stream decode speed of oc-llm-generate per weight dtype (--dtype
float32 / bfloat16 / int8 / int4) against the memory-bandwidth bound.

The model is a Qwen2.5-0.5B-like qwen2 config with random weights (hidden
896, 24 layers, 14 / 2 heads, intermediate 4864, tied embeddings, vocabulary
cut to 32000 to save memory), written once as a bf16 safetensors checkpoint
under /tmp (not the repository). Each dtype runs `--repeats` times (8-token
prompt, `--tokens` greedy tokens, each of `--threads` thread counts); the tool's decode
tokens/s and weight bytes are read from its stderr and the median printed.

CPU-time tokens/s: decode steps per CPU second of all the run's threads
(the child's rusage, minus that of a 2-token run: load, prefill, one step), the
steadier figure when other jobs share the cores. The bound is read
bandwidth / bytes read per decode step, the bytes being the
projections' weights the tool reports minus the float32 embedding table (a
step reads one row of it). Read bandwidth: build/membw has no read-only mode
and is not a build target, so it is measured here with numpy in a child
process: y = A @ x (OpenBLAS sgemv, a pure stream over A, the decode
pattern) over a 1 GiB float32 A with OPENBLAS_NUM_THREADS = the thread
count; median of 5.

  nice -n 10 python3 bench/llm_weights_bench.py [--threads 1,2] [--tokens 64] [--repeats 3]
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "build", "oc-llm-generate")
CFG = dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=896, num_hidden_layers=24,
           num_attention_heads=14, num_key_value_heads=2, intermediate_size=4864, vocab_size=32000,
           max_position_embeddings=4096, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
           hidden_act="silu", use_sliding_window=False, torch_dtype="bfloat16")


def tensors():
    c = CFG
    e, inter, qd, kvd = c["hidden_size"], c["intermediate_size"], c["hidden_size"], 2 * 64
    yield "model.embed_tokens.weight", (c["vocab_size"], e)
    yield "model.norm.weight", (e,)
    for l in range(c["num_hidden_layers"]):
        b = f"model.layers.{l}."
        yield b + "input_layernorm.weight", (e,)
        yield b + "post_attention_layernorm.weight", (e,)
        for n, shape in [("q", (qd, e)), ("k", (kvd, e)), ("v", (kvd, e))]:
            yield b + f"self_attn.{n}_proj.weight", shape
            yield b + f"self_attn.{n}_proj.bias", shape[:1]
        yield b + "self_attn.o_proj.weight", (e, qd)
        yield b + "mlp.gate_proj.weight", (inter, e)
        yield b + "mlp.up_proj.weight", (inter, e)
        yield b + "mlp.down_proj.weight", (e, inter)


def write_checkpoint(d):
    """bf16 safetensors written directly (header + raw little-endian data)."""
    path = os.path.join(d, "model.safetensors")
    if os.path.exists(path):
        return
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    header, offset, shapes = {}, 0, list(tensors())
    for name, shape in shapes:
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for name, shape in shapes:
            if len(shape) == 1:
                x = np.ones(shape, np.float32) if name.endswith("norm.weight") else np.zeros(shape, np.float32)
            else:
                x = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
            f.write((x.view(np.uint32) >> 16).astype(np.uint16).tobytes())
    os.replace(tmp, path)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(CFG, f)


def read_bandwidth(threads):
    code = (
        "import time, numpy as np\n"
        "a = np.full(((1 << 28) // 4096, 4096), 1.0, np.float32)\n"  # 1 GiB
        "x = np.ones(4096, np.float32)\n"
        "a @ x\n"
        "t = []\n"
        "for _ in range(5):\n"
        "    s = time.perf_counter(); a @ x; t.append(time.perf_counter() - s)\n"
        "t.sort(); print(a.nbytes / t[2] / 1e9)\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(out.stdout.strip())


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(d, dtype, threads, tokens):
    """(decode tokens/s, weight bytes, weight summary, load s, CPU seconds of the whole run)."""
    c0 = child_cpu()
    proc = subprocess.run([TOOL, "--model", d, "--dtype", dtype, "--threads", str(threads), "--prompt-ids",
                           "1,2,3,4,5,6,7,8", "--max-tokens", str(tokens)], capture_output=True, text=True,
                          timeout=1200)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    tps = float(re.search(r"decode ([\d.]+) tokens/s", proc.stderr).group(1))
    m = re.search(r"weights (.*): (\d+) bytes", proc.stderr)
    load = float(re.search(r"load ([\d.]+) s", proc.stderr).group(1))
    return tps, int(m.group(2)), m.group(1), load, child_cpu() - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/oc_llm_bench_qwen2_0p5b")
    ap.add_argument("--dtypes", default="float32,bfloat16,int8,int4")
    a = ap.parse_args()
    write_checkpoint(a.dir)
    embed = 4 * CFG["vocab_size"] * CFG["hidden_size"]
    print(f"CPU: {cpu_model()}; load average before: {os.getloadavg()[0]:.1f}")
    for threads in [int(t) for t in a.threads.split(",")]:
        bw = read_bandwidth(threads)
        print(f"\n{threads} thread(s); read bandwidth (numpy A @ x over 1 GiB, OpenBLAS sgemv, {threads} thread(s)): "
              f"{bw:.1f} GB/s\n")
        print("| dtype | kernels | weight bytes | bytes read per token | decode tokens/s, median (runs) | "
              "bound tokens/s | of bound | CPU-time tokens/s | load s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for dtype in a.dtypes.split(","):
            base = run(a.dir, dtype, threads, 2)[4]  # load + prefill + 1 decode step
            runs = [run(a.dir, dtype, threads, a.tokens) for _ in range(a.repeats)]
            tps = statistics.median(r[0] for r in runs)
            wb, summary, load = runs[0][1], runs[0][2], statistics.median(r[3] for r in runs)
            # Decode steps per CPU second of all threads (steadier than wall time on a shared machine).
            cpu_tps = (a.tokens - 2) / max(1e-9, statistics.median(r[4] for r in runs) - base)
            per_tok = wb - embed
            bound = bw * 1e9 / per_tok
            print(f"| {dtype} | {summary} | {wb / 2**20:.0f} MiB | {per_tok / 2**20:.0f} MiB | {tps:.2f} "
                  f"({', '.join(f'{r[0]:.2f}' for r in runs)}) | {bound:.1f} | {100 * tps / bound:.0f}% | "
                  f"{cpu_tps:.2f} | {load:.1f} |", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


def cpu_model():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    m = re.search(r"Model name:\s*(.*)", out)
    return m.group(1).strip() if m else "?"

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Single-stream decode and prefill: oc-llm-generate against llama.cpp
(llama-cpp-python) on the same weights, the same GGUF files.

The model is llm_weights_bench.py's Qwen2.5-0.5B-like qwen2 (random weights,
386 M parameters, vocabulary 32000), converted here to GGUF with the `gguf`
package the way llama.cpp's converter names and lays out a qwen2 (no q/k
permutation for qwen2), in BF16, Q8_0 and Q4_0, plus a SentencePiece-style
vocabulary of placeholder tokens (the prompts are token ids). Pairs, both
engines reading the same file:

  bfloat16  ours --dtype bfloat16      llama.cpp BF16
  int8      ours --dtype int8 (Q8_0)   llama.cpp Q8_0
  int4      ours --dtype int4 (Q4_0)   llama.cpp Q4_0

(our int8 / int4 requantize the file's dequantized values with our own
per-channel / per-128 scales; llama.cpp computes on the stored blocks with
activations rounded to 8 bits). Each round runs ours, then llama.cpp,
alternating, `--rounds` times; medians. Prefill: a 512-token prompt; decode:
`--tokens` greedy tokens after it. The bandwidth bound is read bandwidth
(numpy sgemv over 1 GiB, llm_weights_bench.read_bandwidth) / the weight bytes
our tool reports per decode step.

  nice -n -5 python3 bench/llm_peer_bench.py [--threads 2] [--tokens 64] [--rounds 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llm_weights_bench as wb  # noqa: E402

TOOL = os.path.join(os.path.dirname(HERE), "build", "oc-llm-generate")
WORK = "/tmp/oc_llm_peer"
PAIRS = [("bfloat16", "BF16"), ("int8", "Q8_0"), ("int4", "Q4_0")]
LAYER = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "self_attn.q_proj": "attn_q",
         "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
         "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}


def gguf_name(hf):
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    p = hf.split(".")
    return f"blk.{p[2]}.{LAYER['.'.join(p[3:-1])]}.{p[-1]}"


def write_gguf(state, path, qtype):
    import gguf
    from gguf import quants
    c = wb.CFG
    w = gguf.GGUFWriter(path, "qwen2")
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_block_count(c["num_hidden_layers"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(c["num_attention_heads"])
    w.add_head_count_kv(c["num_key_value_heads"])
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_rope_freq_base(c["rope_theta"])
    vocab = c["vocab_size"]
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"\u2581w{i}" for i in range(vocab - len(tokens))]
    types = [2, 3, 3] + [6] * 256 + [1] * (vocab - 259)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * 259 + [-float(i) for i in range(vocab - 259)])
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    qt = getattr(gguf.GGMLQuantizationType, qtype)
    for name, v in state.items():
        if v.ndim == 1:
            w.add_tensor(gguf_name(name), v.astype(np.float32))
        elif qtype == "BF16":
            w.add_tensor(gguf_name(name), quants.quantize(v, qt), raw_dtype=qt)
        else:
            w.add_tensor(gguf_name(name), quants.quantize(v, qt), raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_files():
    hf = os.path.join(WORK, "hf")
    wb.write_checkpoint(hf)
    todo = [q for _, q in PAIRS if not os.path.exists(os.path.join(WORK, f"model-{q}.gguf"))]
    if not todo:
        return
    import torch
    from safetensors.torch import load_file
    state = {k: v.float().numpy() for k, v in load_file(os.path.join(hf, "model.safetensors")).items()}
    for q in todo:
        t = time.time()
        write_gguf(state, os.path.join(WORK, f"model-{q}.gguf.part"), q)
        os.replace(os.path.join(WORK, f"model-{q}.gguf.part"), os.path.join(WORK, f"model-{q}.gguf"))
        print(f"wrote model-{q}.gguf in {time.time() - t:.0f} s", file=sys.stderr)
    del torch


PROMPT = [int(x) for x in np.random.default_rng(0).integers(259, wb.CFG["vocab_size"], 511)]


def ours(path, dtype, threads, tokens):
    ids = ",".join(map(str, [1] + PROMPT))
    p = subprocess.run([TOOL, "--model", path, "--dtype", dtype, "--threads", str(threads), "--prompt-ids", ids,
                        "--max-tokens", str(tokens)], capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(p.stderr)
    prefill_ms = float(re.search(r"prefill ([\d.]+) ms", p.stderr).group(1))
    decode = float(re.search(r"decode ([\d.]+) tokens/s", p.stderr).group(1))
    m = re.search(r"weights (.*): (\d+) bytes", p.stderr)
    return 512 / (prefill_ms / 1000), decode, int(m.group(2)) if m else 0, json.loads(p.stdout)


def peer(path, threads, tokens):
    """llama.cpp in a child process (its own memory; the same prompt, greedy)."""
    code = f"""
import json, time, numpy as np, llama_cpp
llm = llama_cpp.Llama(model_path={path!r}, n_ctx=1024, n_batch=512, n_ubatch=512, n_threads={threads},
                      n_threads_batch={threads}, verbose=False)
prompt = {[1] + PROMPT!r}
t = time.perf_counter(); llm.eval(prompt); prefill = time.perf_counter() - t
out = []
t = time.perf_counter()
nv = llm.n_vocab()
for _ in range({tokens}):
    tok = int(np.argmax(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(nv,))))  # the last token's logits
    out.append(tok)
    llm.eval([tok])
decode = time.perf_counter() - t
print(json.dumps([512 / prefill, {tokens} / decode, out]))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import llama_cpp
    make_files()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    bw = wb.read_bandwidth(args.threads)
    print(f"CPU: {cpu}; {args.threads} threads; read bandwidth {bw:.1f} GB/s; llama-cpp-python "
          f"{llama_cpp.__version__}; prompt 512 tokens, decode {args.tokens}")
    print("| weights | ours prefill tok/s | llama.cpp prefill tok/s | ratio | ours decode tok/s | llama.cpp decode tok/s "
          "| ratio | ours, share of bound | same first tokens |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for dtype, q in PAIRS:
        path = os.path.join(WORK, f"model-{q}.gguf")
        o, p = [], []
        for _ in range(args.rounds):
            o.append(ours(path, dtype, args.threads, args.tokens))
            p.append(peer(path, args.threads, args.tokens))
        op, od = statistics.median(r[0] for r in o), statistics.median(r[1] for r in o)
        pp, pd = statistics.median(r[0] for r in p), statistics.median(r[1] for r in p)
        step_bytes = o[0][2] - wb.CFG["vocab_size"] * wb.CFG["hidden_size"] * 4  # (one embedding row is read)
        bound = bw * 1e9 / step_bytes if step_bytes > 0 else float("nan")
        ours_ids, peer_ids = o[0][3], p[0][2]
        ours_ids = ours_ids[0] if ours_ids and isinstance(ours_ids[0], list) else ours_ids
        same = next((i for i, (a, b) in enumerate(zip(ours_ids, peer_ids)) if a != b), len(peer_ids))
        print(f"| {dtype} / {q} | {op:.0f} | {pp:.0f} | {op / pp:.2f} | {od:.1f} | {pd:.1f} | {od / pd:.2f} | "
              f"{od / bound:.0%} | {same} |", flush=True)


if __name__ == "__main__":
    main()

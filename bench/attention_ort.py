"""onnxruntime's side of bench/attention_bench.cc: per-call latency of one attention
node at the same shapes, for ai.onnx Attention-23 and com.microsoft MultiHeadAttention.

    python3 bench/attention_ort.py [--threads 1] [--runs 200]

Prints the median and minimum wall time and the median process CPU time per call
(on a shared machine the minimum and the CPU time are the steadier figures).
Shapes: BERT-base (batch 1, 12 heads, seq 128 / 512, head 64, 3-D [batch, seq,
heads * head] inputs) and a grouped-query decoding step (32 query heads over 8
K/V heads, 2048 cached positions, head 128; K/V given whole, no cache concat).
"""
import argparse
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def session(node, inputs, opsets, threads):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def measure(name, sess, feeds, runs):
    for _ in range(5):
        sess.run(None, feeds)
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        sess.run(None, feeds)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    print(f"{name}: wall median {np.median(wall) * 1e6:.0f} us, min {np.min(wall) * 1e6:.0f} us, "
          f"cpu median {np.median(cpu) * 1e6:.0f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    heads, head = 12, 64
    for seq in (128, 512):
        shape = [1, seq, heads * head]
        feeds = {n: rng.uniform(-1, 1, shape).astype(np.float32) for n in "qkv"}
        ins = [(n, shape) for n in "qkv"]
        onnx23 = helper.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=heads, kv_num_heads=heads)
        mha = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["y"], domain="com.microsoft", num_heads=heads)
        measure(f"onnxruntime Attention-23 bert 1x{heads}x{seq}x{head} threads={args.threads}",
                session(onnx23, ins, [("", 23)], args.threads), feeds, args.runs)
        measure(f"onnxruntime MultiHeadAttention bert 1x{heads}x{seq}x{head} threads={args.threads}",
                session(mha, ins, [("", 17), ("com.microsoft", 1)], args.threads), feeds, args.runs)
    hq, hkv, kv, head = 32, 8, 2048, 128
    ins = [("q", [1, hq, 1, head]), ("k", [1, hkv, kv, head]), ("v", [1, hkv, kv, head])]
    feeds = {n: rng.uniform(-1, 1, s).astype(np.float32) for n, s in ins}
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"])
    measure(f"onnxruntime Attention-23 decode gqa {hq}q/{hkv}kv kv={kv} head={head} threads={args.threads}",
            session(node, ins, [("", 23)], args.threads), feeds, args.runs)


if __name__ == "__main__":
    main()

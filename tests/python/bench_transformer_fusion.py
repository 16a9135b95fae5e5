"""Latency of BERT-base / GPT-2-style models compiled by two atc binaries (say,
before and after the transformer fusion passes), run by msame at one thread.
Reports msame's median wall latency and the process CPU time per inference
(CPU time of a --loop N run minus a --loop 1 run, over N - 1).

  python3 tests/python/bench_transformer_fusion.py --atc-before /tmp/atc_old \\
      --atc-after build-x/atc --msame build-x/msame [--loop 10] [--models bert_base,gpt2]
      [--onnx hf_bert=~/.cache/opencann/zoo/hf_bert_base.onnx]
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(__file__))
import model_zoo  # noqa: E402
import transformer_models as tm  # noqa: E402


def models(names):
    out = {}
    if "bert_base" in names:  # tests/python/model_zoo.py, LayerNormalization-17 already
        out["bert_base"] = (model_zoo.transformer_encoder(batch=1, seq=128, vocab=1000, dim=768, heads=12, layers=12),
                            lambda: [np.random.default_rng(0).integers(0, 1000, (1, 128), dtype=np.int64),
                                     np.ones((1, 128), np.int64)])
    if "bert_opset14" in names:
        out["bert_opset14"] = (tm.bert(batch=1, seq=128, dim=768, heads=12, layers=12),
                               lambda: [np.random.default_rng(0).standard_normal((1, 128, 768), dtype=np.float32),
                                        np.ones((1, 128), np.int64)])
    if "gpt2" in names:
        out["gpt2"] = (tm.gpt2(batch=1, seq=128, dim=768, heads=12, layers=12, max_pos=1024),
                       lambda: [np.random.default_rng(0).standard_normal((1, 128, 768), dtype=np.float32)])
    # Long sequences: what the fused kernel saves is the [heads, T, T] score tensors.
    if "bert_long" in names:
        out["bert_long"] = (tm.bert(batch=1, seq=2048, dim=256, heads=4, layers=2),
                            lambda: [np.random.default_rng(0).standard_normal((1, 2048, 256), dtype=np.float32),
                                     np.ones((1, 2048), np.int64)])
    if "gpt2_long" in names:
        out["gpt2_long"] = (tm.gpt2(batch=1, seq=2048, dim=256, heads=4, layers=2, max_pos=2048),
                            lambda: [np.random.default_rng(0).standard_normal((1, 2048, 256), dtype=np.float32)])
    return out


def onnx_file(spec):
    """name=path.onnx: an exported model; int64 inputs get token ids in [0, 1000)
    (all-ones for names containing 'mask'), float inputs standard normal."""
    name, path = spec.split("=", 1)
    model = onnx.load(path)

    def feeds():
        rng = np.random.default_rng(0)
        arrs = []
        for i in model.graph.input:
            shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
            if i.type.tensor_type.elem_type == onnx.TensorProto.INT64:
                arrs.append(np.ones(shape, np.int64) if "mask" in i.name else rng.integers(0, 1000, shape))
            else:
                arrs.append(rng.standard_normal(shape, dtype=np.float32))
        return arrs
    return name, (model, feeds)


def run_msame(msame, om, inputs, loop, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([msame, "--model", om, "--input", ",".join(inputs), "--output", os.path.dirname(om) + "/out",
                        "--loop", str(loop)], capture_output=True, text=True, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    m = re.search(r"median ([0-9.]+)", p.stdout)
    return cpu, float(m.group(1)) if m else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--atc-before", required=True)
    ap.add_argument("--atc-after", required=True)
    ap.add_argument("--msame", required=True)
    ap.add_argument("--loop", type=int, default=10)
    ap.add_argument("--models", default="bert_base,bert_opset14,gpt2")
    ap.add_argument("--onnx", action="append", default=[], help="name=path.onnx, an exported model to time too")
    a = ap.parse_args()
    env = dict(os.environ, OPENCANN_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as d:
        todo = list(models(a.models.split(",")).items()) + [onnx_file(x) for x in a.onnx]
        for name, (model, feeds) in todo:
            path = os.path.join(d, name + ".onnx")
            onnx.save(model, path)
            inputs = []
            for i, arr in enumerate(feeds()):
                p = os.path.join(d, f"{name}_in{i}.npy")
                np.save(p, arr)
                inputs.append(p)
            for tag, atc in (("before", a.atc_before), ("after", a.atc_after)):
                stem = os.path.join(d, f"{name}_{tag}")
                subprocess.run([atc, f"--model={path}", "--framework=5", f"--output={stem}"], check=True,
                               capture_output=True)
                cpu1, _ = run_msame(a.msame, stem + ".om", inputs, 1, env)
                cpun, med = run_msame(a.msame, stem + ".om", inputs, a.loop, env)
                print(f"{name:14s} {tag:6s}  wall median {med:8.2f} ms   CPU/inference "
                      f"{1000 * (cpun - cpu1) / (a.loop - 1):8.2f} ms", flush=True)


if __name__ == "__main__":
    main()

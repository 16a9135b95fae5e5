#!/usr/bin/env python3
"""A small causal transformer language model (bytes in, next byte out) trained
with the MindSpore API on real text that ships with every Python: the
standard library's docstrings. Prints the loss curve and a greedy sample.

    PYTHONPATH=python python3 samples/train/text_transformer.py [--steps 1500] [--out DIR]

Written against MindSpore's documented API (nn.TransformerEncoderLayer with a
causal mask, nn.Adam, value_and_grad + jit)."""
import argparse
import importlib
import inspect
import os
import time

import numpy as np

import mindspore as ms
from mindspore import Tensor, nn, ops

MODULES = ["json", "os", "re", "collections", "itertools", "functools", "pathlib", "string", "textwrap",
           "argparse", "logging", "subprocess", "datetime", "random", "statistics", "math", "heapq", "bisect",
           "shutil", "tempfile", "csv", "difflib", "pprint", "enum", "dataclasses", "contextlib", "zipfile"]


def corpus():
    """The docstrings of some standard-library modules and their public members, as bytes."""
    parts = []
    for name in MODULES:
        mod = importlib.import_module(name)
        for obj in [mod] + [getattr(mod, a) for a in sorted(dir(mod)) if not a.startswith("_")]:
            doc = inspect.getdoc(obj) if (inspect.ismodule(obj) or inspect.isclass(obj) or callable(obj)) else None
            if doc and len(doc) > 80:
                parts.append(doc)
    seen, text = set(), []
    for p in parts:  # members re-exported by several modules once
        if p not in seen:
            seen.add(p)
            text.append(p)
    return "\n\n".join(text).encode("utf-8")


class TinyLM(nn.Cell):
    def __init__(self, context=64, d=128, heads=4, layers=2, ff=256, vocab=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.layers = nn.CellList([nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
                                   for _ in range(layers)])
        self.norm = nn.LayerNorm((d,))
        self.head = nn.Dense(d, vocab)
        mask = np.triu(np.full((context, context), -1e9, np.float32), 1)  # position t sees 0..t
        self.mask = Tensor(mask)
        self.positions = Tensor(np.arange(context, dtype=np.int32))

    def construct(self, ids):
        h = self.tok(ids) + self.pos(self.positions)
        for layer in self.layers:
            h = layer(h, self.mask)
        return self.head(self.norm(h))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--out", default="out/train_text")
    args = ap.parse_args()
    ms.set_seed(0)
    data = np.frombuffer(corpus(), np.uint8)
    split = int(len(data) * 0.95)
    train, held = data[:split], data[split:]
    print(f"corpus: {len(data)} bytes of docstrings from {len(MODULES)} standard-library modules")

    net = TinyLM(args.context)
    loss_fn = nn.CrossEntropyLoss()
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)

    def forward(ids, targets):
        logits = net(ids)
        return loss_fn(logits.reshape(-1, 256), targets.reshape(-1))

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @ms.jit
    def train_step(ids, targets):
        loss, grads = grad_fn(ids, targets)
        opt(grads)
        return loss

    rng = np.random.default_rng(0)

    def batch(src):
        starts = rng.integers(0, len(src) - args.context - 1, args.batch)
        x = np.stack([src[s:s + args.context] for s in starts]).astype(np.int32)
        y = np.stack([src[s + 1:s + args.context + 1] for s in starts]).astype(np.int32)
        return Tensor(x), Tensor(y)

    net.set_train(True)
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        loss = float(train_step(*batch(train)).asnumpy())
        if step == 1 or step % 50 == 0:
            print(f"step {step}: loss {loss:.3f} ({time.perf_counter() - t0:.1f} s)", flush=True)
    net.set_train(False)
    held_loss = float(np.mean([float(forward(*batch(held)).asnumpy()) for _ in range(8)]))
    print(f"held-out loss {held_loss:.3f} nats/byte (uniform: {np.log(256):.3f})")

    os.makedirs(args.out, exist_ok=True)
    ms.save_checkpoint(net, os.path.join(args.out, "tiny_lm.ckpt"))
    ms.set_context(mode=ms.GRAPH_MODE)  # generation: the forward compiled once
    context = list(b"Return a new ".rjust(args.context, b" "))
    out = bytearray()
    for _ in range(120):
        logits = net(Tensor(np.array([context[-args.context:]], np.int32))).asnumpy()
        nxt = int(logits[0, -1].argmax())
        out.append(nxt)
        context.append(nxt)
    print("sample: Return a new " + out.decode("utf-8", "replace"))


if __name__ == "__main__":
    main()

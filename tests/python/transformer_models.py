"""Transformer blocks the way torch.onnx exports them at opset 14 (before
LayerNormalization-17, Gelu-20 and Attention-23 existed), built with
onnx.helper and random weights: every fusion of the fuse-layernorm, fuse-gelu and
fuse-attention passes has a model here."""
import numpy as np
from onnx import TensorProto, helper

from model_zoo import Builder


def decomposed_layer_norm(b, x, dim, square="pow", eps=1e-5):
    """nn.LayerNorm(dim) as torch.onnx writes it before opset 17."""
    mean = b.op("ReduceMean", [x], axes=[-1])
    d = b.op("Sub", [x, mean])
    sq = b.op("Pow", [d, b.const(np.float32(2.0))]) if square == "pow" else b.op("Mul", [d, d])
    var = b.op("ReduceMean", [sq], axes=[-1])
    std = b.op("Sqrt", [b.op("Add", [var, b.const(np.float32(eps))])])
    n = b.op("Div", [d, std])
    g = b.const((1 + 0.1 * b.rng.standard_normal(dim)).astype(np.float32), "ln_g")
    be = b.const((0.1 * b.rng.standard_normal(dim)).astype(np.float32), "ln_b")
    return b.op("Add", [b.op("Mul", [n, g]), be])


def rms_norm(b, x, dim, eps=1e-6):
    """T5 / LLaMA RMSNorm: x * rsqrt(mean(x^2) + eps) * weight."""
    var = b.op("ReduceMean", [b.op("Pow", [x, b.const(np.float32(2.0))])], axes=[-1])
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, b.const(np.float32(eps))])])])
    w = b.const((1 + 0.1 * b.rng.standard_normal(dim)).astype(np.float32), "rms_w")
    return b.op("Mul", [w, b.op("Mul", [x, inv])])


def erf_gelu(b, h):
    return b.op("Mul", [b.op("Mul", [h, b.op("Add", [b.op("Erf", [b.op("Div", [h, b.const(np.float32(np.sqrt(2.0)))])]),
                                                     b.const(np.float32(1.0))])]),
                        b.const(np.float32(0.5))])


def tanh_gelu(b, h):
    """GPT-2's gelu_new: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""
    inner = b.op("Add", [h, b.op("Mul", [b.const(np.float32(0.044715)), b.op("Pow", [h, b.const(np.float32(3.0))])])])
    t = b.op("Tanh", [b.op("Mul", [b.const(np.float32(np.sqrt(2.0 / np.pi))), inner])])
    return b.op("Mul", [b.op("Mul", [b.const(np.float32(0.5)), h]), b.op("Add", [b.const(np.float32(1.0)), t])])


def _heads(b, v, batch, seq, heads, hd, perm):
    return b.op("Transpose", [b.op("Reshape", [v, b.const(np.array([batch, seq, heads, hd], np.int64))])], perm=perm)


def _merge(b, ctx, batch, seq, dim):
    return b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), b.const(np.array([batch, seq, dim], np.int64))])


def bert(batch=1, seq=16, dim=32, heads=4, layers=2, seed=11, opset=14):
    """HF BERT encoder layers: separate Q/K/V projections, scores / sqrt(d) +
    additive mask, decomposed LayerNorm, Erf GELU. Inputs: hidden states and a
    0/1 attention mask."""
    b = Builder(seed, opset=opset)
    hd = dim // heads
    m = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    m = b.op("Mul", [b.op("Sub", [b.const(np.float32(1.0)), m]), b.const(np.float32(-10000.0))])
    m = b.op("Unsqueeze", [m, b.const(np.array([1, 2], np.int64))])
    x = "hidden_in"
    for _ in range(layers):
        q = _heads(b, b.linear(x, dim, dim), batch, seq, heads, hd, [0, 2, 1, 3])
        k = _heads(b, b.linear(x, dim, dim), batch, seq, heads, hd, [0, 2, 3, 1])
        v = _heads(b, b.linear(x, dim, dim), batch, seq, heads, hd, [0, 2, 1, 3])
        s = b.op("Div", [b.op("MatMul", [q, k]), b.const(np.float32(np.sqrt(hd)))])
        p = b.op("Softmax", [b.op("Add", [s, m])], axis=-1)
        ctx = _merge(b, b.op("MatMul", [p, v]), batch, seq, dim)
        x = decomposed_layer_norm(b, b.op("Add", [b.linear(ctx, dim, dim), x]), dim, eps=1e-12)
        h = erf_gelu(b, b.linear(x, dim, 4 * dim))
        x = decomposed_layer_norm(b, b.op("Add", [b.linear(h, 4 * dim, dim), x]), dim, square="mul", eps=1e-12)
    b.nodes[-1].output[0] = "hidden"
    return b.model(
        [helper.make_tensor_value_info("hidden_in", TensorProto.FLOAT, [batch, seq, dim]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [batch, seq, dim])], "bert_opset14")


def conv1d(b, x, batch, seq, din, dout):
    """transformers' Conv1D as torch.onnx exports it: Reshape to [batch*seq, din],
    Gemm with the [din, dout] weight and bias, Reshape back."""
    w = b.const((b.rng.standard_normal((din, dout)) / np.sqrt(din)).astype(np.float32), "w")
    bias = b.const((0.02 * b.rng.standard_normal(dout)).astype(np.float32), "b")
    flat = b.op("Reshape", [x, b.const(np.array([-1, din], np.int64))])
    return b.op("Reshape", [b.op("Gemm", [flat, w, bias]), b.const(np.array([batch, seq, dout], np.int64))])


def gpt2(batch=1, seq=16, dim=32, heads=4, layers=2, seed=12, opset=14, max_pos=64, eager_mask=False,
         gemm_linear=False):
    """HF GPT-2 blocks: one c_attn projection split into Q/K/V, scores / sqrt(d),
    Where(causal slice of the constant `bias` buffer, scores, finfo.min),
    pre-LayerNorm (decomposed), gelu_new (tanh). eager_mask: the spelling of
    recent transformers' eager attention instead: scores * (1/sqrt(d)) + a
    constant additive causal mask (0 / finfo.min), then Cast(float) of the
    probabilities before MatMul(V). gemm_linear: every projection as the HF
    export's Conv1D (Reshape -> Gemm -> Reshape) instead of MatMul + Add."""
    b = Builder(seed, opset=opset)
    hd = dim // heads
    tri = np.tril(np.ones((max_pos, max_pos), bool)).reshape(1, 1, max_pos, max_pos)
    bias_buf = b.const(tri, "attn_bias")
    causal = b.op("Slice", [bias_buf, b.const(np.array([0, 0], np.int64)), b.const(np.array([seq, seq], np.int64)),
                            b.const(np.array([2, 3], np.int64))])
    min_f = b.const(np.float32(np.finfo(np.float32).min))

    def linear(x, din, dout):
        return conv1d(b, x, batch, seq, din, dout) if gemm_linear else b.linear(x, din, dout)

    x = "hidden_in"
    for _ in range(layers):
        a = decomposed_layer_norm(b, x, dim, square="mul")
        qkv = linear(a, dim, 3 * dim)
        q, k, v = b.op("Split", [qkv, b.const(np.array([dim] * 3, np.int64))], n_out=3, axis=2)
        q = _heads(b, q, batch, seq, heads, hd, [0, 2, 1, 3])
        k = _heads(b, k, batch, seq, heads, hd, [0, 2, 3, 1])
        v = _heads(b, v, batch, seq, heads, hd, [0, 2, 1, 3])
        if eager_mask:
            s = b.op("Mul", [b.op("MatMul", [q, k]), b.const(np.float32(1 / np.sqrt(hd)))])
            add_mask = np.where(np.tril(np.ones((seq, seq), bool)), 0, np.finfo(np.float32).min)
            s = b.op("Add", [s, b.const(add_mask.astype(np.float32).reshape(1, 1, seq, seq))])
            p = b.op("Cast", [b.op("Softmax", [s], axis=-1)], to=TensorProto.FLOAT)
        else:
            s = b.op("Div", [b.op("MatMul", [q, k]), b.const(np.float32(np.sqrt(hd)))])
            s = b.op("Where", [causal, s, min_f])
            p = b.op("Softmax", [s], axis=-1)
        ctx = _merge(b, b.op("MatMul", [p, v]), batch, seq, dim)
        x = b.op("Add", [x, linear(ctx, dim, dim)])
        h = tanh_gelu(b, linear(decomposed_layer_norm(b, x, dim), dim, 4 * dim))
        x = b.op("Add", [x, linear(h, 4 * dim, dim)])
    x = decomposed_layer_norm(b, x, dim)
    b.nodes[-1].output[0] = "hidden"
    return b.model([helper.make_tensor_value_info("hidden_in", TensorProto.FLOAT, [batch, seq, dim])],
                   [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [batch, seq, dim])], "gpt2_opset14")


def llama_mlp(batch=1, seq=8, dim=32, hidden=64, seed=13, opset=14):
    """RMSNorm + SiLU-gated MLP: gate and up projections read the same input."""
    b = Builder(seed, opset=opset)
    a = rms_norm(b, "hidden_in", dim)
    gate = b.op("MatMul", [a, b.weight((dim, hidden), dim)])
    up = b.op("MatMul", [a, b.weight((dim, hidden), dim)])
    act = b.op("Mul", [gate, b.op("Sigmoid", [gate])])
    y = b.op("MatMul", [b.op("Mul", [act, up]), b.weight((hidden, dim), hidden)])
    out = b.op("Add", ["hidden_in", y])
    b.nodes[-1].output[0] = "hidden"
    return b.model([helper.make_tensor_value_info("hidden_in", TensorProto.FLOAT, [batch, seq, dim])],
                   [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [batch, seq, dim])], "llama_mlp")

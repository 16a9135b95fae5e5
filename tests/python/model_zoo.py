"""Architectures built with onnx.helper, with random weights (fixed seeds),
laid out the way exporters (torch.onnx) emit them: Conv+BatchNormalization+Relu
blocks, residual Adds, depthwise convs with Clip(0,6), attention written with
Shape/Gather/Concat/Reshape chains, Erf-based GELU, LayerNormalization."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed=0, opset=17):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.opset = [], [], opset
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, arr, prefix="c"):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def op(self, op_type, inputs, n_out=1, **attrs):
        base = self.name(op_type.lower())
        outs = [f"{base}_out{i}" if n_out > 1 else base for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=base, **attrs))
        return outs if n_out > 1 else outs[0]

    def weight(self, shape, fan_in):
        return self.const((self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), "w")

    def conv_bn(self, x, cin, cout, k, stride=1, group=1, act="relu"):
        w = self.weight((cout, cin // group, k, k), cin // group * k * k)
        y = self.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
                    pads=[k // 2] * 4, group=group)
        scale = self.const((1.0 + 0.1 * self.rng.standard_normal(cout)).astype(np.float32), "bn_scale")
        bias = self.const((0.1 * self.rng.standard_normal(cout)).astype(np.float32), "bn_bias")
        mean = self.const((0.1 * self.rng.standard_normal(cout)).astype(np.float32), "bn_mean")
        var = self.const((0.5 + self.rng.random(cout)).astype(np.float32), "bn_var")
        y = self.op("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5)
        if act == "relu":
            y = self.op("Relu", [y])
        elif act == "relu6":
            y = self.op("Clip", [y, self.const(np.float32(0.0)), self.const(np.float32(6.0))])
        return y

    def linear(self, x, din, dout):
        w = self.const((self.rng.standard_normal((din, dout)) / np.sqrt(din)).astype(np.float32), "w")
        b = self.const((0.02 * self.rng.standard_normal(dout)).astype(np.float32), "b")
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def model(self, inputs, outputs, name):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="opencann-tests")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def resnet(batch=1, size=64, widths=(16, 32, 64), classes=10, seed=0):
    """A ResNet-18-style net: stem conv+maxpool, basic blocks with projection
    shortcuts, global average pool, Flatten, Gemm."""
    b = Builder(seed)
    x = b.conv_bn("input", 3, widths[0], 7, stride=2)
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = widths[0]
    for i, w in enumerate(widths):
        for j in range(2):
            stride = 2 if (i > 0 and j == 0) else 1
            y = b.conv_bn(x, cin, w, 3, stride)
            y = b.conv_bn(y, w, w, 3, 1, act=None)
            sc = b.conv_bn(x, cin, w, 1, stride, act=None) if (stride != 1 or cin != w) else x
            x = b.op("Relu", [b.op("Add", [y, sc])])
            cin = w
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    wfc = b.const((b.rng.standard_normal((classes, cin)) / np.sqrt(cin)).astype(np.float32), "fc_w")
    bfc = b.const(np.zeros(classes, np.float32), "fc_b")
    x = b.op("Gemm", [x, wfc, bfc], transB=1)
    out = b.op("Identity", [x])
    b.nodes[-1].output[0] = "logits"
    return b.model([helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])], "resnet")


def mobilenet_v2(batch=1, size=64, classes=10, seed=1):
    """MobileNetV2-style inverted residuals: 1x1 expand + ReLU6, 3x3 depthwise +
    ReLU6, 1x1 project, residual when shapes match."""
    b = Builder(seed)
    x = b.conv_bn("input", 3, 16, 3, stride=2, act="relu6")
    cin = 16
    for (t, c, n, s) in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 2, 2), (6, 48, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = x
            if t != 1:
                y = b.conv_bn(y, cin, hidden, 1, act="relu6")
            y = b.conv_bn(y, hidden, hidden, 3, stride, group=hidden, act="relu6")
            y = b.conv_bn(y, hidden, c, 1, act=None)
            if stride == 1 and cin == c:
                y = b.op("Add", [x, y])
            x, cin = y, c
    x = b.conv_bn(x, cin, 128, 1, act="relu6")
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Reshape", [x, b.const(np.array([batch, 128], np.int64))])
    wfc = b.const((b.rng.standard_normal((128, classes)) / np.sqrt(128)).astype(np.float32), "fc_w")
    x = b.op("MatMul", [x, wfc])
    x = b.op("Softmax", [x], axis=-1)
    b.nodes[-1].output[0] = "probs"
    return b.model([helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
                   [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, classes])], "mobilenet_v2")


def transformer_encoder(batch=1, seq=16, vocab=100, dim=32, heads=4, layers=2, seed=2):
    """A BERT-style encoder: token + position embeddings (Gather), LayerNorm,
    multi-head self-attention with an additive mask, exact (Erf) GELU MLP.
    Head splitting uses Shape/Gather/Unsqueeze/Concat/Reshape as exporters emit."""
    b = Builder(seed)
    hd = dim // heads
    tok = b.const((0.5 * b.rng.standard_normal((vocab, dim))).astype(np.float32), "tok_emb")
    pos = b.const((0.5 * b.rng.standard_normal((seq, dim))).astype(np.float32), "pos_emb")
    x = b.op("Add", [b.op("Gather", [tok, "input_ids"]), pos])

    def layer_norm(v):
        g = b.const((1 + 0.1 * b.rng.standard_normal(dim)).astype(np.float32), "ln_g")
        be = b.const((0.1 * b.rng.standard_normal(dim)).astype(np.float32), "ln_b")
        return b.op("LayerNormalization", [v, g, be], axis=-1, epsilon=1e-5)

    # mask [B, T] of 1/0 -> additive [B, 1, 1, T]
    m = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    m = b.op("Mul", [b.op("Sub", [b.const(np.float32(1.0)), m]), b.const(np.float32(-10000.0))])
    m = b.op("Unsqueeze", [m, b.const(np.array([1, 2], np.int64))])
    x = layer_norm(x)
    for _ in range(layers):
        shape = b.op("Shape", [x])
        bdim = b.op("Unsqueeze", [b.op("Gather", [shape, b.const(np.array(0, np.int64))], axis=0),
                                  b.const(np.array([0], np.int64))])
        tdim = b.op("Unsqueeze", [b.op("Gather", [shape, b.const(np.array(1, np.int64))], axis=0),
                                  b.const(np.array([0], np.int64))])
        split_shape = b.op("Concat", [bdim, tdim, b.const(np.array([heads, hd], np.int64))], axis=0)

        def heads_of(v, perm):
            return b.op("Transpose", [b.op("Reshape", [v, split_shape])], perm=perm)

        q = heads_of(b.linear(x, dim, dim), [0, 2, 1, 3])
        k = heads_of(b.linear(x, dim, dim), [0, 2, 3, 1])
        v = heads_of(b.linear(x, dim, dim), [0, 2, 1, 3])
        s = b.op("Div", [b.op("MatMul", [q, k]), b.const(np.float32(np.sqrt(hd)))])
        p = b.op("Softmax", [b.op("Add", [s, m])], axis=-1)
        ctx = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
        merged = b.op("Concat", [bdim, tdim, b.const(np.array([dim], np.int64))], axis=0)
        ctx = b.op("Reshape", [ctx, merged])
        x = layer_norm(b.op("Add", [x, b.linear(ctx, dim, dim)]))
        h = b.linear(x, dim, 4 * dim)
        gelu = b.op("Mul", [b.op("Mul", [h, b.op("Add", [b.op("Erf", [b.op("Div", [h, b.const(np.float32(np.sqrt(2.0)))])]),
                                                         b.const(np.float32(1.0))])]),
                            b.const(np.float32(0.5))])
        x = layer_norm(b.op("Add", [x, b.linear(gelu, 4 * dim, dim)]))
    b.nodes[-1].output[0] = "hidden"
    return b.model(
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [batch, seq, dim])], "transformer")


def lstm_classifier(batch=2, seq=12, features=8, hidden=16, classes=5, seed=3):
    """Bidirectional LSTM then GRU over a sequence, last step -> Gemm."""
    b = Builder(seed)
    d = 2
    w = b.const((0.3 * b.rng.standard_normal((d, 4 * hidden, features))).astype(np.float32), "lstm_w")
    r = b.const((0.3 * b.rng.standard_normal((d, 4 * hidden, hidden))).astype(np.float32), "lstm_r")
    bb = b.const((0.1 * b.rng.standard_normal((d, 8 * hidden))).astype(np.float32), "lstm_b")
    y, _, _ = b.op("LSTM", ["input", w, r, bb], n_out=3, hidden_size=hidden, direction="bidirectional")
    # Y: [seq, 2, batch, hidden] -> [seq, batch, 2*hidden]
    y = b.op("Reshape", [b.op("Transpose", [y], perm=[0, 2, 1, 3]),
                         b.const(np.array([seq, batch, 2 * hidden], np.int64))])
    gw = b.const((0.3 * b.rng.standard_normal((1, 3 * hidden, 2 * hidden))).astype(np.float32), "gru_w")
    gr = b.const((0.3 * b.rng.standard_normal((1, 3 * hidden, hidden))).astype(np.float32), "gru_r")
    gb = b.const((0.1 * b.rng.standard_normal((1, 6 * hidden))).astype(np.float32), "gru_b")
    _, h = b.op("GRU", [y, gw, gr, gb], n_out=2, hidden_size=hidden, linear_before_reset=1)
    h = b.op("Squeeze", [h, b.const(np.array([0], np.int64))])
    fw = b.const((b.rng.standard_normal((classes, hidden)) / 4).astype(np.float32), "fc_w")
    out = b.op("Gemm", [h, fw], transB=1)
    b.nodes[-1].output[0] = "logits"
    return b.model([helper.make_tensor_value_info("input", TensorProto.FLOAT, [seq, batch, features])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])], "lstm_gru")

"""The functional ops (`mindspore.ops.xxx`), each one or a few ONNX nodes
(`_engine.emit_op`): run at once in PyNative, recorded when traced."""
import builtins
import numbers

import numpy as np

from .. import _engine
from ..common import dtype as mstype
from ..common.tensor import Tensor

_op = _engine.emit_op


def _t(x, like=None):
    """x as a Tensor; a Python number takes the type of `like`."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (numbers.Number, np.number, bool)) and like is not None:
        return Tensor._wrap(np.asarray(x, like._np_dtype))
    return Tensor(x)


def _i64(v):
    return Tensor._wrap(np.asarray(v, np.int64))


def _axes(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    return [int(a) % ndim if ndim else int(a) for a in axis]


def _binary(op, a, b):
    if isinstance(a, Tensor):
        b = _t(b, a)
    elif isinstance(b, Tensor):
        a = _t(a, b)
    else:
        a, b = _t(a), _t(b)
    if a._np_dtype != b._np_dtype:
        common = np.promote_types(a._np_dtype, b._np_dtype)
        a, b = cast(a, common), cast(b, common)
    return _op(op, [a, b])[0]


def cast(x, dtype):
    x = _t(x)
    to = mstype.to_np(dtype)
    if x._np_dtype == to:
        return x
    from .. import _backend
    return _op("Cast", [x], {"to": _backend.code_of(to)})[0]


def identity(x):
    return _op("Identity", [_t(x)])[0]


def add(a, b): return _binary("Add", a, b)
def sub(a, b): return _binary("Sub", a, b)
def mul(a, b): return _binary("Mul", a, b)
def div(a, b): return _binary("Div", a, b)
def maximum(a, b): return _binary("Max", a, b)
def minimum(a, b): return _binary("Min", a, b)
def less(a, b): return _binary("Less", a, b)
def less_equal(a, b): return _binary("LessOrEqual", a, b)
def greater(a, b): return _binary("Greater", a, b)
def greater_equal(a, b): return _binary("GreaterOrEqual", a, b)
def equal(a, b): return _binary("Equal", a, b)
def not_equal(a, b): return logical_not(equal(a, b))
def logical_not(x): return _op("Not", [_t(x)])[0]


def pow(a, b):
    return _binary("Pow", a, b)


def matmul(a, b):
    return _binary("MatMul", a, b)


def neg(x): return _op("Neg", [_t(x)])[0]
def abs(x): return _op("Abs", [_t(x)])[0]
def exp(x): return _op("Exp", [_t(x)])[0]
def log(x): return _op("Log", [_t(x)])[0]
def sqrt(x): return _op("Sqrt", [_t(x)])[0]
def rsqrt(x): return _op("Reciprocal", [sqrt(x)])[0]
def square(x): return mul(x, x)
def reciprocal(x): return _op("Reciprocal", [_t(x)])[0]
def sin(x): return _op("Sin", [_t(x)])[0]
def cos(x): return _op("Cos", [_t(x)])[0]
def erf(x): return _op("Erf", [_t(x)])[0]
def floor(x): return _op("Floor", [_t(x)])[0]
def relu(x): return _op("Relu", [_t(x)])[0]
def sigmoid(x): return _op("Sigmoid", [_t(x)])[0]
def tanh(x): return _op("Tanh", [_t(x)])[0]
def softplus(x): return _op("Softplus", [_t(x)])[0]
def leaky_relu(x, alpha=0.2): return _op("LeakyRelu", [_t(x)], {"alpha": float(alpha)})[0]
def elu(x, alpha=1.0): return _op("Elu", [_t(x)], {"alpha": float(alpha)})[0]
def silu(x): return mul(x, sigmoid(x))
def relu6(x): return clamp(x, 0.0, 6.0)


def gelu(x, approximate="none"):
    if approximate is True:
        approximate = "tanh"
    if approximate is False:
        approximate = "none"
    return _op("Gelu", [_t(x)], {"approximate": approximate})[0]


def clamp(x, min=None, max=None):
    x = _t(x)
    lo = None if min is None else _t(min, x)
    hi = None if max is None else _t(max, x)
    return _op("Clip", [x, lo, hi])[0]


clip_by_value = clamp


def softmax(x, axis=-1):
    return _op("Softmax", [_t(x)], {"axis": int(axis)})[0]


def log_softmax(x, axis=-1):
    return _op("LogSoftmax", [_t(x)], {"axis": int(axis)})[0]


# ---- shape --------------------------------------------------------------------

def reshape(x, shape):
    x = _t(x)
    shape = [int(d) for d in shape]
    return _op("Reshape", [x, _i64(shape)])[0]


def flatten(x, order="C", *, start_dim=1, end_dim=-1):
    x = _t(x)
    nd = x.ndim
    if nd == 0:
        return reshape(x, [1])
    s, e = start_dim % nd, end_dim % nd
    shape = list(x.shape[:s]) + [-1] + list(x.shape[e + 1:])
    return reshape(x, shape)


def transpose(x, perm):
    return _op("Transpose", [_t(x)], {"perm": [int(p) for p in perm]})[0]


permute = transpose


def swapaxes(x, a, b):
    x = _t(x)
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def squeeze(x, axis=None):
    x = _t(x)
    if axis is None:
        axis = [i for i, d in enumerate(x.shape) if d == 1]
    return _op("Squeeze", [x, _i64(_axes(axis, x.ndim))])[0]


def expand_dims(x, axis):
    x = _t(x)
    return _op("Unsqueeze", [x, _i64([int(axis) % (x.ndim + 1)])])[0]


unsqueeze = expand_dims


def broadcast_to(x, shape):
    x = _t(x)
    shape = [x.shape[i - (len(shape) - x.ndim)] if d == -1 else d for i, d in enumerate(shape)]
    return _op("Expand", [x, _i64(shape)])[0]


def concat(tensors, axis=0):
    return _op("Concat", [_t(t) for t in tensors], {"axis": int(axis)})[0]


cat = concat


def stack(tensors, axis=0):
    return concat([expand_dims(t, axis) for t in tensors], axis)


def split(x, split_size_or_sections, axis=0):
    x = _t(x)
    n = x.shape[axis]
    if isinstance(split_size_or_sections, int):
        sizes = [split_size_or_sections] * (n // split_size_or_sections)
        if n % split_size_or_sections:
            sizes.append(n % split_size_or_sections)
    else:
        sizes = list(split_size_or_sections)
    return tuple(_op("Split", [x, _i64(sizes)], {"axis": int(axis)}, n_out=len(sizes)))


def gather(x, indices, axis=0):
    return _op("Gather", [_t(x), _t(indices)], {"axis": int(axis)})[0]


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1):
    indices = _t(indices)
    values = Tensor._wrap(np.asarray([off_value, on_value], np.float32))
    return _op("OneHot", [indices, _i64([depth]), values], {"axis": int(axis)})[0]


def where(cond, x, y):
    x = _t(x)
    y = _t(y, x)
    return _op("Where", [_t(cond), x, y])[0]


def zeros_like(x):
    x = _t(x)
    return Tensor._wrap(np.zeros(x.shape, x._np_dtype)) if x._trace is None else mul(x, 0)


def ones_like(x):
    x = _t(x)
    return Tensor._wrap(np.ones(x.shape, x._np_dtype)) if x._trace is None else add(mul(x, 0), 1)


def getitem(x, index):
    """Indexing with ints, slices, None and Ellipsis (Slice, Squeeze, Unsqueeze); a 1-D
    integer tensor or list indexes the first axis (Gather)."""
    if isinstance(index, (Tensor, list, np.ndarray)):
        idx = _t(np.asarray(index) if not isinstance(index, Tensor) else index)
        return gather(x, idx, 0)
    if not isinstance(index, tuple):
        index = (index,)
    n_real = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    expanded = []
    for i in index:
        if i is Ellipsis:
            expanded.extend([slice(None)] * (x.ndim - n_real))
        else:
            expanded.append(i)
    starts, ends, axes, steps, squeeze_axes, new_axes = [], [], [], [], [], []
    dim = 0
    out_dim = 0
    for i in expanded:
        if i is None:
            new_axes.append(out_dim)
            out_dim += 1
            continue
        size = x.shape[dim]
        if isinstance(i, (int, np.integer)):
            k = int(i) + size if i < 0 else int(i)
            if not 0 <= k < size:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
            starts.append(k), ends.append(k + 1), axes.append(dim), steps.append(1)
            squeeze_axes.append(dim)
        elif isinstance(i, slice):
            b, e, s = i.indices(size)
            if (b, e, s) != (0, size, 1):
                if s < 0 and i.stop is None:
                    e = -size - 1
                starts.append(b), ends.append(e), axes.append(dim), steps.append(s)
            out_dim += 1
        else:
            raise TypeError(f"Tensor index of type {type(i).__name__} is not supported")
        dim += 1
    y = _t(x)
    if axes:
        y = _op("Slice", [y, _i64(starts), _i64(ends), _i64(axes), _i64(steps)])[0]
    if squeeze_axes:
        y = _op("Squeeze", [y, _i64(squeeze_axes)])[0]
    for a in new_axes:
        y = expand_dims(y, a)
    return y


# ---- reductions -----------------------------------------------------------------

def _reduce(op, x, axis, keepdims):
    x = _t(x)
    axes = _axes(axis, x.ndim)
    if axes is not None and len(axes) == 0:
        return x
    ins = [x] if axes is None else [x, _i64(axes)]
    if op in ("ReduceMax", "ReduceMin") and axes is not None:  # opset 18: axes as an input
        pass
    return _op(op, ins, {"keepdims": int(bool(keepdims))})[0]


def reduce_sum(x, axis=None, keep_dims=False): return _reduce("ReduceSum", x, axis, keep_dims)
def reduce_mean(x, axis=None, keep_dims=False): return _reduce("ReduceMean", x, axis, keep_dims)
def reduce_max(x, axis=None, keep_dims=False): return _reduce("ReduceMax", x, axis, keep_dims)
def reduce_min(x, axis=None, keep_dims=False): return _reduce("ReduceMin", x, axis, keep_dims)


def sum(x, dim=None, keepdim=False, *, dtype=None):
    return reduce_sum(x, dim, keepdim)


def mean(x, axis=None, keep_dims=False):
    return reduce_mean(x, axis, keep_dims)


def _arg(op, x, axis, keepdims):
    x = _t(x)
    if axis is None:
        x = reshape(x, [-1])
        axis = 0
    return _op(op, [x], {"axis": int(axis), "keepdims": int(bool(keepdims))})[0]


def argmax(x, axis=None, keepdims=False): return _arg("ArgMax", x, axis, keepdims)
def argmin(x, axis=None, keepdims=False): return _arg("ArgMin", x, axis, keepdims)


# ---- layers ---------------------------------------------------------------------

def dense(x, weight, bias=None):
    """x @ weight^T + bias (weight: [out, in], MindSpore's and torch's layout)."""
    x = _t(x)
    if x.ndim == 2:
        return _op("Gemm", [x, weight, bias], {"transB": 1})[0]
    y = matmul(x, transpose(weight, [1, 0]))
    return y if bias is None else add(y, bias)


def _pads(padding, pad_mode, n=2):
    if pad_mode is not None and pad_mode.lower() != "pad":
        return None
    if isinstance(padding, int):
        return [padding] * (2 * n)
    padding = list(padding)
    if len(padding) == n:
        return padding + padding
    if len(padding) == 2 * n:  # MindSpore's (top, bottom, left, right)
        return [padding[0], padding[2], padding[1], padding[3]] if n == 2 else padding
    raise ValueError(f"padding must be an int or {n} or {2 * n} ints, got {padding}")


def _pair(v, n=2):
    return [int(v)] * n if isinstance(v, int) else [int(e) for e in v]


def _padding(pad_mode, padding):
    """MindSpore's pad_mode / padding as ONNX attributes."""
    mode = (pad_mode or "valid").lower()
    if mode == "same":
        return {"auto_pad": "SAME_UPPER"}
    if mode == "valid":
        return {"pads": [0, 0, 0, 0]}
    if mode == "pad":
        return {"pads": _pads(padding, "pad")}
    raise ValueError(f"pad_mode must be 'same', 'valid' or 'pad', got '{pad_mode}'")


def conv2d(x, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, group=1):
    attrs = {"strides": _pair(stride), "dilations": _pair(dilation), "group": int(group)}
    attrs.update(_padding(pad_mode, padding))
    return _op("Conv", [_t(x), weight, bias], attrs)[0]


def conv_transpose2d(x, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, group=1,
                     output_padding=0):
    attrs = {"strides": _pair(stride), "dilations": _pair(dilation), "group": int(group)}
    attrs.update(_padding(pad_mode, padding))
    if output_padding:
        attrs["output_padding"] = _pair(output_padding)
    return _op("ConvTranspose", [_t(x), weight, bias], attrs)[0]


def _pool(op, x, kernel_size, stride, pad_mode, padding=0, ceil_mode=False, count_include_pad=True):
    attrs = {"kernel_shape": _pair(kernel_size), "strides": _pair(stride if stride is not None else kernel_size)}
    attrs.update(_padding(pad_mode, padding))
    if ceil_mode:
        attrs["ceil_mode"] = 1
    if op == "AveragePool":
        explicit = (pad_mode or "valid").lower() == "pad"
        attrs["count_include_pad"] = int(bool(count_include_pad)) if explicit else 0
    return _op(op, [_t(x)], attrs)[0]


def max_pool2d(x, kernel_size, stride=None, pad_mode="valid", padding=0, ceil_mode=False):
    return _pool("MaxPool", x, kernel_size, stride, pad_mode, padding, ceil_mode)


def avg_pool2d(x, kernel_size, stride=None, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True):
    return _pool("AveragePool", x, kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad)


def adaptive_avg_pool2d(x, output_size):
    x = _t(x)
    out = _pair(output_size) if output_size is not None else [1, 1]
    if out == [1, 1]:
        return _op("GlobalAveragePool", [x])[0]
    h, w = x.shape[-2:]
    if h % out[0] or w % out[1]:
        raise NotImplementedError(f"adaptive_avg_pool2d: input {h}x{w} is not a multiple of output {out}")
    k = [h // out[0], w // out[1]]
    return _pool("AveragePool", x, k, k, "valid")


def dropout(x, p=0.5, training=True, seed=None):
    x = _t(x)
    if not training or p == 0:
        return x
    attrs = {"seed": None if seed is None else int(seed)}
    ratio = Tensor._wrap(np.asarray(p, np.float32))
    flag = Tensor._wrap(np.asarray(True))
    return _op("Dropout", [x, ratio, flag], attrs, n_out=2)[0]


def layer_norm(x, gamma, beta, begin_norm_axis=-1, epsilon=1e-7):
    x = _t(x)
    return _op("LayerNormalization", [x, gamma, beta], {"axis": int(begin_norm_axis), "epsilon": float(epsilon)})[0]


def embedding(indices, table, padding_idx=None):
    return gather(table, indices, 0)


# ---- losses ---------------------------------------------------------------------

def _reduce_loss(v, reduction):
    if reduction == "mean":
        return reduce_mean(v)
    if reduction == "sum":
        return reduce_sum(v)
    if reduction == "none":
        return v
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got '{reduction}'")


def cross_entropy(logits, labels, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    logits = _t(logits)
    labels = _t(labels)
    if labels._np_dtype.kind == "f":  # class probabilities
        if label_smoothing:
            c = logits.shape[1]
            labels = add(mul(labels, 1 - label_smoothing), label_smoothing / c)
        per = neg(reduce_sum(mul(log_softmax(logits, 1), labels), 1))
        return _reduce_loss(per, reduction)
    if label_smoothing:
        raise NotImplementedError("cross_entropy: label_smoothing with class indices is not supported here")
    if labels._np_dtype not in (np.int32, np.int64):
        labels = cast(labels, mstype.int64)
    attrs = {"reduction": reduction, "ignore_index": int(ignore_index)}
    return _op("SoftmaxCrossEntropyLoss", [logits, labels, weight], attrs)[0]


def nll_loss(log_probs, labels, weight=None, ignore_index=-100, reduction="mean"):
    labels = _t(labels)
    if labels._np_dtype not in (np.int32, np.int64):
        labels = cast(labels, mstype.int64)
    return _op("NegativeLogLikelihoodLoss", [_t(log_probs), labels, weight],
               {"reduction": reduction, "ignore_index": int(ignore_index)})[0]


def mse_loss(x, y, reduction="mean"):
    d = sub(x, y)
    return _reduce_loss(mul(d, d), reduction)


def l1_loss(x, y, reduction="mean"):
    return _reduce_loss(abs(sub(x, y)), reduction)


def binary_cross_entropy_with_logits(logits, labels, weight=None, pos_weight=None, reduction="mean"):
    # max(x, 0) - x * y + log(1 + exp(-|x|)), with pos_weight: (1 + (p - 1) y) scales the log term
    x, y = _t(logits), _t(labels)
    softplus_neg = add(relu(neg(x)), log(add(exp(neg(abs(x))), 1.0)))  # log(1 + exp(-x))
    if pos_weight is not None:
        lw = add(mul(sub(pos_weight, 1.0), y), 1.0)
        per = add(mul(sub(1.0, y), x), mul(lw, softplus_neg))
    else:
        per = add(mul(sub(1.0, y), x), softplus_neg)
    if weight is not None:
        per = mul(per, weight)
    return _reduce_loss(per, reduction)


def assign(variable, value):
    _engine.assign(variable, value)
    return variable


def depend(value, expr):
    return value


def stop_gradient(x):
    if _engine.current_trace() is not None:
        raise NotImplementedError("ops.stop_gradient inside a traced (graph-mode or differentiated) function is "
                                  "not supported yet")
    return x  # PyNative values carry no gradient tape


def zeros(shape, dtype=None):
    return Tensor._wrap(np.zeros(shape, mstype.to_np(dtype or mstype.float32)))


def ones(shape, dtype=None):
    return Tensor._wrap(np.ones(shape, mstype.to_np(dtype or mstype.float32)))


def fill(dtype, shape, value):
    return Tensor._wrap(np.full(shape, value, mstype.to_np(dtype)))


def arange(start=0, end=None, step=1, *, dtype=None):
    if end is None:
        start, end = 0, start
    return Tensor._wrap(np.arange(start, end, step, dtype=mstype.to_np(dtype) if dtype else None))

"""Primitive ops as classes (`ops.ReLU()(x)`, `ops.MatMul(transpose_b=True)(a, b)`)."""
import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from . import functional as F


class Primitive:
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args):
        return self.construct(*args)


def _simple(fn, name):
    return type(name, (Primitive,), {"construct": lambda self, *a: fn(*a)})


Add = _simple(F.add, "Add")
Sub = _simple(F.sub, "Sub")
Mul = _simple(F.mul, "Mul")
Div = _simple(F.div, "Div")
RealDiv = _simple(F.div, "RealDiv")
Maximum = _simple(F.maximum, "Maximum")
Minimum = _simple(F.minimum, "Minimum")
Pow = _simple(F.pow, "Pow")
Neg = _simple(F.neg, "Neg")
Abs = _simple(F.abs, "Abs")
Exp = _simple(F.exp, "Exp")
Log = _simple(F.log, "Log")
Sqrt = _simple(F.sqrt, "Sqrt")
Rsqrt = _simple(F.rsqrt, "Rsqrt")
Square = _simple(F.square, "Square")
ReLU = _simple(F.relu, "ReLU")
ReLU6 = _simple(F.relu6, "ReLU6")
Sigmoid = _simple(F.sigmoid, "Sigmoid")
Tanh = _simple(F.tanh, "Tanh")
Erf = _simple(F.erf, "Erf")
Reshape = _simple(F.reshape, "Reshape")
Transpose = _simple(F.transpose, "Transpose")
ExpandDims = _simple(F.expand_dims, "ExpandDims")
Gather = _simple(F.gather, "Gather")
Select = _simple(F.where, "Select")
Equal = _simple(F.equal, "Equal")
Less = _simple(F.less, "Less")
Greater = _simple(F.greater, "Greater")
Cast = _simple(F.cast, "Cast")
Assign = _simple(F.assign, "Assign")
Depend = _simple(F.depend, "Depend")
ZerosLike = _simple(F.zeros_like, "ZerosLike")
OnesLike = _simple(F.ones_like, "OnesLike")
Identity = _simple(F.identity, "Identity")


class MatMul(Primitive):
    def __init__(self, transpose_a=False, transpose_b=False):
        self.ta, self.tb = transpose_a, transpose_b

    def construct(self, a, b):
        if self.ta:
            a = F.swapaxes(a, -1, -2)
        if self.tb:
            b = F.swapaxes(b, -1, -2)
        return F.matmul(a, b)


BatchMatMul = MatMul


class BiasAdd(Primitive):
    def __init__(self, data_format="NCHW"):
        self.fmt = data_format

    def construct(self, x, b):
        if x.ndim > 2 and self.fmt == "NCHW":
            b = F.reshape(b, [-1] + [1] * (x.ndim - 2))
        return F.add(x, b)


class Softmax(Primitive):
    def __init__(self, axis=-1):
        self.axis = axis if isinstance(axis, int) else axis[0]

    def construct(self, x):
        return F.softmax(x, self.axis)


class LogSoftmax(Softmax):
    def construct(self, x):
        return F.log_softmax(x, self.axis)


class _Reduce(Primitive):
    fn = None

    def __init__(self, keep_dims=False):
        self.keep_dims = keep_dims

    def construct(self, x, axis=()):
        return type(self).fn(x, None if axis == () else axis, self.keep_dims)


ReduceSum = type("ReduceSum", (_Reduce,), {"fn": staticmethod(F.reduce_sum)})
ReduceMean = type("ReduceMean", (_Reduce,), {"fn": staticmethod(F.reduce_mean)})
ReduceMax = type("ReduceMax", (_Reduce,), {"fn": staticmethod(F.reduce_max)})
ReduceMin = type("ReduceMin", (_Reduce,), {"fn": staticmethod(F.reduce_min)})


class Argmax(Primitive):
    def __init__(self, axis=-1, output_type=mstype.int32):
        self.axis, self.out = axis, output_type

    def construct(self, x):
        return F.cast(F.argmax(x, self.axis), self.out)


class Concat(Primitive):
    def __init__(self, axis=0):
        self.axis = axis

    def construct(self, xs):
        return F.concat(xs, self.axis)


class Stack(Concat):
    def construct(self, xs):
        return F.stack(xs, self.axis)


class Squeeze(Primitive):
    def __init__(self, axis=()):
        self.axis = None if axis == () else axis

    def construct(self, x):
        return F.squeeze(x, self.axis)


class Flatten(Primitive):
    def construct(self, x):
        return F.flatten(x)


class Shape(Primitive):
    def construct(self, x):
        return x.shape


class OneHot(Primitive):
    def __init__(self, axis=-1):
        self.axis = axis

    def construct(self, indices, depth, on_value, off_value):
        on = float(on_value.asnumpy()) if isinstance(on_value, Tensor) else float(on_value)
        off = float(off_value.asnumpy()) if isinstance(off_value, Tensor) else float(off_value)
        return F.one_hot(indices, depth, on, off, self.axis)


class SoftmaxCrossEntropyWithLogits(Primitive):
    """(loss per sample, gradient of the logits) for one-hot labels."""

    def construct(self, logits, labels):
        p = F.softmax(logits, -1)
        loss = F.neg(F.reduce_sum(F.mul(F.log_softmax(logits, -1), labels), -1))
        return loss, F.sub(p, labels)


class SparseSoftmaxCrossEntropyWithLogits(Primitive):
    def __init__(self, is_grad=False):
        if is_grad:
            raise NotImplementedError("SparseSoftmaxCrossEntropyWithLogits(is_grad=True) is not supported")

    def construct(self, logits, labels):
        return F.cross_entropy(logits, labels, reduction="mean")


class Conv2D(Primitive):
    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1, dilation=1, group=1,
                 data_format="NCHW"):
        if data_format != "NCHW":
            raise NotImplementedError(f"Conv2D data_format '{data_format}' (supported: NCHW)")
        self.pad_mode, self.pad, self.group = pad_mode, pad, group
        self.stride = stride[-2:] if isinstance(stride, (tuple, list)) and len(stride) == 4 else stride
        self.dilation = dilation[-2:] if isinstance(dilation, (tuple, list)) and len(dilation) == 4 else dilation

    def construct(self, x, w):
        return F.conv2d(x, w, None, self.stride, self.pad_mode, self.pad, self.dilation, self.group)


class _Pool(Primitive):
    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        def two(v):
            return v[-2:] if isinstance(v, (tuple, list)) and len(v) == 4 else v
        self.k, self.s, self.mode = two(kernel_size), two(strides), pad_mode


class MaxPool(_Pool):
    def construct(self, x):
        return F.max_pool2d(x, self.k, self.s, self.mode)


class AvgPool(_Pool):
    def construct(self, x):
        return F.avg_pool2d(x, self.k, self.s, self.mode)


class Dropout(Primitive):
    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):
        self.p = 1 - keep_prob

    def construct(self, x):
        y = F.dropout(x, self.p, True)
        return y, F.zeros_like(x)

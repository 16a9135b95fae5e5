"""Weight initialisers (`mindspore.common.initializer`). Random ones draw from
the package's generator, seeded by `mindspore.set_seed`."""
import math

import numpy as np

from . import dtype as mstype

_rng = np.random.default_rng()


def set_seed(seed):
    global _rng
    _rng = np.random.default_rng(int(seed))


def _fans(shape):
    if len(shape) < 2:
        n = shape[0] if shape else 1
        return n, n
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity, a):
    if nonlinearity in ("relu",):
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1 + a * a))
    if nonlinearity == "tanh":
        return 5.0 / 3
    return 1.0


class Initializer:
    def __call__(self, shape):
        return self._make(tuple(shape))


class Zero(Initializer):
    def _make(self, shape): return np.zeros(shape)


class One(Initializer):
    def _make(self, shape): return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value): self.value = value
    def _make(self, shape): return np.full(shape, self.value)


class Normal(Initializer):
    def __init__(self, sigma=0.01, mean=0.0): self.sigma, self.mean = sigma, mean
    def _make(self, shape): return _rng.normal(self.mean, self.sigma, shape)


class Uniform(Initializer):
    def __init__(self, scale=0.07): self.scale = scale
    def _make(self, shape): return _rng.uniform(-self.scale, self.scale, shape)


class TruncatedNormal(Initializer):
    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0): self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _make(self, shape):
        out = _rng.normal(self.mean, self.sigma, shape)
        lo, hi = self.mean + self.a * self.sigma, self.mean + self.b * self.sigma
        bad = (out < lo) | (out > hi)
        while bad.any():
            out[bad] = _rng.normal(self.mean, self.sigma, int(bad.sum()))
            bad = (out < lo) | (out > hi)
        return out


class HeUniform(Initializer):
    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        self.a, self.mode, self.nl = negative_slope, mode, nonlinearity

    def _make(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        bound = _gain(self.nl, self.a) * math.sqrt(3.0 / max(fan, 1))
        return _rng.uniform(-bound, bound, shape)


class HeNormal(Initializer):
    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        self.a, self.mode, self.nl = negative_slope, mode, nonlinearity

    def _make(self, shape):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _rng.normal(0, _gain(self.nl, self.a) / math.sqrt(max(fan, 1)), shape)


class XavierUniform(Initializer):
    def __init__(self, gain=1): self.gain = gain

    def _make(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / max(fan_in + fan_out, 1))
        return _rng.uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    def __init__(self, gain=1): self.gain = gain

    def _make(self, shape):
        fan_in, fan_out = _fans(shape)
        return _rng.normal(0, self.gain * math.sqrt(2.0 / max(fan_in + fan_out, 1)), shape)


_BY_NAME = {"zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal, "uniform": Uniform,
            "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal, "he_uniform": HeUniform,
            "heuniform": HeUniform, "he_normal": HeNormal, "henormal": HeNormal, "xavier_uniform": XavierUniform,
            "xavieruniform": XavierUniform, "xavier_normal": XavierNormal, "xaviernormal": XavierNormal}


def _materialize(init, shape, dtype):
    np_dtype = mstype.to_np(dtype or mstype.float32)
    if shape is None:
        raise ValueError("an initializer needs a shape")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if isinstance(init, str):
        cls = _BY_NAME.get(init.lower())
        if cls is None:
            raise ValueError(f"unknown initializer '{init}' (known: {', '.join(sorted(_BY_NAME))})")
        init = cls()
    if isinstance(init, (int, float)):
        init = Constant(init)
    if isinstance(init, np.ndarray):
        a = init
    elif hasattr(init, "asnumpy"):
        a = init.asnumpy()
    elif isinstance(init, Initializer):
        a = init(shape)
    else:
        raise TypeError(f"initializer of type {type(init).__name__} is not supported")
    if tuple(a.shape) != shape:
        raise ValueError(f"initializer value has shape {a.shape}, expected {shape}")
    return np.asarray(a, dtype=np_dtype, order="C")


def initializer(init, shape=None, dtype=mstype.float32):
    from .tensor import Tensor
    return Tensor(_materialize(init, shape, dtype))


def _next_seed():
    """A seed for another generator (dataset shuffling), drawn from the package's."""
    return int(_rng.integers(0, 2 ** 31))

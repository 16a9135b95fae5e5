"""Dense, Flatten, Dropout, Identity, Embedding."""
import math

import numpy as np

from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, _materialize
from ...common.parameter import Parameter
from ... import _engine
from ...ops import functional as F
from ..cell import Cell
from .activation import get_activation


def _init_param(init, shape, name, dtype=mstype.float32):
    return Parameter(_materialize(init, shape, dtype), name=name)


class Dense(Cell):
    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True, activation=None,
                 dtype=mstype.float32):
        super().__init__()
        self.in_channels, self.out_channels, self.has_bias = in_channels, out_channels, has_bias
        self.weight = _init_param(weight_init if weight_init is not None else HeUniform(math.sqrt(5)),
                                  (out_channels, in_channels), "weight", dtype)
        self.bias = None
        if has_bias:
            bound = 1 / math.sqrt(in_channels) if in_channels else 0
            self.bias = _init_param(bias_init if bias_init is not None else Uniform(bound), (out_channels,),
                                    "bias", dtype)
        self.activation = get_activation(activation) if isinstance(activation, str) else activation

    def construct(self, x):
        if not x.shape or x.shape[-1] != self.in_channels:
            raise _engine.shape_error(f"Dense({self.in_channels}, {self.out_channels}) expects inputs whose last "
                                      f"dim is {self.in_channels}, got shape {x.shape}")
        y = F.dense(x, self.weight, self.bias)
        return self.activation(y) if self.activation is not None else y


class Flatten(Cell):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x):
        return F.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


class Identity(Cell):
    def construct(self, x):
        return x


class Dropout(Cell):
    def __init__(self, keep_prob=None, p=None, dtype=mstype.float32):
        super().__init__()
        if p is None:
            p = 0.5 if keep_prob is None else 1 - keep_prob
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = p

    def construct(self, x):
        return F.dropout(x, self.p, self.training)


class Embedding(Cell):
    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=mstype.int32, padding_idx=None):
        super().__init__()
        self.vocab_size, self.embedding_size = vocab_size, embedding_size
        table = _materialize(embedding_table, (vocab_size, embedding_size), mstype.float32)
        if padding_idx is not None:
            table[padding_idx] = 0
        self.embedding_table = Parameter(table, name="embedding_table")
        self.padding_idx = padding_idx

    def construct(self, ids):
        return F.gather(self.embedding_table, ids, 0)

"""MultiheadAttention, TransformerEncoderLayer, TransformerEncoder: the math
of torch.nn's (which MindSpore 2.x follows), with MindSpore's parameter names
(in_proj_weight, in_proj_bias, out_proj.*; dense1/dense2, norm1/norm2)."""
import copy
import math

import numpy as np

from ... import _engine
from ...common.initializer import XavierUniform, _materialize
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops import functional as F
from ..cell import Cell
from .activation import GELU, get_activation
from .basic import Dense, Dropout
from .container import CellList
from .normalization import LayerNorm


def _additive(mask, like):
    """A boolean mask (True = not attended) or a float one, as a float to add to the scores."""
    if mask is None:
        return None
    if mask._np_dtype == np.bool_:
        zero = Tensor._wrap(np.zeros((), like._np_dtype))
        neg = Tensor._wrap(np.asarray(-np.inf, like._np_dtype))
        return F.where(mask, neg, zero)
    return F.cast(mask, like.dtype)


class MultiheadAttention(Cell):
    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported yet")
        if (kdim is not None and kdim != embed_dim) or (vdim is not None and vdim != embed_dim):
            raise NotImplementedError("MultiheadAttention: kdim / vdim other than embed_dim are not supported yet")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.dropout, self.batch_first, self.has_bias = dropout, batch_first, has_bias
        self.in_proj_weight = Parameter(_materialize(XavierUniform(), (3 * embed_dim, embed_dim), None),
                                        name="in_proj_weight")
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, np.float32), name="in_proj_bias") if has_bias else None
        self.out_proj = Dense(embed_dim, embed_dim, has_bias=has_bias)
        if has_bias:
            self.out_proj.bias.set_data(np.zeros(embed_dim, np.float32))

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                  average_attn_weights=True):
        if query.ndim != 3 or query.shape[-1] != self.embed_dim:
            raise _engine.shape_error(f"MultiheadAttention({self.embed_dim}) expects 3-D inputs ending in "
                                      f"{self.embed_dim}, got query shape {query.shape}")
        if not self.batch_first:  # [L, N, E] -> [N, L, E]
            query, key, value = (F.transpose(t, (1, 0, 2)) for t in (query, key, value))
        n, lq, e = query.shape
        ls = key.shape[1]
        h, d = self.num_heads, self.head_dim
        w = [F.getitem(self.in_proj_weight, slice(i * e, (i + 1) * e)) for i in range(3)]
        b = [F.getitem(self.in_proj_bias, slice(i * e, (i + 1) * e)) if self.has_bias else None for i in range(3)]

        def heads(x, wi, bi, length):
            y = F.dense(x, wi, bi)
            return F.transpose(F.reshape(y, (n, length, h, d)), (0, 2, 1, 3))  # [N, H, L, D]

        q, k, v = heads(query, w[0], b[0], lq), heads(key, w[1], b[1], ls), heads(value, w[2], b[2], ls)
        scores = F.mul(F.matmul(q, F.transpose(k, (0, 1, 3, 2))), 1.0 / math.sqrt(d))  # [N, H, L, S]
        mask = _additive(attn_mask, scores)
        if mask is not None:
            if mask.ndim == 3:  # [N * H, L, S]
                mask = F.reshape(mask, (n, h, lq, ls))
            scores = F.add(scores, mask)
        pad = _additive(key_padding_mask, scores)
        if pad is not None:
            scores = F.add(scores, F.reshape(pad, (n, 1, 1, ls)))
        attn = F.softmax(scores, -1)
        attn_used = F.dropout(attn, self.dropout, self.training)
        out = F.reshape(F.transpose(F.matmul(attn_used, v), (0, 2, 1, 3)), (n, lq, e))
        out = self.out_proj(out)
        if not self.batch_first:
            out = F.transpose(out, (1, 0, 2))
        if not need_weights:
            return out, None
        return out, (F.reduce_mean(attn, 1) if average_attn_weights else attn)


class TransformerEncoderLayer(Cell):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first)
        self.dense1 = Dense(d_model, dim_feedforward)
        self.dropout = Dropout(p=dropout)
        self.dense2 = Dense(dim_feedforward, d_model)
        self.norm_first = norm_first
        self.norm1 = LayerNorm((d_model,), epsilon=layer_norm_eps)
        self.norm2 = LayerNorm((d_model,), epsilon=layer_norm_eps)
        self.dropout1 = Dropout(p=dropout)
        self.dropout2 = Dropout(p=dropout)
        if activation == "gelu":  # torch's (exact) GELU, as MindSpore's transformer layers take it
            self.activation = GELU(approximate=False)
        else:
            self.activation = get_activation(activation) if isinstance(activation, str) else activation

    def _sa(self, x, mask, pad):
        return self.dropout1(self.self_attn(x, x, x, key_padding_mask=pad, need_weights=False, attn_mask=mask)[0])

    def _ff(self, x):
        return self.dropout2(self.dense2(self.dropout(self.activation(self.dense1(x)))))

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        if self.norm_first:
            x = F.add(x, self._sa(self.norm1(x), src_mask, src_key_padding_mask))
            return F.add(x, self._ff(self.norm2(x)))
        x = self.norm1(F.add(x, self._sa(x, src_mask, src_key_padding_mask)))
        return self.norm2(F.add(x, self._ff(x)))


class TransformerEncoder(Cell):
    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = CellList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask, src_key_padding_mask)
        return self.norm(x) if self.norm is not None else x

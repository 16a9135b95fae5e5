"""`mindspore.Parameter`: a named tensor that lives in the engine's store, so
that compiled programs read and update it in place."""
import itertools

import numpy as np

from .. import _backend
from . import dtype as mstype
from .tensor import Tensor

_ids = itertools.count(1)


class Parameter(Tensor):
    def __init__(self, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                 parallel_optimizer=True, storage_format=""):
        if isinstance(default_input, Tensor):
            a = default_input.asnumpy()
        elif isinstance(default_input, (int, float, bool)):
            a = np.asarray(default_input, np.float32 if isinstance(default_input, float) else None)
        else:
            a = np.asarray(default_input)
        n = next(_ids)
        self._key = f"param#{n}"
        self._trace = None
        self._name = None
        self._default_name = name is None
        self.name = name if name is not None else f"Parameter#{n}"
        self.requires_grad = requires_grad
        self.layerwise_parallel = layerwise_parallel
        self._np_dtype = a.dtype
        self._shape = tuple(a.shape)
        _backend.store.set(self._key, a)

    @classmethod
    def _with_key(cls, key, array, name, requires_grad=False):
        """A parameter over the store entry `key` (created here from `array`)."""
        p = cls.__new__(cls)
        p._key = key
        p._trace = None
        p._name = None
        p._default_name = False
        p.name = name
        p.requires_grad = requires_grad
        p.layerwise_parallel = False
        a = np.asarray(array)
        p._np_dtype = a.dtype
        p._shape = tuple(a.shape)
        _backend.store.set(key, a)
        return p

    # The value lives in the store: read it there.
    @property
    def _data(self):
        return _backend.store.get(self._key)

    @_data.setter
    def _data(self, v):  # Tensor.__init__ is not called; nothing to set
        pass

    def _value(self):
        return _backend.store.get(self._key)

    def asnumpy(self):
        return _backend.store.get(self._key)

    @property
    def data(self):
        return self

    @property
    def value(self):
        return Tensor._wrap(self.asnumpy())

    def set_data(self, data, slice_shape=False):
        a = data.asnumpy() if isinstance(data, Tensor) else np.asarray(data)
        if tuple(a.shape) != self._shape and not slice_shape:
            raise ValueError(f"Parameter '{self.name}': set_data with shape {a.shape}, the parameter is {self._shape}")
        a = a.astype(self._np_dtype, copy=False)
        _backend.store.set(self._key, a)
        return self

    def set_dtype(self, dtype):
        a = self.asnumpy().astype(mstype.to_np(dtype))
        self._np_dtype = a.dtype
        _backend.store.set(self._key, a)
        return self

    def init_data(self, *args, **kwargs):
        return self

    def __deepcopy__(self, memo):
        """A new parameter (its own store entry) with the same value and name."""
        p = Parameter(self.asnumpy(), name=self.name, requires_grad=self.requires_grad)
        p._default_name = self._default_name
        memo[id(self)] = p
        return p

    def clone(self, init="same"):
        p = Parameter(self.asnumpy(), name=self.name, requires_grad=self.requires_grad)
        return p

    def __repr__(self):
        return (f"Parameter (name={self.name}, shape={self._shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    def __del__(self):
        try:
            _backend.store.remove(self._key)
        except Exception:
            pass


class ParameterTuple(tuple):
    def __new__(cls, params):
        params = tuple(params)
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"ParameterTuple takes Parameters, got {type(p).__name__}")
        return super().__new__(cls, params)

    def clone(self, prefix, init="same"):
        return ParameterTuple(Parameter(p.asnumpy(), name=f"{prefix}.{p.name}") for p in self)

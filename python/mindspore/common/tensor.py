"""`mindspore.Tensor`: a value (numpy array) in PyNative, or a value of a graph
being traced (then only its type and shape are known)."""
import numpy as np

from . import dtype as mstype


def _F():
    from ..ops import functional
    return functional


class Tensor:
    def __init__(self, input_data=None, dtype=None, shape=None, init=None, const_arg=False, **kwargs):
        self._trace = None
        self._name = None
        if init is not None:
            from .initializer import _materialize
            input_data = _materialize(init, shape, dtype)
        elif input_data is None:
            if shape is None:
                raise ValueError("Tensor needs input_data, or a shape and an init")
            input_data = np.zeros(shape, mstype.to_np(dtype or mstype.float32))
        if isinstance(input_data, Tensor):
            a = input_data.asnumpy()
        else:
            a = np.asarray(input_data)
        if dtype is not None:
            a = a.astype(mstype.to_np(dtype), copy=False)
        elif a.dtype == np.float64 and not isinstance(input_data, np.ndarray):
            a = a.astype(np.float32)  # Python floats: MindSpore's default float type
        self._data = np.asarray(a, order="C")
        self._np_dtype = self._data.dtype
        self._shape = tuple(self._data.shape)

    @classmethod
    def _wrap(cls, array):
        t = cls.__new__(cls)
        t._trace = None
        t._name = None
        t._data = array
        t._np_dtype = array.dtype
        t._shape = tuple(array.shape)
        return t

    @classmethod
    def _symbolic(cls, trace, name, np_dtype, shape):
        t = cls.__new__(cls)
        t._trace = trace
        t._name = name
        t._data = None
        t._np_dtype = np.dtype(np_dtype)
        t._shape = tuple(shape)
        return t

    def _value(self):
        if self._trace is not None:
            raise RuntimeError("the value of a tensor inside a graph-mode (traced) function is not known until the "
                               "graph runs: use ops on it, or return it")
        return self._data

    # ---- properties ----------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return mstype.nptype_to_dtype(self._np_dtype)

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        return int(np.prod(self._shape, dtype=np.int64))

    @property
    def itemsize(self):
        return self._np_dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    def dim(self):
        return self.ndim

    def numel(self):
        return self.size

    def asnumpy(self):
        return np.array(self._value(), copy=True)

    def numpy(self):
        return self.asnumpy()

    def item(self, index=None):
        a = self._value()
        return a.item() if index is None else a.item(index)

    def tolist(self):
        return self._value().tolist()

    def __array__(self, dtype=None, copy=None):
        a = self._value()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        if self._trace is not None:
            return f"Tensor(shape={list(self._shape)}, dtype={self.dtype}, traced in '{self._trace.name}')"
        body = np.array2string(self._value(), separator=", ")
        return f"Tensor(shape={list(self._shape)}, dtype={self.dtype}, value=\n{body})"

    __str__ = __repr__

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d Tensor")
        return self._shape[0]

    def __bool__(self):
        return bool(self._value())

    def __float__(self):
        return float(self._value())

    def __int__(self):
        return int(self._value())

    def __index__(self):
        return int(self._value())

    def __hash__(self):
        return id(self)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # ---- conversions ---------------------------------------------------------
    def astype(self, dtype, copy=True):
        return _F().cast(self, dtype)

    def to(self, dtype):
        return self.astype(dtype)

    def float(self):
        return self.astype(mstype.float32)

    def int(self):
        return self.astype(mstype.int32)

    def long(self):
        return self.astype(mstype.int64)

    def copy(self):
        return Tensor._wrap(self.asnumpy()) if self._trace is None else _F().identity(self)

    # ---- shape ---------------------------------------------------------------
    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _F().reshape(self, shape)

    view = reshape

    def flatten(self, order="C", *, start_dim=0, end_dim=-1):
        return _F().flatten(self, start_dim=start_dim, end_dim=end_dim)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return _F().transpose(self, tuple(axes) if axes else tuple(reversed(range(self.ndim))))

    @property
    def T(self):
        return self.transpose()

    def swapaxes(self, a, b):
        return _F().swapaxes(self, a, b)

    def squeeze(self, axis=None):
        return _F().squeeze(self, axis)

    def expand_dims(self, axis):
        return _F().expand_dims(self, axis)

    def unsqueeze(self, dim):
        return _F().expand_dims(self, dim)

    def broadcast_to(self, shape):
        return _F().broadcast_to(self, shape)

    def __getitem__(self, index):
        return _F().getitem(self, index)

    # ---- reductions ----------------------------------------------------------
    def sum(self, axis=None, dtype=None, keepdims=False, initial=None):
        return _F().reduce_sum(self, axis, keepdims)

    def mean(self, axis=None, keep_dims=False):
        return _F().reduce_mean(self, axis, keep_dims)

    def max(self, axis=None, keepdims=False, **kw):
        return _F().reduce_max(self, axis, keepdims)

    def min(self, axis=None, keepdims=False, **kw):
        return _F().reduce_min(self, axis, keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _F().argmax(self, axis, keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _F().argmin(self, axis, keepdims)

    def abs(self):
        return _F().abs(self)

    def exp(self):
        return _F().exp(self)

    def log(self):
        return _F().log(self)

    def sqrt(self):
        return _F().sqrt(self)

    def pow(self, e):
        return _F().pow(self, e)

    def matmul(self, other):
        return _F().matmul(self, other)

    def clip(self, xmin, xmax):
        return _F().clamp(self, xmin, xmax)

    # ---- arithmetic ----------------------------------------------------------
    def __add__(self, o): return _F().add(self, o)
    def __radd__(self, o): return _F().add(o, self)
    def __sub__(self, o): return _F().sub(self, o)
    def __rsub__(self, o): return _F().sub(o, self)
    def __mul__(self, o): return _F().mul(self, o)
    def __rmul__(self, o): return _F().mul(o, self)
    def __truediv__(self, o): return _F().div(self, o)
    def __rtruediv__(self, o): return _F().div(o, self)
    def __pow__(self, o): return _F().pow(self, o)
    def __rpow__(self, o): return _F().pow(o, self)
    def __matmul__(self, o): return _F().matmul(self, o)
    def __neg__(self): return _F().neg(self)
    def __abs__(self): return _F().abs(self)
    def __lt__(self, o): return _F().less(self, o)
    def __le__(self, o): return _F().less_equal(self, o)
    def __gt__(self, o): return _F().greater(self, o)
    def __ge__(self, o): return _F().greater_equal(self, o)

    def __eq__(self, o):
        return _F().equal(self, o)

    def __ne__(self, o):
        return _F().not_equal(self, o)

"""MindSpore's element types (`mindspore.float32`, `mstype.int64`, ...) and
their numpy equivalents."""
import numpy as np


class Type:
    """An element type; compares equal to itself only, prints as MindSpore does."""

    def __init__(self, name, np_type):
        self._name = name
        self._np = np_type

    def __repr__(self):
        return self._name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self._name,))


def _by_name(name):
    return _BY_NAME[name]


float16 = Type("Float16", np.float16)
float32 = Type("Float32", np.float32)
float64 = Type("Float64", np.float64)
int8 = Type("Int8", np.int8)
int16 = Type("Int16", np.int16)
int32 = Type("Int32", np.int32)
int64 = Type("Int64", np.int64)
uint8 = Type("UInt8", np.uint8)
uint16 = Type("UInt16", np.uint16)
uint32 = Type("UInt32", np.uint32)
uint64 = Type("UInt64", np.uint64)
bool_ = Type("Bool", np.bool_)
float_ = float32
half, single, double = float16, float32, float64
int_ = int32

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_]
_BY_NAME = {t._name: t for t in _ALL}
_BY_NP = {np.dtype(t._np): t for t in _ALL}

number_type = tuple(t for t in _ALL if t is not bool_)
float_type = (float16, float32, float64)
int_type = (int8, int16, int32, int64)


def dtype_to_nptype(t):
    return t._np


def nptype_to_dtype(np_type):
    try:
        return _BY_NP[np.dtype(np_type)]
    except KeyError:
        raise TypeError(f"numpy type {np.dtype(np_type)} has no MindSpore type here") from None


def to_np(t):
    """numpy dtype of a MindSpore type, a numpy type or a Python type."""
    if isinstance(t, Type):
        return np.dtype(t._np)
    if t is float:
        return np.dtype(np.float32)
    if t is int:
        return np.dtype(np.int64)
    if t is bool:
        return np.dtype(np.bool_)
    return np.dtype(t)


def is_float(t):
    return to_np(t).kind == "f"

from . import dtype
from .tensor import Tensor
from .parameter import Parameter, ParameterTuple
from .initializer import set_seed, initializer

__all__ = ["dtype", "Tensor", "Parameter", "ParameterTuple", "set_seed", "initializer"]

"""MindSpore's Python API over OpenCANN's training engine (docs/training.md).

Networks are written as `nn.Cell`s; in GRAPH_MODE (and under `jit`) a Cell's
`construct` is traced into one graph and compiled; a training step — forward,
backward (derived on the graph by the engine) and the optimizer's in-place
update — is one compiled program. PYNATIVE_MODE runs ops one by one."""
from . import _backend
from .common import dtype
from .common.dtype import (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                           bool_, float_, int_, dtype_to_nptype)
from .common.tensor import Tensor
from .common.parameter import Parameter, ParameterTuple
from .common.initializer import set_seed as _set_init_seed
from .context import set_context, get_context, GRAPH_MODE, PYNATIVE_MODE
from . import context, ops, nn, train, dataset
from .ops.composite import value_and_grad, grad
from .train.serialization import save_checkpoint, load_checkpoint, load_param_into_net, export, load
from .train.model import Model
from ._jit import jit

__version__ = "2.10.0+opencann"


def set_seed(seed):
    """Seeds the initializers, dataset shuffling and numpy's global generator."""
    import numpy as np
    _set_init_seed(seed)
    np.random.seed(seed)


def get_seed():
    return None


from . import common  # noqa: E402  (the subpackage, after the names above)

"""Activation cells."""
from ...ops import functional as F
from ..cell import Cell


def _cell(fn, name):
    return type(name, (Cell,), {"construct": lambda self, x: fn(x)})


ReLU = _cell(F.relu, "ReLU")
ReLU6 = _cell(F.relu6, "ReLU6")
Sigmoid = _cell(F.sigmoid, "Sigmoid")
Tanh = _cell(F.tanh, "Tanh")
SiLU = _cell(F.silu, "SiLU")
Softplus = _cell(F.softplus, "Softplus")


class GELU(Cell):
    def __init__(self, approximate=True):
        super().__init__()
        self.approximate = "tanh" if approximate is True or approximate == "tanh" else "none"

    def construct(self, x):
        return F.gelu(x, self.approximate)


class LeakyReLU(Cell):
    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return F.leaky_relu(x, self.alpha)


class ELU(Cell):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def construct(self, x):
        return F.elu(x, self.alpha)


class Softmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return F.softmax(x, self.axis)


class LogSoftmax(Softmax):
    def construct(self, x):
        return F.log_softmax(x, self.axis)


_BY_NAME = {"relu": ReLU, "relu6": ReLU6, "sigmoid": Sigmoid, "tanh": Tanh, "silu": SiLU, "swish": SiLU,
            "gelu": GELU, "leakyrelu": LeakyReLU, "elu": ELU, "softmax": Softmax, "logsoftmax": LogSoftmax,
            "softplus": Softplus}


def get_activation(name):
    if name is None:
        return None
    cls = _BY_NAME.get(name.lower())
    if cls is None:
        raise ValueError(f"unknown activation '{name}' (known: {', '.join(sorted(_BY_NAME))})")
    return cls()

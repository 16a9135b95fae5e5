"""Conv2d, Conv2dTranspose, Conv1d."""
import math

from ...common.initializer import HeUniform, Uniform
from ... import _engine
from ...ops import functional as F
from ..cell import Cell
from .basic import _init_param


def _two(v):
    return (v, v) if isinstance(v, int) else tuple(v)


class Conv2d(Cell):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCHW", dtype=None):
        super().__init__()
        if data_format != "NCHW":
            raise NotImplementedError(f"Conv2d data_format '{data_format}' (supported: NCHW)")
        if in_channels % group or out_channels % group:
            raise ValueError(f"Conv2d: in_channels {in_channels} and out_channels {out_channels} must be "
                             f"divisible by group {group}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = _two(kernel_size), stride, dilation
        self.pad_mode, self.padding, self.group, self.has_bias = pad_mode, padding, group, has_bias
        shape = (out_channels, in_channels // group) + self.kernel_size
        self.weight = _init_param(weight_init if weight_init is not None else HeUniform(math.sqrt(5)), shape,
                                  "weight")
        self.bias = None
        if has_bias:
            fan_in = in_channels // group * self.kernel_size[0] * self.kernel_size[1]
            self.bias = _init_param(bias_init if bias_init is not None else Uniform(1 / math.sqrt(fan_in)),
                                    (out_channels,), "bias")

    def construct(self, x):
        if x.ndim != 4 or x.shape[1] != self.in_channels:
            raise _engine.shape_error(f"Conv2d({self.in_channels}, {self.out_channels}) expects NCHW inputs with "
                                      f"{self.in_channels} channels, got shape {x.shape}")
        return F.conv2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding, self.dilation,
                        self.group)


class Conv1d(Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=None):
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode,
                         (0, 0, padding, padding) if isinstance(padding, int) else (0, 0) + tuple(padding),
                         (1, dilation), group, has_bias, weight_init, bias_init)

    def construct(self, x):
        y = super().construct(F.expand_dims(x, 2))
        return F.squeeze(y, 2)


class Conv2dTranspose(Cell):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, output_padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None, dtype=None):
        super().__init__()
        self.kernel_size = _two(kernel_size)
        self.stride, self.pad_mode, self.padding, self.output_padding = stride, pad_mode, padding, output_padding
        self.dilation, self.group = dilation, group
        shape = (in_channels, out_channels // group) + self.kernel_size
        self.weight = _init_param(weight_init if weight_init is not None else HeUniform(math.sqrt(5)), shape,
                                  "weight")
        self.bias = None
        if has_bias:
            fan_in = out_channels // group * self.kernel_size[0] * self.kernel_size[1]
            self.bias = _init_param(bias_init if bias_init is not None else Uniform(1 / math.sqrt(fan_in)),
                                    (out_channels,), "bias")

    def construct(self, x):
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                                  self.dilation, self.group, self.output_padding)

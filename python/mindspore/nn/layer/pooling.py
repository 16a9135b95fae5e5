"""MaxPool2d, AvgPool2d, AdaptiveAvgPool2d."""
from ...ops import functional as F
from ..cell import Cell


class MaxPool2d(Cell):
    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, data_format="NCHW"):
        super().__init__()
        if dilation != 1 or return_indices:
            raise NotImplementedError("MaxPool2d: dilation and return_indices are not supported yet")
        self.kernel_size, self.stride, self.pad_mode, self.padding, self.ceil_mode = (
            kernel_size, stride, pad_mode, padding, ceil_mode)

    def construct(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.pad_mode, self.padding, self.ceil_mode)


class AvgPool2d(Cell):
    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None, data_format="NCHW"):
        super().__init__()
        if divisor_override is not None:
            raise NotImplementedError("AvgPool2d: divisor_override is not supported yet")
        self.kernel_size, self.stride, self.pad_mode, self.padding = kernel_size, stride, pad_mode, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def construct(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.pad_mode, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Cell):
    def __init__(self, output_size=1):
        super().__init__()
        self.output_size = output_size

    def construct(self, x):
        return F.adaptive_avg_pool2d(x, self.output_size)

from .activation import (ReLU, ReLU6, Sigmoid, Tanh, SiLU, GELU, LeakyReLU, ELU, Softmax, LogSoftmax, Softplus,
                         get_activation)
from .basic import Dense, Flatten, Identity, Dropout, Embedding
from .container import SequentialCell, CellList
from .conv import Conv2d, Conv1d, Conv2dTranspose
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm
from .pooling import MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
from .transformer import MultiheadAttention, TransformerEncoderLayer, TransformerEncoder

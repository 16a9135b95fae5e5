"""BatchNorm1d/2d and LayerNorm. Batch norm in training mode normalises with
the batch's statistics and updates the moving ones (unbiased variance, as
MindSpore and torch keep it) after each step."""
from ...common import dtype as mstype
from ...common.initializer import _materialize
from ...common.parameter import Parameter
from ...ops import functional as F
from ... import _engine
from ..cell import Cell


class _BatchNorm(Cell):
    _ranks = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, data_format="NCHW",
                 dtype=mstype.float32):
        super().__init__()
        if not 0 <= momentum <= 1:
            raise ValueError(f"{type(self).__name__}: momentum must be in [0, 1], got {momentum}")
        if data_format != "NCHW":
            raise NotImplementedError(f"{type(self).__name__} data_format '{data_format}' (supported: NCHW)")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.use_batch_statistics = use_batch_statistics
        shape = (num_features,)
        self.moving_mean = Parameter(_materialize(moving_mean_init, shape, dtype), name="moving_mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(_materialize(moving_var_init, shape, dtype), name="moving_variance",
                                         requires_grad=False)
        self.gamma = Parameter(_materialize(gamma_init, shape, dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(_materialize(beta_init, shape, dtype), name="beta", requires_grad=affine)

    def construct(self, x):
        if x.ndim not in self._ranks:
            ranks = " or ".join(map(str, self._ranks))
            raise _engine.shape_error(f"{type(self).__name__} expects an input of rank {ranks}, got shape {x.shape}")
        if x.shape[1] != self.num_features:
            raise _engine.shape_error(f"{type(self).__name__}({self.num_features}) got {x.shape[1]} channels "
                             f"(input shape {x.shape})")
        batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        ins = [x, self.gamma, self.beta, self.moving_mean, self.moving_variance]
        if not batch:
            return _engine.emit_op("BatchNormalization", ins, {"epsilon": float(self.eps)})[0]
        y, mean, var = _engine.emit_op("BatchNormalization", ins,
                                       {"epsilon": float(self.eps), "momentum": float(self.momentum),
                                        "training_mode": 1}, n_out=3)
        n = x.size // x.shape[1]
        if n > 1:  # the kernel keeps the population variance; MindSpore keeps the unbiased one
            old = F.mul(self.moving_variance, self.momentum)
            var = F.add(old, F.mul(F.sub(var, old), n / (n - 1)))
        F.assign(self.moving_mean, mean)
        F.assign(self.moving_variance, var)
        return y


class BatchNorm1d(_BatchNorm):
    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    _ranks = (4,)


class BatchNorm3d(_BatchNorm):
    _ranks = (5,)


class LayerNorm(Cell):
    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init="ones",
                 beta_init="zeros", epsilon=1e-7, dtype=mstype.float32):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis, self.epsilon = begin_norm_axis, epsilon
        self.gamma = Parameter(_materialize(gamma_init, self.normalized_shape, dtype), name="gamma")
        self.beta = Parameter(_materialize(beta_init, self.normalized_shape, dtype), name="beta")

    def construct(self, x):
        if tuple(x.shape[x.ndim - len(self.normalized_shape):]) != self.normalized_shape:
            raise _engine.shape_error(f"LayerNorm{self.normalized_shape} got an input of shape {x.shape}")
        axis = self.begin_norm_axis % x.ndim
        return F.layer_norm(x, self.gamma, self.beta, axis, self.epsilon)

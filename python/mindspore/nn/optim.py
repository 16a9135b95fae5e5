"""Optimizers: SGD, Momentum, Adam, AdamWeightDecay.

An optimizer's update is a small compiled graph (src/train/optimizer.h) whose
outputs overwrite the parameters and its state in place. Called inside a
compiled training step (TrainOneStepCell, a jit function) on the gradients of
value_and_grad, the update joins that step's program; called in PyNative on
gradient Tensors, it runs its own update-only program.

State tensors carry MindSpore's names ("moments.<param>", "moment1.<param>",
...) so checkpoints hold them as MindSpore's do."""
import itertools
import math

import numpy as np

from .. import _backend, _engine
from ..common.parameter import Parameter, ParameterTuple
from ..common.tensor import Tensor
from .cell import Cell

_ids = itertools.count(1)


# ---- learning-rate schedules ---------------------------------------------------------

class LearningRateSchedule(Cell):
    def construct(self, global_step):
        raise NotImplementedError

    def _at(self, step):
        v = self.construct(step)
        return float(v.asnumpy()) if isinstance(v, Tensor) else float(v)


class ExponentialDecayLR(LearningRateSchedule):
    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        self.lr, self.rate, self.steps, self.stair = learning_rate, decay_rate, decay_steps, is_stair

    def construct(self, step):
        p = step / self.steps
        return self.lr * self.rate ** (math.floor(p) if self.stair else p)


class CosineDecayLR(LearningRateSchedule):
    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        self.min_lr, self.max_lr, self.steps = min_lr, max_lr, decay_steps

    def construct(self, step):
        p = min(step, self.steps) / self.steps
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1 + math.cos(math.pi * p))


class PolynomialDecayLR(LearningRateSchedule):
    def __init__(self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
        super().__init__()
        self.lr, self.end, self.steps, self.power = learning_rate, end_learning_rate, decay_steps, power

    def construct(self, step):
        p = min(step, self.steps) / self.steps
        return (self.lr - self.end) * (1 - p) ** self.power + self.end


class WarmUpLR(LearningRateSchedule):
    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        self.lr, self.steps = learning_rate, warmup_steps

    def construct(self, step):
        return self.lr * min(step, self.steps) / self.steps


def piecewise_constant_lr(milestone, learning_rates):
    out, last = [], 0
    for m, lr in zip(milestone, learning_rates):
        out += [lr] * (m - last)
        last = m
    return out


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    out = []
    for i in range(total_step):
        e = (i // step_per_epoch) / decay_epoch
        out.append(learning_rate * decay_rate ** (math.floor(e) if is_stair else e))
    return out


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    out = []
    for i in range(total_step):
        e = min(i // step_per_epoch, decay_epoch)
        out.append(min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * e / decay_epoch)))
    return out


# ---- optimizers ----------------------------------------------------------------------

def _float(v, what):
    if isinstance(v, Tensor):
        v = v.asnumpy()
    v = float(np.asarray(v).reshape(-1)[0]) if np.ndim(v) else float(v)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {v}")
    return v


class Optimizer(Cell):
    _kind = None           # "sgd" or "adam"
    _state_names = ()      # MindSpore's prefixes of the state tensors
    _decay_filter = True   # ungrouped weight decay spares *beta* / *gamma* (MindSpore's rule; torch's has none)

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        if loss_scale != 1.0:
            raise NotImplementedError("optimizer loss_scale other than 1.0 is not supported yet")
        params, decays = [], []
        parameters = list(parameters)
        if not parameters:
            raise ValueError(f"{type(self).__name__}: the parameter list is empty")
        if isinstance(parameters[0], dict):
            for group in parameters:
                unknown = set(group) - {"params", "weight_decay", "lr", "grad_centralization", "order_params"}
                if unknown:
                    raise ValueError(f"{type(self).__name__}: unknown group keys {sorted(unknown)}")
                if "lr" in group:
                    raise NotImplementedError(f"{type(self).__name__}: a learning rate per parameter group is not "
                                              "supported yet")
                if "order_params" in group:
                    continue
                wd = _float(group.get("weight_decay", weight_decay), "weight_decay")
                for p in group["params"]:
                    params.append(p)
                    decays.append(wd)
        else:
            # MindSpore: ungrouped, weight decay spares the parameters with 'beta' or 'gamma' in their
            # names (normalisation scales and shifts); a group's weight_decay applies to all of its own.
            wd = _float(weight_decay, "weight_decay")
            params = parameters
            spared = ("beta", "gamma") if self._decay_filter else ()
            decays = [0.0 if any(k in getattr(p, "name", "") for k in spared) else wd for p in params]
        for p in params:
            if not isinstance(p, Parameter):
                raise TypeError(f"{type(self).__name__}: parameters must be Parameters, got {type(p).__name__}")
        if len({id(p) for p in params}) != len(params):
            raise ValueError(f"{type(self).__name__}: a parameter is listed twice")
        self._prefix = f"opt#{next(_ids)}/"
        self._decay = {p._key: d for p, d in zip(params, decays)}
        self._lr = learning_rate
        if isinstance(learning_rate, (list, tuple)):
            self._lr = [float(v) for v in learning_rate]
            lr0 = self._lr[0]
        elif isinstance(learning_rate, LearningRateSchedule):
            lr0 = learning_rate._at(0)
        else:
            lr0 = self._lr = _float(learning_rate, "learning_rate")
        self.global_step = Parameter._with_key(self._prefix + "global_step", np.zeros((), np.int64), "global_step")
        self.learning_rate = Parameter(np.asarray(lr0, np.float32), name="learning_rate", requires_grad=False)
        self._parameters = ParameterTuple(params)
        states = []
        for prefix in self._state_names:
            states.append(ParameterTuple(
                Parameter._with_key(f"{self._prefix}{prefix}.{p._key}", np.zeros(p._shape, p._np_dtype),
                                    f"{prefix}.{p.name}") for p in params))
        self._states = states
        for prefix, tup in zip(self._state_names, states):
            self.__setattr__(prefix, tup)
        self._update_programs = {}

    @property
    def parameters(self):
        return self._parameters

    def _step_count(self):
        return int(_backend.store.get(self._prefix + "global_step"))

    def _lr_value(self, step=None):
        step = self._step_count() if step is None else step
        if isinstance(self._lr, list):
            return self._lr[min(step, len(self._lr) - 1)]
        if isinstance(self._lr, LearningRateSchedule):
            return self._lr._at(step)
        return self._lr

    def get_lr(self):
        return Tensor(np.asarray(self._lr_value(), np.float32))

    def _hyper(self):
        raise NotImplementedError

    def _spec(self, keys, max_grad_norm=0.0):
        """The engine's optimiser spec for the parameters `keys` (in that order)."""
        mine = {p._key for p in self._parameters}
        missing = [k for k in keys if k not in mine]
        if missing or len(keys) != len(mine):
            raise ValueError(f"{type(self).__name__}: the gradients are for {len(keys)} tensors but the optimizer "
                             f"holds {len(mine)} parameters; give it the same parameters as value_and_grad")
        spec = dict(self._hyper())
        spec["type"] = self._kind
        spec["weight_decay"] = [self._decay[k] for k in keys]
        spec["state_prefixes"] = [f"{self._prefix}{p}." for p in self._state_names]
        spec["step_name"] = self._prefix + "global_step"
        if max_grad_norm:
            spec["max_grad_norm"] = float(max_grad_norm)
        return spec

    def construct(self, gradients):
        from ..ops.composite import _Placeholder
        grads = tuple(gradients)
        if len(grads) != len(self._parameters):
            raise ValueError(f"{type(self).__name__}: {len(grads)} gradients for {len(self._parameters)} parameters")
        trace = _engine.current_trace()
        if trace is not None:
            if not all(isinstance(g, _Placeholder) and g._trace is trace for g in grads):
                raise NotImplementedError(f"{type(self).__name__}: inside a compiled function the gradients must "
                                          "come from value_and_grad / grad / GradOperation of the same function")
            req = trace.grad_requests[-1]
            if req.optimizer is not None:
                raise NotImplementedError("two optimizer updates in one compiled function are not supported")
            keys = [g._name[len("grad."):] for g in grads]
            self._spec(keys)  # checks they are this optimizer's parameters
            req.optimizer = self
            return True
        keys = tuple(p._key for p in self._parameters)
        prog = self._update_programs.get(keys)
        if prog is None:
            spec = {"params": list(keys), "optimizer": self._spec(list(keys))}
            prog = self._update_programs[keys] = _backend.Program(b"", spec)
        arrays = []
        for g, p in zip(grads, self._parameters):
            a = g.asnumpy() if isinstance(g, Tensor) else np.asarray(g)
            if a.shape != p._shape:
                raise ValueError(f"{type(self).__name__}: the gradient of '{p.name}' has shape {a.shape}, the "
                                 f"parameter {p._shape}")
            arrays.append(a)
        prog.run(arrays, self._lr_value())
        return True

    def __call__(self, gradients):
        return self.construct(gradients)


class SGD(Optimizer):
    _kind = "sgd"

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 loss_scale=1.0):
        if momentum < 0:
            raise ValueError(f"SGD: momentum must be >= 0, got {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: nesterov needs momentum > 0 and dampening 0")
        # an instance attribute set before Cell.__init__ (which Cell.__setattr__ refuses)
        object.__setattr__(self, "_state_names", ("accum",) if momentum else ())
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum, self.dampening, self.nesterov = momentum, dampening, nesterov

    def _hyper(self):
        return {"momentum": self.momentum, "dampening": self.dampening, "nesterov": self.nesterov}


class Momentum(Optimizer):
    _kind = "sgd"
    _state_names = ("moments",)

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False):
        if momentum < 0:
            raise ValueError(f"Momentum: momentum must be >= 0, got {momentum}")
        if use_nesterov and momentum == 0:
            raise ValueError("Momentum: use_nesterov needs momentum > 0")
        if momentum == 0:  # plain SGD: no accumulator for the engine to keep
            object.__setattr__(self, "_state_names", ())
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum, self.use_nesterov = float(momentum), use_nesterov

    def _hyper(self):
        return {"momentum": self.momentum, "nesterov": bool(self.use_nesterov)}


class Adam(Optimizer):
    _kind = "adam"
    _state_names = ("moment1", "moment2")

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
                 use_nesterov=False, weight_decay=0.0, loss_scale=1.0, use_amsgrad=False, **kwargs):
        if use_nesterov or use_amsgrad:
            raise NotImplementedError("Adam: use_nesterov and use_amsgrad are not supported yet")
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps

    def _hyper(self):
        # MindSpore's Adam: lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps), L2 weight decay
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.eps, "epsilon_mode": "raw"}


class AdamWeightDecay(Optimizer):
    _kind = "adam"
    _state_names = ("adam_m", "adam_v")

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps

    def _hyper(self):
        # MindSpore's AdamWeightDecay: no bias correction, decoupled decay
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.eps, "epsilon_mode": "raw",
                "bias_correction": False, "decoupled_weight_decay": True}


class AdamW(Optimizer):
    """torch-style AdamW (mindspore.mint.optim.AdamW): bias-corrected, decoupled decay of every parameter."""
    _kind = "adam"
    _decay_filter = False
    _state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 *, maximize=False):
        if amsgrad or maximize:
            raise NotImplementedError("AdamW: amsgrad and maximize are not supported yet")
        super().__init__(lr, params, weight_decay)
        self.beta1, self.beta2 = betas
        self.eps = eps

    def _hyper(self):
        return {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.eps, "epsilon_mode": "corrected",
                "decoupled_weight_decay": True}

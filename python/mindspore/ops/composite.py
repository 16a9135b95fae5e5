"""Gradients: `value_and_grad`, `grad`, `GradOperation`.

A gradient function traces the function it differentiates into a graph and
lets the engine append the backward nodes (src/train/autodiff.h). Called in
PyNative, it is itself compiled (once per input signature) into a program that
returns the values and the gradients; called inside a traced function (jit,
graph mode, TrainOneStepCell) it adds to that trace, and its gradients may be
returned or handed to an optimizer, whose update joins the same program."""
import numpy as np

from .. import _compile, _engine
from ..common.parameter import Parameter, ParameterTuple
from ..common.tensor import Tensor
from . import functional as F


def _weights_list(weights):
    if weights is None:
        return []
    if isinstance(weights, Parameter):
        return [weights]
    if hasattr(weights, "trainable_params") and not isinstance(weights, (list, tuple)):
        return list(weights.trainable_params())
    out = list(weights)
    for w in out:
        if not isinstance(w, Parameter):
            raise TypeError(f"weights must be Parameters, got {type(w).__name__}")
    return out


def _positions(grad_position, nargs):
    if grad_position is None:
        return None
    single = isinstance(grad_position, int)
    pos = [grad_position] if single else list(grad_position)
    for p in pos:
        if not -nargs <= p < nargs:
            raise ValueError(f"grad_position {p} is out of range for {nargs} arguments")
    return single, [p % nargs for p in pos]


class _Placeholder(Tensor):
    """A gradient inside a trace: known once the program runs."""


def _in_trace(fn, args, grad_position, weights, has_aux, sens, fn_name):
    trace = _engine.current_trace()
    out = trace.calls.get((id(fn), tuple(id(a) for a in args)))
    if out is None:  # not already called on these values in this trace
        out = fn(*args)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for o in outs[:1]:
        if not isinstance(o, Tensor):
            raise TypeError(f"{fn_name}: the function must return a Tensor (or a tuple whose first element is "
                            f"the loss), got {type(o).__name__}")
    if has_aux or len(outs) == 1:
        loss = outs[0]
    else:  # every output contributes, with a gradient of ones (MindSpore's default sens)
        loss = F.reduce_sum(outs[0])
        for o in outs[1:]:
            loss = F.add(loss, F.reduce_sum(o))
    if sens is not None:
        loss = F.reduce_sum(F.mul(loss, sens))
    elif loss.size != 1:
        loss = F.reduce_sum(loss)
    elif loss.ndim:
        loss = F.reshape(loss, [])
    keys, placeholders = [], []
    pos = _positions(grad_position, len(args))
    if pos is not None:
        for p in pos[1]:
            a = args[p]
            if not isinstance(a, Tensor) or a._trace is not trace or a._name not in trace.feed_names:
                raise NotImplementedError(f"{fn_name}: gradients with respect to argument {p} need it to be a "
                                          "tensor input of the compiled function")
            keys.append(a._name)
            placeholders.append(_Placeholder._symbolic(trace, f"grad.{a._name}", a._np_dtype, a._shape))
    for w in weights:
        keys.append(w._key)
        placeholders.append(_Placeholder._symbolic(trace, f"grad.{w._key}", w._np_dtype, w._shape))
    for ph in placeholders:
        ph._is_grad = True
    req = _compile.GradRequest(trace, trace.output_name(loss), keys, placeholders)
    trace.grad_requests.append(req)
    n_in = 0 if pos is None else len(pos[1])
    g_in, g_w = placeholders[:n_in], tuple(placeholders[n_in:])
    if pos is not None and pos[0]:
        g_in = g_in[0]
    else:
        g_in = tuple(g_in)
    if pos is None:
        grads = g_w
    elif not weights:
        grads = g_in
    else:
        grads = (g_in, g_w)
    value = out
    return value, grads


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    if return_ids:
        raise NotImplementedError("value_and_grad: return_ids=True is not supported yet")
    ws = _weights_list(weights)
    if grad_position is None and not ws:
        raise ValueError("value_and_grad: grad_position and weights cannot both be None")
    name = getattr(fn, "__name__", type(fn).__name__)
    fname = f"value_and_grad({name})"

    def inner(*args):
        return _in_trace(fn, args, grad_position, ws, has_aux, None, fname)

    cache = _compile.FunctionCache(inner, fname)

    def wrapped(*args):
        if _engine.current_trace() is not None:
            return inner(*args)
        return cache(args, _train_flags(fn))

    return wrapped


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    vg = value_and_grad(fn, grad_position, weights, has_aux, return_ids)

    def wrapped(*args):
        value, grads = vg(*args)
        if has_aux:
            aux = value[1:] if isinstance(value, (tuple, list)) else ()
            return grads, tuple(aux)
        return grads

    return wrapped


def _train_flags(fn):
    """Part of a compiled signature: the training flags of the Cells a function runs."""
    cell = getattr(fn, "__self__", fn)
    if hasattr(cell, "cells_and_names"):
        return tuple(c.training for _, c in cell.cells_and_names())
    return ()


class GradOperation:
    """ops.GradOperation(get_all=False, get_by_list=False, sens_param=False)."""

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param
        self._caches = {}

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise ValueError("GradOperation(get_by_list=True) needs the weights: grad_op(net, weights)")
        ws = _weights_list(weights) if self.get_by_list else []
        name = f"GradOperation({getattr(fn, '__name__', type(fn).__name__)})"
        op = self

        def inner(*args):
            sens = None
            if op.sens_param:
                args, sens = args[:-1], args[-1]
            if op.get_all:
                pos = tuple(range(len(args)))
            elif not op.get_by_list:
                pos = 0
            else:
                pos = None
            _, grads = _in_trace(fn, args, pos, ws, False, sens, name)
            if op.get_all and op.get_by_list:
                return grads
            return grads

        key = (id(fn), tuple(w._key for w in ws))
        cache = self._caches.get(key)
        if cache is None:
            cache = self._caches[key] = _compile.FunctionCache(inner, name)

        def wrapped(*args):
            if _engine.current_trace() is not None:
                return inner(*args)
            return cache(args, _train_flags(fn))

        return wrapped


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """Scales gradients so that their global L2 norm is at most clip_norm. Inside a
    compiled training step the clipping joins the optimizer's update."""
    grads = tuple(x)
    if grads and all(isinstance(g, _Placeholder) for g in grads):
        req = grads[0]._trace.grad_requests[-1]
        if use_norm is not None:
            raise NotImplementedError("clip_by_global_norm: use_norm is not supported yet")
        req.max_grad_norm = float(clip_norm)
        return grads
    if any(isinstance(g, Tensor) and g._trace is not None for g in grads):
        raise NotImplementedError("clip_by_global_norm inside a traced function: only on the gradients of "
                                  "value_and_grad / grad")
    arrays = [g.asnumpy() for g in grads]
    norm = float(np.sqrt(sum(float((a.astype(np.float64) ** 2).sum()) for a in arrays)))
    c = min(1.0, clip_norm / (norm + 1e-6))
    return tuple(Tensor._wrap((a * c).astype(a.dtype)) for a in arrays)

"""Tracing a Python function into one graph and running it as a compiled program.

`compiled(fn, args, key)` traces `fn` on symbolic stand-ins of its tensor
arguments (once per signature), compiles the graph and runs it. Inside the
trace, gradient requests (value_and_grad / grad / GradOperation) give
placeholder gradients; those may be returned, or handed to an optimizer (the
update is then compiled into the same program, applied in place)."""
import numpy as np

from . import _backend, _engine
from .common.parameter import Parameter
from .common.tensor import Tensor

class GradRequest:
    def __init__(self, trace, loss, keys, placeholders):
        self.trace = trace
        self.loss = loss                # value name of the scalar loss
        self.keys = keys                # what is differentiated: store keys of weights, feed names of inputs
        self.placeholders = placeholders
        self.optimizer = None
        self.max_grad_norm = 0.0


def flatten(obj):
    """Tensors of a nested tuple/list/dict, and a function rebuilding it from replacements."""
    leaves = []

    def walk(o):
        if isinstance(o, Tensor):
            leaves.append(o)
            return ("t", len(leaves) - 1)
        if isinstance(o, (tuple, list)):
            return (type(o), [walk(e) for e in o])
        if isinstance(o, dict):
            return ("d", {k: walk(v) for k, v in o.items()})
        return ("c", o)

    spec = walk(obj)

    def build(values, s=spec):
        kind, body = s
        if kind == "t":
            return values[body]
        if kind == "c":
            return body
        if kind == "d":
            return {k: build(values, v) for k, v in body.items()}
        return kind(build(values, e) for e in body)

    return leaves, build


def signature(args):
    sig = []
    for a in args:
        if isinstance(a, Parameter):
            sig.append(("p", a._key))
        elif isinstance(a, Tensor):
            sig.append(("t", a._np_dtype.str, a._shape))
        elif isinstance(a, np.ndarray):
            sig.append(("t", a.dtype.str, a.shape))
        elif isinstance(a, (tuple, list)):
            sig.append(("l", signature(a)))
        else:
            sig.append(("c", repr(a)))
    return tuple(sig)


class CompiledFunction:
    """One traced signature of a function, compiled."""

    def __init__(self, fn, args, name):
        trace = _engine.Trace(name)
        sym_args = []
        self.tensor_args = []  # positions of the args that are fed
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                a = Tensor(a)
            if isinstance(a, Tensor) and not isinstance(a, Parameter):
                sym_args.append(trace.feed(a._np_dtype, a._shape, f"arg{i}"))
                self.tensor_args.append(i)
            else:
                sym_args.append(a)
        trace.args = sym_args
        with trace:
            result = fn(*sym_args)
        leaves, self.rebuild = flatten(result)
        spec = {"fetches": [], "state_updates": [list(s) for s in trace.state_updates]}
        req = trace.grad_requests[0] if trace.grad_requests else None
        if len(trace.grad_requests) > 1:
            raise NotImplementedError(f"'{name}': more than one gradient computation in one graph-mode function "
                                      "is not supported yet")
        placeholder_ids = {id(p): k for k, p in enumerate(req.placeholders)} if req else {}
        # Each output: a graph value, or the k-th gradient.
        self.outputs = []
        with trace:
            for t in leaves:
                if id(t) in placeholder_ids:
                    self.outputs.append(("g", placeholder_ids[id(t)]))
                else:
                    self.outputs.append(("v", trace.output_name(t)))
        fetch_names = [n for kind, n in self.outputs if kind == "v"]
        spec["fetches"] = list(dict.fromkeys(fetch_names))
        self.optimizer = None
        returns_grads = any(kind == "g" for kind, _ in self.outputs)
        if req is not None:
            spec["loss"] = req.loss
            spec["params"] = req.keys
            if req.optimizer is not None:
                if returns_grads:
                    raise NotImplementedError(f"'{name}': gradients both returned and given to the optimizer")
                self.optimizer = req.optimizer
                spec["optimizer"] = req.optimizer._spec(req.keys, req.max_grad_norm)
            else:
                if not returns_grads:
                    raise ValueError(f"'{name}': gradients are computed but neither returned nor given to an "
                                     "optimizer")
                if req.max_grad_norm:
                    raise NotImplementedError(f"'{name}': clipping returned gradients is not supported yet")
                spec["return_grads"] = True
        # Every value the program names is a model output, so that the parser keeps it.
        named = spec["fetches"] + [v for v, _ in trace.state_updates] + ([req.loss] if req else [])
        try:
            self.program = _backend.Program(trace.model(list(dict.fromkeys(named))), spec)
        except _backend.BackendError as e:
            _engine.raise_compile_error(f"compiling '{name}'", e, trace.param_names)
        self.fetch_index = {n: i for i, n in enumerate(spec["fetches"])}
        self.grad_base = len(spec["fetches"])

    def run(self, args):
        feeds = []
        for i in self.tensor_args:
            a = args[i]
            feeds.append(a._value() if isinstance(a, Tensor) else np.asarray(a))
        lr = self.optimizer._lr_value() if self.optimizer is not None else 0.0
        outs = self.program.run(feeds, lr)
        values = []
        for kind, n in self.outputs:
            i = self.fetch_index[n] if kind == "v" else self.grad_base + n
            values.append(Tensor._wrap(outs[i]))
        return self.rebuild(values)


class FunctionCache:
    """Compiled signatures of one function (a Cell's construct, a jit function)."""

    def __init__(self, fn, name):
        self.fn = fn
        self.name = name
        self.cache = {}

    def __call__(self, args, extra_key=()):
        key = (signature(args), extra_key)
        c = self.cache.get(key)
        if c is None:
            c = CompiledFunction(self.fn, args, self.name)
            self.cache[key] = c
        return c.run(args)


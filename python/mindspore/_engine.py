"""How an op runs: every op of the package becomes an ONNX node.

PyNative (eager): the node, with its inputs' types and shapes, is compiled once
into a one-node program (cached by its signature) and run at once on the
inputs' values: MindSpore's single-operator path.

Traced (graph mode, `jit`, gradients, `TrainOneStepCell`): while a function
runs under `Trace`, each op appends its node to the trace's graph instead, with
its outputs' types and shapes from the engine's shape inference; the traced
function becomes one ONNX graph, compiled and run as a whole. Parameters enter
either form as inputs named by their store keys, bound to the store's tensors.

Errors from the engine are re-raised naming the Cell and the line of user code
(`construct`) that issued the op."""
import os
import re
import sys
import threading

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import _backend

OPSET = 20
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_local = threading.local()


def _stack():
    s = getattr(_local, "traces", None)
    if s is None:
        s = _local.traces = []
    return s


def current_trace():
    s = _stack()
    return s[-1] if s else None


def cell_stack():
    s = getattr(_local, "cells", None)
    if s is None:
        s = _local.cells = []
    return s


def user_location():
    """'file:line' of the innermost frame outside this package."""
    f = sys._getframe(1)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(_PKG_DIR + os.sep):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return "?"


def cell_path():
    """'Net' / 'layer1.fc2 (Dense)': the Cell being called, by its attribute path from the outermost call."""
    cells = cell_stack()
    if not cells:
        return None
    names = []
    for parent, child in zip(cells, cells[1:]):
        name = next((n for n, c in parent._cells.items() if c is child), None)
        if name is not None and not name.startswith("_"):  # wrappers' private members are not the user's path
            names.append(name)
        elif name is None:
            names = []  # called from outside its parent's attributes: start over at it
    path = ".".join(names)
    return f"{type(cells[-1]).__name__} '{path}'" if path else type(cells[-1]).__name__


def _where(op_type, name_hint):
    parts = [f"{op_type}"]
    if name_hint:
        parts.append(f"({name_hint})")
    cell = cell_path()
    if cell is not None:
        parts.append(f"in {cell}")
    parts.append(f"at {user_location()}")
    return " ".join(parts)


def shape_error(message):
    """A ValueError naming the Cell being called and the line of user code."""
    cell = cell_path()
    where = f" (in {cell} at {user_location()})" if cell else f" (at {user_location()})"
    return ValueError(message + where)


def _engine_message(err):
    """The engine's message without what only names its internals (status code, pass, generated node name)."""
    text = str(err)
    text = re.sub(r"^[A-Z_]+: ", "", text)
    text = re.sub(r"^pass [a-z-]+: ", "", text)
    text = re.sub(r"^[A-Za-z]+ (node )?'[^']*': ", "", text)
    return text


def raise_compile_error(what, err, param_names):
    """An engine error compiling a traced graph, with parameters named as the user named them."""
    text = _engine_message(err)
    for key, name in sorted(param_names.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(f"'{key}'", f"'{name}'")
    text = re.sub(r" node '[^']*'", "", text)
    msg = f"{what}: {text}"
    if getattr(err, "code", None) == 2:
        raise NotImplementedError(msg) from None
    raise ValueError(msg) from None


def _raise(op_type, err, name_hint=None):
    msg = f"{_where(op_type, name_hint)}: {_engine_message(err)}"
    code = getattr(err, "code", None)
    if code == 2:
        raise NotImplementedError(msg) from None
    if code == 1 or isinstance(err, ValueError):
        raise ValueError(msg) from None
    raise RuntimeError(msg) from None


def _attr_key(attrs):
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items()))


def _is_small_index(a):
    return a.dtype.kind in "iub" and a.size <= 64


def _model(nodes, inputs, outputs, initializers, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.opencann", 1)],
                              producer_name="mindspore-opencann")
    model.ir_version = 8
    return model.SerializeToString()


def _vi(name, np_dtype, shape):
    return helper.make_tensor_value_info(name, _backend.code_of(np_dtype), list(shape) if shape is not None else None)


def _out_vi(name):
    vi = onnx.ValueInfoProto()
    vi.name = name
    return vi


# ---- eager --------------------------------------------------------------------

_eager_cache = {}


def _eager(op_type, domain, inputs, attrs, n_out, name_hint):
    from .common.parameter import Parameter
    desc, feeds, vis, inits, names = [], [], [], [], []
    for i, t in enumerate(inputs):
        if t is None:
            desc.append(None)
            names.append("")
        elif isinstance(t, Parameter):
            desc.append(("p", t._key))
            names.append(t._key)
            dt, shape = t._np_dtype, t._shape
            vis.append(_vi(t._key, dt, shape))
        else:
            a = t._value()
            if _is_small_index(a):
                desc.append(("c", a.dtype.str, a.shape, a.tobytes()))
                names.append(f"c{i}")
                inits.append(numpy_helper.from_array(a, f"c{i}"))
            else:
                desc.append(("x", a.dtype.str, a.shape))
                names.append(f"x{i}")
                vis.append(_vi(f"x{i}", a.dtype, a.shape))
                feeds.append(a)
    key = (op_type, domain, _attr_key(attrs), tuple(desc), n_out)
    prog = _eager_cache.get(key)
    if prog is None:
        outs = [f"y{k}" for k in range(n_out)]
        node = helper.make_node(op_type, names, outs, domain=domain or None, **attrs)
        try:
            prog = _backend.Program(_model([node], vis, [_out_vi(o) for o in outs], inits),
                                    {"fetches": outs})
        except _backend.BackendError as e:
            _raise(op_type, e, name_hint)
        _eager_cache[key] = prog
    try:
        return prog.run(feeds)
    except _backend.BackendError as e:
        _raise(op_type, e, name_hint)


# ---- tracing ------------------------------------------------------------------

_infer_cache = {}


class Trace:
    """A graph being recorded. Use as a context manager around the traced call."""

    def __init__(self, name="graph"):
        self.name = name
        self.nodes = []
        self.inputs = []          # ValueInfoProto of feeds, in order
        self.feed_names = []
        self.bound = {}           # store key -> ValueInfoProto
        self.param_names = {}     # store key -> the Parameter's name (for messages)
        self.initializers = []
        self._const_of = {}       # id(tensor) -> initializer name (tensor kept alive in _keep)
        self._keep = []
        self.state_updates = []   # (value name, store key)
        self.grad_requests = []   # filled by composite.value_and_grad inside a trace
        self.calls = {}           # (id(cell), ids of args) -> outputs of a Cell call in this trace
        self._n = 0

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    def fresh(self, hint="v"):
        self._n += 1
        return f"{hint}_{self._n}"

    def feed(self, np_dtype, shape, hint="input"):
        from .common.tensor import Tensor
        name = self.fresh(hint)
        self.inputs.append(_vi(name, np_dtype, shape))
        self.feed_names.append(name)
        return Tensor._symbolic(self, name, np.dtype(np_dtype), tuple(shape))

    def name_of(self, t):
        """The graph value of a tensor used as an op input."""
        from .common.parameter import Parameter
        if getattr(t, "_is_grad", False):
            raise NotImplementedError("a gradient inside a compiled function can be returned or given to the "
                                      "optimizer; other ops on it are not supported yet")
        if isinstance(t, Parameter):
            if t._key not in self.bound:
                self.bound[t._key] = _vi(t._key, t._np_dtype, t._shape)
                self.param_names[t._key] = t.name
            return t._key
        if t._trace is self:
            return t._name
        if t._trace is not None:
            raise RuntimeError(f"a tensor of the traced function '{t._trace.name}' is used in '{self.name}': "
                               "return it from the function instead")
        name = self._const_of.get(id(t))
        if name is None:
            name = self.fresh("const")
            self.initializers.append(numpy_helper.from_array(np.asarray(t._value(), order="C"), name))
            self._const_of[id(t)] = name
            self._keep.append(t)
        return name

    def _infer(self, op_type, domain, inputs, attrs, n_out, name_hint):
        from .common.parameter import Parameter
        desc, vis, inits, names = [], [], [], []
        for i, t in enumerate(inputs):
            if t is None:
                desc.append(None)
                names.append("")
                continue
            concrete = t._trace is None and not isinstance(t, Parameter)
            a = t._value() if concrete else None
            if a is not None and _is_small_index(a):
                desc.append(("c", a.dtype.str, a.shape, a.tobytes()))
                inits.append(numpy_helper.from_array(a, f"c{i}"))
                names.append(f"c{i}")
            else:
                desc.append(("x", np.dtype(t._np_dtype).str, t._shape))
                vis.append(_vi(f"x{i}", t._np_dtype, t._shape))
                names.append(f"x{i}")
        key = (op_type, domain, _attr_key(attrs), tuple(desc), n_out)
        got = _infer_cache.get(key)
        if got is None:
            outs = [f"y{k}" for k in range(n_out)]
            node = helper.make_node(op_type, names, outs, domain=domain or None, **attrs)
            try:
                got = _backend.infer(_model([node], vis, [_out_vi(o) for o in outs], inits))
            except _backend.BackendError as e:
                _raise(op_type, e, name_hint)
            for _, _, shape in got:
                if shape is None or any(d < 0 for d in shape):
                    _raise(op_type, ValueError("its output shape depends on input values, which graph mode "
                                               "does not support here"), name_hint)
            _infer_cache[key] = got
        return got

    def emit(self, op_type, domain, inputs, attrs, n_out, name_hint):
        from .common.tensor import Tensor
        infos = self._infer(op_type, domain, inputs, attrs, n_out, name_hint)
        names = ["" if t is None else self.name_of(t) for t in inputs]
        outs = [self.fresh(op_type) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, names, outs, name=self.fresh("node_" + op_type),
                                           domain=domain or None, **attrs))
        return [Tensor._symbolic(self, o, np.dtype(dt), shape) for o, (_, dt, shape) in zip(outs, infos)]

    def output_name(self, t):
        """A graph value for a function output (an Identity for a constant or a parameter)."""
        if t._trace is self:
            return t._name
        return emit_op("Identity", [t])[0]._name

    def model(self, output_names):
        bound = list(self.bound.values())
        return _model(self.nodes, self.inputs + bound, [_out_vi(o) for o in output_names], self.initializers,
                      self.name)


def emit_op(op_type, inputs, attrs=None, n_out=1, domain="", name_hint=None):
    """Runs or records one op; returns its outputs as Tensors."""
    from .common.tensor import Tensor
    attrs = {k: v for k, v in (attrs or {}).items() if v is not None}
    trace = current_trace()
    inputs = [None if t is None else (t if isinstance(t, Tensor) else Tensor(t)) for t in inputs]
    if trace is None:
        for t in inputs:
            if t is not None and t._trace is not None:
                trace = t._trace  # a traced value used after its trace ended
                raise RuntimeError(f"{op_type}: a value of the traced graph '{trace.name}' is used outside it")
        return [Tensor._wrap(a) for a in _eager(op_type, domain, inputs, attrs, n_out, name_hint)]
    return trace.emit(op_type, domain, inputs, attrs, n_out, name_hint)


def assign(param, value):
    """param <- value: at once in PyNative, after each run of a traced graph."""
    trace = current_trace()
    if trace is None:
        param.set_data(value)
        return
    name = trace.name_of(value)
    if name == param._key or name in trace.bound:
        name = trace.output_name(emit_op("Identity", [value])[0])
    trace.state_updates.append((name, param._key))

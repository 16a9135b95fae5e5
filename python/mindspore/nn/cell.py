"""`nn.Cell`: the building block of networks. Parameters and sub-cells are
registered by attribute assignment and named by their path ("conv1.weight").
In GRAPH_MODE a call compiles `construct` (once per input signature and
training flags) into one program; in PYNATIVE_MODE it runs op by op."""
from collections import OrderedDict

from .. import _compile, _engine, context
from ..common.parameter import Parameter, ParameterTuple
from ..common.tensor import Tensor


class Cell:
    def __init__(self, auto_prefix=True, flags=None):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_auto_prefix", auto_prefix)
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "_scope_name", "")
        object.__setattr__(self, "_compiled", None)
        object.__setattr__(self, "_jit", False)

    # ---- registration -----------------------------------------------------
    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before assigning attributes")
        params, cells = self.__dict__["_params"], self.__dict__["_cells"]
        if isinstance(value, Parameter):
            if value._default_name:
                value.name = name
                value._default_name = False
            params[name] = value
            cells.pop(name, None)
            self.__dict__.pop(name, None)
        elif isinstance(value, Cell):
            if self._auto_prefix:
                value.update_parameters_name(name + ".")
            object.__setattr__(value, "_scope_name", name)
            cells[name] = value
            params.pop(name, None)
            self.__dict__.pop(name, None)
        elif isinstance(value, ParameterTuple):
            # Registered (checkpoints include them) under their own names.
            for i, p in enumerate(value):
                params[f"{name}#{i}"] = p
            object.__setattr__(self, name, value)
        else:
            if name in params and value is None:
                del params[name]
            if name in cells and value is None:
                del cells[name]
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_params" in d and name in d["_params"]:
            return d["_params"][name]
        if "_cells" in d and name in d["_cells"]:
            return d["_cells"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._params:
            del self._params[name]
        elif name in self._cells:
            del self._cells[name]
        else:
            object.__delattr__(self, name)

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True):
        self.__setattr__(param_name, param)

    def insert_child_to_cell(self, child_name, child_cell):
        self.__setattr__(child_name, child_cell)

    def update_parameters_name(self, prefix="", recurse=True):
        for p in self.get_parameters(expand=recurse):
            p.name = prefix + p.name

    def _cell_path(self):
        return self._scope_name

    # ---- queries ------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix=""):
        seen = set() if cells is None else cells
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, c in self._cells.items():
            if c is None:
                continue
            yield from c.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix else name)

    def name_cells(self):
        return OrderedDict((n, c) for n, c in self._cells.items() if c is not None)

    def cells(self):
        return list(self.name_cells().values())

    def parameters_and_names(self, name_prefix="", expand=True):
        seen = set()
        for _, cell in (self.cells_and_names() if expand else [("", self)]):
            for p in cell._params.values():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield p.name, p

    def get_parameters(self, expand=True):
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse=True):
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse=True):
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse=True):
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    # ---- modes ----------------------------------------------------------------
    def set_train(self, mode=True):
        for _, c in self.cells_and_names():
            object.__setattr__(c, "training", bool(mode))
        return self

    def set_grad(self, requires_grad=True):
        return self

    def to_float(self, dst_type):
        return self

    def set_inputs(self, *inputs):
        return self

    # ---- calling ----------------------------------------------------------------
    def construct(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def _training_flags(self):
        return tuple(c.training for _, c in self.cells_and_names())

    def _run_construct(self, *args):
        return self.construct(*args)

    def __call__(self, *args, **kwargs):
        stack = _engine.cell_stack()
        stack.append(self)
        try:
            if kwargs:
                return self.construct(*args, **kwargs)
            compile_it = _engine.current_trace() is None and (context._graph_mode() or self._jit)
            if compile_it and any(isinstance(a, Tensor) for a in args):
                if self._compiled is None:
                    object.__setattr__(self, "_compiled", _compile.FunctionCache(self._run_construct,
                                                                                 type(self).__name__))
                return self._compiled(args, self._training_flags())
            trace = _engine.current_trace()
            out = self.construct(*args)
            if trace is not None:  # a gradient of this call reuses it (ops/composite.py)
                trace.calls[(id(self), tuple(id(a) for a in args))] = out
            return out
        finally:
            stack.pop()

    def __deepcopy__(self, memo):
        import copy
        new = object.__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            object.__setattr__(new, k, None if k == "_compiled" else copy.deepcopy(v, memo))
        return new

    def __repr__(self):
        lines = [f"{type(self).__name__}<"]
        for n, c in self._cells.items():
            sub = repr(c).replace("\n", "\n  ")
            lines.append(f"  ({n}): {sub}")
        return "\n".join(lines) + ">" if len(lines) > 1 else f"{type(self).__name__}<>"

"""Writing MINDIR, MindSpore's model format (a protobuf `mind_ir.ModelProto`),
from the ONNX graph that export() traces.

Each ONNX node of the trace is mapped back to the MindSpore primitives that
MindSpore itself exports for the same layer (nn.Dense -> MatMul + BiasAdd,
nn.Conv2d -> Conv2D + BiasAdd, nn.BatchNorm2d -> BatchNorm + TupleGetItem,
...), with MindSpore's argument order and encodings: a PRIMITIVE_FUNCTION
primitive takes every argument as a node input (Constant nodes for the
scalars and tuples), a PRIMITIVE one (Conv2D, MaxPool) keeps them as its
attributes. Every node carries its result's abstract (dtype and shape, from
ONNX shape inference). Field numbers are the format's; the encoding is the
protobuf wire format, written by hand (serialization.py's codec)."""
import numpy as np

# TensorProto.data_type / AttributeProto.type codes of the format.
_ELEM = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.uint16): 4,
         np.dtype(np.int16): 5, np.dtype(np.int32): 6, np.dtype(np.int64): 7, np.dtype(np.bool_): 9,
         np.dtype(np.float16): 10, np.dtype(np.float64): 11, np.dtype(np.uint32): 12, np.dtype(np.uint64): 13}
_ONNX_TO_ELEM = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 9: 9, 10: 10, 11: 11, 12: 12, 13: 13, 16: 16}
# MindSpore TypeId of an ONNX element type (Cast's dtype argument).
_ONNX_TO_TYPEID = {9: 30, 3: 32, 5: 33, 6: 34, 7: 35, 2: 37, 4: 38, 12: 39, 13: 40, 10: 42, 1: 43, 11: 44, 16: 45}
A_FLOAT, A_INT64, A_STRING, A_BOOL, A_TENSORS, A_TUPLE, A_LIST = 1, 7, 8, 9, 19, 20, 21
PRIMITIVE, PRIMITIVE_FUNCTION = 1, 2


# ---- wire format ------------------------------------------------------------------

from ._protowire import bytes_field as _bytes, float32_field as _float, int_field as _int, varint as _varint  # noqa: E402,F401,E501


def _tensor(dims, elem, name=None, raw=None, ref_key=None):
    b = b"".join(_int(1, d) for d in dims) + _int(2, elem)
    if name is not None:
        b += _bytes(7, name)
    if raw is not None:
        b += _bytes(9, raw)
    if ref_key is not None:
        b += _bytes(13, ref_key) + _int(16, 0)
    return b


def _attr(name, a_type, body=b""):
    return (_bytes(1, name) if name is not None else b"") + body + _int(16, a_type)


# ---- values -------------------------------------------------------------------------

def _scalar_attr(name, v, in_tuple=False):
    """An int / float / bool / str attribute (tuple items keep scalars in the repeated fields)."""
    if isinstance(v, (bool, np.bool_)):
        return _attr(name, A_BOOL, _int(10 if in_tuple else 3, int(v)))
    if isinstance(v, (int, np.integer)):
        return _attr(name, A_INT64, _int(10 if in_tuple else 3, int(v)))
    if isinstance(v, (float, np.floating)):
        return _attr(name, A_FLOAT, _float(8 if in_tuple else 2, v))
    if isinstance(v, str):
        return _attr(name, A_STRING, _bytes(11 if in_tuple else 5, v))
    raise TypeError(f"no MINDIR encoding for {type(v).__name__} {v!r}")


def _value_attr(name, v, in_tuple=False):
    if isinstance(v, tuple):
        return _attr(name, A_TUPLE, b"".join(_bytes(17, _value_attr(None, x, True)) for x in v))
    if isinstance(v, list):
        return _attr(name, A_LIST, b"".join(_bytes(17, _value_attr(None, x, True)) for x in v))
    if isinstance(v, np.ndarray):
        a = np.ascontiguousarray(v)
        return _attr(name, A_TENSORS, _bytes(12, _tensor(a.shape, _ELEM[a.dtype], "value0", a.tobytes())))
    return _scalar_attr(name, v, in_tuple)


def _abstract(types):
    """A node's "shape" attribute: one (elem, dims) is a tensor, a list of them a tuple."""
    if isinstance(types, list):
        return _attr("shape", A_TUPLE, b"".join(_bytes(17, _attr(None, A_TENSORS, _bytes(12, _tensor(d, e))))
                                                for e, d in types))
    elem, dims = types
    return _attr("shape", A_TENSORS, _bytes(12, _tensor(dims, elem)))


class _Writer:
    """Accumulates the graph's nodes and the model's primitives."""

    def __init__(self, graph_name, types):
        self.g = graph_name
        self.types = types            # ONNX value name -> (elem, dims)
        self.nodes = []
        self.prims = {}               # primitive name -> PrimitiveProto bytes
        self.names = {}               # ONNX value name -> MINDIR name
        self.consts = {}              # ONNX initializer name -> numpy array
        self.counter = 0

    def fresh(self, hint):
        self.counter += 1
        return f"{self.g}:{hint}:{self.counter}"

    def const(self, v):
        name = f"ValueNode_{self.counter + 1}"
        self.counter += 1
        self.nodes.append(_bytes(2, name) + _bytes(3, name) + _bytes(4, "Constant") + _bytes(5, _value_attr("value", v)))
        return name

    def prim(self, op, kind, attrs=None):
        key = op if not attrs else f"{op}:{len(self.prims)}"
        if key not in self.prims:
            body = _bytes(1, key) + _bytes(2, op)
            for k, v in (attrs or {}).items():
                body += _bytes(3, _value_attr(k, v))
            body += _bytes(4, op.lower()) + _int(5, kind)
            self.prims[key] = body
        return key

    def call(self, op, inputs, types, attrs=None, hint=None, kind=None):
        """A primitive call; `inputs` are MINDIR names or Python values (made Constant nodes)."""
        if kind is None:
            kind = PRIMITIVE if attrs is not None else PRIMITIVE_FUNCTION
        key = self.prim(op, kind, attrs)
        ins = [x if isinstance(x, _Name) else self.const(x) for x in inputs]
        out = self.fresh(hint or op)
        body = b"".join(_bytes(1, i) for i in ins) + _bytes(2, out) + _bytes(3, out) + _bytes(4, "REF::" + key)
        if types is not None:
            body += _bytes(5, _abstract(types))
        body += _bytes(7, f"Default/{op}-op{self.counter}")
        self.nodes.append(body)
        return _Name(out)


class _Name(str):
    """A MINDIR value name (as opposed to a Python constant to encode)."""


# ---- ONNX node -> MindSpore primitives ------------------------------------------------

def _attrs(node):
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _pair(v, name, node):
    v = list(v)
    if len(v) != 2:
        raise NotImplementedError(f"export MINDIR: {node.op_type} node '{node.name}': 2-D {name} only, got {v}")
    return v


def _lower(w, node):
    """Writes `node`; returns nothing (sets w.names for its outputs)."""
    op = node.op_type
    a = _attrs(node)
    ins = list(node.input)

    def x(i):
        n = ins[i] if i < len(ins) else ""
        if not n:
            return None
        if n in w.names:
            return w.names[n]
        if n in w.consts:
            return w.consts[n]
        raise NotImplementedError(f"export MINDIR: node '{node.name}' reads '{n}', which is not defined before it")

    def const_of(i):
        n = ins[i] if i < len(ins) else ""
        if n not in w.consts:
            raise NotImplementedError(f"export MINDIR: {op} node '{node.name}': input {i} must be a constant")
        return w.consts[n]

    def t(name):
        if name not in w.types:
            raise NotImplementedError(f"export MINDIR: the type of '{name}' ({op} node '{node.name}') is not known")
        return w.types[name]

    def tensor(v, like):
        """A constant operand as a tensor of `like`'s element type."""
        if isinstance(v, _Name):
            return v
        elem = t(like)[0]
        np_type = {e: d for d, e in _ELEM.items()}[elem]
        return np.asarray(v, dtype=np_type)

    def out(name):
        w.names[node.output[0]] = name

    o = node.output[0]
    unary = {"Relu": "ReLU", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Exp": "Exp", "Log": "Log", "Neg": "Neg",
             "Abs": "Abs", "Erf": "Erf", "Sqrt": "Sqrt", "Reciprocal": "Reciprocal", "Floor": "Floor",
             "Sin": "Sin", "Cos": "Cos"}
    binary = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "RealDiv", "Max": "Maximum", "Min": "Minimum",
              "Pow": "Pow"}
    if op in ("Identity", "Dropout"):
        out(x(0))
    elif op in unary:
        out(w.call(unary[op], [x(0)], t(o)))
    elif op in binary:
        lhs, rhs = x(0), x(1)
        if not isinstance(lhs, _Name) and not isinstance(rhs, _Name):
            raise NotImplementedError(f"export MINDIR: {op} node '{node.name}' has two constant operands")
        lhs = tensor(lhs, ins[1] if not isinstance(lhs, _Name) else ins[0])
        rhs = tensor(rhs, ins[0] if not isinstance(rhs, _Name) else ins[1])
        out(w.call(binary[op], [lhs, rhs], t(o)))
    elif op == "Gelu":
        if a.get("approximate", b"none") in (b"tanh", "tanh"):
            out(w.call("GeLU", [x(0)], t(o)))
        else:  # 0.5 x (1 + erf(x / sqrt 2)), as nn.GELU(approximate=False) is in MindSpore
            xi = x(0)
            ty = t(o)
            e = w.call("Erf", [w.call("RealDiv", [xi, tensor(np.sqrt(2.0), ins[0])], ty)], ty)
            s = w.call("Add", [e, tensor(1.0, ins[0])], ty)
            out(w.call("Mul", [w.call("Mul", [xi, s], ty), tensor(0.5, ins[0])], ty))
    elif op == "LeakyRelu":
        xi = x(0)
        alpha = float(a.get("alpha", 0.01))
        if not 0 <= alpha <= 1:
            raise NotImplementedError(f"export MINDIR: LeakyReLU alpha {alpha} outside [0, 1]")
        scaled = w.call("Mul", [xi, tensor(alpha, ins[0])], t(o))
        out(w.call("Maximum", [xi, scaled], t(o)))
    elif op == "Elu":
        out(w.call("Elu", [x(0), float(a.get("alpha", 1.0))], t(o)))
    elif op == "Clip":
        lo = None if len(ins) < 2 or not ins[1] else float(np.asarray(const_of(1)))
        hi = None if len(ins) < 3 or not ins[2] else float(np.asarray(const_of(2)))
        if lo == 0.0 and hi == 6.0:
            out(w.call("ReLU6", [x(0)], t(o)))
        else:
            y = x(0)
            if lo is not None:
                y = w.call("Maximum", [y, tensor(lo, ins[0])], t(o))
            if hi is not None:
                y = w.call("Minimum", [y, tensor(hi, ins[0])], t(o))
            out(y)
    elif op == "Softmax":
        out(w.call("Softmax", [x(0), (int(a.get("axis", -1)),)], t(o)))
    elif op == "LogSoftmax":
        out(w.call("LogSoftmax", [x(0), int(a.get("axis", -1))], t(o)))
    elif op == "Conv":
        wt = t(ins[1])
        if len(wt[1]) != 4:
            raise NotImplementedError(f"export MINDIR: Conv node '{node.name}': only 2-D convolutions are supported")
        strides = _pair(a.get("strides", [1, 1]), "strides", node)
        dil = _pair(a.get("dilations", [1, 1]), "dilations", node)
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        pads = list(a.get("pads", [0, 0, 0, 0]))
        if auto in ("SAME_UPPER",):
            mode, pad = "same", (0, 0, 0, 0)
        elif auto == "VALID" or (auto == "NOTSET" and not any(pads)):
            mode, pad = "valid", (0, 0, 0, 0)
        elif auto == "NOTSET":
            mode, pad = "pad", (pads[0], pads[2], pads[1], pads[3])
        else:
            raise NotImplementedError(f"export MINDIR: Conv node '{node.name}': auto_pad {auto} is not supported")
        group = int(a.get("group", 1))
        attrs = {"kernel_size": tuple(wt[1][2:]), "mode": 1, "out_channel": wt[1][0], "input_names": ["x", "w"],
                 "pad": tuple(int(p) for p in pad), "pad_mode": mode, "format": "NCHW",
                 "pad_list": tuple(int(p) for p in pad), "groups": group, "stride": (1, 1, *strides), "group": group,
                 "dilation": (1, 1, *dil), "output_names": ["output"]}
        y = w.call("Conv2D", [x(0), x(1)], t(o), attrs=attrs)
        if len(ins) > 2 and ins[2]:
            y = w.call("BiasAdd", [y, x(2), 0], t(o))
        out(y)
    elif op in ("MaxPool", "AveragePool"):
        if a.get("ceil_mode", 0):
            raise NotImplementedError(f"export MINDIR: {op} node '{node.name}': ceil_mode is not supported")
        k = _pair(a["kernel_shape"], "kernel_shape", node)
        s = _pair(a.get("strides", [1, 1]), "strides", node)
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        if auto == "SAME_UPPER":
            same = True
        elif auto == "VALID" or (auto == "NOTSET" and not any(a.get("pads", []))):
            same = False
        else:
            raise NotImplementedError(f"export MINDIR: {op} node '{node.name}': explicit padding is not supported")
        if op == "MaxPool":
            attrs = {"pad_mode": "SAME" if same else "VALID", "output_names": ["output"],
                     "kernel_size": (1, 1, *k), "format": "NCHW", "strides": (1, 1, *s), "input_names": ["x"]}
            out(w.call("MaxPool", [x(0)], t(o), attrs=attrs))
        else:
            if a.get("count_include_pad", 0) and same:
                raise NotImplementedError(f"export MINDIR: AvgPool node '{node.name}': count_include_pad is not "
                                          "supported with SAME padding")
            out(w.call("AvgPool", [x(0), tuple(k), tuple(s), 1 if same else 2, 0], t(o)))
    elif op == "GlobalAveragePool":
        out(w.call("ReduceMean", [x(0), (2, 3), True], t(o)))
    elif op == "Gemm":
        if float(a.get("alpha", 1.0)) != 1.0 or float(a.get("beta", 1.0)) != 1.0 or a.get("transA", 0):
            raise NotImplementedError(f"export MINDIR: Gemm node '{node.name}': alpha/beta != 1 or transA")
        y = w.call("MatMul", [x(0), x(1), False, bool(a.get("transB", 0))], t(o))
        if len(ins) > 2 and ins[2]:
            bias = x(2)
            if not isinstance(bias, _Name):
                bias = tensor(bias, ins[0])
            y = w.call("BiasAdd", [y, bias, 0], t(o))
        out(y)
    elif op == "MatMul":
        ra, rb = len(t(ins[0])[1]), len(t(ins[1])[1])
        prim = "MatMul" if ra == 2 and rb == 2 else "BatchMatMul"
        out(w.call(prim, [x(0), x(1), False, False], t(o)))
    elif op == "BatchNormalization":
        if len(node.output) > 1 and any(node.output[1:]) or a.get("training_mode", 0):
            raise NotImplementedError(f"export MINDIR: BatchNorm node '{node.name}' in training mode")
        c = t(ins[1])
        types = [t(o)] + [c] * 4
        bn = w.call("BatchNorm", [x(0), x(1), x(2), x(3), x(4), False, float(a.get("epsilon", 1e-5)), 0.1, 0], types)
        out(w.call("TupleGetItem", [bn, 0], t(o), kind=PRIMITIVE))
    elif op == "LayerNormalization":
        elem, dims = t(o)
        axis = int(a.get("axis", -1))
        ax = axis % len(dims) if dims else axis
        stat = (elem, list(dims[:ax]) + [1] * (len(dims) - ax))
        ln = w.call("LayerNorm", [x(0), x(1), x(2), axis, axis, float(a.get("epsilon", 1e-5))], [t(o), stat, stat])
        out(w.call("TupleGetItem", [ln, 0], t(o), kind=PRIMITIVE))
    elif op in ("Reshape", "Flatten", "Unsqueeze", "Squeeze") and o in w.types and all(
            d >= 0 for d in t(o)[1]) and (op != "Squeeze" or len(ins) < 2):
        # The output shape is known: MindSpore's Reshape to it (what its own export does for flatten-like views).
        out(w.call("Reshape", [x(0), tuple(int(d) for d in t(o)[1])], t(o)))
    elif op == "Reshape":
        shape = tuple(int(v) for v in np.asarray(const_of(1)).reshape(-1))
        if 0 in shape and not a.get("allowzero", 0):
            raise NotImplementedError(f"export MINDIR: Reshape node '{node.name}': a 0 (copied) dim needs known shapes")
        out(w.call("Reshape", [x(0), shape], t(o)))
    elif op == "Flatten" and int(a.get("axis", 1)) == 1:
        out(w.call("Flatten", [x(0)], t(o)))
    elif op == "Unsqueeze":
        axes = np.asarray(const_of(1)).reshape(-1)
        if axes.size != 1:
            raise NotImplementedError(f"export MINDIR: Unsqueeze node '{node.name}': one axis only without known shapes")
        out(w.call("ExpandDims", [x(0), int(axes[0])], t(o)))
    elif op == "Squeeze":
        axes = tuple(int(v) for v in np.asarray(const_of(1)).reshape(-1))
        out(w.call("Squeeze", [x(0), axes], t(o)))
    elif op == "Transpose":
        out(w.call("Transpose", [x(0), tuple(int(p) for p in a["perm"])], t(o)))
    elif op == "Concat":
        parts = [x(i) for i in range(len(ins))]
        types = [t(n) for n in ins]
        tup = w.call("MakeTuple", parts, types, kind=PRIMITIVE)
        out(w.call("Concat", [tup, int(a["axis"])], t(o)))
    elif op == "Cast":
        out(w.call("Cast", [x(0), _ONNX_TO_TYPEID[int(a["to"])]], t(o)))
    elif op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"):
        if len(ins) > 1 and ins[1]:
            axes = tuple(int(v) for v in np.asarray(const_of(1)).reshape(-1))
        else:
            axes = tuple(int(v) for v in a.get("axes", []))
        if not axes and a.get("noop_with_empty_axes", 0):
            out(x(0))
            return
        keep = bool(a.get("keepdims", 1))
        args = [x(0), axes, keep] + ([False] if op == "ReduceSum" else [])
        out(w.call(op, args, t(o)))
    elif op == "Gather":
        idx = x(1)
        if not isinstance(idx, _Name):
            idx = np.asarray(idx)
        out(w.call("Gather", [x(0), idx, int(a.get("axis", 0)), 0], t(o)))
    else:
        raise NotImplementedError(f"export MINDIR: {op} node '{node.name}' has no MindSpore primitive mapping "
                                  "in this exporter yet; export ONNX (file_format='ONNX') instead")


def onnx_to_mindir(model, graph_name, param_names, producer_version="opencann"):
    """The MINDIR bytes of an ONNX model (single graph, no control flow); `param_names` maps the
    initializers that are the network's Parameters to their names."""
    import onnx
    from onnx import numpy_helper, shape_inference
    inferred = shape_inference.infer_shapes(model, strict_mode=True)
    types = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        tt = vi.type.tensor_type
        if tt.elem_type in _ONNX_TO_ELEM and tt.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
            types[vi.name] = (_ONNX_TO_ELEM[tt.elem_type], dims)
    g = model.graph
    w = _Writer(graph_name, types)
    params = []
    for init in g.initializer:
        arr = numpy_helper.to_array(init)
        types[init.name] = (_ELEM[arr.dtype], list(arr.shape))
        w.consts[init.name] = arr
    # The network's Parameters (named as in the network) are the graph's parameters; other
    # initializers are the trace's constants and become Constant nodes or arguments.
    for key, pname in param_names.items():
        if key not in w.consts:
            continue
        arr = w.consts.pop(key)
        full = f"{graph_name}:{pname}"
        params.append(_tensor(arr.shape, _ELEM[arr.dtype], full, np.ascontiguousarray(arr).tobytes(), pname))
        w.names[key] = _Name(full)
    inputs = []
    for vi in g.input:
        if vi.name in w.consts:
            continue
        full = f"{graph_name}:{vi.name}"
        w.names[vi.name] = _Name(full)
        elem, dims = types[vi.name]
        inputs.append(_bytes(1, full) + _bytes(2, _tensor(dims, elem)))
    for node in g.node:
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(f"export MINDIR: node '{node.name}' is in domain '{node.domain}'")
        _lower(w, node)
    results = []
    for vo in g.output:
        name = w.names.get(vo.name)
        if not isinstance(name, _Name):
            raise NotImplementedError(f"export MINDIR: output '{vo.name}' is a constant")
        results.append((name, types[vo.name]))
    if len(results) == 1:
        final, ftypes = results[0]
    else:
        final = w.call("MakeTuple", [n for n, _ in results], [ty for _, ty in results], kind=PRIMITIVE)
        ftypes = [ty for _, ty in results]
    out_vi = _bytes(1, final)
    for elem, dims in (ftypes if isinstance(ftypes, list) else [ftypes]):
        out_vi += _bytes(2, _tensor(dims, elem))
    graph = b"".join(_bytes(1, n) for n in w.nodes) + _bytes(2, graph_name)
    graph += b"".join(_bytes(3, p) for p in params) + b"".join(_bytes(5, i) for i in inputs) + _bytes(6, out_vi)
    # producer_name is the framework the file is for; producer_version says who wrote it.
    model_bytes = (_bytes(1, "1.1") + _bytes(2, "MindSpore") + _bytes(3, producer_version) + _bytes(5, "2.10.0")
                   + _bytes(7, graph) + _int(10, 1) + b"".join(_bytes(12, p) for p in w.prims.values())
                   + _int(13, 3))
    return model_bytes

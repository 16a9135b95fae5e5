"""Checkpoints in MindSpore's `.ckpt` format, and export.

A .ckpt file is a protobuf `Checkpoint` message: repeated field 1 `Value`
{1: tag (the parameter's name), 2: TensorProto {1: dims (repeated int64),
2: tensor_type ("Float32", "Int64", ...), 3: tensor_content (raw
little-endian bytes)}}. It is small enough to read and write here with a
protobuf wire-format codec of a few lines."""
import os

import numpy as np

from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..common.tensor import Tensor

_TYPE_NAMES = {np.dtype(np.float16): "Float16", np.dtype(np.float32): "Float32", np.dtype(np.float64): "Float64",
               np.dtype(np.int8): "Int8", np.dtype(np.int16): "Int16", np.dtype(np.int32): "Int32",
               np.dtype(np.int64): "Int64", np.dtype(np.uint8): "UInt8", np.dtype(np.uint16): "UInt16",
               np.dtype(np.uint32): "UInt32", np.dtype(np.uint64): "UInt64", np.dtype(np.bool_): "Bool"}
_NP_OF_NAME = {v: k for k, v in _TYPE_NAMES.items()}


from ._protowire import bytes_field as _field, fields as _fields, read_varint as _read_varint, varint as _varint  # noqa: E402,F401


def _encode(name, array):
    a = np.asarray(array, order="C")
    if a.dtype not in _TYPE_NAMES:
        raise TypeError(f"save_checkpoint: '{name}' has element type {a.dtype}, which .ckpt cannot hold")
    tensor = b"".join(_varint(1 << 3) + _varint(d) for d in a.shape)
    tensor += _field(2, _TYPE_NAMES[a.dtype].encode()) + _field(3, a.astype(a.dtype.newbyteorder("<")).tobytes())
    return _field(1, _field(1, name.encode()) + _field(2, tensor))


def _decode(data, path):
    out = {}
    try:
        for num, wt, value in _fields(data):
            if num != 1 or wt != 2:
                continue
            tag, dims, ttype, content = None, [], None, b""
            for n2, w2, v2 in _fields(value):
                if n2 == 1 and w2 == 2:
                    tag = v2.decode()
                elif n2 == 2 and w2 == 2:
                    for n3, w3, v3 in _fields(v2):
                        if n3 == 1 and w3 == 0:
                            dims.append(v3 if v3 < 1 << 63 else v3 - (1 << 64))
                        elif n3 == 1 and w3 == 2:  # packed dims
                            p = 0
                            while p < len(v3):
                                d, p = _read_varint(v3, p)
                                dims.append(d)
                        elif n3 == 2:
                            ttype = v3.decode()
                        elif n3 == 3:
                            content = v3
            if tag is None or ttype is None:
                raise ValueError("an entry without a name or a type")
            dt = _NP_OF_NAME.get(ttype)
            if dt is None:
                raise ValueError(f"'{tag}' has tensor type '{ttype}', which is not supported here")
            count = int(np.prod(dims, dtype=np.int64)) if dims else 1
            if len(content) != count * dt.itemsize:
                raise ValueError(f"'{tag}': {len(content)} bytes for {ttype} {dims}")
            out[tag] = np.frombuffer(content, dt.newbyteorder("<")).astype(dt).reshape(dims)
    except ValueError as e:
        raise ValueError(f"load_checkpoint: {path} is not a valid checkpoint: {e}") from None
    return out


# ---- API ------------------------------------------------------------------------------

def _entries(save_obj):
    if hasattr(save_obj, "parameters_and_names"):
        return [(name, p.asnumpy()) for name, p in save_obj.parameters_and_names()]
    if isinstance(save_obj, dict):
        return [(k, v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)) for k, v in save_obj.items()]
    out = []
    for e in save_obj:
        d = e["data"]
        out.append((e["name"], d.asnumpy() if hasattr(d, "asnumpy") else np.asarray(d)))
    return out


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False, append_dict=None,
                    enc_key=None, enc_mode="AES-GCM", choice_func=None, crc_check=False, format="ckpt", **kwargs):
    if enc_key is not None:
        raise NotImplementedError("save_checkpoint: encryption (enc_key) is not supported")
    if format != "ckpt":
        raise NotImplementedError(f"save_checkpoint: format '{format}' (supported: ckpt)")
    entries = _entries(save_obj)
    if append_dict:
        entries += [(k, np.asarray(v.asnumpy() if hasattr(v, "asnumpy") else v)) for k, v in append_dict.items()]
    if choice_func is not None:
        entries = [(n, a) for n, a in entries if choice_func(n)]
    path = ckpt_file_name if ckpt_file_name.endswith(".ckpt") else ckpt_file_name + ".ckpt"
    data = b"".join(_encode(n, a) for n, a in entries)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None,
                    dec_mode="AES-GCM", specify_prefix=None, choice_func=None, crc_check=False, **kwargs):
    if dec_key is not None:
        raise NotImplementedError("load_checkpoint: decryption (dec_key) is not supported")
    if not os.path.isfile(ckpt_file_name):
        raise ValueError(f"load_checkpoint: {ckpt_file_name} does not exist")
    with open(ckpt_file_name, "rb") as f:
        arrays = _decode(f.read(), ckpt_file_name)
    if filter_prefix:
        pre = (filter_prefix,) if isinstance(filter_prefix, str) else tuple(filter_prefix)
        arrays = {k: v for k, v in arrays.items() if not k.startswith(pre)}
    if specify_prefix:
        pre = (specify_prefix,) if isinstance(specify_prefix, str) else tuple(specify_prefix)
        arrays = {k: v for k, v in arrays.items() if k.startswith(pre)}
    if choice_func is not None:
        arrays = {k: v for k, v in arrays.items() if choice_func(k)}
    params = {k: Parameter(v, name=k) for k, v in arrays.items()}
    if net is not None:
        load_param_into_net(net, params, strict_load)
    return params


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    if not isinstance(parameter_dict, dict):
        raise TypeError("load_param_into_net: parameter_dict must be a dict of name -> Parameter")
    not_loaded = []
    used = set()
    for name, p in net.parameters_and_names():
        src = parameter_dict.get(name)
        if src is None:
            not_loaded.append(name)
            continue
        a = src.asnumpy() if hasattr(src, "asnumpy") else np.asarray(src)
        if a.shape != p.shape and a.size == p.size and (a.ndim <= 1 and p.ndim <= 1):
            a = a.reshape(p.shape)  # MindSpore's [1] counters against our scalars
        if a.shape != p.shape:
            raise ValueError(f"load_param_into_net: '{name}' has shape {a.shape} in the checkpoint, "
                             f"{p.shape} in the network")
        if a.dtype != p._np_dtype and not strict_load:
            a = a.astype(p._np_dtype)
        elif a.dtype != p._np_dtype:
            raise ValueError(f"load_param_into_net: '{name}' is {a.dtype} in the checkpoint, {p._np_dtype} in "
                             "the network")
        p.set_data(a)
        used.add(name)
    ckpt_not_loaded = [k for k in parameter_dict if k not in used]
    return not_loaded, ckpt_not_loaded


def _trace_onnx(net, inputs):
    """The network's inference graph as an ONNX model, and its Parameters' names."""
    from .. import _engine
    from .._compile import flatten
    from onnx import helper, numpy_helper
    trace = _engine.Trace(type(net).__name__)
    sym = []
    for i, a in enumerate(inputs):
        a = a if isinstance(a, Tensor) else Tensor(a)
        sym.append(trace.feed(a._np_dtype, a._shape, f"input{i}" if len(inputs) > 1 else "input"))
    with trace:
        out = net(*sym)
        leaves, _ = flatten(out)
        names = [trace.output_name(t) for t in leaves]
    # Parameters become initializers: the exported graph is self-contained.
    from .. import _backend
    inits = list(trace.initializers)
    for key in trace.bound:
        inits.append(numpy_helper.from_array(_backend.store.get(key), key))
    outputs = []
    for i, n in enumerate(names):
        final = "output" if len(names) == 1 else f"output{i}"
        trace.nodes.append(helper.make_node("Identity", [n], [final]))
        t = leaves[i]
        outputs.append(helper.make_tensor_value_info(final, _backend.code_of(t._np_dtype), list(t._shape)))
    graph = helper.make_graph(trace.nodes, trace.name, trace.inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _engine.OPSET)],
                              producer_name="mindspore-opencann")
    model.ir_version = 8
    return model, list(trace.bound)


def export(net, *inputs, file_name, file_format="MINDIR", **kwargs):
    """Writes the network's inference graph: ONNX (`file_name`.onnx, `atc --framework=5`) or
    MINDIR (`file_name`.mindir: MindSpore's mindspore.load reads it, `atc --framework=1` compiles it)."""
    fmt = file_format.upper()
    if fmt not in ("ONNX", "MINDIR"):
        raise NotImplementedError(f"export: file_format '{file_format}' is not supported; use 'MINDIR' or 'ONNX'")
    model, params = _trace_onnx(net, inputs)
    if fmt == "ONNX":
        import onnx
        path = file_name if file_name.endswith(".onnx") else file_name + ".onnx"
        onnx.save(model, path)
        return path
    from ._mindir import onnx_to_mindir
    # The graph's parameters carry the network's names ("conv1.weight"), as MindSpore's export writes them.
    names = {p._key: p.name for p in net.get_parameters()} if hasattr(net, "get_parameters") else {}
    from .. import __version__
    data = onnx_to_mindir(model, f"{type(net).__name__}_construct", {k: names.get(k, k) for k in params},
                          producer_version=f"opencann-{__version__}")
    path = file_name if file_name.endswith(".mindir") else file_name + ".mindir"
    with open(path, "wb") as f:
        f.write(data)
    return path


class MindIRGraph:
    """A MINDIR model read by load(); nn.GraphCell runs it."""

    def __init__(self, data, path):
        self._data = data
        self.path = path

    def __repr__(self):
        return f"MindIRGraph('{self.path}', {len(self._data)} bytes)"


def load(file_name, **kwargs):
    """Reads a MINDIR file (ours or MindSpore's) for nn.GraphCell. The model is
    compiled when the cell first runs, by the same reader as atc --framework=1."""
    for key in ("dec_key", "obf_func"):
        if kwargs.get(key) is not None:
            raise NotImplementedError(f"load: {key} (encrypted or obfuscated MINDIR) is not supported")
    if not str(file_name).endswith(".mindir"):
        raise ValueError(f"load: '{file_name}' is not a .mindir file (only MINDIR is supported)")
    if not os.path.isfile(file_name):
        raise ValueError(f"load: the file '{file_name}' does not exist")
    with open(file_name, "rb") as f:
        return MindIRGraph(f.read(), str(file_name))

"""Writes the fuzz seed corpora (tests/fuzz/<target>/): small, valid inputs
that reach deep into each reader, so mutations start from the interesting
paths. Committed; rerun after a format change:
    OC_BUILD_DIR=build python3 tests/fuzz/make_seeds.py
The .om seeds need atc from OC_BUILD_DIR."""
import io
import os
import struct
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def small_models():
    """Little ONNX graphs covering initializer encodings, attributes of each
    kind, a subgraph, symbolic dims and several dtypes."""
    f = TensorProto.FLOAT
    out = {}
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Relu", ["m"], ["y"])], "mlp",
        [helper.make_tensor_value_info("x", f, ["N", 3])], [helper.make_tensor_value_info("y", f, ["N", 4])],
        [numpy_helper.from_array(w, "W")])
    out["matmul_relu"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    # float_data / int64_data fields instead of raw_data; attributes of every kind.
    wt = helper.make_tensor("Wc", f, [2, 1, 3, 3], [0.5] * 18, raw=False)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "Wc"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
         helper.make_node("Reshape", ["c", "shape"], ["r"]),
         helper.make_node("Softmax", ["r"], ["s"], axis=-1),
         helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT16),
         helper.make_node("Constant", [], ["k"], value_floats=[1.0, 2.0]),
         helper.make_node("Constant", [], ["str"], value_string="hello")],
        "conv", [helper.make_tensor_value_info("x", f, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 32])],
        [wt, helper.make_tensor("shape", TensorProto.INT64, [2], [1, 32], raw=False)])
    out["conv_attrs"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

    # A subgraph (If) and an int/bool mix.
    then_g = helper.make_graph([helper.make_node("Identity", ["a"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", f, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["a"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", f, [2])])
    g = helper.make_graph(
        [helper.make_node("Greater", ["a", "b"], ["gt"]),
         helper.make_node("ReduceMin", ["gt_i"], ["mn"], keepdims=0),
         helper.make_node("Cast", ["gt"], ["gt_i"], to=TensorProto.INT32),
         helper.make_node("Cast", ["mn"], ["cond"], to=TensorProto.BOOL),
         helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
        "if", [helper.make_tensor_value_info("a", f, [2]), helper.make_tensor_value_info("b", f, [2])],
        [helper.make_tensor_value_info("y", f, [2])])
    out["if_subgraph"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    # Gather/Concat/Shape chains with int64 constants, as exporters write them.
    g = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
         helper.make_node("Unsqueeze", ["d0", "axes"], ["d0u"]),
         helper.make_node("Concat", ["d0u", "minus1"], ["ns"], axis=0),
         helper.make_node("Reshape", ["x", "ns"], ["y"])],
        "shape_chain", [helper.make_tensor_value_info("x", f, ["B", 2, 3])],
        [helper.make_tensor_value_info("y", f, ["B", 6])],
        [numpy_helper.from_array(np.array(0, np.int64), "zero"),
         numpy_helper.from_array(np.array([0], np.int64), "axes"),
         numpy_helper.from_array(np.array([-1], np.int64), "minus1")])
    out["shape_chain"] = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return out


def write_onnx(dest):
    os.makedirs(dest, exist_ok=True)
    for name, m in small_models().items():
        with open(os.path.join(dest, name + ".onnx"), "wb") as fh:
            fh.write(m.SerializeToString())


def write_mindir(dest):
    """MINDIR files (src/parser/mindir/mindir_parser_fuzz.cc) written by our
    exporter (python/mindspore/train/_mindir.py, loaded alone: no libms_backend
    needed) from small ONNX graphs: PRIMITIVE and PRIMITIVE_FUNCTION calls,
    tuples, TupleGetItem, scalar and tuple constants, parameters."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "oc_mindir_writer", os.path.join(HERE, "..", "..", "python", "mindspore", "train", "_mindir.py"))
    writer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(writer)
    f = TensorProto.FLOAT
    rng = np.random.default_rng(0)
    arr = lambda *s: rng.normal(0, 1, s).astype(np.float32)  # noqa: E731
    models = {}
    inits = [numpy_helper.from_array(arr(4, 2, 3, 3), "c.weight"), numpy_helper.from_array(arr(4), "c.bias"),
             numpy_helper.from_array(arr(4), "bn.gamma"), numpy_helper.from_array(arr(4), "bn.beta"),
             numpy_helper.from_array(arr(4), "bn.mean"), numpy_helper.from_array(np.ones(4, np.float32), "bn.var")]
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "c.weight", "c.bias"], ["c"], pads=[1, 1, 1, 1], group=1),
         helper.make_node("BatchNormalization", ["c", "bn.gamma", "bn.beta", "bn.mean", "bn.var"], ["b"]),
         helper.make_node("Relu", ["b"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("AveragePool", ["m"], ["y"], kernel_shape=[2, 2], auto_pad="SAME_UPPER")],
        "conv", [helper.make_tensor_value_info("x", f, [1, 2, 8, 8])], [helper.make_tensor_value_info("y", f, None)],
        inits)
    models["conv_bn_pools"] = (g, [i.name for i in inits])
    inits = [numpy_helper.from_array(arr(5, 3), "d.weight"), numpy_helper.from_array(arr(5), "d.bias"),
             numpy_helper.from_array(arr(5), "ln.gamma"), numpy_helper.from_array(arr(5), "ln.beta"),
             numpy_helper.from_array(np.array([5, 2], np.int64), "shape")]
    g = helper.make_graph(
        [helper.make_node("Gemm", ["x", "d.weight", "d.bias"], ["d"], transB=1),
         helper.make_node("Gelu", ["d"], ["g"], approximate="tanh"),
         helper.make_node("LayerNormalization", ["g", "ln.gamma", "ln.beta"], ["l"], axis=-1),
         helper.make_node("Softmax", ["l"], ["s"], axis=-1),
         helper.make_node("Transpose", ["s"], ["t"], perm=[1, 0]),
         helper.make_node("Reshape", ["t", "shape"], ["rs"]),
         helper.make_node("ReduceMean", ["rs"], ["y0"], axes=[1], keepdims=1),
         helper.make_node("Cast", ["s"], ["h"], to=TensorProto.FLOAT16),
         helper.make_node("Cast", ["h"], ["y1"], to=TensorProto.FLOAT),
         helper.make_node("Concat", ["s", "y1"], ["y2"], axis=0)],
        "dense", [helper.make_tensor_value_info("x", f, [2, 3])],
        [helper.make_tensor_value_info(n, f, None) for n in ("y0", "y2")], inits)
    models["dense_norm_shapes"] = (g, ["d.weight", "d.bias", "ln.gamma", "ln.beta"])
    os.makedirs(dest, exist_ok=True)
    for name, (g, params) in models.items():
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
        data = writer.onnx_to_mindir(m, name, {p: p for p in params}, producer_version="opencann-seed")
        with open(os.path.join(dest, name + ".mindir"), "wb") as fh:
            fh.write(data)


def write_npy(dest):
    os.makedirs(dest, exist_ok=True)
    arrays = {
        "f32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3),
        "i64_scalar": np.array(7, dtype=np.int64),
        "bool_5": np.array([1, 0, 1, 1, 0], dtype=bool),
        "u8_empty": np.zeros((0, 4), dtype=np.uint8),
        "f16_4": np.array([1.5, -2, 0, 65504], dtype=np.float16),
        "f64_1x1x2": np.array([[[1e300, -1e-300]]]),
    }
    for name, a in arrays.items():
        np.save(os.path.join(dest, name + ".npy"), a)
    # Format 2.0 and 3.0 headers (uint32 length), written by hand.
    for major in (2, 3):
        header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"
        pad = 64 - (10 + 2 + len(header) + 1) % 64
        header += " " * pad + "\n"
        raw = b"\x93NUMPY" + bytes([major, 0]) + struct.pack("<I", len(header)) + header.encode()
        with open(os.path.join(dest, f"v{major}_i4_3.npy"), "wb") as fh:
            fh.write(raw + np.array([1, 2, 3], np.int32).tobytes())
    # Refused inputs: Fortran order and big-endian.
    buf = io.BytesIO()
    np.save(buf, np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    with open(os.path.join(dest, "fortran.npy"), "wb") as fh:
        fh.write(buf.getvalue())
    np.save(os.path.join(dest, "big_endian.npy"), np.arange(3, dtype=">i4"))


def write_om(dest):
    import oc_harness
    import acl_models
    os.makedirs(dest, exist_ok=True)
    models = {"two_io": acl_models.two_io_model(), **{k: v for k, v in small_models().items()
                                                      if k in ("matmul_relu", "shape_chain")}}
    with tempfile.TemporaryDirectory() as d:
        for name, m in models.items():
            onnx_path = oc_harness.save_model(m, d, name)
            shapes = {"x": [2, 2, 3]} if name == "shape_chain" else ({"x": [2, 3]} if name == "matmul_relu" else None)
            om, _ = oc_harness.atc_compile(onnx_path, os.path.join(d, name), input_shapes=shapes)
            with open(om, "rb") as src, open(os.path.join(dest, name + ".om"), "wb") as dst:
                dst.write(src.read())


def write_dvpp(dest):
    """JPEG and PNG files for src/dvpp/dvpp_fuzz.cc, each behind its selector
    byte (bit 7: PNG; the rest picks the output format)."""
    from PIL import Image
    os.makedirs(dest, exist_ok=True)
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[0:40, 0:48]
    img = np.clip(np.stack([xx * 5, yy * 6, 128 + 0 * xx], -1) + rng.normal(0, 20, (40, 48, 3)), 0, 255)
    img = img.astype(np.uint8)
    files = {}
    for sel, sub in ((0, 0), (1, 1), (3, 2), (5, 2)):
        b = io.BytesIO()
        Image.fromarray(img).save(b, "JPEG", quality=75, subsampling=sub, optimize=sub == 2)
        files[f"jpeg_{sub}_{sel}"] = bytes([sel]) + b.getvalue()
    b = io.BytesIO()
    Image.fromarray(img[..., 0]).save(b, "JPEG", quality=75)
    files["jpeg_gray"] = bytes([2]) + b.getvalue()
    b = io.BytesIO()
    Image.fromarray(img).save(b, "JPEG", quality=75, progressive=True)
    files["jpeg_progressive"] = bytes([0]) + b.getvalue()
    for sel, mode in ((0x80, "RGB"), (0x81, "RGBA"), (0x82, "L"), (0x80, "LA"), (0x81, "P")):
        b = io.BytesIO()
        Image.fromarray(img).convert(mode).save(b, "PNG")
        files[f"png_{mode}"] = bytes([sel]) + b.getvalue()
    for name, data in files.items():
        with open(os.path.join(dest, name), "wb") as fh:
            fh.write(data)


def write_gguf(dest):
    """Small GGUF files for src/llm/model/gguf_fuzz.cc (written by the gguf
    package): metadata of every value type, nested arrays, a custom
    alignment, and tensors of each type the reader dequantizes."""
    import gguf
    from gguf import GGMLQuantizationType as QT
    from gguf import quants
    os.makedirs(dest, exist_ok=True)
    rng = np.random.default_rng(7)
    w = rng.normal(size=(2, 64)).astype(np.float32)
    for name, align in (("tensors", None), ("aligned64", 64)):
        path = os.path.join(dest, name + ".gguf")
        g = gguf.GGUFWriter(path, "llama")
        if align:
            g.add_custom_alignment(align)
        g.add_uint8("t.u8", 7)
        g.add_int8("t.i8", -7)
        g.add_uint16("t.u16", 700)
        g.add_int16("t.i16", -700)
        g.add_uint32("t.u32", 70000)
        g.add_int32("t.i32", -70000)
        g.add_float32("t.f32", 1.5)
        g.add_uint64("t.u64", 1 << 40)
        g.add_int64("t.i64", -(1 << 40))
        g.add_float64("t.f64", 2.25)
        g.add_bool("t.bool", True)
        g.add_string("t.str", "héllo")
        g.add_array("t.arr_str", ["a", "bc", ""])
        g.add_array("t.arr_i32", [1, -2, 3])
        g.add_array("t.arr_nested", [[1, 2], [3]])
        g.add_tensor("f32", w)
        g.add_tensor("f16", w.astype(np.float16))
        for qt in (QT.BF16, QT.Q8_0, QT.Q4_0):
            g.add_tensor(qt.name.lower(), quants.quantize(w, qt), raw_dtype=qt)
        g.write_header_to_file()
        g.write_kv_data_to_file()
        g.write_tensors_to_file()
        g.close()


if __name__ == "__main__":
    write_onnx(os.path.join(HERE, "onnx_parser"))
    write_mindir(os.path.join(HERE, "mindir_parser"))
    write_npy(os.path.join(HERE, "npy"))
    write_om(os.path.join(HERE, "om"))
    write_dvpp(os.path.join(HERE, "dvpp"))
    write_gguf(os.path.join(HERE, "gguf"))

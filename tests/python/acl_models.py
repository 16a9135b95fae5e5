"""Small ONNX models for the AscendCL API and msame tests, compiled with atc."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import oc_harness


def two_io_model():
    """out = x @ W + y ; sq = x * x  (x: float32[2,8], y: float32[2,4])."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["m"], name="matmul"),
        helper.make_node("Add", ["m", "y"], ["out"], name="add"),
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
    ]
    graph = helper.make_graph(
        nodes, "two_io",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("sq", TensorProto.FLOAT, [2, 8])],
        [numpy_helper.from_array(w, "W")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def compile_model(model, directory, name="two_io"):
    """Saves `model` and compiles it; returns (onnx_path, om_path)."""
    onnx_path = oc_harness.save_model(model, directory, name)
    om_path, _ = oc_harness.atc_compile(onnx_path, os.path.join(directory, name))
    return onnx_path, om_path


def app_path(name):
    return os.path.join(oc_harness.BUILD_DIR, "tests", name)

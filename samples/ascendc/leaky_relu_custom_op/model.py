#!/usr/bin/env python3
"""The ONNX side of the sample: a Conv -> LeakyReluCustom -> MaxPool model whose
middle node is the package's custom operator (domain opencann.samples), an input,
and a check of msame's output against onnxruntime running the same model with
ONNX's own LeakyRelu.

  model.py make DIR            writes DIR/lrelu_custom.onnx, DIR/lrelu_reference.onnx, DIR/x.npy
  model.py check DIR OUT.npy   compares msame's output with the reference
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SLOPE = 0.2


def model(custom):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    act = (helper.make_node("LeakyReluCustom", ["c"], ["r"], name="lrelu", domain="opencann.samples",
                            negative_slope=SLOPE) if custom
           else helper.make_node("LeakyRelu", ["c"], ["r"], name="lrelu", alpha=SLOPE))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"), act,
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="pool")]
    graph = helper.make_graph(nodes, "conv_lrelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                  [1, 3, 30, 30])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, b])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("opencann.samples", 1)] if custom else [])
    return helper.make_model(graph, opset_imports=opsets)


def main(argv):
    if len(argv) >= 2 and argv[0] == "make":
        os.makedirs(argv[1], exist_ok=True)
        onnx.save(model(True), os.path.join(argv[1], "lrelu_custom.onnx"))
        onnx.save(model(False), os.path.join(argv[1], "lrelu_reference.onnx"))
        x = np.random.default_rng(1).standard_normal((1, 3, 30, 30)).astype(np.float32)
        np.save(os.path.join(argv[1], "x.npy"), x)
        return 0
    if len(argv) == 3 and argv[0] == "check":
        import onnxruntime as ort
        x = np.load(os.path.join(argv[1], "x.npy"))
        want = ort.InferenceSession(os.path.join(argv[1], "lrelu_reference.onnx")).run(None, {"x": x})[0]
        got = np.load(argv[2])
        err = float(np.abs(got - want).max())
        print(f"max |msame - onnxruntime| = {err:.3g} over {want.size} values")
        return 0 if got.shape == want.shape and err < 1e-4 else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

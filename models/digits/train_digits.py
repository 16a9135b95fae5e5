#!/usr/bin/env python3
"""Trains the bundled demo model and exports it to ONNX.

A small multilayer perceptron learns scikit-learn's 8x8 handwritten digits
(the data set ships inside scikit-learn, so nothing is downloaded). The trained
weights are written into an ONNX graph built with onnx.helper:

    image[N,1,8,8] -> Flatten -> Gemm -> Relu -> Gemm -> Relu -> Gemm -> Softmax -> probs[N,10]

Pixel values are scaled from 0..16 to 0..1 inside the graph (a Div by 16), so
the bundled samples are the raw data-set values.

Outputs (next to this script):
  digits_mlp.onnx      the model
  samples.npy          held-out test images, float32 [64,1,8,8]
  labels.npy           their labels, int64 [64]
Rerun: python3 models/digits/train_digits.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

HERE = os.path.dirname(os.path.abspath(__file__))
NUM_SAMPLES = 64


def main():
    digits = load_digits()
    x = digits.images.astype(np.float32)  # [1797, 8, 8], values 0..16
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y)
    clf = MLPClassifier(hidden_layer_sizes=(64, 32), max_iter=600, random_state=0)
    clf.fit(x_train.reshape(len(x_train), -1) / 16.0, y_train)
    test_acc = clf.score(x_test.reshape(len(x_test), -1) / 16.0, y_test)
    print(f"held-out accuracy (scikit-learn): {test_acc:.4f} on {len(x_test)} images")

    inits = [numpy_helper.from_array(np.array(16.0, dtype=np.float32), "scale")]
    nodes = [helper.make_node("Div", ["image", "scale"], ["scaled"], name="normalize"),
             helper.make_node("Flatten", ["scaled"], ["flat"], name="flatten", axis=1)]
    prev = "flat"
    for i, (w, b) in enumerate(zip(clf.coefs_, clf.intercepts_)):
        inits.append(numpy_helper.from_array(w.T.astype(np.float32), f"fc{i}.weight"))
        inits.append(numpy_helper.from_array(b.astype(np.float32), f"fc{i}.bias"))
        out = f"fc{i}"
        nodes.append(helper.make_node("Gemm", [prev, f"fc{i}.weight", f"fc{i}.bias"], [out],
                                      name=f"fc{i}", transB=1))
        if i < len(clf.coefs_) - 1:
            nodes.append(helper.make_node("Relu", [out], [f"relu{i}"], name=f"relu{i}"))
            prev = f"relu{i}"
        else:
            prev = out
    nodes.append(helper.make_node("Softmax", [prev], ["probs"], name="softmax", axis=1))
    graph = helper.make_graph(
        nodes, "digits_mlp",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="opencann-train-digits",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "digits_mlp.onnx"))

    np.save(os.path.join(HERE, "samples.npy"), x_test[:NUM_SAMPLES].reshape(NUM_SAMPLES, 1, 8, 8))
    np.save(os.path.join(HERE, "labels.npy"), y_test[:NUM_SAMPLES])
    print(f"wrote digits_mlp.onnx and {NUM_SAMPLES} bundled samples")


if __name__ == "__main__":
    main()

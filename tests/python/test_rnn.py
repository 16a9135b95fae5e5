"""LSTM / GRU / RNN against onnxruntime, float32: the path with the input
projection as one GEMM per direction, the ISA mat-vec for the recurrent
product and whole-vector activations, and the per-value path next to it
(peepholes, clip, non-default activations, W given at run time), on the
AVX-512 and AVX2 kernels."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import os
import tempfile

from onnx.reference import ReferenceEvaluator

from oc_harness import assert_close, atc_compile, compile_and_compare, msame_run, save_model

R = np.random.default_rng(41)


def f32(*shape, scale=0.4):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def rnn_model(op, seq, batch, inp, hidden, dirs=1, layout=0, bias=True, seq_lens=None, initial=False,
              peep=False, w_input=False, **attrs):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    x_shape = (batch, seq, inp) if layout else (seq, batch, inp)
    feeds = {"x": f32(*x_shape, scale=1.0)}
    inits = []
    names = ["x"]
    w, r = f32(dirs, gates * hidden, inp), f32(dirs, gates * hidden, hidden)
    if w_input:
        feeds["w"] = w
    else:
        inits.append(numpy_helper.from_array(w, "w"))
    inits.append(numpy_helper.from_array(r, "r"))
    names += ["w", "r"]
    names.append("b" if bias else "")
    if bias:
        inits.append(numpy_helper.from_array(f32(dirs, 2 * gates * hidden), "b"))
    names.append("sl" if seq_lens is not None else "")
    if seq_lens is not None:
        inits.append(numpy_helper.from_array(np.array(seq_lens, np.int32), "sl"))
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    if initial:
        feeds["h0"] = f32(*state)
        names.append("h0")
        if op == "LSTM":
            feeds["c0"] = f32(*state)
            names.append("c0")
    if peep:
        names += [""] * (7 - len(names)) + ["p"]
        inits.append(numpy_helper.from_array(f32(dirs, 3 * hidden), "p"))
    while names and names[-1] == "":
        names.pop()
    outs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    direction = {1: "forward", 2: "bidirectional"}[dirs]
    node = helper.make_node(op, names, outs, hidden_size=hidden, direction=direction, layout=layout, **attrs)
    g = helper.make_graph([node], op.lower(),
                          [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()],
                          [helper.make_empty_tensor_value_info(o) for o in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    return m, feeds


CASES = {
    "lstm_bidir_batch3": lambda: rnn_model("LSTM", 7, 3, 10, 16, dirs=2),
    "lstm_hidden128": lambda: rnn_model("LSTM", 5, 1, 40, 128),
    "lstm_hidden37_initial": lambda: rnn_model("LSTM", 6, 2, 9, 37, initial=True),
    "lstm_seq_lens_bidir": lambda: rnn_model("LSTM", 7, 3, 8, 12, dirs=2, seq_lens=[7, 3, 5]),
    "lstm_no_bias": lambda: rnn_model("LSTM", 5, 2, 6, 24, bias=False),
    "lstm_peepholes": lambda: rnn_model("LSTM", 5, 2, 6, 10, peep=True),
    "lstm_clip": lambda: rnn_model("LSTM", 5, 2, 6, 10, clip=0.5),
    "lstm_w_at_run_time": lambda: rnn_model("LSTM", 4, 2, 6, 10, w_input=True),
    "gru_bidir": lambda: rnn_model("GRU", 7, 2, 10, 48, dirs=2),
    "gru_linear_before_reset": lambda: rnn_model("GRU", 6, 3, 8, 33, linear_before_reset=1, initial=True),
    "gru_seq_lens": lambda: rnn_model("GRU", 6, 3, 8, 16, seq_lens=[6, 1, 4]),
    "rnn_tanh": lambda: rnn_model("RNN", 8, 2, 7, 19, dirs=2),
    "rnn_relu": lambda: rnn_model("RNN", 8, 2, 7, 19, activations=["Relu"]),
}


@pytest.mark.parametrize("isa", ["avx512", "avx2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_rnn_matches_onnxruntime(case, isa, monkeypatch):
    monkeypatch.setenv("OPENCANN_ISA", isa)
    m, feeds = CASES[case]()
    compile_and_compare(m, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("isa", ["avx512", "avx2"])
def test_lstm_layout1_matches_onnx_reference(isa, monkeypatch):
    # onnxruntime has no batch-first (layout 1) LSTM: the ONNX reference
    # implementation is the reference here.
    monkeypatch.setenv("OPENCANN_ISA", isa)
    m, feeds = rnn_model("LSTM", 6, 2, 5, 20, layout=1, dirs=2)
    expected = ReferenceEvaluator(m).run(None, feeds)
    with tempfile.TemporaryDirectory() as d:
        om, _ = atc_compile(save_model(m, d), os.path.join(d, "m"), {k: list(v.shape) for k, v in feeds.items()})
        outs, _ = msame_run(om, list(feeds.values()), d)
    for i, (a, e) in enumerate(zip(outs, expected)):
        assert_close(a, e, 1e-4, 1e-5, what=f"output {i}")

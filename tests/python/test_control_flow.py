"""Control flow (If, Loop, Scan) and sequences in whole models, against onnxruntime.

- A static model with an If (branch outputs of one shape) goes the way an
  application's model goes: atc -> .om (format version 3, nested graphs) -> msame,
  running in the static executor with the If kernel calling into its branches.
- A greedy-decode Loop (data-dependent trip count, an If nested in the body
  reading values two scopes up, scan outputs) and a sequence model run in the
  node-by-node interpreter through oc_conformance_driver, which takes a folder
  laid out like an ONNX node test (model.onnx + test_data_set_0/*.pb).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import oc_harness

sys.path.insert(0, os.path.join(oc_harness.SOURCE_DIR, "tests", "conformance"))
import run_conformance  # noqa: E402  (check_outputs: tensors, SequenceProto, OptionalProto)

DRIVER = os.path.join(oc_harness.BUILD_DIR, "tests", "conformance", "oc_conformance_driver")
R = np.random.default_rng(5)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def graph_attr(nodes, name, inputs, outputs, inits=None):
    return helper.make_graph(nodes, name, inputs, outputs,
                             [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])


def model_of(graph, opset=17):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def if_model():
    """y = If(sum(x) > 0) then Relu(x) @ W else (x - 1) @ W2; x [2,4], y [2,3].
    Both branches read x and a weight from the outer graph."""
    W, W2 = f32(4, 3), f32(4, 3)
    y_info = [helper.make_tensor_value_info("t_y", TensorProto.FLOAT, [2, 3])]
    then_g = graph_attr([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "W"], ["t_y"])],
                        "then", [], y_info)
    else_g = graph_attr([helper.make_node("Sub", ["x", "one"], ["s"]), helper.make_node("MatMul", ["s", "W2"], ["e_y"])],
                        "else", [], [helper.make_tensor_value_info("e_y", TensorProto.FLOAT, [2, 3])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
             helper.make_node("Greater", ["total", "zero"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g, name="if0")]
    inits = {"W": W, "W2": W2, "one": np.array(1, np.float32), "zero": np.array(0, np.float32)}
    g = graph_attr(nodes, "if_model", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits)
    return model_of(g)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_static_if_model_through_atc_and_msame(sign):
    x = (np.abs(f32(2, 4)) * sign).astype(np.float32)
    oc_harness.compile_and_compare(if_model(), {"x": x})


def greedy_decode_model(vocab=7, hidden=8, max_len=10, eos=6):
    """A toy greedy decoder: token -> embedding -> h = tanh(h @ Wh + emb) ->
    logits = h @ Wo (+ a bias chosen by an If on the step's parity, reading Wo
    and the biases from two scopes up) -> next = argmax; stops at eos or after
    max_len steps. Outputs: the tokens (scan output, data-dependent length) and
    the final hidden state."""
    E, Wh, Wo = f32(vocab, hidden), f32(hidden, hidden, scale=0.5), f32(hidden, vocab)
    b_even, b_odd = f32(vocab), f32(vocab)
    # Inner If: logits bias by parity of the iteration number.
    then_g = graph_attr([helper.make_node("Add", ["logits0", "b_even"], ["lt"])], "even", [],
                        [helper.make_tensor_value_info("lt", TensorProto.FLOAT, None)])
    else_g = graph_attr([helper.make_node("Add", ["logits0", "b_odd"], ["lo"])], "odd", [],
                        [helper.make_tensor_value_info("lo", TensorProto.FLOAT, None)])
    body_nodes = [
        helper.make_node("Gather", ["E", "tok_in"], ["emb"], axis=0),           # [hidden]
        helper.make_node("MatMul", ["h_in", "Wh"], ["hw"]),                     # [1, hidden]
        helper.make_node("Add", ["hw", "emb"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_out"]),
        helper.make_node("MatMul", ["h_out", "Wo"], ["logits0"]),               # [1, vocab]
        helper.make_node("Mod", ["i", "two"], ["parity"]),
        helper.make_node("Equal", ["parity", "zero_i"], ["even"]),
        helper.make_node("If", ["even"], ["logits"], then_branch=then_g, else_branch=else_g),
        helper.make_node("ArgMax", ["logits"], ["am"], axis=1, keepdims=0),      # [1]
        helper.make_node("Squeeze", ["am", "axes0"], ["tok_out"]),               # scalar
        helper.make_node("Equal", ["tok_out", "eos"], ["is_eos"]),
        helper.make_node("Not", ["is_eos"], ["cond_out"]),
        helper.make_node("Identity", ["tok_out"], ["tok_scan"]),
    ]
    body = graph_attr(
        body_nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("tok_in", TensorProto.INT64, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [1, hidden])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("tok_out", TensorProto.INT64, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, hidden]),
         helper.make_tensor_value_info("tok_scan", TensorProto.INT64, [])])
    inits = {"E": E, "Wh": Wh, "Wo": Wo, "b_even": b_even, "b_odd": b_odd,
             "two": np.array(2, np.int64), "zero_i": np.array(0, np.int64), "axes0": np.array([0], np.int64),
             "eos": np.array(eos, np.int64), "M": np.array(max_len, np.int64), "true": np.array(True)}
    nodes = [helper.make_node("Loop", ["M", "true", "start", "h0"], ["tok_last", "h_last", "tokens"], body=body,
                              name="decode")]
    g = graph_attr(nodes, "greedy",
                   [helper.make_tensor_value_info("start", TensorProto.INT64, []),
                    helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, hidden])],
                   [helper.make_tensor_value_info("tokens", TensorProto.INT64, ["T"]),
                    helper.make_tensor_value_info("h_last", TensorProto.FLOAT, [1, hidden])], inits)
    return model_of(g)


def run_driver_case(model, feeds):
    """Writes a node-test folder with onnxruntime's outputs as the expected
    ones, runs it through oc_conformance_driver and compares."""
    if not os.path.exists(DRIVER):
        pytest.skip(f"{DRIVER} is not built (target oc_conformance_driver)")
    expected = oc_harness.ort_run(model, feeds)
    with tempfile.TemporaryDirectory() as d:
        case = os.path.join(d, "test_case")
        ds = os.path.join(case, "test_data_set_0")
        os.makedirs(ds)
        onnx.save(model, os.path.join(case, "model.onnx"))
        for i, (name, arr) in enumerate(feeds.items()):
            with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())
        for i, (out, arr) in enumerate(zip(model.graph.output, expected)):
            if out.type.HasField("sequence_type"):
                proto = numpy_helper.from_list([np.asarray(a) for a in arr], out.name)
            else:
                proto = numpy_helper.from_array(np.asarray(arr), out.name)
            with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
                f.write(proto.SerializeToString())
        out_root = os.path.join(d, "out")
        os.makedirs(out_root)
        proc = subprocess.run([DRIVER, out_root], input=case + "\n", capture_output=True, text=True, timeout=120)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("@@RESULT ")]
        assert lines, f"driver produced no result: {proc.stderr[-2000:]}"
        result = json.loads(lines[0][len("@@RESULT "):])
        assert "stage" not in result, result
        ok, msg, _ = run_conformance.check_outputs(case, os.path.join(out_root, "test_case"))
        assert ok, msg
    return expected


@pytest.mark.parametrize("start", [1, 2, 3, 5])
def test_greedy_decode_loop_matches_onnxruntime(start):
    model = greedy_decode_model()
    expected = run_driver_case(model, {"start": np.array(start, np.int64), "h0": f32(1, 8)})
    assert expected[0].ndim == 1


def sequence_model():
    """SplitToSequence(x) -> SequenceMap(body: Relu then ReduceSum) ->
    ConcatFromSequence, plus SequenceInsert/At/Length around it."""
    body = graph_attr([helper.make_node("Relu", ["e"], ["r"]),
                       helper.make_node("ReduceSum", ["r"], ["s"], keepdims=1)],
                      "map_body", [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                      [helper.make_tensor_value_info("s", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("SplitToSequence", ["x", "split"], ["seq"], axis=0),
             helper.make_node("SequenceInsert", ["seq", "extra"], ["seq2"]),
             helper.make_node("SequenceMap", ["seq2"], ["sums"], body=body),
             helper.make_node("ConcatFromSequence", ["sums"], ["y"], axis=0),
             helper.make_node("SequenceLength", ["seq2"], ["n"]),
             helper.make_node("SequenceAt", ["seq2", "last"], ["tail"])]
    inits = {"split": np.array([1, 2, 3], np.int64), "last": np.array(-1, np.int64)}
    g = graph_attr(nodes, "seq_model",
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 3]),
                    helper.make_tensor_value_info("extra", TensorProto.FLOAT, [2, 3])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("n", TensorProto.INT64, []),
                    helper.make_tensor_value_info("tail", TensorProto.FLOAT, None)], inits)
    return model_of(g, opset=18)


def test_sequence_model_matches_onnxruntime():
    run_driver_case(sequence_model(), {"x": f32(6, 3), "extra": f32(2, 3)})


@pytest.mark.parametrize("start", [1, 4])
def test_greedy_decode_through_atc_and_msame(start):
    """The same decoder as an application runs it: atc writes a dynamic .om
    (version 3, the body as a nested graph); msame runs it in the interpreter,
    with output buffers sized by --outputSize (the token count is data-dependent)."""
    model = greedy_decode_model()
    feeds = {"start": np.array(start, np.int64), "h0": f32(1, 8)}
    expected = oc_harness.ort_run(model, feeds)
    with tempfile.TemporaryDirectory() as d:
        path = oc_harness.save_model(model, d)
        om, _ = oc_harness.atc_compile(path, os.path.join(d, "model"))
        # (Not msame_run: its np.ascontiguousarray turns the 0-d start token into shape (1,).)
        paths = []
        for name, arr in feeds.items():
            paths.append(os.path.join(d, f"{name}.npy"))
            np.save(paths[-1], arr)
        out_dir = os.path.join(d, "out")
        oc_harness.run_tool([oc_harness.MSAME, "--model", om, "--output", out_dir, "--outfmt", "NPY",
                             "--input", ",".join(paths), "--outputSize", "80,32"])
        outs = [np.load(os.path.join(out_dir, f"model_output_{i}.npy")) for i in range(2)]
    for i, (a, e) in enumerate(zip(outs, expected)):
        oc_harness.assert_close(a, e, what=f"output {i}")


def test_sequence_model_through_atc_and_msame():
    """Sequences inside, tensors at the boundary: an application can run it."""
    model = sequence_model()
    feeds = {"x": f32(6, 3), "extra": f32(2, 3)}
    expected = oc_harness.ort_run(model, feeds)
    with tempfile.TemporaryDirectory() as d:
        path = oc_harness.save_model(model, d)
        om, _ = oc_harness.atc_compile(path, os.path.join(d, "model"))
        outs, _ = oc_harness.msame_run(om, list(feeds.values()), d, extra=["--outputSize", "64,8,64"])
    assert len(outs) == 3
    for i, (a, e) in enumerate(zip(outs, expected)):
        oc_harness.assert_close(np.asarray(a).reshape(np.asarray(e).shape) if i == 1 else a, e, what=f"output {i}")


def shape_if_model():
    """An If on a shape, as exporters write it: y = If(Shape(x)[0] == 2) then
    Relu(x) else -x. The branches declare no output shapes, so only inlining
    the branch the compiler can decide makes the model static."""
    then_g = graph_attr([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = graph_attr([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
             helper.make_node("Equal", ["d0", "two"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    g = graph_attr(nodes, "shape_if", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
                   {"zero": np.array(0, np.int64), "two": np.array(2, np.int64)})
    return model_of(g)


@pytest.mark.parametrize("rows", [2, 3])
def test_if_on_a_shape_compiles_static(rows):
    model = shape_if_model()
    x = f32(rows, 4)
    oc_harness.compile_and_compare(model, {"x": x})
    with tempfile.TemporaryDirectory() as d:
        path = oc_harness.save_model(model, d)
        om, _ = oc_harness.atc_compile(path, os.path.join(d, "model"), {"x": [rows, 4]})
        summary = oc_harness.run_tool([oc_harness.ATC, "--mode=6", f"--om={om}"]).stdout
    assert "format version:   1" in summary, summary  # no subgraph left: a plain static model
    assert "If" not in summary and ("Relu" if rows == 2 else "Neg") in summary, summary


def untyped_branch_if_model():
    """if_model() with the branch outputs written as an empty TypeProto (no
    type case set), as some exporters write If-branch outputs (silero-vad)."""
    m = if_model()
    for attr in m.graph.node[-1].attribute:
        for out in attr.g.output:
            out.type.Clear()
            out.type.SetInParent()  # present but empty: value_case() == VALUE_NOT_SET
    return m


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_with_untyped_branch_outputs_matches_onnxruntime(sign):
    m = untyped_branch_if_model()
    assert all(o.HasField("type") and o.type.WhichOneof("value") is None
               for a in m.graph.node[-1].attribute for o in a.g.output)
    x = (np.abs(f32(2, 4)) * sign).astype(np.float32)
    oc_harness.compile_and_compare(m, {"x": x})

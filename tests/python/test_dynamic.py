"""Dynamic shapes end to end: models with symbolic dims compiled without
--input_shape and run at several shapes, ATC gear models (--dynamic_batch_size,
--dynamic_image_size, --dynamic_dims) run through msame and an AscendCL app;
every result is checked against onnxruntime at the same shape."""
import os
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import acl_models
import model_zoo
import oc_harness

R = np.random.default_rng(11)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def model_of(nodes, inputs, outputs, inits, name, opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def mlp_model():
    """x[N,16] -> Gemm -> Relu -> MatMul + b -> y[N,5], batch symbolic."""
    inits = {"W1": f32(16, 32), "b1": f32(32), "W2": f32(32, 5), "b2": f32(5)}
    nodes = [helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "W2"], ["m"], name="fc2"),
             helper.make_node("Add", ["m", "b2"], ["y"], name="bias2")]
    return model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits, "mlp")


def attention_model(d=8):
    """One self-attention head over x[B,S,d] with S symbolic, plus a Reshape
    whose target shape is computed from Shape(x) (as exported transformers do)."""
    inits = {"Wq": f32(d, d), "Wk": f32(d, d), "Wv": f32(d, d), "scale": np.array(1 / np.sqrt(d), np.float32),
             "i0": np.array([0], np.int64), "i1": np.array([1], np.int64), "minus1": np.array([-1], np.int64)}
    nodes = [
        helper.make_node("MatMul", ["x", "Wq"], ["q"], name="q"),
        helper.make_node("MatMul", ["x", "Wk"], ["k"], name="k"),
        helper.make_node("MatMul", ["x", "Wv"], ["v"], name="v"),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="kt"),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Mul", ["s", "scale"], ["ss"], name="scale"),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["p", "v"], ["a"], name="attend"),
        helper.make_node("Shape", ["x"], ["xs"], name="shape"),
        helper.make_node("Gather", ["xs", "i0"], ["b"], axis=0, name="batch"),
        helper.make_node("Gather", ["xs", "i1"], ["sl"], axis=0, name="seq"),
        helper.make_node("Mul", ["b", "sl"], ["bs"], name="bs"),
        helper.make_node("Concat", ["bs", "minus1"], ["flat_shape"], axis=0, name="cat"),
        helper.make_node("Reshape", ["a", "flat_shape"], ["y"], name="flatten"),
    ]
    return model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", d])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits, "attention")


def conv_model(c_out=4):
    """x[N,3,H,W] -> Conv 3x3 pad 1 -> Relu -> GlobalAveragePool -> Flatten -> y[N,c_out]."""
    inits = {"w": f32(c_out, 3, 3, 3) * 0.2, "b": f32(c_out)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["y"], name="flat")]
    return model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", c_out])], inits, "convnet")


def two_input_model():
    """data[1,T,4] and mask[T,T]: y = MatMul(mask, data) -> [1,T,4]."""
    nodes = [helper.make_node("MatMul", ["mask", "data"], ["y"], name="mix")]
    return model_of(nodes, [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, "T", 4]),
                            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["T", "T"])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "T", 4])], {}, "two_inputs")


def compile_(model, tmp_path, name, *flags):
    path = oc_harness.save_model(model, str(tmp_path), name)
    om, proc = oc_harness.atc_compile(path, str(tmp_path / name), extra=flags)
    return om, proc


def msame(om, arrays, workdir, *flags):
    os.makedirs(workdir, exist_ok=True)
    outs, proc = oc_harness.msame_run(om, arrays, str(workdir), extra=flags)
    return outs


@pytest.mark.parametrize("model_fn,shapes", [
    (mlp_model, [(2, 16), (7, 16)]),
    (attention_model, [(1, 3, 8), (2, 11, 8)]),
])
def test_symbolic_dims_compile_without_input_shape_and_run_at_several_shapes(tmp_path, model_fn, shapes):
    m = model_fn()
    om, proc = compile_(m, tmp_path, "sym")
    assert "Dynamic shapes" in proc.stdout, proc.stdout
    for i, shape in enumerate(shapes):
        x = f32(*shape)
        (y,) = oc_harness.ort_run(m, {"x": x})
        out_bytes = y.size * 4 + 64
        dym = "x:" + ",".join(map(str, shape))
        outs = msame(om, [x], tmp_path / f"run{i}", "--dymShape", dym, "--outputSize", str(out_bytes))
        oc_harness.assert_close(outs[0], y, rtol=1e-4, atol=1e-5, what=f"{m.graph.name} at {shape}")


def test_symbolic_model_runs_at_two_shapes_in_one_process(tmp_path):
    m = mlp_model()
    om, _ = compile_(m, tmp_path, "mlp")
    xs = {n: f32(n, 16) for n in (3, 9)}
    for n, x in xs.items():
        x.tofile(tmp_path / f"x_{n}.bin")
    exe = acl_models.app_path("acl_dynamic")
    proc = subprocess.run([exe, "shape", om, str(tmp_path), "3", "9"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout
    for n, x in xs.items():
        (ref,) = oc_harness.ort_run(m, {"x": x})
        got = np.fromfile(tmp_path / f"out_{n}.bin", dtype=np.float32).reshape(ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_dynamic_om_stores_the_packings_made_at_a_probe_shape(tmp_path):
    """atc packs a dynamic model's weights at a probe shape (unknown dims 1) and
    stores them; the .om keeps the raw weights too, and runs right at other shapes."""
    m = mlp_model()
    om, proc = compile_(m, tmp_path, "mlp")
    assert "Prepacked weights: 2 nodes, packed at probe shapes x[1,16]" in proc.stdout, proc.stdout
    info = oc_harness.run_tool([oc_harness.ATC, "--mode=6", f"--om={om}"]).stdout
    assert "(prepacked: 0 bytes)" not in info and "prepacked:" in info, info
    for i, n in enumerate((1, 6)):
        x = f32(n, 16)
        (y,) = oc_harness.ort_run(m, {"x": x})
        outs = msame(om, [x], tmp_path / f"run{i}", "--dymShape", f"x:{n},16", "--outputSize", str(y.nbytes))
        oc_harness.assert_close(outs[0], y, rtol=1e-4, atol=1e-5, what=f"mlp at N={n}")


@pytest.mark.parametrize("pad,probe", [(1, "x[1,3,1,1]"), (0, "x[32,3,32,32]")])
def test_dynamic_conv_packs_at_the_first_probe_that_compiles_and_repacks_where_needed(tmp_path, pad, probe):
    """A 3x3 conv without padding does not compile at a 1x1 image: the probe moves
    on to 32. At the shapes run (not the probe's) the conv's packing may differ
    from the stored one; the results must not."""
    m = conv_model()
    for node in m.graph.node:
        if node.op_type == "Conv":
            node.attribute[0].CopyFrom(helper.make_attribute("pads", [pad] * 4))
    om, proc = compile_(m, tmp_path, f"conv{pad}")
    assert f"packed at probe shapes {probe}" in proc.stdout, proc.stdout
    for i, shape in enumerate([(1, 3, 20, 20), (2, 3, 9, 13)]):
        x = f32(*shape)
        (y,) = oc_harness.ort_run(m, {"x": x})
        dym = "x:" + ",".join(map(str, shape))
        outs = msame(om, [x], tmp_path / f"run{i}", "--dymShape", dym, "--outputSize", str(y.nbytes))
        oc_harness.assert_close(outs[0], y, rtol=1e-4, atol=1e-5, what=f"conv pad {pad} at {shape}")


def test_dynamic_om_packed_for_another_isa_runs_right(tmp_path):
    """A dynamic .om compiled for AVX2 (OPENCANN_ISA=avx2) and run on this host:
    the NCHWc conv's stored packing (8-channel blocks, told apart by size only)
    must not be read where the host's kernels use 16-channel blocks. Channel
    counts are multiples of 16, so the two packings have the same size. (On a
    host without AVX-512 both ISAs agree and the check is plain correctness.)"""
    w = {"w1": f32(32, 16, 1, 1) * 0.2, "w2": f32(32, 32, 3, 3) * 0.1, "w3": f32(48, 32, 1, 1) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="c1"),
             helper.make_node("Relu", ["a"], ["r"], name="r1"),
             helper.make_node("Conv", ["r", "w2"], ["b"], pads=[1, 1, 1, 1], name="c2"),
             helper.make_node("Relu", ["b"], ["r2"], name="r2"),
             helper.make_node("Conv", ["r2", "w3"], ["y"], name="c3")]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16, "H", "W"])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], w, "nchwc_isa")
    path = oc_harness.save_model(m, str(tmp_path), "isa")
    env = dict(os.environ, OPENCANN_ISA="avx2")
    proc = oc_harness.run_tool([oc_harness.ATC, f"--model={path}", "--framework=5",
                                f"--output={tmp_path / 'isa'}"], env=env)
    assert "Prepacked weights: 3 nodes" in proc.stdout, proc.stdout
    x = f32(1, 16, 28, 28)
    (y,) = oc_harness.ort_run(m, {"x": x})
    outs = msame(str(tmp_path / "isa.om"), [x], tmp_path / "run", "--dymShape", "x:1,16,28,28",
                 "--outputSize", str(y.nbytes))
    oc_harness.assert_close(outs[0].reshape(y.shape), y, rtol=1e-4, atol=1e-5, what="AVX2 dynamic .om on this host")


@pytest.fixture(scope="module")
def batch_gear_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("gears")
    m = conv_model()
    om, proc = compile_(m, d, "conv_gears", "--input_shape=x:-1,3,224,224", "--dynamic_batch_size=1,4,8")
    assert "Gears (--dynamic_batch_size): 3" in proc.stdout, proc.stdout
    return m, om


def test_dynamic_batch_through_msame(batch_gear_model, tmp_path):
    m, om = batch_gear_model
    x = f32(4, 3, 224, 224)
    (ref,) = oc_harness.ort_run(m, {"x": x})
    outs = msame(om, [x], tmp_path, "--dymBatch", "4")
    oc_harness.assert_close(outs[0], ref, rtol=1e-4, atol=1e-5, what="batch 4")


def test_dynamic_batch_through_acl_app(batch_gear_model, tmp_path):
    m, om = batch_gear_model
    x = f32(4, 3, 224, 224)
    x.tofile(tmp_path / "input_0.bin")
    exe = acl_models.app_path("acl_dynamic")
    proc = subprocess.run([exe, "gear", om, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout
    (ref,) = oc_harness.ort_run(m, {"x": x})
    got = np.fromfile(tmp_path / "output_0.bin", dtype=np.float32).reshape(ref.shape)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_msame_refuses_a_batch_that_is_not_a_gear(batch_gear_model, tmp_path):
    _, om = batch_gear_model
    x = f32(3, 3, 224, 224)
    outs, proc = oc_harness.msame_run(om, [x], str(tmp_path), extra=["--dymBatch", "3"], check=False)
    assert proc.returncode != 0
    assert "not a gear" in proc.stderr and "1; 4; 8" in proc.stderr, proc.stderr
    _, proc = oc_harness.msame_run(om, [f32(4, 3, 224, 224)], str(tmp_path), check=False)
    assert proc.returncode != 0 and "--dymBatch" in proc.stderr


def test_dynamic_image_size_through_msame(tmp_path):
    m = conv_model()
    om, _ = compile_(m, tmp_path, "conv_hw", "--input_shape=x:1,3,-1,-1", "--dynamic_image_size=16,16;24,40")
    for h, w in ((24, 40), (16, 16)):
        x = f32(1, 3, h, w)
        (ref,) = oc_harness.ort_run(m, {"x": x})
        outs = msame(om, [x], tmp_path / f"{h}x{w}", "--dymHW", f"{h},{w}")
        oc_harness.assert_close(outs[0], ref, rtol=1e-4, atol=1e-5, what=f"{h}x{w}")
    proc = subprocess.run([acl_models.app_path("acl_dynamic"), "hw", om], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "PASS" in proc.stdout, proc.stdout + proc.stderr


def test_dynamic_dims_through_msame(tmp_path):
    m = two_input_model()
    # -1 placeholders in --input_shape order: data's T, then mask's two dims.
    om, _ = compile_(m, tmp_path, "dims", "--input_shape=data:1,-1,4;mask:-1,-1", "--dynamic_dims=3,3,3;5,5,5")
    for t in (5, 3):
        data, mask = f32(1, t, 4), f32(t, t)
        (ref,) = oc_harness.ort_run(m, {"data": data, "mask": mask})
        outs = msame(om, [data, mask], tmp_path / f"t{t}", "--dymDims", f"data:1,{t},4;mask:{t},{t}")
        oc_harness.assert_close(outs[0], ref, rtol=1e-4, atol=1e-5, what=f"T={t}")
    proc = subprocess.run([acl_models.app_path("acl_dynamic"), "dims", om], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "PASS" in proc.stdout, proc.stdout + proc.stderr
    _, proc = oc_harness.msame_run(om, [f32(1, 4, 4), f32(4, 4)], str(tmp_path),
                                   extra=["--dymDims", "data:1,4,4;mask:4,4"], check=False)
    assert proc.returncode != 0 and "not a gear" in proc.stderr, proc.stderr


@pytest.mark.parametrize("flags,fragment", [
    (["--dynamic_batch_size=1,4,8"], "need --input_shape with -1"),
    (["--input_shape=x:-1,3,224,224", "--dynamic_batch_size=4"], "between 2 and 100"),
    (["--input_shape=x:-1,3,224,224", "--dynamic_batch_size=1,4,4"], "repeats gear"),
    (["--input_shape=x:-1,3,224,224", "--dynamic_batch_size=1,0"], "integer >= 1"),
    (["--input_shape=x:1,3,-1,224", "--dynamic_batch_size=1,2"], "first (batch) dim"),
    (["--input_shape=x:-1,3,224,224", "--dynamic_batch_size=1,2", "--dynamic_dims=1;2"], "mutually exclusive"),
    (["--input_shape=x:1,3,-1,-1", "--dynamic_image_size=16,16,3;8,8"], "expected 2"),
    (["--input_shape=x:-1,3,-1,224", "--dynamic_dims=1,16;2"], "expected 2"),
    (["--input_shape=x:1~8,3,224,224", "--dynamic_batch_size=1,2"], "cannot be used together"),
])
def test_atc_gear_flag_errors(tmp_path, flags, fragment):
    path = oc_harness.save_model(conv_model(), str(tmp_path), "c")
    proc = subprocess.run([oc_harness.ATC, f"--model={path}", "--framework=5", f"--output={tmp_path / 'o'}", *flags],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert fragment in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_atc_mode6_summary_shows_unknown_dims(tmp_path):
    om, _ = compile_(mlp_model(), tmp_path, "mlp")
    proc = subprocess.run([oc_harness.ATC, "--mode=6", f"--om={om}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "format version:   2" in proc.stdout
    assert "x: float32 [N,16]" in proc.stdout
    assert "y: float32 [N,5]" in proc.stdout  # recovered by probing
    assert "planned at run time" in proc.stdout


def recurrent_model(features=8, hidden=16, classes=5):
    """Bidirectional LSTM -> GRU -> Gemm over input[T, N, features], T and N
    symbolic; the Reshape between them copies dims (0) instead of fixing them."""
    b = model_zoo.Builder(4)
    w = b.const((0.3 * b.rng.standard_normal((2, 4 * hidden, features))).astype(np.float32), "lstm_w")
    r = b.const((0.3 * b.rng.standard_normal((2, 4 * hidden, hidden))).astype(np.float32), "lstm_r")
    bb = b.const((0.1 * b.rng.standard_normal((2, 8 * hidden))).astype(np.float32), "lstm_b")
    y, _, _ = b.op("LSTM", ["input", w, r, bb], n_out=3, hidden_size=hidden, direction="bidirectional")
    y = b.op("Reshape", [b.op("Transpose", [y], perm=[0, 2, 1, 3]), b.const(np.array([0, 0, 2 * hidden], np.int64))])
    gw = b.const((0.3 * b.rng.standard_normal((1, 3 * hidden, 2 * hidden))).astype(np.float32), "gru_w")
    gr = b.const((0.3 * b.rng.standard_normal((1, 3 * hidden, hidden))).astype(np.float32), "gru_r")
    gb = b.const((0.1 * b.rng.standard_normal((1, 6 * hidden))).astype(np.float32), "gru_b")
    _, h = b.op("GRU", [y, gw, gr, gb], n_out=2, hidden_size=hidden, linear_before_reset=1)
    h = b.op("Squeeze", [h, b.const(np.array([0], np.int64))])
    fw = b.const((b.rng.standard_normal((classes, hidden)) / 4).astype(np.float32), "fc_w")
    b.op("Gemm", [h, fw], transB=1)
    b.nodes[-1].output[0] = "logits"
    return b.model([helper.make_tensor_value_info("input", TensorProto.FLOAT, ["T", "N", features])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])], "recurrent")


@pytest.mark.parametrize("name,build,feeds_at", [
    ("resnet", lambda: model_zoo.resnet(batch="N"),
     lambda n: {"input": f32(n, 3, 64, 64)}),
    ("lstm_gru", lambda: recurrent_model(),
     lambda n: {"input": f32(2 * n + 1, n, 8)}),
    ("transformer", lambda: model_zoo.transformer_encoder(batch="B"),
     lambda n: {"input_ids": R.integers(0, 100, (n, 16)).astype(np.int64),
                "attention_mask": np.ones((n, 16), np.int64)}),
])
def test_zoo_architectures_with_a_symbolic_batch(tmp_path, name, build, feeds_at):
    """Exporter-style graphs (Conv+BN, residuals, Shape/Gather/Concat/Reshape
    attention chains) with the batch left symbolic, at batch 1 and 3."""
    m = build()
    om, proc = compile_(m, tmp_path, name)
    assert "Dynamic shapes" in proc.stdout, proc.stdout
    for n in (3, 1):
        feeds = feeds_at(n)
        refs = oc_harness.ort_run(m, feeds)
        dym = ";".join(f"{k}:{','.join(map(str, v.shape))}" for k, v in feeds.items())
        sizes = ",".join(str(r.nbytes) for r in refs)
        outs = msame(om, list(feeds.values()), tmp_path / f"b{n}", "--dymShape", dym, "--outputSize", sizes)
        for i, (a, e) in enumerate(zip(outs, refs)):
            oc_harness.assert_close(a, e, rtol=1e-3, atol=1e-4, what=f"{name} output {i} at batch {n}")


# ---- Data-dependent ops ---------------------------------------------------------------------
# With their deciding input constant they fold at compile time; with it a model
# input they make the graph's shapes data-dependent (run by the interpreter
# where the build has one).

def single_op_model(op, inputs, consts, n_out=1, attrs=None, opset=17):
    """One node; `inputs` are model inputs (name -> array), `consts` initializers."""
    names = list(inputs) + list(consts)
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name=op.lower(), **(attrs or {}))
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
          for k, v in inputs.items()]
    return model_of([node], vi, [helper.make_empty_tensor_value_info(o) for o in outs], consts, op.lower(), opset)


def run_folded(tmp_path, op, consts, n_out=1, attrs=None, opset=17):
    """Everything constant but a dummy input: the op folds at compile time."""
    dummy = {"d": np.zeros((1,), np.float32)}
    m = single_op_model(op, {}, consts, n_out, attrs, opset)
    # A model needs an input: add one that feeds nothing the op reads.
    m.graph.input.append(helper.make_tensor_value_info("d", TensorProto.FLOAT, [1]))
    m.graph.node.append(helper.make_node("Identity", ["d"], ["d_out"], name="keep"))
    m.graph.output.append(helper.make_tensor_value_info("d_out", TensorProto.FLOAT, [1]))
    refs = oc_harness.ort_run(m, dummy)
    om, _ = compile_(m, tmp_path, op.lower())
    outs = msame(om, [dummy["d"]], tmp_path / "run")
    assert len(outs) == len(refs)
    for i, (a, e) in enumerate(zip(outs[:-1], refs[:-1])):
        oc_harness.assert_close(a, e, what=f"{op} output {i}")


@pytest.mark.parametrize("x", [
    np.array([[1, 0], [1, 1]], dtype=bool),
    np.array([[0.0, -0.0, 2.5], [np.nan, 0.0, -1.0]], dtype=np.float32),
    np.array([3, 0, 0, 7, 0], dtype=np.int64),
    np.zeros((2, 3), np.float32),
])
def test_nonzero_folds_and_matches_onnxruntime(tmp_path, x):
    run_folded(tmp_path, "NonZero", {"x": x})


@pytest.mark.parametrize("axis,cond", [(None, [1, 0, 1, 1]), (0, [0, 1, 1]), (1, [1, 0]), (-1, [1, 1, 0, 1, 1])])
def test_compress_folds_and_matches_onnxruntime(tmp_path, axis, cond):
    x = np.arange(3 * 4, dtype=np.float32).reshape(3, 4)
    attrs = {} if axis is None else {"axis": axis}
    run_folded(tmp_path, "Compress", {"x": x, "c": np.array(cond, dtype=bool)}, attrs=attrs)


@pytest.mark.parametrize("x,attrs", [
    (np.array([2.0, 1.0, 1.0, 3.0, 4.0, 3.0], np.float32), {}),
    (np.array([2.0, 1.0, 1.0, 3.0, 4.0, 3.0], np.float32), {"sorted": 0}),
    (np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]], np.int64), {"axis": 0}),
    (np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]], np.int64), {"axis": 1, "sorted": 0}),
    (np.array([[[1, 1], [0, 1], [2, 1], [0, 1]], [[1, 1], [0, 1], [2, 1], [0, 1]]], np.float32), {"axis": -2}),
])
def test_unique_folds_and_matches_onnxruntime(tmp_path, x, attrs):
    run_folded(tmp_path, "Unique", {"x": x}, n_out=4, attrs=attrs)


def run_with_inputs(tmp_path, m, feeds, name):
    """Compiles `m` as is and runs it with msame on `feeds`, output sizes from
    onnxruntime's results (these outputs' sizes depend on the data)."""
    refs = oc_harness.ort_run(m, feeds)
    om, proc = compile_(m, tmp_path, name)
    assert "Dynamic shapes" in proc.stdout, proc.stdout
    sizes = ",".join(str(max(r.nbytes, 8)) for r in refs)
    outs = msame(om, list(feeds.values()), tmp_path / "run", "--outputSize", sizes)
    assert len(outs) == len(refs)
    for i, (a, e) in enumerate(zip(outs, refs)):
        oc_harness.assert_close(a, e, what=f"{name} output {i}")


def test_nonzero_of_a_model_input_runs_in_the_interpreter(tmp_path):
    x = np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]], np.float32)
    m = single_op_model("NonZero", {"x": x}, {})
    run_with_inputs(tmp_path, m, {"x": x}, "nonzero")


def test_unique_of_a_model_input_runs_in_the_interpreter(tmp_path):
    x = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]], np.int64)
    m = single_op_model("Unique", {"x": x}, {}, n_out=4, attrs={"axis": 0, "sorted": 0})
    run_with_inputs(tmp_path, m, {"x": x}, "unique")


def test_compress_with_a_condition_input_then_more_ops(tmp_path):
    """A data-dependent shape in the middle of a graph: the ops after it run at that shape too."""
    x, c = f32(5, 4), np.array([1, 0, 1, 1, 0], bool)
    nodes = [helper.make_node("Compress", ["x", "c"], ["s"], axis=0, name="pick"),
             helper.make_node("MatMul", ["s", "W"], ["y"], name="proj"),
             helper.make_node("Relu", ["y"], ["z"], name="relu")]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 4]),
                         helper.make_tensor_value_info("c", TensorProto.BOOL, [5])],
                 [helper.make_empty_tensor_value_info("z")], {"W": f32(4, 6)}, "compress_mlp")
    run_with_inputs(tmp_path, m, {"x": x, "c": c}, "compress_mlp")


def test_range_with_input_bounds_runs_in_the_interpreter(tmp_path):
    # (msame's .npy inputs are at least 1-D: the scalars come from Squeeze.)
    feeds = {"start": np.array([2], np.int64), "limit": np.array([17], np.int64), "delta": np.array([3], np.int64)}
    nodes = [helper.make_node("Squeeze", [k], [k + "_s"], name="sq_" + k) for k in feeds]
    nodes.append(helper.make_node("Range", ["start_s", "limit_s", "delta_s"], ["r"], name="range"))
    m = model_of(nodes, [helper.make_tensor_value_info(k, TensorProto.INT64, [1]) for k in feeds],
                 [helper.make_empty_tensor_value_info("r")], {}, "range")
    run_with_inputs(tmp_path, m, feeds, "range")


def test_data_dependent_output_too_big_for_its_buffer_is_an_error(tmp_path):
    x = np.ones((4, 4), np.float32)
    m = single_op_model("NonZero", {"x": x}, {})
    om, _ = compile_(m, tmp_path, "nz")
    _, proc = oc_harness.msame_run(om, [x], str(tmp_path), extra=["--outputSize", "16"], check=False)
    assert proc.returncode != 0
    assert "256 bytes" in proc.stderr and "holds 16 bytes" in proc.stderr, proc.stderr
    # Without --outputSize, msame sizes the output from the run (aclmdlExecute allocates it).
    outs, proc = oc_harness.msame_run(om, [x], str(tmp_path), check=False)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(outs[0], np.array(np.nonzero(x), np.int64))


def nms_case(center, score_threshold, seed=0, batches=2, classes=3, n=12):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (batches, n, 2)).astype(np.float32)
    wh = rng.uniform(1, 5, (batches, n, 2)).astype(np.float32)
    if center:
        boxes = np.concatenate([xy, wh], axis=2)
    else:  # [y1, x1, y2, x2], some corners swapped
        boxes = np.concatenate([xy, xy + wh], axis=2)[:, :, [1, 0, 3, 2]]
        boxes[:, ::3] = boxes[:, ::3][:, :, [2, 3, 0, 1]]
    scores = rng.uniform(0, 1, (batches, classes, n)).astype(np.float32)
    scores[0, 0, 3] = scores[0, 0, 5]  # a tie: the lower index goes first
    consts = {"max_out": np.array([4], np.int64), "iou": np.array([0.3], np.float32)}
    if score_threshold is not None:
        consts["score_th"] = np.array([score_threshold], np.float32)
    return boxes, scores, consts


@pytest.mark.parametrize("center,score_threshold", [(0, None), (1, 0.4), (0, 0.95)])
def test_nms_folds_and_matches_onnxruntime(tmp_path, center, score_threshold):
    boxes, scores, consts = nms_case(center, score_threshold)
    run_folded(tmp_path, "NonMaxSuppression", {"boxes": boxes, "scores": scores, **consts},
               attrs={"center_point_box": center})


def test_nms_of_model_inputs_runs_in_the_interpreter(tmp_path):
    boxes, scores, consts = nms_case(0, 0.2, seed=5)
    m = single_op_model("NonMaxSuppression", {"boxes": boxes, "scores": scores}, consts)
    run_with_inputs(tmp_path, m, {"boxes": boxes, "scores": scores}, "nms")


def test_atc_still_reports_shape_errors_of_models_with_static_inputs(tmp_path):
    """Dynamic mode tolerates unknown shapes; a real mismatch next to a data-dependent
    op is still a compile error."""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
             helper.make_node("MatMul", ["x", "W"], ["bad"], name="mismatch")]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                 [helper.make_empty_tensor_value_info("nz"), helper.make_empty_tensor_value_info("bad")],
                 {"W": f32(4, 5)}, "bad")
    path = oc_harness.save_model(m, str(tmp_path), "bad")
    proc = subprocess.run([oc_harness.ATC, f"--model={path}", "--framework=5", f"--output={tmp_path / 'o'}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "E12001" in proc.stdout + proc.stderr and "mismatch" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def big_nms_case(kind, seed):
    """Many boxes (the grid of kept boxes in the kernel is only exercised with
    hundreds of them): torchvision's batched NMS (20 groups shifted apart, one
    class, most boxes kept), a dense cluster over 3 classes, and extreme boxes
    (zero-area, inverted, infinite, one box covering everything)."""
    rng = np.random.default_rng(seed)
    if kind == "batched":
        n, classes, groups = 3000, 1, 20
        xy = rng.uniform(0, 300, (1, n, 2)).astype(np.float32)
        wh = rng.uniform(2, 60, (1, n, 2)).astype(np.float32)
        xy[0, :, 1] += (np.arange(n) % groups * 400).astype(np.float32)  # x offset per group
        boxes = np.concatenate([xy, xy + wh], axis=2)  # [y1, x1, y2, x2]
        consts = {"max_out": np.array([100000], np.int64), "iou": np.array([0.5], np.float32)}
    elif kind == "dense":
        n, classes = 1500, 3
        xy = rng.uniform(0, 40, (1, n, 2)).astype(np.float32)
        wh = rng.uniform(5, 30, (1, n, 2)).astype(np.float32)
        boxes = np.concatenate([xy, wh], axis=2)  # center_point_box
        consts = {"max_out": np.array([200], np.int64), "iou": np.array([0.45], np.float32),
                  "score_th": np.array([0.2], np.float32)}
    else:
        n, classes = 600, 2
        xy = rng.uniform(0, 100, (1, n, 2)).astype(np.float32)
        wh = rng.uniform(0.5, 20, (1, n, 2)).astype(np.float32)
        boxes = np.concatenate([xy, xy + wh], axis=2)
        boxes[0, ::7, 2] = boxes[0, ::7, 0]            # zero height
        boxes[0, ::11] = boxes[0, ::11][:, [2, 3, 0, 1]]  # corners swapped
        boxes[0, 5] = [-1e30, -1e30, 1e30, 1e30]       # covers everything
        boxes[0, 9] = [0, -np.inf, 10, 50]             # infinite width
        boxes[0, 13] = [np.inf, np.inf, np.inf, np.inf]
        consts = {"max_out": np.array([1000], np.int64), "iou": np.array([0.0], np.float32)}
    scores = rng.uniform(0, 1, (1, classes, n)).astype(np.float32)
    return boxes, scores, consts, (1 if kind == "dense" else 0)


@pytest.mark.parametrize("kind", ["batched", "dense", "extreme"])
def test_nms_with_many_boxes_matches_onnxruntime(tmp_path, kind):
    boxes, scores, consts, center = big_nms_case(kind, seed=len(kind))
    m = single_op_model("NonMaxSuppression", {"boxes": boxes, "scores": scores}, consts,
                        attrs={"center_point_box": center})
    run_with_inputs(tmp_path, m, {"boxes": boxes, "scores": scores}, "nms_" + kind)


@pytest.mark.parametrize("flag,ok_shapes,bad_shape,range_text", [
    ("--input_shape=x:1~4,16", [(1, 16), (4, 16)], (5, 16), "1~4"),
    ("--input_shape_range=x:[2~-1,16]", [(2, 16), (9, 16)], (1, 16), "2~-1"),
])
def test_shape_ranges_compile_dynamic_and_bound_the_run_time_shapes(tmp_path, flag, ok_shapes, bad_shape, range_text):
    m = mlp_model()
    om, proc = compile_(m, tmp_path, "ranged", flag)
    assert "Dynamic shapes" in proc.stdout, proc.stdout
    info = oc_harness.run_tool([oc_harness.ATC, "--mode=6", f"--om={om}"]).stdout
    assert f"shape ranges:     x:{range_text},-" in info, info
    for i, shape in enumerate(ok_shapes):
        x = f32(*shape)
        (y,) = oc_harness.ort_run(m, {"x": x})
        outs = msame(om, [x], tmp_path / f"ok{i}", "--dymShape", "x:" + ",".join(map(str, shape)),
                     "--outputSize", str(y.nbytes))
        oc_harness.assert_close(outs[0], y, rtol=1e-4, atol=1e-5, what=f"{flag} at {shape}")
    x = f32(*bad_shape)
    os.makedirs(tmp_path / "bad", exist_ok=True)
    _, proc = oc_harness.msame_run(om, [x], str(tmp_path / "bad"), check=False,
                                   extra=("--dymShape", "x:" + ",".join(map(str, bad_shape)), "--outputSize", "4096"))
    assert proc.returncode != 0 and f"outside the range {range_text}" in proc.stdout + proc.stderr, \
        proc.stdout + proc.stderr


@pytest.mark.parametrize("flags,fragment", [
    (["--input_shape=x:4~1,16"], "lo~hi"),
    (["--input_shape=x:1~4,16", "--input_shape_range=x:[1~4,16]"], "cannot be used together"),
    (["--input_shape=x:1~4,16", "--dynamic_batch_size=1,2"], "cannot be used together"),
])
def test_bad_shape_ranges_are_refused(tmp_path, flags, fragment):
    path = oc_harness.save_model(mlp_model(), str(tmp_path), "m")
    _, proc = oc_harness.atc_compile(path, str(tmp_path / "m"), extra=flags, check=False)
    assert proc.returncode != 0 and fragment in proc.stdout + proc.stderr, proc.stdout + proc.stderr

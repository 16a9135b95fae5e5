"""atc --output_type and --input_fp16_nodes (Cast nodes at the model's edges),
and the ATC tuning flags accepted with a warning; results against onnxruntime."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import oc_harness

R = np.random.default_rng(9)


def two_output_model():
    nodes = [helper.make_node("Tanh", ["x"], ["t"], name="tanh"),
             helper.make_node("Mul", ["t", "x"], ["m"], name="mul")]
    g = helper.make_graph(nodes, "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                          [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 8]),
                           helper.make_tensor_value_info("m", TensorProto.FLOAT, [2, 8])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def compile_run(tmp_path, model, flags, inputs):
    path = oc_harness.save_model(model, str(tmp_path), "m")
    om, proc = oc_harness.atc_compile(path, str(tmp_path / "m"), extra=flags)
    outs, _ = oc_harness.msame_run(om, inputs, str(tmp_path))
    return om, proc, outs


def summary(om):
    return oc_harness.run_tool([oc_harness.ATC, "--mode=6", f"--om={om}"]).stdout


def test_output_type_fp16_for_every_output(tmp_path):
    m, x = two_output_model(), R.standard_normal((2, 8)).astype(np.float32)
    om, _, outs = compile_run(tmp_path, m, ["--output_type=FP16"], [x])
    want = oc_harness.ort_run(m, {"x": x})
    for got, ref in zip(outs, want):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, ref.astype(np.float16))
    info = summary(om)
    assert "t: float16" in info and "m: float16" in info, info


def test_output_type_for_one_output_keeps_the_others_and_the_names(tmp_path):
    m, x = two_output_model(), R.standard_normal((2, 8)).astype(np.float32)
    om, _, outs = compile_run(tmp_path, m, ["--output_type=mul:0:FP16"], [x])
    t, mm = oc_harness.ort_run(m, {"x": x})
    assert outs[0].dtype == np.float32 and outs[1].dtype == np.float16
    np.testing.assert_allclose(outs[0], t, rtol=1e-6)
    np.testing.assert_array_equal(outs[1], mm.astype(np.float16))
    info = summary(om)
    assert "t: float32" in info and "m: float16" in info, info


def test_input_fp16_nodes(tmp_path):
    m, x = two_output_model(), R.standard_normal((2, 8)).astype(np.float16)
    om, _, outs = compile_run(tmp_path, m, ["--input_fp16_nodes=x"], [x])
    want = oc_harness.ort_run(m, {"x": x.astype(np.float32)})
    for got, ref in zip(outs, want):
        np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert "x: float16" in summary(om)


@pytest.mark.parametrize("flags,fragment", [
    (["--output_type=FP64"], "FP32, FP16 or UINT8"),
    (["--output_type=nope:0:FP16"], "not a model output"),
    (["--input_fp16_nodes=z"], "not an input"),
])
def test_bad_values_are_errors(tmp_path, flags, fragment):
    path = oc_harness.save_model(two_output_model(), str(tmp_path), "m")
    _, proc = oc_harness.atc_compile(path, str(tmp_path / "m"), extra=flags, check=False)
    assert proc.returncode != 0 and "E10001" in proc.stdout + proc.stderr and fragment in proc.stdout + proc.stderr


def test_ascend_tuning_flags_are_accepted_with_a_warning(tmp_path):
    m, x = two_output_model(), R.standard_normal((2, 8)).astype(np.float32)
    flags = ["--op_select_implmode=high_performance", "--enable_small_channel=1", "--buffer_optimize", "l2_optimize",
             "--op_compiler_cache_mode=disable"]
    _, proc, outs = compile_run(tmp_path, m, flags, [x])
    for name in ("op_select_implmode=high_performance", "enable_small_channel=1", "buffer_optimize=l2_optimize",
                 "op_compiler_cache_mode=disable"):
        assert f"[WARNING] ATC: --{name} is ignored" in proc.stdout, proc.stdout
    np.testing.assert_allclose(outs[0], oc_harness.ort_run(m, {"x": x})[0], rtol=1e-6)


def test_uint8_output_saturates(tmp_path):
    x = np.array([[-1.5, 0.0, 3.7, 254.9, 255.0, 256.7, 300.0, 1e6]], np.float32)
    m = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id",
                                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])]),
                          opset_imports=[helper.make_opsetid("", 17)])
    _, _, (y,) = compile_run(tmp_path, m, ["--output_type=UINT8"], [x])
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, np.clip(x, 0, 255).astype(np.uint8))


def test_an_input_that_is_also_an_output_keeps_its_name(tmp_path):
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "pass",
                                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3]),
                                             helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])]),
                          opset_imports=[helper.make_opsetid("", 17)])
    path = oc_harness.save_model(m, str(tmp_path), "m")
    om, _ = oc_harness.atc_compile(path, str(tmp_path / "m"), extra=["--input_shape=x:1~4,3", "--output_type=FP16"])
    x = R.standard_normal((3, 3)).astype(np.float32)
    outs, _ = oc_harness.msame_run(om, [x], str(tmp_path), extra=("--dymShape", "x:3,3", "--outputSize", "64,64"))
    np.testing.assert_array_equal(outs[0].reshape(3, 3), np.maximum(x, 0).astype(np.float16))
    np.testing.assert_array_equal(outs[1].reshape(3, 3), x.astype(np.float16))
    _, proc = oc_harness.msame_run(om, [R.standard_normal((6, 3)).astype(np.float32)], str(tmp_path), check=False,
                                   extra=("--dymShape", "x:6,3", "--outputSize", "64,64"))
    assert proc.returncode != 0 and "outside the range 1~4" in proc.stdout + proc.stderr


def test_precision_lists_are_refused_in_a_bf16_mode(tmp_path):
    path = oc_harness.save_model(two_output_model(), str(tmp_path), "m")
    _, proc = oc_harness.atc_compile(path, str(tmp_path / "m"), check=False,
                                     extra=["--precision_mode=allow_mix_precision_bf16", "--keep_dtype=keep.cfg"])
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "E10004" in out and "--keep_dtype" in out and "ignored" not in out, out

"""atc command-line behaviour: flags, messages, exit codes and the files it writes.

Models are built with onnx.helper; the build is found through OC_BUILD_DIR.
"""
import json
import os
import platform
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

BUILD_DIR = os.environ.get("OC_BUILD_DIR", "/work/main/build")
ATC = os.path.join(BUILD_DIR, "atc")
START = "ATC start working now, please wait for a moment."
SUCCESS = "ATC run success, welcome to the next use."
FAILED = "ATC run failed"

pytestmark = pytest.mark.skipif(not os.path.exists(ATC), reason=f"atc not built at {ATC}")


def run_atc(*args, cwd=None):
    p = subprocess.run([ATC, *args], capture_output=True, text=True, cwd=cwd, timeout=300)
    return p.returncode, p.stdout + p.stderr


def identity_model(path, opset=13, dims=("N", 4)):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Identity", ["x"], ["a"], name="id"),
             helper.make_node("Dropout", ["a"], ["y"], name="drop")]
    graph = helper.make_graph(nodes, "identity", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture
def model(tmp_path):
    return identity_model(tmp_path / "id.onnx")


def compile_ok(model, out, *extra):
    rc, log = run_atc(f"--model={model}", "--framework=5", f"--output={out}", "--input_shape=x:2,4", *extra)
    assert rc == 0, log
    assert START in log and SUCCESS in log, log
    return log


def test_help_lists_flags_and_exits_zero():
    rc, out = run_atc("--help")
    assert rc == 0
    for flag in ("--model", "--framework", "--output", "--input_shape", "--input_format", "--out_nodes",
                 "--soc_version", "--precision_mode", "--log", "--mode", "--om", "--json"):
        assert flag in out, flag


def test_version():
    rc, out = run_atc("--version")
    assert rc == 0
    assert "ATC" in out and "OpenCANN" in out


def test_no_arguments_fails():
    rc, out = run_atc()
    assert rc != 0
    assert FAILED in out


def test_compile_writes_om_with_suffix(model, tmp_path):
    log = compile_ok(model, tmp_path / "net")
    assert (tmp_path / "net.om").is_file()
    assert "nodes" in log and "arena" in log.lower() and "Weights" in log


def test_output_already_ending_in_om_is_not_doubled(model, tmp_path):
    compile_ok(model, tmp_path / "net.om")
    assert (tmp_path / "net.om").is_file()
    assert not (tmp_path / "net.om.om").exists()


def test_space_separated_values_work(model, tmp_path):
    rc, log = run_atc("--model", model, "--framework", "5", "--output", str(tmp_path / "s"),
                      "--input_shape", "x:2,4")
    assert rc == 0, log
    assert (tmp_path / "s.om").is_file()


def test_mode6_summary_and_mode1_json(model, tmp_path):
    compile_ok(model, tmp_path / "net", "--input_format=ND")
    om = str(tmp_path / "net.om")
    rc, out = run_atc("--mode=6", f"--om={om}")
    assert rc == 0, out
    assert SUCCESS in out and "x" in out
    js = tmp_path / "net.json"
    rc, out = run_atc("--mode=1", f"--om={om}", f"--json={js}")
    assert rc == 0, out
    doc = json.loads(js.read_text())
    text = json.dumps(doc)
    assert '"x"' in text and '"y"' in text
    assert "ND" in text  # --input_format is kept as metadata


def test_mode1_requires_json(model, tmp_path):
    compile_ok(model, tmp_path / "net")
    rc, out = run_atc("--mode=1", f"--om={tmp_path / 'net.om'}")
    assert rc != 0
    assert "--json" in out


def test_mode6_rejects_a_file_that_is_not_om(model):
    rc, out = run_atc("--mode=6", f"--om={model}")
    assert rc != 0
    assert FAILED in out


def test_unsupported_modes():
    rc, out = run_atc("--mode=3", "--om=x.om")
    assert rc != 0 and "not supported" in out
    rc, out = run_atc("--mode=7")
    assert rc != 0 and "--mode" in out


def test_unknown_flag_is_an_error_with_a_suggestion(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--input_shap=x:2,4")
    assert rc != 0
    assert FAILED in out
    assert "--input_shap" in out and "did you mean --input_shape" in out
    assert not (tmp_path / "o.om").exists()


def test_known_but_unimplemented_flag_says_not_supported(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}",
                      "--weight=w.caffemodel")
    assert rc != 0
    assert "not supported" in out and "--weight" in out


def test_flag_given_twice_is_an_error(model, tmp_path):
    rc, out = run_atc(f"--model={model}", f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}")
    assert rc != 0 and "more than once" in out


def test_missing_required_flags(model, tmp_path):
    rc, out = run_atc(f"--model={model}", f"--output={tmp_path / 'o'}")
    assert rc != 0 and "--framework" in out
    rc, out = run_atc(f"--model={model}", "--framework=5")
    assert rc != 0 and "--output" in out
    rc, out = run_atc("--framework=5", f"--output={tmp_path / 'o'}")
    assert rc != 0 and "--model" in out


@pytest.mark.parametrize("fw,name", [("0", "Caffe"), ("3", "TensorFlow")])
def test_other_frameworks_are_not_supported(model, tmp_path, fw, name):
    rc, out = run_atc(f"--model={model}", f"--framework={fw}", f"--output={tmp_path / 'o'}")
    assert rc != 0
    assert name in out and "not supported" in out


def test_onnx_model_as_mindspore_is_refused(model, tmp_path):
    # --framework=1 reads MINDIR (test_mindir.py); an ONNX file there is named for what it is.
    rc, out = run_atc(f"--model={model}", "--framework=1", f"--output={tmp_path / 'o'}")
    assert rc != 0 and "not a MINDIR model" in out and "--framework=5" in out


def test_invalid_framework_value(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=7", f"--output={tmp_path / 'o'}")
    assert rc != 0 and "--framework" in out


@pytest.mark.parametrize("soc", ["host", platform.machine()])
def test_host_soc_versions_are_accepted(model, tmp_path, soc):
    compile_ok(model, tmp_path / "o", f"--soc_version={soc}")


@pytest.mark.parametrize("soc", ["Ascend310", "Ascend910B", "Ascend310P3"])
def test_ascend_soc_versions_are_not_supported(model, tmp_path, soc):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", f"--soc_version={soc}")
    assert rc != 0
    assert soc in out and "not supported" in out


def test_unknown_soc_version_is_invalid(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--soc_version=z80")
    assert rc != 0 and "z80" in out


@pytest.mark.parametrize("mode", ["force_fp32", "must_keep_origin_dtype", "allow_fp32_to_bf16",
                                  "allow_mix_precision_bf16"])
def test_fp32_precision_modes_are_honoured(model, tmp_path, mode):
    compile_ok(model, tmp_path / "o", f"--precision_mode={mode}")


@pytest.mark.parametrize("mode", ["force_fp16", "allow_fp32_to_fp16", "allow_mix_precision",
                                  "allow_mix_precision_fp16"])
def test_reduced_precision_modes_are_not_supported_yet(model, tmp_path, mode):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", f"--precision_mode={mode}")
    assert rc != 0
    assert mode in out and "not supported yet" in out


def test_dynamic_input_shape_compiles_with_unknown_dims(model, tmp_path):
    # -1 keeps the dim unknown: planned per shape at run time (tests/python/test_dynamic.py runs such models).
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--input_shape=x:-1,4")
    assert rc == 0, out
    assert "Dynamic shapes" in out


def test_shape_range_dims_must_be_ordered(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--input_shape=x:4~1,4")
    assert rc != 0
    assert "lo~hi" in out


def test_input_shape_unknown_name_lists_real_inputs(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--input_shape=image:2,4")
    assert rc != 0
    assert "image" in out and "x" in out


def test_input_shape_rank_mismatch(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--input_shape=x:2,4,1")
    assert rc != 0
    assert "rank" in out


def test_malformed_input_shape(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--input_shape=x:2,a")
    assert rc != 0 and "--input_shape" in out


def test_invalid_input_format(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--input_shape=x:2,4",
                      "--input_format=NC1HWC0")
    assert rc != 0 and "NC1HWC0" in out


def test_invalid_log_level(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'o'}", "--log=verbose")
    assert rc != 0 and "--log" in out


def test_log_info_prints_each_pass(model, tmp_path):
    log = compile_ok(model, tmp_path / "o", "--log=info")
    assert "pass shape-inference" in log
    assert "pass memory-planning" in log
    assert "[parse model] done in" in log and "[write om] done in" in log


def test_log_null_is_quiet(model, tmp_path):
    log = compile_ok(model, tmp_path / "o", "--log=null")
    assert "pass shape-inference" not in log
    assert "[INFO]" not in log
    assert "[parse model]" not in log  # stage times only for compiles over a second


def test_out_nodes_selects_outputs(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Identity", ["x"], ["mid"], name="first"),
             helper.make_node("NonZero", ["mid"], ["y"], name="tail")]  # cut away by --out_nodes
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    om = tmp_path / "m"
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={om}", "--out_nodes=first:0")
    assert rc == 0, out
    js = tmp_path / "m.json"
    rc, out = run_atc("--mode=1", f"--om={om}.om", f"--json={js}")
    assert rc == 0, out
    assert "mid" in js.read_text()
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={om}", "--out_nodes=nosuch:0")
    assert rc != 0 and "nosuch" in out


def test_missing_model_file(tmp_path):
    rc, out = run_atc(f"--model={tmp_path / 'absent.onnx'}", "--framework=5", f"--output={tmp_path / 'o'}")
    assert rc != 0
    assert FAILED in out and "absent.onnx" in out


@pytest.mark.parametrize("content", [b"", b"\x08\x07\xff\xff\xff\xff garbage that is not protobuf", bytes(range(256))])
def test_corrupt_model_files(tmp_path, content):
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={tmp_path / 'o'}")
    assert rc != 0
    assert FAILED in out
    assert "Segmentation" not in out


def test_truncated_model(model, tmp_path):
    data = open(model, "rb").read()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={tmp_path / 'o'}")
    assert rc != 0 and FAILED in out


def test_opset_too_new(tmp_path):
    path = identity_model(tmp_path / "new.onnx", opset=onnx.defs.onnx_opset_version() + 5)
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={tmp_path / 'o'}")
    assert rc != 0
    assert str(onnx.defs.onnx_opset_version() + 5) in out
    assert str(onnx.defs.onnx_opset_version()) in out


def test_unsupported_operators_are_listed_together(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    # An op name no ONNX opset has, so the test does not depend on what is implemented.
    nodes = [helper.make_node("NotAnOnnxOp", ["x"], ["y"], name="nz"),
             helper.make_node("Frobnicate", ["x"], ["z"], name="frob", domain="com.example")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y, z]),
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    path = tmp_path / "u.onnx"
    onnx.save(model, str(path))
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={tmp_path / 'o'}")
    assert rc != 0
    assert "NotAnOnnxOp" in out and "nz" in out
    assert "Frobnicate" in out and "frob" in out


def test_external_data_model(tmp_path):
    # Constant weight in a side file; Identity keeps it as a graph output.
    w = np.arange(1024, dtype=np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="id"),
             helper.make_node("Identity", ["w"], ["wy"], name="wid")]
    graph = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                               helper.make_tensor_value_info("wy", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sub = tmp_path / "model_dir"
    sub.mkdir()
    onnx.save(model, str(sub / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="m.weights", size_threshold=0)
    assert (sub / "m.weights").is_file()
    rc, out = run_atc(f"--model={sub / 'm.onnx'}", "--framework=5", f"--output={tmp_path / 'm'}")
    assert rc == 0, out
    assert "4096" in out  # the weight bytes are counted

    # The same model pointing outside its folder must be refused.
    tampered = onnx.load(str(sub / "m.onnx"), load_external_data=False)
    for t in tampered.graph.initializer:
        for kv in t.external_data:
            if kv.key == "location":
                kv.value = "../m.weights"
    onnx.save(tampered, str(sub / "evil.onnx"))
    rc, out = run_atc(f"--model={sub / 'evil.onnx'}", "--framework=5", f"--output={tmp_path / 'e'}")
    assert rc != 0 and ".." in out


def test_output_directory_must_exist(model, tmp_path):
    rc, out = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / 'no' / 'such' / 'o'}",
                      "--input_shape=x:2,4")
    assert rc != 0 and "does not exist" in out


def test_error_lines_have_codes(tmp_path):
    rc, out = run_atc("--bogus=1")
    assert rc != 0
    lines = [l for l in out.splitlines() if l.startswith("E")]
    assert lines and lines[0][:6].startswith("E1") and lines[0][6] == ":", out


def test_digits_demo_model_compiles(tmp_path):
    src = os.environ.get("OC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    path = os.path.join(src, "models", "digits", "digits_mlp.onnx")
    if not os.path.exists(path):
        pytest.skip("demo model not present")
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={tmp_path / 'digits'}",
                      "--input_shape=image:64,1,8,8", "--input_format=NCHW")
    if rc != 0 and "E11003" in out:
        pytest.skip("operators of the demo model are not registered in this build yet: " + out.splitlines()[-1])
    assert rc == 0, out
    assert (tmp_path / "digits.om").is_file()


def test_input_names_may_contain_colons(tmp_path):
    x = helper.make_tensor_value_info("input:0", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["input:0"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "colon.onnx"
    onnx.save(model, str(path))
    rc, out = run_atc(f"--model={path}", "--framework=5", f"--output={tmp_path / 'c'}", "--input_shape=input:0:3,4")
    assert rc == 0, out
    rc, out = run_atc("--mode=6", f"--om={tmp_path / 'c.om'}")
    assert rc == 0 and "[3,4]" in out.replace(" ", ""), out


# ---------------------------------------------------------------- --fusion_switch_file

def dense_relu_model(path):
    """MatMul + bias Add + Relu: fuse-bias-activation makes one FusedMatMul of it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "b"], ["s"], name="bias"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "dense", [x], [y], initializer=[w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def om_op_types(tmp_path, om):
    js = tmp_path / "dump.json"
    rc, out = run_atc("--mode=1", f"--om={om}", f"--json={js}")
    assert rc == 0, out
    found = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("op_type"), str):
                found.append(node["op_type"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(json.loads(js.read_text()))
    return sorted(found)


def compile_dense(tmp_path, name, *extra):
    model = dense_relu_model(tmp_path / "dense.onnx")
    rc, log = run_atc(f"--model={model}", "--framework=5", f"--output={tmp_path / name}", *extra)
    return rc, log, str(tmp_path / (name + ".om"))


def test_fusion_switch_json_turns_a_fusion_off(tmp_path):
    rc, log, om = compile_dense(tmp_path, "fused")
    assert rc == 0, log
    assert om_op_types(tmp_path, om) == ["FusedMatMul"]
    sw = tmp_path / "switch.json"
    sw.write_text(json.dumps({"Switch": {"GraphFusion": {"fuse-bias-activation": "off"}, "UBFusion": {}}}))
    rc, log, om = compile_dense(tmp_path, "plain", f"--fusion_switch_file={sw}")
    assert rc == 0, log
    assert "Fusion switch: passes off: fuse-bias-activation" in log
    assert om_op_types(tmp_path, om) == ["Add", "MatMul", "Relu"]


def test_fusion_switch_text_all_off_then_one_on(tmp_path):
    sw = tmp_path / "switch.cfg"
    sw.write_text("# everything off but the MatMul epilogue fusion\nALL:off\n\nfuse-bias-activation : on\n")
    rc, log, om = compile_dense(tmp_path, "net", f"--fusion_switch_file={sw}")
    assert rc == 0, log
    assert ("Fusion switch: passes off: fuse-qdq, common-subexpressions, fold-conv-batchnorm, fuse-layernorm, "
            "fuse-gelu, fuse-attention, nchwc-layout") in log
    assert om_op_types(tmp_path, om) == ["FusedMatMul"]


def test_fusion_switch_ignores_fusions_we_do_not_have_with_a_warning(tmp_path):
    sw = tmp_path / "switch.json"
    sw.write_text('{"Switch": {"GraphFusion": {"ConvToFullyConnectionFusionPass": "off"},'
                  ' "UBFusion": {"TbePool2dQuantFusionPass": "off"}}}')
    rc, log, om = compile_dense(tmp_path, "net", f"--fusion_switch_file={sw}")
    assert rc == 0, log
    assert "Fusion switch: passes off: none" in log
    assert "ignored: ConvToFullyConnectionFusionPass, TbePool2dQuantFusionPass" in log
    assert om_op_types(tmp_path, om) == ["FusedMatMul"]


@pytest.mark.parametrize("content, why", [
    ('{"Switch": {"GraphFusion": {"memory-planning": "off"}}}', "required and cannot be switched"),
    ('{"Switch": {"GraphFusion": {"fuse-gelu": "maybe"}}}', "expected on or off"),
    ('{"Switch": {"GraphFusion": {"fuse-gelu": "off"}, "UBFusion": {"fuse-gelu": "on"}}}', "both on and off"),
    ('{"Switch": {"Other": {}}}', "unknown group"),
    ('{"GraphFusion": {"fuse-gelu": "off"}}', "expected {\"Switch\""),
    ('{"Switch": {"GraphFusion": {"fuse-gelu": "off"', "not valid JSON"),
    ("fuse-gelu off\n", "line 1"),
])
def test_fusion_switch_bad_files_are_clear_errors(tmp_path, content, why):
    sw = tmp_path / "switch.json"
    sw.write_text(content)
    rc, log, om = compile_dense(tmp_path, "net", f"--fusion_switch_file={sw}")
    assert rc != 0 and FAILED in log, log
    assert "E10001" in log and "--fusion_switch_file" in log and why in log, log
    assert not os.path.exists(om)


def test_fusion_switch_missing_file(tmp_path):
    rc, log, om = compile_dense(tmp_path, "net", f"--fusion_switch_file={tmp_path / 'none.json'}")
    assert rc != 0 and "cannot be read" in log, log

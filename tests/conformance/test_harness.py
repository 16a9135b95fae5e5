"""Tests of the conformance runner's own logic: comparison, failure classes, and the
exclusion-list rules (no build needed)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_conformance as rc  # noqa: E402


def test_float_tolerance_is_rtol_1e3_atol_1e5():
    e = np.array([1.0, 100.0, 0.0], np.float32)
    ok, _, _ = rc.compare(e * (1 + 9e-4), e, "y")
    assert ok
    ok, msg, err = rc.compare(np.array([1.0, 100.2, 0.0], np.float32), e, "y")
    assert not ok and "1 of 3" in msg and err == pytest.approx(0.2, rel=1e-3)
    assert rc.compare(np.array([0, 0, 2e-5], np.float32), np.zeros(3, np.float32), "y")[0] is False
    assert rc.compare(np.array([0, 0, 9e-6], np.float32), np.zeros(3, np.float32), "y")[0] is True


def test_nan_and_inf_must_match_exactly():
    e = np.array([np.nan, np.inf, -np.inf], np.float32)
    assert rc.compare(e.copy(), e, "y")[0]
    assert not rc.compare(np.array([0, np.inf, -np.inf], np.float32), e, "y")[0]
    assert not rc.compare(np.array([np.nan, -np.inf, -np.inf], np.float32), e, "y")[0]


def test_integers_and_bools_are_exact_and_dtype_shape_checked():
    assert not rc.compare(np.array([1, 2], np.int64), np.array([1, 3], np.int64), "y")[0]
    assert not rc.compare(np.array([True]), np.array([False]), "y")[0]
    assert "dtype" in rc.compare(np.array([1], np.int32), np.array([1], np.int64), "y")[1]
    assert "shape" in rc.compare(np.zeros((1, 2), np.float32), np.zeros(2, np.float32), "y")[1]


@pytest.mark.parametrize("stage,code,message,cls", [
    ("parse", "kNotSupported", "model 'm': 1 unsupported operator: ai.onnx::Foo(opset 9) nodes [f]", "unsupported_op"),
    ("parse", "kNotSupported", "graph input 'x' has type sequence; only tensors are supported", "unsupported_type"),
    ("parse", "kNotSupported", "graph input 'x': element type STRING is not supported", "unsupported_dtype"),
    ("parse", "kNotSupported", "If node 'i': subgraphs (If/Loop/Scan) not supported yet (attribute 'x')",
     "unsupported_feature"),
    ("parse", "kInvalidFile", "opset_import lists domain '' twice", "parse_error"),
    ("kernel", "kNotSupported", "Add node 'a': data type uint8 is not supported by Add on CPU", "unsupported_dtype"),
    ("kernel", "kNotSupported", "Conv node 'c': only float32 is implemented, got float16", "unsupported_dtype"),
    ("kernel", "kNotSupported", "Einsum node 'e': element type bfloat16 (supported: float, double)",
     "unsupported_dtype"),
    ("kernel", "kInvalidArgument", "Resize node 'r': antialias=1 when downscaling is not supported",
     "unsupported_feature"),
    ("compile", "kInvalidArgument", "value 'y' has shape [?]: dynamic shapes are not supported yet", "compile_error"),
    ("input", "kInvalidArgument", "input 'x': model expects [2], data is [3]", "input_error"),
    ("run", "kNotSupported", "training_mode=true", "runtime_error"),
])
def test_classify(stage, code, message, cls):
    assert rc.classify(stage, code, message) == cls


def test_exclusion_forms():
    plain = {"name": "test_foo_bar", "op": "Foo", "domain": ""}
    expanded = {"name": "test_foo_bar_expanded", "op": "Foo", "domain": ""}
    ml = {"name": "test_ai_onnx_ml_x", "op": "X", "domain": "ai.onnx.ml"}
    assert rc.Exclusion("op:Foo", "r", 1).matches(plain)
    assert not rc.Exclusion("op:Foo", "r", 1).matches(expanded)
    assert rc.Exclusion("expanded:Foo", "r", 1).matches(expanded)
    assert not rc.Exclusion("expanded:Foo", "r", 1).matches(plain)
    assert rc.Exclusion("op:ai.onnx.ml::X", "r", 1).matches(ml)
    assert rc.Exclusion("test_foo_*", "r", 1).matches(expanded)
    assert not rc.Exclusion("test_foo", "r", 1).matches(plain)


def test_every_entry_needs_a_reason(tmp_path):
    p = tmp_path / "ex.txt"
    p.write_text("# comment\n\ntest_a  a reason\ntest_b\n")
    with pytest.raises(SystemExit, match="test_b"):
        rc.read_exclusions(str(p))
    p.write_text("test_a  a reason\n")
    (ex,) = rc.read_exclusions(str(p))
    assert (ex.pattern, ex.reason, ex.line) == ("test_a", "a reason", 1)


def test_checked_in_list_has_reasons_and_no_duplicates():
    entries = rc.read_exclusions(rc.EXCLUSIONS)
    assert entries
    patterns = [e.pattern for e in entries]
    assert len(patterns) == len(set(patterns))
    assert all(len(e.reason) >= 10 for e in entries)


def test_random_generator_entries_may_pass_by_chance():
    assert rc.Exclusion("op:Bernoulli", "random generator: numpy draws", 1).by_chance
    assert not rc.Exclusion("op:Foo", "wrong result: the generator differs", 1).by_chance
    entries = {e.pattern: e for e in rc.read_exclusions(rc.EXCLUSIONS)}
    assert entries["op:Bernoulli"].by_chance and entries["expanded:Bernoulli"].by_chance


def test_a_chance_pass_of_a_random_test_is_not_a_failure_but_other_passes_are():
    cases = [{"name": n, "op": op, "domain": ""} for n, op in
             [("test_bernoulli", "Bernoulli"), ("test_foo", "Foo"), ("test_bar", "Bar"), ("test_baz", "Baz")]]
    exclusions = [rc.Exclusion("op:Bernoulli", "random generator: numpy draws", 1),
                  rc.Exclusion("op:Foo", "wrong result: a known difference", 2)]
    by_case = rc.match_exclusions(cases, exclusions)
    res = {n: rc.Result(n, cls, "", 0.0) for n, cls in
           [("test_bernoulli", "passed"), ("test_foo", "passed"), ("test_bar", "wrong_result"), ("test_baz", "passed")]}
    unexpected, now_passing, chance = rc.verdicts(cases, res, by_case)
    assert (unexpected, now_passing, chance) == (["test_bar"], ["test_foo"], ["test_bernoulli"])


def test_tools_backend_reads_both_lists_and_keeps_their_sources():
    tools = rc.exclusions_for("tools")
    driver = rc.exclusions_for("driver")
    assert [ex.pattern for ex in tools[:len(driver)]] == [ex.pattern for ex in driver]
    assert {ex.source for ex in driver} == {rc.EXCLUSIONS}
    assert {ex.source for ex in tools[len(driver):]} == {rc.TOOLS_EXCLUSIONS}
    assert all(ex.reason for ex in tools)


def test_tools_inputs_as_npy_or_packed_bin_and_outputs_back(tmp_path):
    import ml_dtypes
    from onnx import TensorProto

    # A type AscendCL has a code for goes as .npy (numpy's own ml_dtypes form) ...
    x = np.array([-8, -1, 0, 7, 3], ml_dtypes.int4)
    path = rc.write_input(x, TensorProto.INT4, str(tmp_path / "a"))
    assert path.endswith(".npy") and np.load(path).view(np.uint8).tolist() == x.view(np.uint8).tolist()
    # ... one without (uint4) as its packed bytes, two elements per byte, element 0 low.
    u = np.array([1, 2, 15], ml_dtypes.uint4)
    path = rc.write_input(u, TensorProto.UINT4, str(tmp_path / "b"))
    assert path.endswith(".bin") and open(path, "rb").read() == bytes([0x21, 0x0F])
    back = rc.read_output(path, TensorProto.UINT4, [3])
    assert back.dtype == np.dtype(ml_dtypes.uint4) and back.astype(np.int32).tolist() == [1, 2, 15]
    # A 0-d array stays 0-d (np.ascontiguousarray would make it 1-d).
    assert np.load(rc.write_input(np.array(3, np.int64), TensorProto.INT64, str(tmp_path / "c"))).shape == ()

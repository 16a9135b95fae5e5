"""Weights stored only as prepacked GEMM panels in the .om (header flag 0x1,
docs/om_format.md): atc writes each such weight once, and the model gives the
same bits as the raw-weight file (OPENCANN_OM_RAW_WEIGHTS=1), and matches
onnxruntime, also where the run picks another micro-kernel than the compile:
a .om compiled for a lower ISA (OPENCANN_ISA=scalar/avx2 at compile time; the
target check refuses the other direction) run on a higher one, and a .om
compiled with OPENCANN_WINOGRAD=0 run with Winograd on (weights rebuilt from
the im2col panels at load)."""
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from oc_harness import ATC, MSAME, assert_close, ort_run, run_tool, save_model


def make_model(rng):
    w = lambda name, *shape: numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)
    inits = [w("w1", 16, 8, 3, 3), w("b1", 16), w("w2", 16, 8, 3, 3), w("w3", 24, 16, 1, 1),
             w("wg", 40, 384), w("cg", 40), w("wm", 40, 24), w("wb", 3, 10, 7), w("shared", 24, 24),
             w("mixed", 12, 12), w("w4", 64, 64, 3, 3), w("wt", 6, 2, 3, 3)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], group=2, strides=[2, 2]),
        helper.make_node("Conv", ["c2", "w3"], ["c3"]),
        helper.make_node("Flatten", ["c3"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "cg"], ["g1"], transB=1),
        helper.make_node("MatMul", ["g1", "wm"], ["m1"]),
        helper.make_node("MatMul", ["m1", "shared"], ["s1"]),
        helper.make_node("MatMul", ["s1", "shared"], ["y"]),
        helper.make_node("MatMul", ["x2", "wb"], ["y2"]),
        helper.make_node("MatMul", ["x3", "mixed"], ["t1"]),
        helper.make_node("Add", ["t1", "mixed"], ["y3"]),
        helper.make_node("Conv", ["x4", "w4"], ["y4"], pads=[1, 1, 1, 1]),  # a Winograd shape
        helper.make_node("ConvTranspose", ["x5", "wt"], ["y5"], group=2, strides=[2, 2]),
    ]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "packed_weights",
        [helper.make_tensor_value_info("x", f32, [2, 8, 10, 10]), helper.make_tensor_value_info("x2", f32, [3, 4, 10]),
         helper.make_tensor_value_info("x3", f32, [12, 12]), helper.make_tensor_value_info("x4", f32, [1, 64, 14, 14]),
         helper.make_tensor_value_info("x5", f32, [1, 6, 5, 5])],
        [helper.make_tensor_value_info("y", f32, [2, 24]), helper.make_tensor_value_info("y2", f32, [3, 4, 7]),
         helper.make_tensor_value_info("y3", f32, [12, 12]), helper.make_tensor_value_info("y4", f32, [1, 64, 14, 14]),
         helper.make_tensor_value_info("y5", f32, [1, 4, 11, 11])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    # Without Winograd (OPENCANN_WINOGRAD=0 at compile time) every weight but
    # the biases and the one an Add reads is stored packed only.
    raw_bytes = sum(np.prod(i.dims) * 4 for i in inits if i.name not in ("b1", "cg", "mixed"))
    return model, raw_bytes


INPUT_SHAPES = ([2, 8, 10, 10], [3, 4, 10], [12, 12], [1, 64, 14, 14], [1, 6, 5, 5])
NUM_OUTPUTS = 5
INPUT_NAMES = ["x", "x2", "x3", "x4", "x5"]


def tool_env(isa=None, winograd=None, raw=False):
    env = dict(os.environ)
    for k in ("OPENCANN_ISA", "OPENCANN_WINOGRAD", "OPENCANN_OM_RAW_WEIGHTS"):
        env.pop(k, None)
    if isa:
        env["OPENCANN_ISA"] = isa
    if winograd is not None:
        env["OPENCANN_WINOGRAD"] = winograd
    if raw:
        env["OPENCANN_OM_RAW_WEIGHTS"] = "1"
    return env


def run_msame(om, inputs, workdir, isa=None, winograd=None):
    env = tool_env(isa, winograd)
    paths = []
    for i, a in enumerate(inputs):
        p = os.path.join(workdir, f"in{i}.npy")
        np.save(p, a)
        paths.append(p)
    out = os.path.join(workdir, f"out_{os.path.basename(om)}_{isa or 'best'}_{winograd}")
    os.makedirs(out, exist_ok=True)
    run_tool([MSAME, "--model", om, "--output", out, "--outfmt", "NPY", "--input", ",".join(paths)], env=env)
    stem = os.path.splitext(os.path.basename(om))[0]
    return [np.load(os.path.join(out, f"{stem}_output_{i}.npy")) for i in range(NUM_OUTPUTS)]


def compile_both(tmp_path, model, isa=None, winograd=None, extra=()):
    """(packed-only .om, raw-weight .om) compiled under OPENCANN_ISA=isa."""
    path = save_model(model, str(tmp_path))
    tag = f"{isa or 'best'}_{winograd}_{len(extra)}"
    for raw in (False, True):
        stem = tmp_path / f"{'raw' if raw else 'packed'}_{tag}"
        run_tool([ATC, f"--model={path}", "--framework=5", f"--output={stem}", *extra],
                 env=tool_env(isa, winograd, raw))
    return str(tmp_path / f"packed_{tag}.om"), str(tmp_path / f"raw_{tag}.om")


def flags(path):
    with open(path, "rb") as f:
        return struct.unpack_from("<I", f.read(20), 16)[0]


def check_same_bits(om_packed, om_raw, inputs, expected, workdir, isa=None, winograd=None, rtol=1e-4, atol=1e-4):
    got_packed = run_msame(om_packed, inputs, workdir, isa, winograd)
    got_raw = run_msame(om_raw, inputs, workdir, isa, winograd)
    what = f"{os.path.basename(om_packed)} run with ISA {isa or 'best'}, Winograd {winograd}"
    for i, (p, r, e) in enumerate(zip(got_packed, got_raw, expected)):
        assert np.array_equal(p.view(np.uint32), r.view(np.uint32)), f"{what}: output {i} differs bitwise"
        assert_close(p, e, rtol=rtol, atol=atol, what=f"{what}: output {i}")


def test_weights_stored_once_and_results_bit_identical_on_every_isa(tmp_path):
    rng = np.random.default_rng(0)
    model, raw_bytes = make_model(rng)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in INPUT_SHAPES]
    expected = ort_run(model, dict(zip(INPUT_NAMES, inputs)))
    levels = ["scalar", "avx2", None]  # None: the best this CPU has
    for ci, compile_isa in enumerate(levels):
        om_packed, om_raw = compile_both(tmp_path, model, compile_isa)
        assert flags(om_packed) == 1 and flags(om_raw) == 0
        for run_isa in levels[ci:]:
            check_same_bits(om_packed, om_raw, inputs, expected, str(tmp_path), run_isa)


def test_im2col_panels_feed_winograd_at_load(tmp_path):
    rng = np.random.default_rng(3)
    model, raw_bytes = make_model(rng)
    om_packed, om_raw = compile_both(tmp_path, model, winograd="0")
    saved = os.path.getsize(om_raw) - os.path.getsize(om_packed)
    assert saved >= raw_bytes, f"the packed-only file saves {saved} bytes, the dropped weights are {raw_bytes}"
    inputs = [rng.standard_normal(s).astype(np.float32) for s in INPUT_SHAPES]
    expected = ort_run(model, dict(zip(INPUT_NAMES, inputs)))
    for winograd in ("0", None):
        check_same_bits(om_packed, om_raw, inputs, expected, str(tmp_path), winograd=winograd)


def test_fp32_panels_feed_bf16_at_load(tmp_path):
    # Compiled where bf16 is unavailable (OPENCANN_ISA=avx2): the marked nodes
    # fall back to fp32 panels, stored packed only; on a CPU with AVX512_BF16
    # or AMX the same nodes run in bf16 from weights rebuilt at load.
    rng = np.random.default_rng(4)
    model, _ = make_model(rng)
    om_packed, om_raw = compile_both(tmp_path, model, "avx2", extra=("--precision_mode=allow_fp32_to_bf16",))
    assert flags(om_packed) == 1
    inputs = [rng.standard_normal(s).astype(np.float32) for s in INPUT_SHAPES]
    expected = ort_run(model, dict(zip(INPUT_NAMES, inputs)))
    check_same_bits(om_packed, om_raw, inputs, expected, str(tmp_path), rtol=3e-2, atol=3e-2)


def test_summary_reports_packed_only_weights(tmp_path):
    model, _ = make_model(np.random.default_rng(1))
    om_packed, om_raw = compile_both(tmp_path, model)
    out = run_tool([ATC, "--mode=6", f"--om={om_packed}"]).stdout
    assert "stored only prepacked: 8 weights" in out, out  # all but b1, cg, mixed and the Winograd w4
    assert "stored only prepacked" not in run_tool([ATC, "--mode=6", f"--om={om_raw}"]).stdout


def test_damaged_panels_are_an_error_not_a_wrong_answer(tmp_path):
    model, _ = make_model(np.random.default_rng(2))
    om_packed, _ = compile_both(tmp_path, model)
    data = bytearray(open(om_packed, "rb").read())
    # Flip a byte of the first GEMM panel header ("GCPK" magic) in the blob and
    # reseal nothing: the checksum must catch it.
    magic = struct.pack("<I", 0x4B504347)
    at = data.find(magic, 128)
    assert at > 0
    data[at] ^= 0xFF
    bad = tmp_path / "bad.om"
    bad.write_bytes(bytes(data))
    inputs = [np.zeros(s, np.float32) for s in INPUT_SHAPES]
    paths = []
    for i, a in enumerate(inputs):
        p = tmp_path / f"z{i}.npy"
        np.save(p, a)
        paths.append(str(p))
    proc = run_tool([MSAME, "--model", str(bad), "--output", str(tmp_path / "o"), "--outfmt", "NPY",
                     "--input", ",".join(paths)], check=False)
    assert proc.returncode != 0
    assert "checksum" in (proc.stdout + proc.stderr), proc.stdout + proc.stderr

"""bf16 precision modes end to end: atc --precision_mode=allow_fp32_to_bf16 (and its
CANN synonyms) runs Conv/MatMul/Gemm in bfloat16 with float32 accumulation; the
outputs are compared with onnxruntime in float32 within a bf16 tolerance, and
the same model in force_fp32 stays within the fp32 tolerance.

The model covers each GEMM path: 3x3 and strided conv (im2col B), 1x1 conv (B
straight from the input), grouped conv, depthwise conv (stays fp32), conv with
a residual add and ReLU (fused epilogue), Gemm with transB, MatMul + bias and a
MatMul of two activations.
"""
import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from oc_harness import ATC, MSAME, atc_compile, msame_run, ort_run, run_tool, save_model

pytestmark = pytest.mark.skipif(not (os.path.exists(ATC) and os.path.exists(MSAME)),
                                reason="atc/msame not built")


def cpu_has_bf16():
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def conv_net():
    rng = np.random.default_rng(7)
    inits = []

    def w(name, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        s = scale if scale is not None else 1.0 / np.sqrt(fan_in)
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", w("w1", [24, 3, 3, 3]), w("b1", [24], 0.1)], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", w("w2", [40, 24, 1, 1]), w("b2", [40], 0.1)], ["c2"]),
        helper.make_node("Conv", ["c2", w("w3", [40, 20, 3, 3])], ["c3"], pads=[1, 1, 1, 1], group=2),
        helper.make_node("Add", ["c3", "c2"], ["a3"]),
        helper.make_node("Relu", ["a3"], ["r3"]),
        helper.make_node("Conv", ["r3", w("wd", [40, 1, 3, 3])], ["cd"], pads=[1, 1, 1, 1], group=40),
        helper.make_node("Conv", ["cd", w("w4", [36, 40, 3, 3]), w("b4", [36], 0.1)], ["c4"],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c4"], ["r4"]),
        helper.make_node("GlobalAveragePool", ["r4"], ["gp"]),
        helper.make_node("Flatten", ["gp"], ["f"]),
        helper.make_node("Gemm", ["f", w("wg", [50, 36]), w("bg", [50], 0.1)], ["g"], transB=1),
        helper.make_node("Reshape", ["r4", "shape"], ["seq"]),
        helper.make_node("MatMul", ["seq", w("wm", [121, 45])], ["m"]),
        helper.make_node("Add", ["m", w("bm", [45], 0.1)], ["mb"]),
        helper.make_node("Transpose", ["mb"], ["mt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["mb", "mt"], ["mm"]),
    ]
    inits.append(numpy_helper.from_array(np.array([2, 36, 121], np.int64), "shape"))
    graph = helper.make_graph(
        nodes, "bf16_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 22, 22])],
        [helper.make_tensor_value_info("g", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("mb", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("mm", TensorProto.FLOAT, None)],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def smooth_input(rng):
    # Smooth random fields (a sum of a few low-frequency waves), not white noise.
    yy, xx = np.meshgrid(np.linspace(0, 1, 22), np.linspace(0, 1, 22), indexing="ij")
    x = np.zeros((2, 3, 22, 22), np.float32)
    for n in range(2):
        for c in range(3):
            for _ in range(4):
                fx, fy, ph = rng.uniform(0.5, 3, 2).tolist() + [rng.uniform(0, 6.3)]
                x[n, c] += np.sin(2 * np.pi * (fx * xx + fy * yy) + ph).astype(np.float32)
    return x


def rel_err(a, b):
    return float(np.max(np.abs(a - b)) / (np.max(np.abs(b)) + 1e-12))


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    d = tmp_path_factory.mktemp("bf16")
    model = conv_net()
    path = save_model(model, str(d))
    x = smooth_input(np.random.default_rng(3))
    ref = ort_run(model, {"x": x})
    return d, model, path, x, ref


@pytest.mark.parametrize("flag", ["--precision_mode=allow_fp32_to_bf16", "--precision_mode=allow_mix_precision_bf16",
                                  "--precision_mode_v2=mixed_bfloat16"])
def test_bf16_mode_matches_onnxruntime_fp32_within_bf16_tolerance(net, flag):
    d, model, path, x, ref = net
    stem = os.path.join(str(d), "m_" + flag.split("=")[1])
    om, proc = atc_compile(path, stem, extra=[flag])
    mode = flag.split("=")[1]
    # atc reports the mode and how many matrix nodes it lowered (5 Conv
    # incl. the depthwise one, which its kernel keeps in fp32, Gemm, 2 MatMul).
    assert f"Precision: {mode}: 8 Conv/MatMul/Gemm nodes in bfloat16" in proc.stdout, proc.stdout
    outs, _ = msame_run(om, [x], str(d))
    for got, want, name in zip(outs, ref, ["g", "mb", "mm"]):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.max(np.abs(want)), err_msg=name)
    # The mode is stored in the .om metadata and the nodes carry the mark.
    js = stem + ".json"
    run_tool([ATC, "--mode=1", f"--om={om}", f"--json={js}"])
    doc = json.load(open(js))
    text = json.dumps(doc)
    assert '"precision_mode": "%s"' % (mode if mode != "origin" else "must_keep_origin_dtype") in text, text[:2000]
    assert text.count('"opencann_precision"') == 8


def test_bf16_really_rounds_and_fp32_mode_does_not(net):
    d, model, path, x, ref = net
    om32, proc = atc_compile(path, os.path.join(str(d), "fp32"), extra=["--precision_mode=force_fp32"])
    assert "Precision: force_fp32: float32" in proc.stdout
    out32, _ = msame_run(om32, [x], str(d))
    om16, _ = atc_compile(path, os.path.join(str(d), "bf16"), extra=["--precision_mode=allow_fp32_to_bf16"])
    out16, _ = msame_run(om16, [x], str(d))
    for a, b in zip(out32, ref):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * np.max(np.abs(b)))
    errs32 = [rel_err(a, b) for a, b in zip(out32, ref)]
    errs16 = [rel_err(a, b) for a, b in zip(out16, ref)]
    if cpu_has_bf16():
        # bf16 inputs have 8 significant bits: errors of ~1e-3 relative, far above fp32's.
        assert max(errs16) > 10 * max(errs32) and max(errs16) > 1e-4, (errs16, errs32)
    else:
        assert errs16 == errs32


@pytest.mark.skipif(not cpu_has_bf16(), reason="no AMX-BF16 / AVX512_BF16")
def test_avx512_bf16_kernel_without_amx(net):
    # OPENCANN_AMX=0 hides AMX: the vdpbf16ps micro-kernel reads the same
    # prepacked panels (written by atc, possibly on the AMX path).
    d, model, path, x, ref = net
    om, _ = atc_compile(path, os.path.join(str(d), "noamx"), extra=["--precision_mode=allow_fp32_to_bf16"])
    outs_amx, _ = msame_run(om, [x], str(d))
    env = dict(os.environ, OPENCANN_AMX="0")
    proc = run_tool([MSAME, "--model", om, "--output", os.path.join(str(d), "o2"), "--outfmt", "NPY",
                     "--input", os.path.join(str(d), "input_0.npy")], env=env)
    stem = os.path.splitext(os.path.basename(om))[0]
    for i, want in enumerate(ref):
        got = np.load(os.path.join(str(d), "o2", f"{stem}_output_{i}.npy"))
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.max(np.abs(want)))
        # Float32 sums in another order: the odd intermediate value rounds to
        # the neighbouring bf16 value in the next layer, so the two agree to
        # bf16 precision rather than bit for bit (the gtest GemmBf16 suite
        # checks one GEMM to float32 accuracy on both micro-kernels).
        np.testing.assert_allclose(got, outs_amx[i], rtol=5e-3, atol=5e-3 * np.max(np.abs(want)))
    assert proc.returncode == 0


def test_precision_mode_v2_flags(net, tmp_path):
    d, model, path, x, ref = net
    _, proc = atc_compile(path, str(tmp_path / "origin"), extra=["--precision_mode_v2=origin"])
    assert "Precision: must_keep_origin_dtype: float32" in proc.stdout
    _, proc = atc_compile(path, str(tmp_path / "both"), check=False,
                          extra=["--precision_mode=force_fp32", "--precision_mode_v2=mixed_bfloat16"])
    assert proc.returncode != 0 and "mutually exclusive" in proc.stdout + proc.stderr
    for bad in ["mixed_float16", "fp16"]:
        _, proc = atc_compile(path, str(tmp_path / bad), check=False, extra=[f"--precision_mode_v2={bad}"])
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and bad in out and "not supported" in out, out
    _, proc = atc_compile(path, str(tmp_path / "junk"), check=False, extra=["--precision_mode_v2=bf17"])
    assert proc.returncode != 0 and "bf17" in proc.stdout + proc.stderr


def test_bf16_mode_with_dynamic_batch(net, tmp_path):
    # Unknown batch: the graph is specialised per shape at run time, in the
    # mode atc recorded in the .om.
    d, model, path, x, ref = net
    outs = {}
    for mode in ["force_fp32", "allow_fp32_to_bf16"]:
        om, _ = atc_compile(path, str(tmp_path / mode), input_shapes={"x": [-1, 3, 22, 22]},
                            extra=[f"--precision_mode={mode}"])
        wd = tmp_path / f"run_{mode}"
        wd.mkdir()
        outs[mode], _ = msame_run(om, [x], str(wd), extra=["--dymShape", "x:2,3,22,22", "--outputSize",
                                                                   ",".join(str(r.nbytes) for r in ref)])
    for got, want in zip(outs["allow_fp32_to_bf16"], ref):
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.max(np.abs(want)))
    if cpu_has_bf16():
        e16 = max(rel_err(a, b) for a, b in zip(outs["allow_fp32_to_bf16"], ref))
        e32 = max(rel_err(a, b) for a, b in zip(outs["force_fp32"], ref))
        assert e16 > 10 * e32, (e16, e32)


def test_cpu_without_bf16_falls_back_to_fp32_with_a_note(net, tmp_path):
    # OPENCANN_ISA=avx2 hides AVX-512 and with it both bf16 micro-kernels:
    # the bf16 .om then runs the float32 kernels (same outputs as the fp32
    # .om under the same cap) and says so once on stderr.
    d, model, path, x, ref = net
    env = dict(os.environ, OPENCANN_ISA="avx2")
    oms = {}
    for mode in ["force_fp32", "allow_fp32_to_bf16"]:
        # (The .om records the ISA it was compiled for: compile under the cap too.)
        proc = run_tool([ATC, f"--model={path}", "--framework=5", f"--output={tmp_path / mode}",
                         f"--precision_mode={mode}"], env=env)
        oms[mode] = str(tmp_path / mode) + ".om"
        if mode != "force_fp32":
            assert "lacks AMX-BF16 and AVX512_BF16: float32 kernels here" in proc.stdout, proc.stdout
    np.save(tmp_path / "x.npy", x)
    outs, errs = {}, {}
    for mode, om in oms.items():
        od = tmp_path / f"out_{mode}"
        proc = run_tool([MSAME, "--model", om, "--output", str(od), "--outfmt", "NPY", "--input",
                         str(tmp_path / "x.npy")], env=env)
        stem = os.path.splitext(os.path.basename(om))[0]
        outs[mode] = [np.load(od / f"{stem}_output_{i}.npy") for i in range(len(ref))]
        errs[mode] = proc.stderr
    for a, b in zip(outs["allow_fp32_to_bf16"], outs["force_fp32"]):
        np.testing.assert_array_equal(a, b)
    assert "neither AMX-BF16 nor AVX512_BF16" in errs["allow_fp32_to_bf16"]
    assert "bf16" not in errs["force_fp32"]

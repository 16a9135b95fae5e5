"""The NCHWc layout (nchwc-layout pass + blocked kernels) end to end: ResNet- and
MobileNetV2-like models through atc + msame with OPENCANN_NCHWC=1, at block 16
(AVX-512) and block 8 (OPENCANN_ISA=avx2), compared with onnxruntime at rtol 1e-3;
the .om must really hold blocked convs."""
import os
import subprocess
import tempfile

import numpy as np
import pytest

import model_zoo
from oc_harness import ATC, assert_close, atc_compile, msame_run, ort_run, save_model

RNG = np.random.default_rng(4321)


def cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return flag in f.read().split()
    except OSError:
        return False


ISAS = [isa for isa, flag in (("avx512", "avx512f"), ("avx2", "avx2")) if cpu_has(flag)]


def om_op_types(om, d):
    js = os.path.join(d, "model.json")
    subprocess.run([ATC, "--mode=1", f"--om={om}", f"--json={js}"], check=True, capture_output=True)
    with open(js) as f:
        text = f.read()
    return text


def run_blocked(model, feeds, isa, rtol=1e-3, atol=1e-4):
    expected = ort_run(model, feeds)
    env = dict(os.environ, OPENCANN_NCHWC="1", OPENCANN_ISA=isa)
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        with tempfile.TemporaryDirectory() as d:
            path = save_model(model, d)
            om, _ = atc_compile(path, os.path.join(d, "model"), {k: list(v.shape) for k, v in feeds.items()})
            dump = om_op_types(om, d)
            assert "NchwcConv" in dump, "the nchwc-layout pass did not block the convs"
            outs, _ = msame_run(om, list(feeds.values()), d)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert len(outs) == len(expected)
    for i, (a, e) in enumerate(zip(outs, expected)):
        assert_close(a, e, rtol, atol, what=f"output {i} ({isa})")


@pytest.mark.skipif(not ISAS, reason="needs AVX2 or AVX-512")
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("batch,widths", [(1, (16, 32, 64)), (2, (12, 20, 36))])
def test_resnet_blocked_matches_onnxruntime(isa, batch, widths):
    x = RNG.random((batch, 3, 64, 64), dtype=np.float32)
    run_blocked(model_zoo.resnet(batch=batch, widths=widths), {"input": x}, isa)


@pytest.mark.skipif(not ISAS, reason="needs AVX2 or AVX-512")
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("batch", [1, 3])
def test_mobilenet_v2_blocked_matches_onnxruntime(isa, batch):
    x = RNG.random((batch, 3, 64, 64), dtype=np.float32)
    run_blocked(model_zoo.mobilenet_v2(batch=batch), {"input": x}, isa, atol=1e-5)

"""The Ascend C Matmul high-level API on the CPU (docs/ascendc.md, "Matmul"):
the host tiling (matmul_tiling::MultiCoreMatmulTiling), the kernel side
(REGIST_MATMUL_OBJ, IterateAll, Iterate + GetTensorC, SetTail, transposes,
bias, atomic modes) for half, bfloat16 and float inputs against a float64
numpy reference, the CANN-style sample, and the refusals: a tiling over the
chip's L0 / L1 sizes, unaligned base sizes, the NZ format. Everything is built
with build/ascendc++ as a user builds it."""
import os
import subprocess

import ml_dtypes
import numpy as np
import pytest

from ascendc_harness import BUILD, DRIVER, SAMPLES, SRC, compile_program  # noqa: F401

SAMPLE = os.path.join(SAMPLES, "matmul")
RNG = np.random.default_rng(11)
NP = {"half": np.float16, "bf16": ml_dtypes.bfloat16, "float": np.float32}


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    if not os.path.exists(DRIVER):
        pytest.fail(f"{DRIVER} is missing: build the project (cmake configures it)")
    d = str(tmp_path_factory.mktemp("ascendc_matmul"))
    return {
        "runner": compile_program(d, "matmul_runner", os.path.join(SRC, "tests", "ascendc", "matmul_runner.cc")),
        "sample": compile_program(d, "matmul_custom", os.path.join(SAMPLE, "main.cpp"),
                                  os.path.join(SAMPLE, "matmul_custom.cpp")),
    }


def operands(dtype, m, n, k, trans_a=False, trans_b=False, bias=False):
    t = NP[dtype]
    a = RNG.uniform(-1, 1, (k, m) if trans_a else (m, k)).astype(np.float32).astype(t)
    b = RNG.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype(np.float32).astype(t)
    bi = RNG.uniform(-1, 1, n).astype(np.float32) if bias else None
    return a, b, bi


def reference(a, b, bias, trans_a, trans_b, c0=None, atomic=0):
    """float64 product and the bound a float32 accumulation of K terms may be off by."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    a64 = a64.T if trans_a else a64
    b64 = b64.T if trans_b else b64
    want = a64 @ b64
    bound = np.abs(a64) @ np.abs(b64)
    if bias is not None:
        want = want + bias.astype(np.float64)
        bound = bound + np.abs(bias.astype(np.float64))
    k = a64.shape[1]
    bound = bound * (k + 2) * 2.0 ** -23 + 1e-30
    if c0 is not None and atomic:
        c = c0.astype(np.float64)
        want = c + want if atomic == 1 else np.maximum(c, want) if atomic == 2 else np.minimum(c, want)
        bound = bound + np.abs(c) * 2.0 ** -23
    return want, bound


def assert_matmul(got, want, bound, cdtype="float"):
    got = got.astype(np.float64)
    if cdtype == "half":  # one rounding to half at the end
        bound = bound + np.abs(want) * 2.0 ** -11 + 2.0 ** -24
    err = np.abs(got - want)
    bad = err > bound
    assert not bad.any(), (f"{bad.sum()} of {bad.size} elements off, worst {err.max():.3g} "
                           f"at {np.unravel_index(err.argmax(), err.shape)}")


def run(progs, tmp_path, dtype, m, n, k, cdtype="float", trans_a=False, trans_b=False, bias=False, c0=None,
        env=None, expect_ok=True, **kw):
    a, b, bi = operands(dtype, m, n, k, trans_a, trans_b, bias)
    paths = [str(tmp_path / f) for f in ("a.bin", "b.bin", "bias.bin", "c.bin")]
    a.tofile(paths[0])
    b.tofile(paths[1])
    (bi if bi is not None else np.zeros(n, np.float32)).tofile(paths[2])
    ct = np.float16 if cdtype == "half" else np.float32
    (c0 if c0 is not None else np.zeros((m, n), ct)).astype(ct).tofile(paths[3])
    args = [progs["runner"], dtype, cdtype, str(m), str(n), str(k), f"transA={int(trans_a)}",
            f"transB={int(trans_b)}", f"bias={int(bias)}"] + [f"{key}={v}" for key, v in kw.items()] + paths
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})
    if not expect_ok:
        assert proc.returncode != 0, proc.stdout + proc.stderr
        return proc
    assert proc.returncode == 0, " ".join(args) + "\n" + proc.stdout + proc.stderr
    got = np.fromfile(paths[3], dtype=ct).reshape(m, n)
    want, bound = reference(a, b, bi, trans_a, trans_b, c0, kw.get("atomic", 0))
    assert_matmul(got, want, bound, cdtype)
    return proc


# ---- IterateAll per dtype, shapes on and off the base sizes, with and without bias

SHAPES = [(16, 16, 16), (64, 128, 64), (100, 70, 45), (257, 300, 129), (33, 513, 7)]


@pytest.mark.parametrize("dtype", ["half", "bf16", "float"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
def test_iterate_all(progs, tmp_path, dtype, shape, bias):
    run(progs, tmp_path, dtype, *shape, bias=bias, blockDim=4)


@pytest.mark.parametrize("dtype", ["half", "bf16", "float"])
@pytest.mark.parametrize("trans", [(False, True), (True, False), (True, True)], ids=["Bt", "At", "AtBt"])
@pytest.mark.parametrize("mode", ["all", "iterate"])
def test_transposed(progs, tmp_path, dtype, trans, mode):
    run(progs, tmp_path, dtype, 150, 90, 77, trans_a=trans[0], trans_b=trans[1], bias=True, blockDim=3, mode=mode)


@pytest.mark.parametrize("dtype", ["half", "float"])
@pytest.mark.parametrize("mode", ["iterate", "seq", "local"])
@pytest.mark.parametrize("order", [0, 1], ids=["orderM", "orderN"])
def test_iterate_pieces(progs, tmp_path, dtype, mode, order):
    # 300 x 600 per block with base 128 x 256: 3 x 3 pieces, the last ones tails.
    proc = run(progs, tmp_path, dtype, 300, 600, 70, bias=True, blockDim=1, mode=mode, iterateOrder=order)
    assert "base 128 x 256" in proc.stdout


@pytest.mark.parametrize("atomic", [1, 2, 3], ids=["add", "max", "min"])
@pytest.mark.parametrize("mode", ["all", "iterate"])
def test_atomic(progs, tmp_path, atomic, mode):
    c0 = RNG.uniform(-4, 4, (96, 80)).astype(np.float32)
    run(progs, tmp_path, "half", 96, 80, 40, bias=True, c0=c0, blockDim=2, atomic=atomic, mode=mode)


def test_half_output(progs, tmp_path):
    run(progs, tmp_path, "half", 70, 130, 90, cdtype="half", bias=True, blockDim=2)


@pytest.mark.parametrize("dtype", ["half", "float"])
def test_long_k(progs, tmp_path, dtype):
    # K beyond the GEMM's K blocking and many K steps of baseK.
    run(progs, tmp_path, dtype, 64, 96, 2500, bias=True, blockDim=2)


@pytest.mark.parametrize("block_dim", [1, 2, 7, 16])
def test_block_splits(progs, tmp_path, block_dim):
    proc = run(progs, tmp_path, "float", 200, 333, 50, bias=True, blockDim=block_dim)
    used = int(proc.stdout.split("usedCoreNum ")[1].split()[0])
    assert 1 <= used <= block_dim


def test_more_blocks_than_tiles(progs, tmp_path):
    # A 16 x 16 product on 8 blocks: one tile, the other blocks return at once.
    proc = run(progs, tmp_path, "half", 16, 16, 32, blockDim=8)
    assert "usedCoreNum 1 " in proc.stdout


# ---- the sample, as CANN's Matmul sample is run

@pytest.mark.parametrize("dtype", ["half", "float", "bf16"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_sample(progs, tmp_path, dtype, bias):
    m, n, k = 320, 272, 200
    a, b, bi = operands(dtype, m, n, k, bias=bias)
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    if bias:
        bi.tofile(tmp_path / "bias.bin")
    args = [progs["sample"], "--dtype", dtype, str(m), str(n), str(k), "8", str(tmp_path / "a.bin"),
            str(tmp_path / "b.bin"), str(tmp_path / "bias.bin") if bias else "-", str(tmp_path / "c.bin"), "3"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "GFLOP/s" in proc.stdout
    got = np.fromfile(tmp_path / "c.bin", dtype=np.float32).reshape(m, n)
    want, bound = reference(a, b, bi, False, False)
    assert_matmul(got, want, bound)


# ---- refusals

def test_base_over_l0a_refused(progs, tmp_path):
    proc = run(progs, tmp_path, "half", 128, 128, 128, baseM=512, expect_ok=False)
    err = proc.stderr
    assert "Matmul::Init" in err and "L0A buffer of Ascend910B (65536 bytes)" in err, err
    assert "baseM 512 x baseK" in err and "double-buffered" in err, err
    assert "Ascend C kernel 'mm_half_float', block 0" in err, err


def test_base_over_l0b_refused(progs, tmp_path):
    proc = run(progs, tmp_path, "float", 64, 64, 64, baseM=16, baseK=256, expect_ok=False)
    assert "Matmul::Init" in proc.stderr and "L0B buffer of Ascend910B" in proc.stderr, proc.stderr


def test_l0c_limit_follows_profile(progs, tmp_path):
    # 128 x 512 float accumulators: 256 KiB, over the 910B's L0C, within the 910's.
    kw = dict(baseM=128, baseN=512, baseK=16)
    proc = run(progs, tmp_path, "half", 128, 512, 64, expect_ok=False, **kw)
    assert "Matmul::Init" in proc.stderr and "L0C buffer of Ascend910B (131072 bytes)" in proc.stderr, proc.stderr
    run(progs, tmp_path, "half", 128, 512, 64, env={"OPENCANN_ASCENDC_SOC": "Ascend910"}, **kw)


def test_l1_depth_refused(progs, tmp_path):
    proc = run(progs, tmp_path, "half", 128, 256, 512, depthA1=64, depthB1=64, expect_ok=False)
    assert "Matmul::Init" in proc.stderr and "L1 buffer of Ascend910B (524288 bytes)" in proc.stderr, proc.stderr


def test_unaligned_base_refused(progs, tmp_path):
    proc = run(progs, tmp_path, "float", 64, 64, 64, baseM=40, expect_ok=False)
    assert "Matmul::Init" in proc.stderr and "multiples of 16" in proc.stderr, proc.stderr


def test_global_tensor_too_small_refused(progs, tmp_path):
    # A's GlobalTensor one row short of M x K: the block's A rows run past it.
    proc = run(progs, tmp_path, "half", 64, 32, 64, aElems=63 * 64, expect_ok=False)
    err = proc.stderr
    assert "Matmul (matrix A)" in err and "elements [0, 4096) of a GlobalTensor<half>" in err, err
    assert "outside its 4032 elements" in err, err


def test_leading_dimension_refused(progs, tmp_path):
    # singleCoreK past Ka: a row of A would be longer than A's leading dimension.
    proc = run(progs, tmp_path, "float", 32, 32, 48, singleCoreK=96, expect_ok=False)
    assert "matrix A: rows of 96 elements do not fit its leading dimension 48" in proc.stderr, proc.stderr


def test_host_tiling_refuses_nz(progs, tmp_path):
    proc = run(progs, tmp_path, "half", 64, 64, 64, nzA=1, expect_ok=False)
    assert proc.returncode == 3
    assert "matmul_tiling" in proc.stderr and "CubeFormat::ND" in proc.stderr, proc.stderr


def test_kernel_refuses_nz_at_compile_time(tmp_path):
    src = tmp_path / "nz.cpp"
    src.write_text(
        '#include "kernel_operator.h"\n'
        "using namespace AscendC;\n"
        'extern "C" __global__ __aicore__ void nz_kernel(GM_ADDR a) {\n'
        "  Matmul<MatmulType<TPosition::GM, CubeFormat::NZ, half>, MatmulType<TPosition::GM, CubeFormat::ND, half>,\n"
        "         MatmulType<TPosition::GM, CubeFormat::ND, float>> mm;\n"
        "  (void)a;\n"
        "}\n"
        "int main() { return 0; }\n")
    proc = subprocess.run([DRIVER, str(src), "-o", str(tmp_path / "nz")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode != 0
    assert "CubeFormat::ND operands only" in proc.stderr, proc.stderr

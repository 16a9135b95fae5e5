"""Ascend C on the CPU (docs/ascendc.md): every vector API against numpy at and
around the 32-byte and 256-byte boundaries, Cast with every RoundMode, each
check provoked and its message asserted, and the samples end to end, all
compiled by build/ascendc++ as a user compiles them."""
import os
import subprocess

import ml_dtypes
import numpy as np
import pytest

import ascendc_ref as ref

from ascendc_harness import BUILD, DRIVER, SAMPLES, SRC, compile_program
RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    if not os.path.exists(DRIVER):
        pytest.fail(f"{DRIVER} is missing: build the project (cmake configures it)")
    d = str(tmp_path_factory.mktemp("ascendc"))
    s = lambda *p: os.path.join(SAMPLES, *p)
    return {
        "runner": compile_program(d, "api_runner", os.path.join(SRC, "tests", "ascendc", "api_runner.cc")),
        "misuse": compile_program(d, "misuse", os.path.join(SRC, "tests", "ascendc", "misuse.cc")),
        "add_custom": compile_program(d, "add_custom", s("add_custom", "main.cpp"), s("add_custom", "add_custom.cpp")),
        "add_custom_cpu": compile_program(d, "add_custom_cpu", s("add_custom", "main.cpp"),
                                          s("add_custom", "add_custom.cpp"), flags=["-DASCENDC_CPU_DEBUG"]),
        "add_tiled": compile_program(d, "add_tiled", s("add_tiled", "main.cpp"), s("add_tiled", "add_tiled.cpp")),
        "leaky_relu": compile_program(d, "leaky_relu", s("leaky_relu", "main.cpp"), s("leaky_relu", "leaky_relu.cpp")),
        "softmax_rows": compile_program(d, "softmax_rows", s("softmax_rows", "main.cpp"),
                                        s("softmax_rows", "softmax_rows.cpp")),
    }


def pad32(a):
    b = a.view(np.uint8).ravel()
    n = (len(b) + 31) // 32 * 32
    return np.concatenate([b, np.zeros(n - len(b), np.uint8)]) if n > len(b) else b


def run_api(progs, tmp_path, op, form, dtype, a, b, out, **kw):
    """Runs the API in a one-block kernel; returns the output buffer as out's dtype."""
    paths = [tmp_path / n for n in ("a.bin", "b.bin", "o.bin")]
    for p, arr in zip(paths, (a, b, out)):
        pad32(np.ascontiguousarray(arr)).tofile(p)
    args = [progs["runner"], op, form, dtype] + [f"{k}={v}" for k, v in kw.items()] + [str(p) for p in paths]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{op} {form} {dtype} {kw}: " + proc.stdout + proc.stderr
    return np.fromfile(paths[2], dtype=np.uint8)[: out.nbytes].view(out.dtype)


def rand(dtype, n, lo=-4, hi=4, positive=False):
    t = ref.DTYPES[dtype]
    if ref.is_float(dtype):
        v = RNG.uniform(0.1 if positive else lo, hi, n)
        return v.astype(np.float32).astype(t)
    info = np.iinfo(t)
    return RNG.integers(max(info.min // 4, -1000), min(info.max // 4, 1000), n).astype(t)


def assert_close(got, want, dtype, ulps=0):
    if ulps == 0 or not ref.is_float(dtype):
        np.testing.assert_array_equal(got.view(np.uint8), np.asarray(want, dtype=got.dtype).view(np.uint8))
        return
    g, w = got.astype(np.float64), np.asarray(want).astype(np.float64)
    eps = {"float": 2.0 ** -23, "half": 2.0 ** -10, "bfloat16": 2.0 ** -7}[dtype]
    np.testing.assert_allclose(g, w, rtol=ulps * eps, atol=1e-30)


PER_BLOCK = {1: 32, 2: 16, 4: 8}
COUNTS = {4: [1, 7, 8, 9, 63, 64, 65, 129, 1000], 2: [1, 15, 16, 17, 127, 128, 129, 257, 1000]}
BINARY = {"Add": ["float", "half", "bfloat16", "int16", "int32"], "Sub": ["float", "half", "int16", "int32"],
          "Mul": ["float", "half", "bfloat16", "int32"], "Div": ["float", "half"],
          "Max": ["float", "half", "int16", "int32"], "Min": ["float", "half", "int32"],
          "And": ["int16", "uint16"], "Or": ["int16", "uint16"], "AddRelu": ["float", "half"],
          "SubRelu": ["float", "half"]}


@pytest.mark.parametrize("op,dtype", [(o, d) for o, ds in BINARY.items() for d in ds])
def test_binary_count_form(progs, tmp_path, op, dtype):
    size = np.dtype(ref.DTYPES[dtype]).itemsize
    for n in COUNTS[size]:
        a, b = rand(dtype, n), rand(dtype, n, positive=op == "Div")
        out = rand(dtype, n + 16)
        got = run_api(progs, tmp_path, op, "count", dtype, a, b, out, count=n)
        assert_close(got[:n], ref.binary(op, a, b), dtype)
        assert_close(got[n:], out[n:], dtype)  # past count: untouched


@pytest.mark.parametrize("dtype", ["float", "half"])
@pytest.mark.parametrize("form", ["mask", "bits"])
def test_binary_mask_repeat_form_with_strides(progs, tmp_path, dtype, form):
    t = ref.DTYPES[dtype]
    size = np.dtype(t).itemsize
    per_block, per_repeat = 32 // size, 256 // size
    cases = [dict(repeat=1, dblk=1, s0blk=1, s1blk=1, drep=8, s0rep=8, s1rep=8),
             dict(repeat=3, dblk=1, s0blk=2, s1blk=1, drep=8, s0rep=16, s1rep=9),
             dict(repeat=2, dblk=2, s0blk=1, s1blk=3, drep=16, s0rep=8, s1rep=24),
             dict(repeat=4, dblk=1, s0blk=1, s1blk=1, drep=0, s0rep=8, s1rep=8)]
    for c in cases:
        if form == "mask":
            for m in (1, per_block - 1, per_block + 1, per_repeat):
                _check_binary_repeat(progs, tmp_path, dtype, t, per_block, per_repeat, c, mask=m)
        else:
            lo = int(RNG.integers(1, 2 ** 63))
            hi = int(RNG.integers(0, 2 ** 63)) if per_repeat > 64 else 0
            _check_binary_repeat(progs, tmp_path, dtype, t, per_block, per_repeat, c, bits=(lo, hi))


def _check_binary_repeat(progs, tmp_path, dtype, t, per_block, per_repeat, c, mask=None, bits=None):
    n = 24 * 8 * per_block  # room for the widest strides above
    a, b, out = rand(dtype, n), rand(dtype, n), rand(dtype, n)
    kw = dict(c)
    if bits is None:
        kw["mask"] = mask
    else:
        kw["mask0"], kw["mask1"] = bits
    got = run_api(progs, tmp_path, "Add", "mask" if bits is None else "bits", dtype, a, b, out, **kw)
    want = out.copy()
    for r in range(c["repeat"]):
        for e in ref.active(mask, bits, per_repeat):
            di = ref.repeat_index(r, e, c["dblk"], c["drep"], per_block)
            ai = ref.repeat_index(r, e, c["s0blk"], c["s0rep"], per_block)
            bi = ref.repeat_index(r, e, c["s1blk"], c["s1rep"], per_block)
            want[di] = ref.binary("Add", a[ai:ai + 1], b[bi:bi + 1])[0]
    assert_close(got, want, dtype)


SCALAR = {"Adds": ["float", "half", "int16", "int32"], "Muls": ["float", "half", "int32"],
          "Maxs": ["float", "half", "int32"], "Mins": ["float", "half", "int16"],
          "LeakyRelu": ["float", "half"], "ShiftLeft": ["int16", "int32"], "ShiftRight": ["int16", "int32"]}


@pytest.mark.parametrize("op,dtype", [(o, d) for o, ds in SCALAR.items() for d in ds])
def test_scalar_ops_count_and_mask_forms(progs, tmp_path, op, dtype):
    size = np.dtype(ref.DTYPES[dtype]).itemsize
    s = 3 if op.startswith("Shift") else 0.375
    if not ref.is_float(dtype) and not op.startswith("Shift"):
        s = 5
    for n in COUNTS[size][::2]:
        a, out = rand(dtype, n), rand(dtype, n + 8)
        got = run_api(progs, tmp_path, op, "count", dtype, a, a, out, count=n, scalar=s)
        assert_close(got[:n], ref.scalar_op(op, a, s), dtype)
    per_block, per_repeat = 32 // size, 256 // size
    a, out = rand(dtype, 4 * per_repeat), rand(dtype, 4 * per_repeat)
    got = run_api(progs, tmp_path, op, "mask", dtype, a, a, out, mask=per_repeat - 3, repeat=2, dblk=1, s0blk=2,
                  drep=8, s0rep=16, scalar=s)
    want = out.copy()
    for r in range(2):
        for e in range(per_repeat - 3):
            di, si = ref.repeat_index(r, e, 1, 8, per_block), ref.repeat_index(r, e, 2, 16, per_block)
            want[di] = ref.scalar_op(op, a[si:si + 1], s)[0]
    assert_close(got, want, dtype)


UNARY = {"Exp": 2, "Ln": 2, "Abs": 0, "Sqrt": 1, "Rsqrt": 2, "Reciprocal": 1, "Relu": 0}


@pytest.mark.parametrize("op", list(UNARY))
@pytest.mark.parametrize("dtype", ["float", "half"])
def test_unary_ops(progs, tmp_path, op, dtype):
    size = np.dtype(ref.DTYPES[dtype]).itemsize
    positive = op in ("Ln", "Sqrt", "Rsqrt", "Reciprocal")
    for n in COUNTS[size][::2]:
        a, out = rand(dtype, n, positive=positive), rand(dtype, n)
        got = run_api(progs, tmp_path, op, "count", dtype, a, a, out, count=n)
        assert_close(got, ref.unary(op, a), dtype, ulps=UNARY[op])
    per_repeat = 256 // size
    a, out = rand(dtype, 2 * per_repeat, positive=positive), rand(dtype, 2 * per_repeat)
    got = run_api(progs, tmp_path, op, "bits", dtype, a, a, out, mask0=0xF0F0F0F0F0F0F0F0, mask1=0, repeat=2)
    want = out.copy()
    for r in range(2):
        for e in ref.active(None, (0xF0F0F0F0F0F0F0F0, 0), per_repeat):
            i = r * per_repeat + e
            want[i] = ref.unary(op, a[i:i + 1])[0]
    assert_close(got, want, dtype, ulps=UNARY[op])


def test_not_and_integer_ops(progs, tmp_path):
    a = rand("int16", 100)
    got = run_api(progs, tmp_path, "Not", "count", "int16", a, a, np.zeros(100, np.int16), count=100)
    np.testing.assert_array_equal(got, ~a)


@pytest.mark.parametrize("dtype", ["float", "half", "int32", "int16"])
def test_duplicate_and_create_vec_index(progs, tmp_path, dtype):
    t = ref.DTYPES[dtype]
    size = np.dtype(t).itemsize
    n = 2 * 256 // size
    out = rand(dtype, n)
    got = run_api(progs, tmp_path, "Duplicate", "count", dtype, out, out, out, count=n - 3, scalar=7)
    np.testing.assert_array_equal(got[: n - 3], np.full(n - 3, 7, t))
    np.testing.assert_array_equal(got[n - 3:], out[n - 3:])
    got = run_api(progs, tmp_path, "Duplicate", "mask", dtype, out, out, out, mask=5, repeat=2, dblk=2, drep=8,
                  scalar=3)
    want = out.copy()
    for r in range(2):
        for e in range(5):
            want[ref.repeat_index(r, e, 2, 8, 32 // size)] = 3
    np.testing.assert_array_equal(got, want)
    got = run_api(progs, tmp_path, "CreateVecIndex", "count", dtype, out, out, out, count=n, scalar=2)
    np.testing.assert_array_equal(got, (np.arange(n) + 2).astype(t))


def test_mul_add_dst_and_axpy(progs, tmp_path):
    a, b, d = rand("float", 77), rand("float", 77), rand("float", 77)
    got = run_api(progs, tmp_path, "MulAddDst", "count", "float", a, b, d, count=77)
    np.testing.assert_allclose(got, a * b + d, rtol=1e-6, atol=1e-6)
    got = run_api(progs, tmp_path, "Axpy", "count", "float", a, a, d, count=77, scalar=0.5)
    np.testing.assert_allclose(got, a * np.float32(0.5) + d, rtol=1e-6, atol=1e-6)


# ---- Cast -----------------------------------------------------------------------------------
def cast_inputs(src):
    t = ref.DTYPES[src]
    special = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 65504.0, 65519.0, 65520.0, 70000.0, -70000.0,
               1e-8, 6e-5, 2 ** -24, 3 * 2 ** -25, 1 / 3, 2 / 3, 1234.5678]
    v = np.concatenate([np.array(special), RNG.uniform(-3000, 3000, 200), RNG.uniform(-1, 1, 100),
                        RNG.uniform(-1e-4, 1e-4, 60)])
    with np.errstate(over="ignore"):  # 70000 is infinity in half
        return v.astype(np.float64).astype(t)


@pytest.mark.parametrize("mode", ["none", "rint", "floor", "ceil", "round", "trunc", "odd"])
def test_cast_float_to_half_every_round_mode(progs, tmp_path, mode):
    a = cast_inputs("float")
    out = np.zeros(a.size, np.float16)
    got = run_api(progs, tmp_path, "Cast", "count", "float", a, a, out, count=a.size, dst="half", round=mode)
    want = ref.round_float(a.astype(np.float64), np.float16, mode)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16), err_msg=mode)


@pytest.mark.parametrize("mode", ["none", "rint", "floor", "ceil", "round", "trunc"])
def test_cast_float_to_bfloat16_every_round_mode(progs, tmp_path, mode):
    a = cast_inputs("float")
    out = np.zeros(a.size, ml_dtypes.bfloat16)
    got = run_api(progs, tmp_path, "Cast", "count", "float", a, a, out, count=a.size, dst="bfloat16", round=mode)
    want = ref.round_float(a.astype(np.float64), ml_dtypes.bfloat16, mode)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16), err_msg=mode)


@pytest.mark.parametrize("src", ["float", "half"])
@pytest.mark.parametrize("mode", ["none", "rint", "floor", "ceil", "round", "trunc"])
def test_cast_to_int32_every_round_mode(progs, tmp_path, src, mode):
    a = cast_inputs(src)
    a = a[np.isfinite(a.astype(np.float64))]
    out = np.zeros(a.size, np.int32)
    got = run_api(progs, tmp_path, "Cast", "count", src, a, a, out, count=a.size, dst="int32", round=mode)
    np.testing.assert_array_equal(got, ref.round_int(a.astype(np.float64), mode).astype(np.int32), err_msg=mode)


@pytest.mark.parametrize("src,dst", [("half", "float"), ("bfloat16", "float"), ("int32", "float"),
                                     ("int16", "half"), ("float", "float"), ("half", "int8")])
def test_cast_other_pairs(progs, tmp_path, src, dst):
    a = rand(src, 300, lo=-100, hi=100) if ref.is_float(src) else rand(src, 300)
    out = np.zeros(a.size, ref.DTYPES[dst])
    mode = "rint" if (src, dst) in (("float", "float"), ("half", "int8")) else "none"
    got = run_api(progs, tmp_path, "Cast", "count", src, a, a, out, count=a.size, dst=dst, round=mode)
    if (src, dst) == ("float", "float"):
        want = np.rint(a)
    elif dst == "int8":
        want = np.clip(np.rint(a.astype(np.float64)), -128, 127).astype(np.int8)
    else:
        want = a.astype(np.float64).astype(ref.DTYPES[dst])
    np.testing.assert_array_equal(got, want)


def test_cast_odd_is_refused_outside_float_to_half(progs, tmp_path):
    a = rand("float", 16)
    paths = [tmp_path / n for n in ("a.bin", "b.bin", "o.bin")]
    for p in paths:
        pad32(a).tofile(p)
    proc = subprocess.run([progs["runner"], "Cast", "count", "float", "count=16", "dst=int32", "round=odd"] +
                          [str(p) for p in paths], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Cast: CAST_ODD is defined for float -> half only, not float -> int32_t" in proc.stderr


# ---- Compare / Select / reductions --------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float", "half"])
@pytest.mark.parametrize("cmp", ["lt", "gt", "eq", "le", "ge", "ne"])
def test_compare_and_select(progs, tmp_path, dtype, cmp):
    t = ref.DTYPES[dtype]
    n = 2 * 256 // np.dtype(t).itemsize
    a, b = rand(dtype, n), rand(dtype, n)
    b[::5] = a[::5]
    op = {"lt": np.less, "gt": np.greater, "eq": np.equal, "le": np.less_equal, "ge": np.greater_equal,
          "ne": np.not_equal}[cmp]
    got = run_api(progs, tmp_path, "Compare", "count", dtype, a, b, np.zeros(n // 8, np.uint8), count=n, cmp=cmp)
    np.testing.assert_array_equal(got, np.packbits(op(a, b), bitorder="little"))
    got = run_api(progs, tmp_path, "CompareScalar", "count", dtype, a, b, np.zeros(n // 8, np.uint8), count=n,
                  cmp=cmp, scalar=0.5)
    np.testing.assert_array_equal(got, np.packbits(op(a, t(0.5)), bitorder="little"))
    mask = RNG.integers(0, 256, n // 8).astype(np.uint8)
    both = np.concatenate([pad32(b), mask])
    bits = np.unpackbits(mask, bitorder="little").astype(bool)
    maskat = pad32(b).size
    got = run_api(progs, tmp_path, "Select", "count", dtype, a, both, np.zeros(n, t), count=n, maskat=maskat)
    np.testing.assert_array_equal(got, np.where(bits, a, b))
    got = run_api(progs, tmp_path, "Select", "count", dtype, a, both, np.zeros(n, t), count=n, maskat=maskat,
                  sel="scalar", scalar=9)
    np.testing.assert_array_equal(got, np.where(bits, a, t(9)))


def test_compare_needs_whole_repeats(progs, tmp_path):
    a = rand("float", 64)
    paths = [tmp_path / n for n in ("a.bin", "b.bin", "o.bin")]
    for p in paths:
        pad32(a).tofile(p)
    proc = subprocess.run([progs["runner"], "Compare", "count", "float", "count=40", "cmp=lt"] +
                          [str(p) for p in paths], capture_output=True, text=True)
    assert proc.returncode == 1 and "not a whole number of 256-byte repeats" in proc.stderr


@pytest.mark.parametrize("dtype", ["float", "half"])
def test_reductions(progs, tmp_path, dtype):
    t = ref.DTYPES[dtype]
    size = np.dtype(t).itemsize
    per_repeat = 256 // size
    for n in COUNTS[size] + [per_repeat * per_repeat + 5]:
        a = rand(dtype, n)
        work = np.zeros(max(n, 16), t)
        got = run_api(progs, tmp_path, "ReduceSum", "count", dtype, a, work, np.zeros(16, t), count=n)
        assert got[:1].tobytes() == np.array(ref.tree_sum(a, per_repeat), t).tobytes(), n
        np.testing.assert_allclose(float(got[0]), a.astype(np.float64).sum(),
                                   rtol=1e-5 if dtype == "float" else 2e-2, atol=1e-3 if dtype == "float" else 0.5)
        for op, f in (("ReduceMax", np.argmax), ("ReduceMin", np.argmin)):
            got = run_api(progs, tmp_path, op, "count", dtype, a, work, np.zeros(16, t), count=n, index=1)
            i = f(a)
            assert got[0] == a[i]
            idx = got[1:2].view(np.uint32 if size == 4 else np.uint16)[0]
            assert idx == i, (op, n)
    per_block = 32 // size
    a = rand(dtype, 6 * per_repeat)
    got = run_api(progs, tmp_path, "WholeReduceSum", "mask", dtype, a, a, np.zeros(16, t), mask=per_repeat - 5,
                  repeat=3, drep=2, s0blk=1, s0rep=16)
    for r in range(3):
        vals = [a[ref.repeat_index(r, e, 1, 16, per_block)] for e in range(per_repeat - 5)]
        want = ref.tree_sum(np.array(vals, t), per_repeat)
        assert got[2 * r].tobytes() == np.array(want, t).tobytes()


# ---- data movement -------------------------------------------------------------------------------
def test_data_copy_block_stride_form(progs, tmp_path):
    a = rand("float", 512)
    out = rand("float", 512)
    got = run_api(progs, tmp_path, "DataCopyParams", "count", "float", a, a, out, bcount=3, blen=2, sstride=1,
                  dstride=3)
    want = out.copy()
    for i in range(3):
        want[i * 40:i * 40 + 16] = a[i * 24:i * 24 + 16]  # 2 blocks of 8 floats; gaps of 1 and 3 blocks
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("blen_elems,left,right,ispad", [(5, 0, 0, 0), (13, 2, 1, 1), (8, 0, 0, 1), (1, 3, 4, 1)])
def test_data_copy_pad_global_to_local(progs, tmp_path, blen_elems, left, right, ispad):
    a = rand("float", 200)
    out = rand("float", 200)
    sstride = 12  # bytes between blocks in global memory
    got = run_api(progs, tmp_path, "DataCopyPadIn", "count", "float", a, a, out, bcount=3, blen=blen_elems * 4,
                  sstride=sstride, dstride=1, ispad=ispad, left=left, right=right, scalar=-1)
    want = out.copy()
    row = ((left + blen_elems + right) * 4 + 31) // 32 * 8
    for i in range(3):
        d0, s0 = i * (row + 8), i * (blen_elems + sstride // 4)
        want[d0 + left:d0 + left + blen_elems] = a[s0:s0 + blen_elems]
        if ispad:
            want[d0:d0 + left] = -1
            want[d0 + left + blen_elems:d0 + left + blen_elems + right] = -1
    np.testing.assert_array_equal(got, want)


def test_data_copy_pad_local_to_global(progs, tmp_path):
    a = rand("half", 256)
    out = rand("half", 256)
    got = run_api(progs, tmp_path, "DataCopyPadOut", "count", "half", a, a, out, bcount=4, blen=7 * 2, sstride=1,
                  dstride=6)
    want = out.copy()
    for i in range(4):
        want[i * 10:i * 10 + 7] = a[i * 32:i * 32 + 7]  # local rows of 16 + 16 (gap), global pitch 7 + 3
    np.testing.assert_array_equal(got, want)


# ---- checks ------------------------------------------------------------------------------------
MISUSE = {
    "ub_overflow": ["TPipe::InitBuffer", "Unified Buffer", "196608", "Ascend910B", "VECOUT",
                    "1 x 131104 bytes"],
    "alloc_exhausted": ["TQue::AllocTensor", "all 2 buffers of TQue #1 (VECIN", "wait forever"],
    "deque_empty": ["TQue::DeQue", "TQue #1 (VECIN, depth 2", "is empty"],
    "double_free": ["TQue::FreeTensor", "already free"],
    "foreign": ["TQue::EnQue", "was not allocated from TQue #1"],
    "depth": ["TQue::EnQue", "TQue #2 (VECOUT, depth 1", "already holds 1 tensors"],
    "gm_oob": ["DataCopy (source)", "kernel argument 'in' + 4000 bytes", "outside its 24 elements"],
    "gm_alloc": ["GlobalTensor::SetGlobalBuffer", "kernel argument 'in'", "4096 bytes left"],
    "copy_unaligned": ["DataCopy", "40 bytes, not a multiple of 32", "DataCopyPad"],
    "local_unaligned": ["Add", "not 32-byte aligned", "offset % 32 = 12"],
    "local_oob": ["Add", "elements [0, 300) are outside LocalTensor<float> of 256 elements in TQue #1 buffer 0"],
    "mask_range": ["Add", "mask 65 is outside 1..64"],
    "repeat_oob": ["Add", "elements [0, 320) are outside"],
    "two_pipes": ["a second TPipe"],
    "get_value": ["LocalTensor::GetValue", "elements [256, 257)"],
    "events": ["TPipe::AllocEventID", "all 8 event IDs"],
    "gm_value": ["GlobalTensor::SetValue", "kernel argument 'out'", "outside its 1024 elements"],
    "blockdim0": ["blockDim 0 is outside 1..65535"],
}


@pytest.mark.parametrize("mode", list(MISUSE))
def test_each_check_stops_the_kernel_with_a_message(progs, mode):
    proc = subprocess.run([progs["misuse"], mode], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    if mode != "blockdim0":
        assert "Ascend C kernel 'misuse_kernel', block 0 of 1: " in proc.stderr, proc.stderr
    for piece in MISUSE[mode]:
        assert piece in proc.stderr, (piece, proc.stderr)


def test_correct_use_passes_and_stream_reports_kernel_faults(progs):
    proc = subprocess.run([progs["misuse"], "none"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr
    proc = subprocess.run([progs["misuse"], "stream"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "launch=0 sync=507015" in proc.stdout  # ACL_ERROR_RT_AICORE_EXCEPTION
    assert ("Ascend C kernel 'misuse_kernel', block 0 of 1: DataCopy (source): elements [0, 64) of a "
            "GlobalTensor<float> at kernel argument 'in' + 4000 bytes") in proc.stdout, proc.stdout
    assert "again launch=0 sync=0" in proc.stdout


def test_fast_mode_drops_access_checks_but_keeps_structural_ones(tmp_path):
    exe = compile_program(str(tmp_path), "misuse_fast", os.path.join(SRC, "tests", "ascendc", "misuse.cc"),
                          flags=["--fast"])
    assert subprocess.run([exe, "local_oob"], capture_output=True, text=True).returncode == 0
    proc = subprocess.run([exe, "deque_empty"], capture_output=True, text=True)
    assert proc.returncode == 1 and "is empty" in proc.stderr


def test_soc_profile_changes_the_unified_buffer_size(progs):
    proc = subprocess.run([progs["misuse"], "ub_200k"], capture_output=True, text=True)
    assert proc.returncode == 1 and "of its 196608 bytes (Ascend910B)" in proc.stderr, proc.stderr
    env = dict(os.environ, OPENCANN_ASCENDC_SOC="Ascend310P")
    proc = subprocess.run([progs["misuse"], "ub_200k"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr  # 200 KiB of buffers fit the 256 KiB UB


# ---- samples -------------------------------------------------------------------------------------
def test_add_custom_both_launch_styles(progs, tmp_path):
    x = RNG.uniform(-10, 10, 8 * 2048).astype(np.float16)
    y = RNG.uniform(-10, 10, 8 * 2048).astype(np.float16)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    for exe in ("add_custom", "add_custom_cpu"):
        proc = subprocess.run([progs[exe], "x.bin", "y.bin", "z.bin"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        np.testing.assert_array_equal(np.fromfile(tmp_path / "z.bin", np.float16), x + y)


@pytest.mark.parametrize("n,blocks,tile", [(1, 1, 64), (7, 2, 8), (8, 8, 8), (1000, 3, 96), (100003, 8, 1000),
                                           (4096, 48, 4096)])
def test_add_tiled_any_length(progs, tmp_path, n, blocks, tile):
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    proc = subprocess.run([progs["add_tiled"], str(n), str(blocks), str(tile), "x.bin", "y.bin", "z.bin"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.fromfile(tmp_path / "z.bin", np.float32), x + y)


def test_leaky_relu(progs, tmp_path):
    n = 8 * 2 * 16 * 64
    x = RNG.standard_normal(n).astype(np.float16)
    x.tofile(tmp_path / "x.bin")
    proc = subprocess.run([progs["leaky_relu"], str(n), "8", "16", "0.1", "x.bin", "y.bin"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    want = np.where(x > 0, x, (x.astype(np.float32) * np.float32(np.float16(0.1))).astype(np.float16))
    np.testing.assert_array_equal(np.fromfile(tmp_path / "y.bin", np.float16), want)


def test_leaky_relu_bad_tiling_is_reported(progs, tmp_path):
    n = 8 * 2 * 4 * 12  # tiles of 12 halves: 24 bytes, not whole 32-byte blocks
    RNG.standard_normal(n).astype(np.float16).tofile(tmp_path / "x.bin")
    proc = subprocess.run([progs["leaky_relu"], str(n), "8", "4", "0.1", "x.bin", "y.bin"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "ACLRT_LAUNCH_KERNEL(leaky_relu_custom)" in proc.stderr or "aclrtSynchronizeStream" in proc.stderr
    assert "Ascend C kernel 'leaky_relu_custom', block" in proc.stderr
    assert "24 bytes, not a multiple of 32" in proc.stderr


@pytest.mark.parametrize("rows,cols,blocks", [(1, 8, 1), (37, 1000, 8), (5, 4096, 2)])
def test_softmax_rows(progs, tmp_path, rows, cols, blocks):
    x = (RNG.standard_normal((rows, cols)) * 4).astype(np.float32)
    x.tofile(tmp_path / "x.bin")
    proc = subprocess.run([progs["softmax_rows"], str(rows), str(cols), str(blocks), "x.bin", "y.bin"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(np.fromfile(tmp_path / "y.bin", np.float32).reshape(rows, cols),
                               e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_driver_reports_a_malformed_launch(tmp_path):
    src = tmp_path / "bad.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   'extern "C" __global__ __aicore__ void k(GM_ADDR x) {}\n'
                   'void run(void* s, uint8_t* x) { k<<<8, s>>>(x); }\n')
    proc = subprocess.run([DRIVER, "-c", str(src), "-o", str(tmp_path / "bad.o")], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "bad.cpp:3: k<<<...>>> takes blockDim, l2ctrl and stream, not 2 values" in proc.stderr


def test_compile_errors_name_the_original_file(tmp_path):
    src = tmp_path / "oops.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   'extern "C" __global__ __aicore__ void k(GM_ADDR x) { undefined_call(); }\n'
                   'void run(void* s, uint8_t* x) { k<<<8, nullptr, s>>>(x); }\n')
    proc = subprocess.run([DRIVER, "-c", str(src), "-o", str(tmp_path / "oops.o")], capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"{src}:2" in proc.stderr and "undefined_call" in proc.stderr


def test_acl_rt_launch_kernel_from_a_kernel_library(tmp_path):
    lib = tmp_path / "libkernels.so"
    proc = subprocess.run([DRIVER, "-shared", "-fPIC", os.path.join(SAMPLES, "add_tiled", "add_tiled.cpp"), "-o",
                           str(lib)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    exe = compile_program(str(tmp_path), "launch_binary", os.path.join(SRC, "tests", "ascendc", "launch_binary.cc"))
    proc = subprocess.run([exe, str(lib), "1003"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "file max_err=0" in out and "memory max_err=0" in out, out
    assert "file short_args=100000" in out and "memory short_args=100000" in out  # ACL_ERROR_INVALID_PARAM
    assert "takes 32 bytes of arguments (8 per parameter), argsSize is 24" in proc.stderr
    assert "unknown_kernel=100000" in out and "defines no kernel 'no_such_kernel'" in out
    assert "after_unload=100000" in out
    assert "not_a_library=100003" in out and "is not a kernel library" in out  # ACL_ERROR_INVALID_FILE
    assert "missing=100003" in out and "cannot read '/nonexistent/kernels.so'" in out
    assert "done" in out


def test_kernels_appear_in_msprof_with_their_block_count(progs, tmp_path):
    import csv
    import glob
    import json
    x = RNG.uniform(-1, 1, 8 * 2048).astype(np.float16)
    x.tofile(tmp_path / "x.bin")
    x.tofile(tmp_path / "y.bin")
    proc = subprocess.run([os.path.join(BUILD, "msprof"), f"--output={tmp_path / 'prof'}", progs["add_custom"],
                           "x.bin", "y.bin", "z.bin"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (d,) = glob.glob(str(tmp_path / "prof" / "PROF_*"))
    ts = os.path.basename(d)[len("PROF_"):]
    with open(os.path.join(d, f"op_summary_{ts}.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Op Name"] == "add_custom"]
    assert len(rows) == 1, rows
    assert rows[0]["Block Dim"] == "8" and rows[0]["OP Type"] == "add_custom"
    assert float(rows[0]["Task Duration(us)"]) > 0 and int(rows[0]["Stream ID"]) > 0
    with open(os.path.join(d, f"msprof_{ts}.json")) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    kernel = [e for e in events if e.get("name") == "add_custom" and e.get("ph") == "X"]
    assert len(kernel) == 1 and kernel[0]["args"]["block_dim"] == 8


def test_custom_operator_project_host_and_kernel(tmp_path):
    """A CANN-style custom operator project (op_host: tiling function, InferShape,
    OpDef + OP_ADD; op_kernel: GET_TILING_DATA) driven as the operator runtime
    drives it: registry lookup, inference, tiling through a TilingContext, launch."""
    s = os.path.join(SAMPLES, "add_custom_op")
    exe = compile_program(str(tmp_path), "op_driver", os.path.join(SRC, "tests", "ascendc", "op_host_driver.cc"),
                          os.path.join(s, "op_host", "add_custom.cpp"), os.path.join(s, "op_kernel", "add_custom.cpp"),
                          flags=["-I", os.path.join(s, "op_host"), "-include",
                                 os.path.join(s, "op_host", "add_custom_tiling.h")])
    n = 8 * 8 * 2 * 16 * 8
    x = RNG.uniform(-4, 4, n).astype(np.float16)
    y = RNG.uniform(-4, 4, n).astype(np.float16)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    proc = subprocess.run([exe, str(n), "x.bin", "y.bin", "z.bin"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "op AddCustom: 2 inputs, 1 outputs" in proc.stdout
    assert f"inferred z: [{n}] dtype 1" in proc.stdout  # ge::DT_FLOAT16
    assert "tiling: blockDim 8, 8 bytes, workspace 0" in proc.stdout
    np.testing.assert_array_equal(np.fromfile(tmp_path / "z.bin", np.float16), x + y)


@pytest.fixture(scope="module")
def opp_package(tmp_path_factory):
    """samples/ascendc/add_custom_op built into a package by opp_build.py."""
    import pathlib
    out = pathlib.Path(tmp_path_factory.mktemp("opp"))
    proc = subprocess.run([os.path.join(BUILD, "ascendc-opp-build"), os.path.join(SAMPLES, "add_custom_op"), "--out",
                           str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_custom_operator_package_and_its_aclnn_api(opp_package, tmp_path):
    """opp_build.py builds samples/ascendc/add_custom_op into a package (generated
    aclnn_add_custom.h + libcust_opapi.so); an aclnn application calls it."""
    out = opp_package
    api = out / "vendors" / "customize" / "op_api"
    header = (api / "include" / "aclnn_add_custom.h").read_text()
    assert ("aclnnStatus aclnnAddCustomGetWorkspaceSize(const aclTensor *x, const aclTensor *y, const aclTensor *z, "
            "uint64_t *workspaceSize, aclOpExecutor **executor);") in header
    assert "aclnnStatus aclnnAddCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor" in header
    assert "ops=AddCustom" in (out / "vendors" / "customize" / "version.info").read_text()
    exe = compile_program(str(tmp_path), "aclnn_app", os.path.join(SAMPLES, "add_custom_op", "aclnn_main.cpp"),
                          flags=["-I", str(api / "include")],
                          libs=["-L", str(api / "lib"), "-lcust_opapi", f"-Wl,-rpath,{api / 'lib'}"])
    n = 8 * 8 * 2 * 16 * 4
    x = RNG.uniform(-4, 4, n).astype(np.float16)
    y = RNG.uniform(-4, 4, n).astype(np.float16)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    proc = subprocess.run([exe, str(n), "x.bin", "y.bin", "z.bin"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    np.testing.assert_array_equal(np.fromfile(tmp_path / "z.bin", np.float16), x + y)
    assert "float_input=161002" in proc.stdout  # ACLNN_ERR_PARAM_INVALID
    assert "input 'x' has data type 0; AddCustom takes 1" in proc.stderr
    assert "short_output=161002" in proc.stdout
    assert f"output 'z' is [{n // 2}] but AddCustom infers [{n}] from the inputs" in proc.stderr
    assert "null_input=161001" in proc.stdout and "input 'x' is NULL" in proc.stderr  # ACLNN_ERR_PARAM_NULLPTR
    assert "stale_executor=161002" in proc.stdout and "each executor runs once" in proc.stderr


def test_custom_operator_by_op_type_through_ascend_custom_opp_path(opp_package, tmp_path):
    """aclInit loads the packages ASCEND_CUSTOM_OPP_PATH names; aclopExecuteV2 runs
    their operators by op type (the host program only links -lascendcl)."""
    out = opp_package
    exe = compile_program(str(tmp_path), "op_by_type", os.path.join(SRC, "tests", "ascendc", "op_by_type.cc"))
    n = 8 * 8 * 2 * 16 * 2
    x = RNG.uniform(-4, 4, n).astype(np.float16)
    y = RNG.uniform(-4, 4, n).astype(np.float16)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    env = dict(os.environ, ASCEND_CUSTOM_OPP_PATH=f"{tmp_path}/missing:{out}/vendors/customize")
    proc = subprocess.run([exe, str(n), "x.bin", "y.bin", "z.bin"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "execute=0" in proc.stdout and "sync=0" in proc.stdout, proc.stdout + proc.stderr
    np.testing.assert_array_equal(np.fromfile(tmp_path / "z.bin", np.float16), x + y)
    assert ("float_input=100000 aclopExecuteV2: custom operator AddCustom: input 'x' has data type 0; "
            "AddCustom takes 1") in proc.stdout
    env.pop("ASCEND_CUSTOM_OPP_PATH")
    proc = subprocess.run([exe, str(n), "x.bin", "y.bin", "z.bin"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env=env)
    assert "execute=100024" in proc.stdout and "ASCEND_CUSTOM_OPP_PATH" in proc.stdout, proc.stdout


def test_tiling_key_is_follows_icpu_set_tiling_key(tmp_path):
    """TILING_KEY_IS sees the key ICPU_SET_TILING_KEY set, for the next launch
    only (the aclnn path is covered with LeakyReluCustom's float and half keys
    in test_ascendc_model.py)."""
    exe = compile_program(str(tmp_path), "tiling_key", os.path.join(SRC, "tests", "ascendc", "tiling_key.cc"))
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "first=7,7 second=0,0 big=1000"

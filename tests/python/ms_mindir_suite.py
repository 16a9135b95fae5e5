"""The cases of test_mindir.py: MINDIR, MindSpore's model format, both ways,
against the real MindSpore 2.10 wheel ($OPENCANN_MINDSPORE_VENV, default /opt/opencann/mindspore-venv, made by
scripts/install_deps.sh; the reference runs in a subprocess of that
interpreter, ms_mindir_cases.py):

(a) MindSpore exports MINDIR -> our atc --framework=1 -> msame: the outputs
    equal MindSpore's own inference on the same input;
(b) our package exports MINDIR -> MindSpore's mindspore.load + nn.GraphCell:
    the outputs equal our network's;
(c) our export -> our atc -> msame: equal to our network's;
(d) a network with primitives atc has no lowering for is refused, naming them;
(e) truncated / corrupted / non-MINDIR files are refused cleanly (no crash).
(e) and the .air / framework checks need no reference."""
import os
import subprocess
import sys

import numpy as np
import pytest

import oc_harness
from oc_harness import ATC, MSAME, run_tool

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.environ.get("OPENCANN_MINDSPORE_VENV", "/opt/opencann/mindspore-venv")
REF_PYTHON = os.path.join(VENV, "bin", "python")
RTOL, ATOL = 1e-4, 1e-5
# The reference networks of ms_mindir_cases.py.
REF_NETS = ["lenet", "conv_bn_pools", "conv_variants", "dense_gelu_norm", "mlp", "casts_math", "elementwise"]

try:
    import mindspore as ms  # ours
    from mindspore import nn, ops
    _import_error = None
except ImportError as e:  # libms_backend.so not built
    ms = nn = ops = None
    _import_error = e


def _ref_env():
    drop = ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["GLOG_v"] = "3"
    return env


# ---- our networks ------------------------------------------------------------------------

def _our_nets():
    class LeNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
            self.c2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.flat = nn.Flatten()
            self.f1 = nn.Dense(256, 120)
            self.f2 = nn.Dense(120, 10)

        def construct(self, x):
            x = self.pool(self.relu(self.c1(x)))
            x = self.pool(self.relu(self.c2(x)))
            return self.f2(self.relu(self.f1(self.flat(x))))

    class ConvBn(nn.Cell):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 8, 3, pad_mode="same", has_bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 8, 3, stride=2, pad_mode="pad", padding=1, group=2)
            self.relu = nn.ReLU()
            self.mp = nn.MaxPool2d(3, 1, pad_mode="same")
            self.ap = nn.AvgPool2d(2, 2)

        def construct(self, x):
            return self.ap(self.mp(self.c2(self.relu(self.bn(self.c(x))))))

    class DenseNorm(nn.Cell):
        def __init__(self):
            super().__init__()
            self.d = nn.Dense(16, 32)
            self.g = nn.GELU()
            self.g2 = nn.GELU(approximate=False)
            self.ln = nn.LayerNorm((32,))
            self.sm = nn.Softmax(-1)

        def construct(self, x):
            return self.sm(self.ln(self.g2(self.g(self.d(x)))))

    class Mlp(nn.Cell):
        def __init__(self):
            super().__init__()
            self.d1 = nn.Dense(12, 8)
            self.d2 = nn.Dense(8, 8)
            self.act = nn.SequentialCell([nn.Sigmoid(), nn.Tanh()])
            self.lrelu = nn.LeakyReLU(0.1)
            self.r6 = nn.ReLU6()
            self.silu = nn.SiLU()

        def construct(self, x):
            y = self.lrelu(self.d1(x)) * 2.0 - 0.5
            z = self.silu(self.r6(self.d2(self.act(y))))
            t = ops.transpose(ops.reshape(z, (2, 2, 4)), (0, 2, 1))
            m = ops.ReduceMean(keep_dims=True)(t, -1)
            return ops.log_softmax(ops.concat((z, ops.ReduceSum()(t, 1)), 1), -1), m

    return {"lenet": (LeNet, (1, 1, 28, 28)), "conv_bn": (ConvBn, (1, 3, 16, 16)),
            "dense_norm": (DenseNorm, (3, 16)), "mlp": (Mlp, (2, 12))}


OUR_NETS = ["lenet", "conv_bn", "dense_norm", "mlp"]


def _seed(net, seed):
    rng = np.random.default_rng(seed)
    for p in net.get_parameters():
        lo, hi = (0.5, 1.5) if "moving_variance" in p.name else (-0.5, 0.5)
        p.set_data(ms.Tensor(rng.uniform(lo, hi, p.shape).astype(np.float32)))
    return net


def _outputs(result):
    items = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(r.asnumpy()) for r in items]


def _export_ours(d):
    for k, (name, (cls, shape)) in enumerate(_our_nets().items()):
        net = _seed(cls(), 10 + k)
        net.set_train(False)
        x = np.random.default_rng(50 + k).normal(0, 1, shape).astype(np.float32)
        np.save(os.path.join(d, f"ours_{name}_in.npy"), x)
        path = ms.export(net, ms.Tensor(x), file_name=os.path.join(d, f"ours_{name}"), file_format="MINDIR")
        assert path.endswith(".mindir") and os.path.isfile(path)
        np.savez(os.path.join(d, f"ours_{name}_out.npz"), *_outputs(net(ms.Tensor(x))))


def _npz_list(path):
    z = np.load(path)
    return [z[f"arr_{i}"] for i in range(len(z.files))]


def _compare(actual, expected, what):
    assert len(actual) == len(expected), f"{what}: {len(actual)} outputs, the reference has {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        oc_harness.assert_close(a, e, RTOL, ATOL, what=f"{what} output {i}")


def _atc_msame(mindir, x, workdir, extra=()):
    stem = os.path.join(workdir, os.path.splitext(os.path.basename(mindir))[0])
    run_tool([ATC, f"--model={mindir}", "--framework=1", f"--output={stem}", *extra])
    outs, _ = oc_harness.msame_run(stem + ".om", [x], workdir)
    return outs


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    if not os.path.isfile(REF_PYTHON):
        pytest.skip(f"no MindSpore reference environment at {VENV} (scripts/install_deps.sh makes it)")
    if ms is None:
        pytest.skip(f"our mindspore package does not import: {_import_error}")
    d = str(tmp_path_factory.mktemp("mindir"))
    _export_ours(d)
    proc = subprocess.run([REF_PYTHON, os.path.join(HERE, "ms_mindir_cases.py"), d], capture_output=True, text=True,
                          env=_ref_env(), cwd=d, timeout=900)
    assert proc.returncode == 0, "the MindSpore reference failed:\n" + (proc.stdout + proc.stderr)[-6000:]
    return d


# ---- (a) MindSpore's MINDIR through atc ------------------------------------------------------

@pytest.mark.parametrize("name", REF_NETS)
def test_mindspore_export_compiles_and_matches_mindspore(work, name, tmp_path):
    x = np.load(os.path.join(work, f"ref_{name}_in.npy"))
    # Inputs are named as in the network's construct ("x"), as --input_shape names them.
    extra = [f"--input_shape=x:{','.join(str(d) for d in x.shape)}"]
    outs = _atc_msame(os.path.join(work, f"ref_{name}.mindir"), x, str(tmp_path), extra)
    _compare(outs, _npz_list(os.path.join(work, f"ref_{name}_out.npz")), f"MindSpore's {name} through atc")


# ---- (b) our MINDIR in MindSpore, (c) through atc ------------------------------------------------

@pytest.mark.parametrize("name", OUR_NETS)
def test_our_export_loads_in_mindspore_and_matches(work, name):
    err = os.path.join(work, f"ours_{name}_ref_error.txt")
    assert not os.path.exists(err), "MindSpore could not load or run our MINDIR:\n" + open(err).read()[-4000:]
    ref = _npz_list(os.path.join(work, f"ours_{name}_ref_out.npz"))
    _compare(ref, _npz_list(os.path.join(work, f"ours_{name}_out.npz")), f"MindSpore running our {name}")


@pytest.mark.parametrize("name", OUR_NETS)
def test_our_export_compiles_and_matches_our_network(work, name, tmp_path):
    x = np.load(os.path.join(work, f"ours_{name}_in.npy"))
    outs = _atc_msame(os.path.join(work, f"ours_{name}.mindir"), x, str(tmp_path))
    _compare(outs, _npz_list(os.path.join(work, f"ours_{name}_out.npz")), f"our {name} through atc")


# ---- our mindspore.load + nn.GraphCell --------------------------------------------------------

@pytest.mark.parametrize("name", REF_NETS)
def test_our_load_runs_mindspore_export_like_mindspore(work, name):
    cell = nn.GraphCell(ms.load(os.path.join(work, f"ref_{name}.mindir")))
    outs = _outputs(cell(ms.Tensor(np.load(os.path.join(work, f"ref_{name}_in.npy")))))
    _compare(outs, _npz_list(os.path.join(work, f"ref_{name}_out.npz")), f"our load of MindSpore's {name}")


@pytest.mark.parametrize("name", OUR_NETS)
def test_our_load_runs_our_export_like_our_network(work, name):
    cell = nn.GraphCell(ms.load(os.path.join(work, f"ours_{name}.mindir")))
    outs = _outputs(cell(ms.Tensor(np.load(os.path.join(work, f"ours_{name}_in.npy")))))
    _compare(outs, _npz_list(os.path.join(work, f"ours_{name}_out.npz")), f"our load of our {name}")


def test_load_refuses_missing_and_unsupported_files(work, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        ms.load(str(tmp_path / "none.mindir"))
    with pytest.raises(ValueError, match="only MINDIR"):
        ms.load(str(tmp_path / "net.air"))
    cell = nn.GraphCell(ms.load(os.path.join(work, "unsupported.mindir")))
    with pytest.raises(Exception, match="CumSum nodes"):
        cell(ms.Tensor(np.ones((2, 4), np.float32)))


# ---- (d) unsupported primitives -------------------------------------------------------------------

def test_unsupported_primitives_are_listed_by_name(work, tmp_path):
    proc = run_tool([ATC, f"--model={os.path.join(work, 'unsupported.mindir')}", "--framework=1",
                     f"--output={tmp_path / 'u'}"], check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode not in (0,) and proc.returncode > 0, text
    assert "2 unsupported MindSpore primitives" in text, text
    assert "CumSum nodes [" in text and "Atan nodes [" in text, text
    assert not (tmp_path / "u.om").exists()


# ---- (e) bad files, flags (no reference needed) ---------------------------------------------------

@pytest.fixture(scope="module")
def small_mindir(tmp_path_factory):
    if ms is None:
        pytest.skip(f"our mindspore package does not import: {_import_error}")
    d = tmp_path_factory.mktemp("mindir_bad")
    net = nn.SequentialCell([nn.Dense(4, 3), nn.ReLU()])
    net.set_train(False)
    path = ms.export(net, ms.Tensor(np.ones((2, 4), np.float32)), file_name=str(d / "small"), file_format="MINDIR")
    with open(path, "rb") as f:
        return d, f.read()


def _atc_on_bytes(d, name, data):
    p = d / name
    p.write_bytes(data)
    proc = run_tool([ATC, f"--model={p}", "--framework=1", f"--output={d / (name + '_out')}"], check=False)
    return proc, proc.stdout + proc.stderr


def test_intact_small_export_compiles(small_mindir):
    d, data = small_mindir
    proc, text = _atc_on_bytes(d, "intact.mindir", data)
    assert proc.returncode == 0, text


# Cuts inside a field (a cut exactly between two top-level fields leaves a valid
# protobuf: a format property, which MindSpore's own reader shares).
@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, -1])
def test_truncated_file_is_refused(small_mindir, cut):
    d, data = small_mindir
    size = len(data) - 1 if cut == -1 else max(1, int(len(data) * cut))
    proc, text = _atc_on_bytes(d, f"cut{cut}.mindir", data[:size])
    assert proc.returncode > 0, text  # > 0: an error exit, not a signal
    assert "E11" in text and ("corrupt or truncated" in text or "not a MINDIR model" in text or
                              "bytes, but" in text or "is not" in text), text


def test_corrupted_bytes_never_crash(small_mindir):
    d, data = small_mindir
    rng = np.random.default_rng(7)
    for k in range(150):
        b = bytearray(data)
        for pos in rng.integers(0, len(b), size=int(rng.integers(1, 8))):
            b[pos] = int(rng.integers(0, 256))
        proc, text = _atc_on_bytes(d, f"bad{k}.mindir", bytes(b))
        assert proc.returncode >= 0, f"atc died of signal {-proc.returncode} on corrupted file {k}:\n{text}"
        if proc.returncode:
            assert "E1" in text and "ATC run failed" in text, text


def test_non_mindir_files_are_refused(tmp_path):
    text_file = tmp_path / "notes.mindir"
    text_file.write_text("this is not a model\n" * 10)
    proc = run_tool([ATC, f"--model={text_file}", "--framework=1", f"--output={tmp_path / 'a'}"], check=False)
    assert proc.returncode > 0 and "not a valid MINDIR model" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    onnx_model = os.path.join(oc_harness.SOURCE_DIR, "models", "digits", "digits_mlp.onnx")
    proc = run_tool([ATC, f"--model={onnx_model}", "--framework=1", f"--output={tmp_path / 'b'}"], check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode > 0 and "not a MINDIR model" in text and "--framework=5" in text, text
    empty = tmp_path / "empty.mindir"
    empty.write_bytes(b"")
    proc = run_tool([ATC, f"--model={empty}", "--framework=1", f"--output={tmp_path / 'c'}"], check=False)
    assert proc.returncode > 0 and "empty" in proc.stdout + proc.stderr


def test_air_and_other_frameworks_are_refused(tmp_path):
    air = tmp_path / "net.air"
    air.write_bytes(b"\x00" * 16)
    proc = run_tool([ATC, f"--model={air}", "--framework=1", f"--output={tmp_path / 'a'}"], check=False)
    assert proc.returncode > 0 and "--framework=1 with an .air model is not supported yet; export MINDIR" in (
        proc.stdout + proc.stderr)
    for fw, name in ((0, "Caffe"), (3, "TensorFlow")):
        proc = run_tool([ATC, f"--model={air}", f"--framework={fw}", f"--output={tmp_path / 'b'}"], check=False)
        assert proc.returncode > 0 and f"({name}) is not supported" in proc.stdout + proc.stderr

"""The mindspore package end to end: a digits CNN trained with Model.train to
the expected accuracy, checkpoints, export -> atc -> msame, errors that name
the Cell and the line, gradients of rules the engine lacks refused, and the
first dataset API. (Layer-by-layer comparisons with torch are in
test_mindspore_torch.py; with the real MindSpore in test_mindspore_reference.py.)"""
import os

import numpy as np
import pytest
from sklearn.datasets import load_digits

import mindspore as ms
import mindspore.dataset as ds
from mindspore import Tensor, nn, ops
from mindspore.train import LossMonitor, Model

import oc_harness


@pytest.fixture(autouse=True)
def pynative_after():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


class LeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="valid", has_bias=True)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(32 * 2 * 2, 64)
        self.fc2 = nn.Dense(64, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.relu(self.conv2(x))
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


def digits():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    idx = np.random.default_rng(0).permutation(len(x))
    return x[idx], y[idx].astype(np.int32)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    ms.set_seed(3)
    ms.set_context(mode=ms.GRAPH_MODE)
    x, y = digits()
    net = LeNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    model = Model(net, loss, opt, metrics={"accuracy", "loss"})
    train = ds.NumpySlicesDataset((x[:1500], y[:1500]), column_names=["image", "label"]).batch(50)
    test = ds.NumpySlicesDataset((x[1500:], y[1500:]), column_names=["image", "label"], shuffle=False).batch(50)
    model.train(10, train)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    return net, model, test, x[1500:], y[1500:], opt


def test_digits_cnn_reaches_97_percent(trained):
    net, model, test, x, y, _ = trained
    metrics = model.eval(test)
    assert metrics["accuracy"] >= 0.97, metrics
    # The accuracy is the network's own: predictions through Model.predict agree.
    pred = model.predict(Tensor(x)).asnumpy().argmax(1)
    assert abs((pred == y).mean() - metrics["accuracy"]) < 1e-9
    assert 0 < metrics["loss"] < 0.3


def test_loss_monitor_prints_mindspore_format(capsys):
    ms.set_seed(0)
    x, y = digits()
    net = nn.SequentialCell([nn.Flatten(), nn.Dense(64, 10)])
    model = Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))
    model.train(2, ds.NumpySlicesDataset((x[:200], y[:200]), shuffle=False).batch(100), callbacks=[LossMonitor(1)])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch:")]
    assert [ln.split(",")[0] for ln in lines] == ["epoch: 1 step: 1", "epoch: 1 step: 2", "epoch: 2 step: 1",
                                                   "epoch: 2 step: 2"]
    losses = [float(ln.split("loss is ")[1]) for ln in lines]
    assert losses[-1] < losses[0]


def test_checkpoint_round_trip_gives_the_same_predictions(trained, tmp_path):
    net, _, _, x, _, opt = trained
    path = str(tmp_path / "lenet.ckpt")
    ms.save_checkpoint(net, path)
    fresh = LeNet()
    not_loaded, unused = ms.load_param_into_net(fresh, ms.load_checkpoint(path))
    assert not_loaded == [] and unused == []
    fresh.set_train(False)
    net.set_train(False)
    np.testing.assert_array_equal(fresh(Tensor(x[:20])).asnumpy(), net(Tensor(x[:20])).asnumpy())
    # The optimizer's state is saved with MindSpore's names.
    opt_path = str(tmp_path / "opt.ckpt")
    ms.save_checkpoint(opt, opt_path)
    names = set(ms.load_checkpoint(opt_path))
    assert {"moments.conv1.weight", "moments.fc2.bias", "global_step", "learning_rate"} <= names
    steps = ms.load_checkpoint(opt_path)["global_step"].asnumpy()
    assert int(steps) == 300  # 10 epochs of 30 batches


def test_corrupt_checkpoint_is_refused(tmp_path):
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"\x0a\xff\xff\xff\x0f garbage")
    with pytest.raises(ValueError, match="not a valid checkpoint"):
        ms.load_checkpoint(str(bad))


def test_export_onnx_compiles_with_atc_and_msame_agrees(trained, tmp_path):
    net, _, _, x, _, _ = trained
    net.set_train(False)
    batch = x[:16]
    path = ms.export(net, Tensor(batch), file_name=str(tmp_path / "lenet"), file_format="ONNX")
    om, _ = oc_harness.atc_compile(path, str(tmp_path / "lenet"))
    outs, _ = oc_harness.msame_run(om, [batch], str(tmp_path))
    np.testing.assert_allclose(outs[0], net(Tensor(batch)).asnumpy(), rtol=1e-4, atol=1e-4)


def test_export_mindir_by_default_compiles_with_atc_and_msame_agrees(trained, tmp_path):
    # test_mindir.py checks these files against the real MindSpore.
    net, _, _, x, _, _ = trained
    net.set_train(False)
    batch = x[:16]
    path = ms.export(net, Tensor(batch), file_name=str(tmp_path / "lenet"))
    assert path.endswith(".mindir")
    oc_harness.run_tool([oc_harness.ATC, f"--model={path}", "--framework=1", f"--output={tmp_path / 'lenet'}"])
    outs, _ = oc_harness.msame_run(str(tmp_path / "lenet.om"), [batch], str(tmp_path))
    np.testing.assert_allclose(outs[0], net(Tensor(batch)).asnumpy(), rtol=1e-4, atol=1e-4)


def test_unknown_export_format_is_refused_clearly(tmp_path):
    with pytest.raises(NotImplementedError, match="'AIR' is not supported; use 'MINDIR' or 'ONNX'"):
        ms.export(nn.Dense(2, 2), Tensor(np.ones((1, 2), np.float32)), file_name=str(tmp_path / "m"),
                  file_format="AIR")


class TwoDense(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.fc2 = nn.Dense(6, 2)

    def construct(self, x):
        h = self.fc1(x)
        return self.fc2(h)  # the line the error must name


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_shape_mismatch_names_the_cell_the_shapes_and_the_line(mode):
    ms.set_context(mode=mode)
    with pytest.raises(ValueError) as e:
        TwoDense()(Tensor(np.ones((3, 4), np.float32)))
    msg = str(e.value)
    assert "Dense(6, 2)" in msg and "(3, 8)" in msg and "'fc2'" in msg, msg
    assert f"{os.path.basename(__file__)}:" in msg and "the line the error must name" in open(__file__).read()
    line = int(msg.rsplit(":", 1)[1].rstrip(")"))
    assert "self.fc2(h)" in open(__file__).read().splitlines()[line - 1]


def test_engine_shape_errors_name_the_op_and_line():
    a, b = Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((4, 5), np.float32))
    with pytest.raises(ValueError, match=r"MatMul .*ms_api_cases.py:\d+: .*\[2,3\].*\[4,5\]|MatMul .*\[4,5\]"):
        ops.matmul(a, b)


def test_op_without_gradient_rule_is_named():
    from mindspore import _engine
    w = ms.Parameter(Tensor(np.ones((3,), np.float32)), name="w")

    def f(x):
        return ops.sum(_engine.emit_op("Softsign", [x * w])[0])

    with pytest.raises(NotImplementedError, match="no gradient rule for Softsign .*with respect to .w. goes through it"):
        ms.grad(f, None, [w])(Tensor(np.ones((3,), np.float32)))


def test_value_and_grad_matches_finite_differences():
    rng = np.random.default_rng(1)
    w = ms.Parameter(Tensor(rng.standard_normal((4, 3)).astype(np.float64)), name="w")
    x = rng.standard_normal((5, 4))

    def f(inp):
        return ops.sum(ops.tanh(ops.matmul(inp, w)) ** 2)

    value, (gx, (gw,)) = ms.value_and_grad(f, 0, [w])(Tensor(x))  # MindSpore: (input grads, weight grads)
    w0 = w.asnumpy()

    def loss(xv, wv):
        return float((np.tanh(xv @ wv) ** 2).sum())

    assert abs(float(value.asnumpy()) - loss(x, w0)) < 1e-12
    eps = 1e-6
    for (i, j) in [(0, 0), (2, 1), (3, 2)]:
        d = np.zeros_like(w0)
        d[i, j] = eps
        fd = (loss(x, w0 + d) - loss(x, w0 - d)) / (2 * eps)
        assert abs(gw.asnumpy()[i, j] - fd) < 1e-6
    for (i, j) in [(0, 0), (4, 3)]:
        d = np.zeros_like(x)
        d[i, j] = eps
        fd = (loss(x + d, w0) - loss(x - d, w0)) / (2 * eps)
        assert abs(gx.asnumpy()[i, j] - fd) < 1e-6


def test_jit_step_and_train_one_step_cell_agree():
    def run(kind):
        ms.set_seed(5)
        net = nn.SequentialCell([nn.Dense(6, 16), nn.ReLU(), nn.Dense(16, 3)])
        loss_fn = nn.CrossEntropyLoss()
        opt = nn.Adam(net.trainable_params(), 1e-2, weight_decay=1e-3)
        rng = np.random.default_rng(2)
        x = rng.standard_normal((8, 6)).astype(np.float32)
        y = rng.integers(0, 3, 8).astype(np.int32)
        if kind == "cell":
            step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
        else:
            grad_fn = ms.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)

            def pynative(a, b):
                loss, grads = grad_fn(a, b)
                opt(grads)
                return loss

            step = ms.jit(pynative) if kind == "jit" else pynative
        return [float(step(Tensor(x), Tensor(y)).asnumpy()) for _ in range(5)]

    cell, jit, eager = run("cell"), run("jit"), run("pynative")
    np.testing.assert_allclose(cell, jit, rtol=1e-6)
    np.testing.assert_allclose(cell, eager, rtol=1e-6)
    assert cell[-1] < cell[0]


def test_dataset_batch_shuffle_repeat():
    data = np.arange(10)
    d = ds.NumpySlicesDataset({"x": data}, shuffle=False).batch(4)
    assert d.get_dataset_size() == 3
    assert [b[0].asnumpy().tolist() for b in d.create_tuple_iterator()] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert ds.NumpySlicesDataset({"x": data}, shuffle=False).batch(4, drop_remainder=True).get_dataset_size() == 2
    ms.set_seed(7)
    a = [int(r[0]) for r in ds.NumpySlicesDataset({"x": data}).create_tuple_iterator(output_numpy=True)]
    ms.set_seed(7)
    b = [int(r[0]) for r in ds.NumpySlicesDataset({"x": data}).create_tuple_iterator(output_numpy=True)]
    assert a == b and sorted(a) == list(range(10)) and a != list(range(10))
    m = ds.NumpySlicesDataset({"x": data}, shuffle=False).map(lambda v: v * 2, input_columns="x").repeat(2)
    assert [int(r["x"]) for r in m.create_dict_iterator(output_numpy=True)] == [2 * v for v in data] * 2


def test_text_transformer_sample_learns_the_docstrings(tmp_path):
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    proc = subprocess.run([sys.executable, os.path.join(root, "samples", "train", "text_transformer.py"), "--steps",
                           "300", "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    held = float(proc.stdout.split("held-out loss ")[1].split()[0])
    first = float(proc.stdout.split("step 1: loss ")[1].split()[0])
    # A byte unigram model of this text scores about 3.3 nats/byte: below it the
    # network uses context; uniform is ln 256 = 5.55.
    assert first > 5.0 and held < 3.0, proc.stdout
    assert (tmp_path / "tiny_lm.ckpt").exists() and "sample: Return a new" in proc.stdout


def test_momentum_zero_is_plain_sgd():
    w = ms.Parameter(Tensor(np.array([1.0, -2.0], np.float32)), name="w")
    opt = nn.Momentum([w], learning_rate=0.5, momentum=0.0)
    opt((Tensor(np.array([0.2, 0.4], np.float32)),))
    np.testing.assert_allclose(w.asnumpy(), [0.9, -2.2], rtol=1e-6)

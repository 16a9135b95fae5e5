"""The mindspore package against PyTorch (the independent reference): each
layer's gradients with respect to its input and every parameter, and
training curves over 100 steps from identical weights and batches."""
import numpy as np
import pytest
import torch

import mindspore as ms
from mindspore import Tensor, nn

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def pynative_after():
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def copy_into_torch(cell, module, names):
    """names: torch parameter name -> ours."""
    ours = dict(cell.parameters_and_names())
    with torch.no_grad():
        for tname, oname in names.items():
            module.state_dict()[tname].copy_(torch.from_numpy(ours[oname].asnumpy()))


def grads_both(cell, module, names, x, dtype=np.float32, train=True, call=None):
    """Gradients of sum(y * r) for our cell and the torch module: (ours, torch), each
    a dict with 'input' and the parameter names (ours)."""
    cell.set_train(train)
    module.train(train)
    copy_into_torch(cell, module, names)
    call = call or (lambda f, a: f(a))
    y_ours = call(cell, Tensor(x))
    r = np.random.default_rng(7).standard_normal(y_ours.shape).astype(dtype)
    params = [p for n, p in cell.parameters_and_names() if p.requires_grad and n in names.values()]

    def loss(a):
        return ms.ops.sum(call(cell, a) * Tensor(r))

    if params:
        gx, gw = ms.grad(loss, 0, params)(Tensor(x))
    else:
        gx, gw = ms.grad(loss, 0)(Tensor(x)), ()
    ours = {"input": gx.asnumpy()}
    ours.update({p.name: g.asnumpy() for p, g in zip(params, gw)})
    xt = torch.tensor(x, requires_grad=True)
    (call(module, xt) * torch.from_numpy(r)).sum().backward()
    ref = {"input": xt.grad.numpy()}
    tparams = dict(module.named_parameters())
    for tname, oname in names.items():
        if oname in ours:
            ref[oname] = tparams[tname].grad.numpy()
    return ours, ref


def assert_close(ours, ref, rtol=1e-4, atol=1e-5):
    assert set(ours) == set(ref), (sorted(ours), sorted(ref))
    for k in ref:
        scale = max(1.0, float(np.abs(ref[k]).max()))
        np.testing.assert_allclose(ours[k], ref[k], rtol=rtol, atol=atol * scale, err_msg=k)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


DENSE = {"weight": "weight", "bias": "bias"}


@pytest.mark.parametrize("kw, tkw", [
    ({"pad_mode": "same"}, {"padding": "same"}),
    ({"pad_mode": "valid"}, {"padding": 0}),
    ({"pad_mode": "pad", "padding": 1, "stride": 2}, {"padding": 1, "stride": 2}),
    ({"pad_mode": "pad", "padding": 2, "dilation": 2}, {"padding": 2, "dilation": 2}),
    ({"pad_mode": "pad", "padding": 1, "group": 2}, {"padding": 1, "groups": 2}),
])
def test_conv2d_gradients(kw, tkw):
    ms.set_seed(1)
    cell = nn.Conv2d(4, 6, 3, has_bias=True, **kw)
    mod = torch.nn.Conv2d(4, 6, 3, bias=True, **tkw)
    assert_close(*grads_both(cell, mod, DENSE, rand(2, 4, 9, 9)))


def test_conv2d_transpose_gradients():
    cell = nn.Conv2dTranspose(4, 3, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
    mod = torch.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, bias=True)
    assert_close(*grads_both(cell, mod, DENSE, rand(2, 4, 5, 5)))


def test_dense_gradients():
    assert_close(*grads_both(nn.Dense(5, 7), torch.nn.Linear(5, 7), DENSE, rand(3, 5)))


def test_batchnorm2d_training_gradients_and_moving_statistics():
    cell = nn.BatchNorm2d(3, momentum=0.9)
    mod = torch.nn.BatchNorm2d(3, momentum=0.1)  # torch's momentum weighs the batch
    names = {"weight": "gamma", "bias": "beta"}
    x = rand(4, 3, 5, 5) * 2 + 1
    assert_close(*grads_both(cell, mod, names, x))
    # One more training step of each from the same running statistics: equal.
    with torch.no_grad():
        mod.running_mean.zero_()
        mod.running_var.fill_(1)
    cell.moving_mean.set_data(np.zeros(3, np.float32))
    cell.moving_variance.set_data(np.ones(3, np.float32))
    cell(Tensor(x))
    mod(torch.from_numpy(x))
    np.testing.assert_allclose(cell.moving_mean.asnumpy(), mod.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cell.moving_variance.asnumpy(), mod.running_var.numpy(), rtol=1e-5, atol=1e-6)
    # Inference uses them.
    cell.set_train(False)
    mod.eval()
    np.testing.assert_allclose(cell(Tensor(x)).asnumpy(), mod(torch.from_numpy(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-5)


def test_batchnorm1d_and_layernorm_gradients():
    assert_close(*grads_both(nn.BatchNorm1d(6), torch.nn.BatchNorm1d(6), {"weight": "gamma", "bias": "beta"},
                             rand(8, 6)))
    assert_close(*grads_both(nn.LayerNorm((6,), epsilon=1e-5), torch.nn.LayerNorm(6),
                             {"weight": "gamma", "bias": "beta"}, rand(3, 4, 6)))


@pytest.mark.parametrize("ours, ref", [
    (lambda: nn.MaxPool2d(2, 2), lambda: torch.nn.MaxPool2d(2, 2)),
    (lambda: nn.MaxPool2d(3, 2, pad_mode="pad", padding=1), lambda: torch.nn.MaxPool2d(3, 2, padding=1)),
    (lambda: nn.AvgPool2d(2, 2), lambda: torch.nn.AvgPool2d(2, 2)),
    (lambda: nn.AdaptiveAvgPool2d(1), lambda: torch.nn.AdaptiveAvgPool2d(1)),
    (lambda: nn.ReLU(), lambda: torch.nn.ReLU()),
    (lambda: nn.GELU(approximate=False), lambda: torch.nn.GELU()),
    (lambda: nn.GELU(approximate=True), lambda: torch.nn.GELU(approximate="tanh")),
    (lambda: nn.SiLU(), lambda: torch.nn.SiLU()),
    (lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid()),
    (lambda: nn.Tanh(), lambda: torch.nn.Tanh()),
    (lambda: nn.LeakyReLU(0.1), lambda: torch.nn.LeakyReLU(0.1)),
    (lambda: nn.Softmax(-1), lambda: torch.nn.Softmax(-1)),
    (lambda: nn.Flatten(), lambda: torch.nn.Flatten()),
])
def test_parameterless_layer_gradients(ours, ref):
    x = np.random.default_rng(3).permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6).astype(np.float32) / 20 - 5
    assert_close(*grads_both(ours(), ref(), {}, x))


def test_embedding_gradients():
    cell = nn.Embedding(10, 4)
    mod = torch.nn.Embedding(10, 4)
    copy_into_torch(cell, mod, {"weight": "embedding_table"})
    ids = np.array([[1, 3, 3], [9, 0, 1]], np.int32)
    r = rand(2, 3, 4, seed=5)
    grads = ms.grad(lambda i: ms.ops.sum(cell(i) * Tensor(r)), None, [cell.embedding_table])(Tensor(ids))
    (mod(torch.from_numpy(ids).long()) * torch.from_numpy(r)).sum().backward()
    np.testing.assert_allclose(grads[0].asnumpy(), mod.weight.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["ce_weight_ignore", "sparse_sce", "dense_sce", "mse", "l1", "bce_pos", "nll"])
def test_loss_gradients(name):
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((6, 5)).astype(np.float32)
    labels = np.array([0, 4, 2, 2, 1, 3], np.int32)
    onehot = np.eye(5, dtype=np.float32)[labels]
    target = rng.standard_normal((6, 5)).astype(np.float32)
    weight = np.array([1.0, 2.0, 0.5, 1.5, 1.0], np.float32)
    cases = {
        "ce_weight_ignore": (nn.CrossEntropyLoss(weight=Tensor(weight), ignore_index=2), labels,
                             lambda x: torch.nn.functional.cross_entropy(x, torch.from_numpy(labels).long(),
                                                                         weight=torch.from_numpy(weight),
                                                                         ignore_index=2)),
        "sparse_sce": (nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), labels,
                       lambda x: torch.nn.functional.cross_entropy(x, torch.from_numpy(labels).long())),
        "dense_sce": (nn.SoftmaxCrossEntropyWithLogits(reduction="sum"), onehot,
                      lambda x: torch.nn.functional.cross_entropy(x, torch.from_numpy(onehot), reduction="sum")),
        "mse": (nn.MSELoss(), target, lambda x: torch.nn.functional.mse_loss(x, torch.from_numpy(target))),
        "l1": (nn.L1Loss(reduction="sum"), target,
               lambda x: torch.nn.functional.l1_loss(x, torch.from_numpy(target), reduction="sum")),
        "bce_pos": (nn.BCEWithLogitsLoss(pos_weight=Tensor(weight)), (target > 0).astype(np.float32),
                    lambda x: torch.nn.functional.binary_cross_entropy_with_logits(
                        x, torch.from_numpy((target > 0).astype(np.float32)), pos_weight=torch.from_numpy(weight))),
        "nll": (nn.NLLLoss(), labels,
                lambda x: torch.nn.functional.nll_loss(torch.log_softmax(x, 1), torch.from_numpy(labels).long())),
    }
    loss_fn, lab, ref = cases[name]
    if name == "nll":
        value, g = ms.value_and_grad(lambda x: loss_fn(ms.ops.log_softmax(x, 1), Tensor(lab)), 0)(Tensor(logits))
    else:
        value, g = ms.value_and_grad(lambda x: loss_fn(x, Tensor(lab)), 0)(Tensor(logits))
    xt = torch.tensor(logits, requires_grad=True)
    lt = ref(xt)
    lt.backward()
    np.testing.assert_allclose(float(value.asnumpy()), lt.item(), rtol=1e-5)
    np.testing.assert_allclose(g.asnumpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)


ATTN = {"in_proj_weight": "in_proj_weight", "in_proj_bias": "in_proj_bias", "out_proj.weight": "out_proj.weight",
        "out_proj.bias": "out_proj.bias"}
ENCODER = {"self_attn." + k: "self_attn." + v for k, v in ATTN.items()}
ENCODER.update({"linear1.weight": "dense1.weight", "linear1.bias": "dense1.bias", "linear2.weight": "dense2.weight",
                "linear2.bias": "dense2.bias", "norm1.weight": "norm1.gamma", "norm1.bias": "norm1.beta",
                "norm2.weight": "norm2.gamma", "norm2.bias": "norm2.beta"})


def test_multihead_attention_gradients_with_a_causal_mask():
    mask = np.triu(np.ones((5, 5), bool), 1)
    cell = nn.MultiheadAttention(8, 2, batch_first=True)
    mod = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    def both(f, a):
        if isinstance(f, torch.nn.Module):
            return f(a, a, a, attn_mask=torch.from_numpy(mask))[0]
        return f(a, a, a, attn_mask=Tensor(mask))[0]

    assert_close(*grads_both(cell, mod, ATTN, rand(2, 5, 8), call=both))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_gradients(norm_first):
    cell = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first,
                                      activation="gelu")
    mod = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=norm_first,
                                           activation="gelu")
    assert_close(*grads_both(cell, mod, ENCODER, rand(2, 5, 8)))


# ---- training curves -----------------------------------------------------------------

def curves(make_ours, make_torch, names, make_opts, xs, ys, step_kind, mode=ms.PYNATIVE_MODE):
    ms.set_context(mode=mode)
    ms.set_seed(0)
    net = make_ours()
    tnet = make_torch()
    copy_into_torch(net, tnet, names)
    opt, topt = make_opts(net, tnet)
    loss_fn = nn.CrossEntropyLoss()
    net.set_train(True)
    tnet.train()
    if step_kind == "cell":
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    else:
        grad_fn = ms.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)

        @ms.jit
        def step(a, b):
            loss, grads = grad_fn(a, b)
            opt(grads)
            return loss
    ours, ref = [], []
    for x, y in zip(xs, ys):
        ours.append(float(step(Tensor(x), Tensor(y)).asnumpy()))
        topt.zero_grad()
        loss = torch.nn.functional.cross_entropy(tnet(torch.from_numpy(x)), torch.from_numpy(y).long())
        loss.backward()
        topt.step()
        ref.append(loss.item())
    return np.array(ours), np.array(ref)


def batches(n, shape, classes, seed=0):
    """Labels that follow from the inputs (a fixed random projection), so there is something to learn."""
    rng = np.random.default_rng(seed)
    proj = rng.standard_normal((int(np.prod(shape)), classes))
    xs = [rng.standard_normal((16,) + shape).astype(np.float32) for _ in range(n)]
    ys = [(x.reshape(16, -1) @ proj).argmax(1).astype(np.int32) for x in xs]
    return xs, ys


def test_mlp_sgd_nesterov_curve_equals_torch():
    names = {"0.weight": "0.weight", "0.bias": "0.bias", "2.weight": "2.weight", "2.bias": "2.bias"}
    xs, ys = batches(100, (10,), 4)
    ours, ref = curves(lambda: nn.SequentialCell([nn.Dense(10, 32), nn.Tanh(), nn.Dense(32, 4)]),
                       lambda: torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4)),
                       names,
                       lambda n, t: (nn.SGD(n.trainable_params(), 0.05, momentum=0.9, nesterov=True,
                                            weight_decay=1e-3),
                                     torch.optim.SGD(t.parameters(), 0.05, momentum=0.9, nesterov=True,
                                                     weight_decay=1e-3)),
                       xs, ys, "cell")
    np.testing.assert_allclose(ours, ref, rtol=1e-4)
    assert ours[-10:].mean() < ours[:10].mean()


class SmallCnn(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4, 3)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))


def test_cnn_with_batchnorm_momentum_curve_equals_torch():
    names = {"0.weight": "conv.weight", "0.bias": "conv.bias", "1.weight": "bn.gamma", "1.bias": "bn.beta",
             "5.weight": "fc.weight", "5.bias": "fc.bias"}
    xs, ys = batches(100, (1, 8, 8), 3, seed=1)
    ours, ref = curves(SmallCnn,
                       lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                                                   torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                                   torch.nn.Linear(64, 3)),
                       names,
                       lambda n, t: (nn.Momentum(n.trainable_params(), 0.02, 0.9),
                                     torch.optim.SGD(t.parameters(), 0.02, momentum=0.9)),
                       xs, ys, "cell", mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(ours, ref, rtol=1e-4)


class EncoderHead(nn.Cell):
    def __init__(self):
        super().__init__()
        self.enc = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        self.head = nn.Dense(16, 3)

    def construct(self, x):
        return self.head(ms.ops.mean(self.enc(x), 1))


class TorchEncoderHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.enc(x).mean(1))


def test_transformer_block_adamw_curve_equals_torch():
    names = {"enc." + k: "enc." + v for k, v in ENCODER.items()}
    names.update({"head.weight": "head.weight", "head.bias": "head.bias"})
    xs, ys = batches(100, (6, 16), 3, seed=2)
    ours, ref = curves(EncoderHead, TorchEncoderHead, names,
                       lambda n, t: (nn.AdamW(n.trainable_params(), lr=3e-3, weight_decay=0.01),
                                     torch.optim.AdamW(t.parameters(), lr=3e-3, weight_decay=0.01)),
                       xs, ys, "jit")
    np.testing.assert_allclose(ours, ref, rtol=1e-4)


def test_graph_and_pynative_agree_on_a_forward_and_a_step():
    x = rand(4, 1, 8, 8)
    y = np.array([0, 1, 2, 1], np.int32)
    outs = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        ms.set_seed(3)
        net = SmallCnn()
        net.set_train(False)
        fwd = net(Tensor(x)).asnumpy()
        net.set_train(True)
        grad_fn = ms.value_and_grad(lambda a, b: nn.CrossEntropyLoss()(net(a), b), None, net.trainable_params())
        loss, grads = grad_fn(Tensor(x), Tensor(y))
        outs[mode] = (fwd, float(loss.asnumpy()), [g.asnumpy() for g in grads], net.bn.moving_mean.asnumpy())
    a, b = outs[ms.PYNATIVE_MODE], outs[ms.GRAPH_MODE]
    np.testing.assert_allclose(a[0], b[0], rtol=1e-5, atol=1e-6)
    assert abs(a[1] - b[1]) < 1e-6
    for ga, gb in zip(a[2], b[2]):
        np.testing.assert_allclose(ga, gb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a[3], b[3], rtol=1e-6)

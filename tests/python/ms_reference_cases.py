"""The work shared by tests/python/test_mindspore_reference.py and the real
MindSpore: every function here uses only numpy and MindSpore's documented API,
and runs unchanged under either `mindspore` package (ours, or the PyPI wheel in
the reference virtual environment). Each returns plain data (names, numpy
arrays) so that the two sides can be compared.

Run as a script (`python ms_reference_cases.py INPUTS.npz OUTDIR [DIGITS.npz]`)
by the reference interpreter: it does all of its side's work in one process and
writes OUTDIR/ref.npz, OUTDIR/ref.json and its checkpoints (it reads ours,
OUTDIR/ours_*.ckpt); given DIGITS.npz it then runs ms_digits_lenet.py in the same
process, which writes OUTDIR/ref_digits.json."""
import json
import sys

import numpy as np

STEPS = 5

# (case name, optimizer class, keyword arguments, learning rate): the learning
# rate is a float, a list (a dynamic learning rate) or ("cosine", min, max, steps).
OPTIMIZER_CASES = [
    ("sgd_plain", "SGD", {}, 0.1),
    ("sgd_momentum", "SGD", {"momentum": 0.9}, 0.1),
    ("sgd_dampening", "SGD", {"momentum": 0.9, "dampening": 0.3}, 0.1),
    ("sgd_nesterov", "SGD", {"momentum": 0.9, "nesterov": True}, 0.1),
    ("sgd_weight_decay", "SGD", {"momentum": 0.8, "weight_decay": 0.05}, 0.1),
    ("momentum", "Momentum", {"momentum": 0.9}, 0.1),
    ("momentum_nesterov", "Momentum", {"momentum": 0.9, "use_nesterov": True}, 0.1),
    ("momentum_weight_decay", "Momentum", {"momentum": 0.9, "weight_decay": 0.05}, 0.1),
    ("momentum_lr_list", "Momentum", {"momentum": 0.9}, [0.1, 0.05, 0.2, 0.01, 0.3]),
    ("momentum_cosine", "Momentum", {"momentum": 0.9}, ("cosine", 0.01, 0.1, 4)),
    ("adam", "Adam", {}, 0.01),
    ("adam_betas_eps", "Adam", {"beta1": 0.8, "beta2": 0.95, "eps": 1e-3}, 0.01),
    ("adam_weight_decay", "Adam", {"weight_decay": 0.1}, 0.01),
    ("adam_lr_list", "Adam", {}, [0.01, 0.02, 0.005, 0.03, 0.01]),
    ("adam_cosine", "Adam", {}, ("cosine", 0.001, 0.01, 3)),
    ("adamw", "AdamWeightDecay", {}, 0.01),
    ("adamw_weight_decay", "AdamWeightDecay", {"weight_decay": 0.1, "eps": 1e-4}, 0.01),
    ("adamw_cosine", "AdamWeightDecay", {"weight_decay": 0.1}, ("cosine", 0.001, 0.01, 3)),
    # parameter groups (names, weight_decay or None for the optimizer's): a group's decay reaches its gammas
    ("momentum_groups", "Momentum", {"momentum": 0.9, "weight_decay": 0.02,
                                     "groups": [(["w", "gamma"], 0.1), (["b", "beta"], None)]}, 0.1),
    ("adamw_groups", "AdamWeightDecay", {"weight_decay": 0.02,
                                         "groups": [(["b", "gamma"], 0.1), (["w", "beta"], None)]}, 0.01),
]

# Parameters of the optimizer cases: a "gamma" and a "beta" so that a rule that
# spares normalisation parameters from weight decay shows.
OPT_PARAMS = [("w", (3, 4)), ("b", (4,)), ("gamma", (4,)), ("beta", (4,))]


def make_inputs(seed=0):
    """Every array both sides start from."""
    rng = np.random.default_rng(seed)
    d = {}
    for name, shape in OPT_PARAMS:
        d["p." + name] = rng.standard_normal(shape).astype(np.float32)
        for s in range(STEPS):
            d[f"g{s}.{name}"] = rng.standard_normal(shape).astype(np.float32)
    d["bn.x"] = (rng.standard_normal((4, 3, 5, 5)) * 2 + 1).astype(np.float32)
    d["ln.x"] = rng.standard_normal((2, 3, 6)).astype(np.float32)
    d["conv.x"] = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    d["conv.w"] = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    # checkpoint entries of several types
    d["ck.f32"] = rng.standard_normal((2, 3)).astype(np.float32)
    d["ck.f16"] = rng.standard_normal((5,)).astype(np.float16)
    d["ck.f64"] = rng.standard_normal((2, 2, 2)).astype(np.float64)
    d["ck.i32"] = rng.integers(-100, 100, (4,)).astype(np.int32)
    d["ck.i64"] = rng.integers(-2 ** 40, 2 ** 40, (3, 1)).astype(np.int64)
    d["ck.u8"] = rng.integers(0, 255, (6,)).astype(np.uint8)
    d["ck.bool"] = rng.integers(0, 2, (2, 2)).astype(np.bool_)
    d["ck.scalar"] = np.asarray(rng.standard_normal(), np.float32).reshape(())
    return d


# ---- networks -------------------------------------------------------------------------

def networks(nn):
    """Networks whose parameter names are compared, by name."""
    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, has_bias=True)
            self.bn = nn.BatchNorm2d(4)
            self.relu = nn.ReLU()

        def construct(self, x):
            return self.relu(self.bn(self.conv(x)))

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.body = nn.SequentialCell([nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.ReLU()])
            self.flatten = nn.Flatten()
            self.head = nn.SequentialCell(nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 2, has_bias=False))
            self.norm = nn.LayerNorm((2,))

        def construct(self, x):
            return self.norm(self.head(self.flatten(self.body(self.block(x)))))

    class Emb(nn.Cell):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(10, 4)
            self.ln = nn.LayerNorm((4,))
            self.proj = nn.Dense(4, 3)

        def construct(self, ids):
            return self.proj(self.ln(self.embedding(ids)))

    return {
        "dense": nn.Dense(3, 2),
        "dense_nobias": nn.Dense(3, 2, has_bias=False),
        "conv2d": nn.Conv2d(3, 4, 3),
        "conv2d_bias": nn.Conv2d(3, 4, 3, has_bias=True),
        "batchnorm2d": nn.BatchNorm2d(3),
        "layernorm": nn.LayerNorm((6,)),
        "embedding": nn.Embedding(7, 3),
        "sequential": nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)]),
        "nested": Net(),
        "embedding_net": Emb(),
    }


def parameter_names(ms):
    nn = ms.nn
    out = {}
    for key, net in networks(nn).items():
        out[key] = {"all": [n for n, _ in net.parameters_and_names()],
                    "trainable": [p.name for p in net.trainable_params()],
                    "shapes": {n: list(p.shape) for n, p in net.parameters_and_names()}}
    net = networks(nn)["nested"]
    for kind, make in [("Momentum", lambda p: nn.Momentum(p, 0.1, 0.9)),
                       ("Adam", lambda p: nn.Adam(p, 0.01)),
                       ("SGD", lambda p: nn.SGD(p, 0.1, momentum=0.9)),
                       ("AdamWeightDecay", lambda p: nn.AdamWeightDecay(p, 0.01)),
                       ("Momentum_lr_list", lambda p: nn.Momentum(p, [0.1, 0.2], 0.9))]:
        opt = make(net.trainable_params())
        out["opt." + kind] = {"all": [n for n, _ in opt.parameters_and_names()],
                              "shapes": {n: list(p.shape) for n, p in opt.parameters_and_names()}}
    return out


# ---- optimizers ------------------------------------------------------------------------

def run_optimizers(ms, inputs):
    """{case: array (STEPS, n)}: every parameter, flattened and concatenated,
    after each step of each optimizer case."""
    nn = ms.nn

    class Holder(nn.Cell):
        def __init__(self):
            super().__init__()
            for name, _ in OPT_PARAMS:
                setattr(self, name, ms.Parameter(ms.Tensor(inputs["p." + name].copy()), name=name))

    out = {}
    for case, cls, kwargs, lr in OPTIMIZER_CASES:
        holder = Holder()
        params = [getattr(holder, name) for name, _ in OPT_PARAMS]
        if isinstance(lr, tuple):
            lr = nn.CosineDecayLR(lr[1], lr[2], lr[3])
        kwargs = dict(kwargs)
        groups = kwargs.pop("groups", None)
        given = params
        if groups:
            given = []
            for names, wd in groups:
                group = {"params": [getattr(holder, n) for n in names]}
                if wd is not None:
                    group["weight_decay"] = wd
                given.append(group)
        opt = getattr(nn, cls)(given, learning_rate=lr, **kwargs)
        order = [p.name for p in opt.parameters]  # the gradients come in the optimizer's order
        trace = []
        for s in range(STEPS):
            grads = tuple(ms.Tensor(inputs[f"g{s}.{name}"]) for name in order)
            opt(grads)
            trace.append(np.concatenate([p.asnumpy().reshape(-1) for p in params]))
        out[case] = np.stack(trace)
    return out


# ---- layers ------------------------------------------------------------------------------

def layer_defaults(ms):
    nn = ms.nn
    conv = nn.Conv2d(3, 4, 3)
    return {"conv2d.pad_mode": conv.pad_mode, "conv2d.has_bias": bool(conv.has_bias),
            "conv2d.bias_is_none": conv.bias is None}


def init_samples(ms):
    """Default-initialised weights of big layers (statistics are compared, not values)."""
    nn = ms.nn
    d = nn.Dense(400, 300)
    c = nn.Conv2d(64, 32, 3, has_bias=True)
    e = nn.Embedding(1000, 64)
    return {"dense.weight": d.weight.asnumpy(), "dense.bias": d.bias.asnumpy(),
            "conv.weight": c.weight.asnumpy(), "conv.bias": c.bias.asnumpy(),
            "embedding.table": e.embedding_table.asnumpy()}


def layer_outputs(ms, inputs):
    nn = ms.nn
    T = ms.Tensor
    out = {}
    bn = nn.BatchNorm2d(3)
    bn.set_train(True)
    out["bn.train_y"] = bn(T(inputs["bn.x"])).asnumpy()
    out["bn.moving_mean"] = bn.moving_mean.asnumpy()
    out["bn.moving_variance"] = bn.moving_variance.asnumpy()
    bn.set_train(False)
    out["bn.eval_y"] = bn(T(inputs["bn.x"])).asnumpy()
    bn9 = nn.BatchNorm2d(3, momentum=0.7)
    bn9.set_train(True)
    bn9(T(inputs["bn.x"]))
    bn9(T(inputs["bn.x"] * 0.5))
    out["bn_m07.moving_mean"] = bn9.moving_mean.asnumpy()
    out["bn_m07.moving_variance"] = bn9.moving_variance.asnumpy()
    ln = nn.LayerNorm((6,))
    out["ln.y"] = ln(T(inputs["ln.x"])).asnumpy()
    for mode, stride in [("same", 1), ("same", 2), ("valid", 2), ("pad", 1)]:
        kw = {"padding": 1} if mode == "pad" else {}
        conv = nn.Conv2d(3, 4, 3, stride=stride, pad_mode=mode, weight_init=T(inputs["conv.w"]), **kw)
        out[f"conv.{mode}{stride}"] = conv(T(inputs["conv.x"])).asnumpy()
    return out


# ---- checkpoints --------------------------------------------------------------------------

CKPT_KEYS = ["f32", "f16", "f64", "i32", "i64", "u8", "bool", "scalar"]


def save_typed_checkpoint(ms, inputs, path):
    ms.save_checkpoint([{"name": k, "data": ms.Tensor(inputs["ck." + k])} for k in CKPT_KEYS], path)


def read_checkpoint(ms, path):
    """{name: numpy array} of a checkpoint, through load_checkpoint."""
    return {k: v.asnumpy() for k, v in ms.load_checkpoint(path).items()}


def checkpoint_net(nn):
    net = networks(nn)["nested"]
    return net


def fill_net(ms, net, seed):
    """Gives every parameter of `net` distinct known values (in the order of their sorted names)."""
    rng = np.random.default_rng(seed)
    for name, p in sorted(net.parameters_and_names(), key=lambda t: t[0]):
        p.set_data(ms.Tensor(rng.standard_normal(p.shape).astype(np.float32)))


def main(inputs_path, outdir):
    import os
    import mindspore as ms
    ms.set_context(mode=ms.PYNATIVE_MODE)
    inputs = dict(np.load(inputs_path))
    arrays, info = {}, {}
    info["names"] = parameter_names(ms)
    info["defaults"] = layer_defaults(ms)
    for k, v in run_optimizers(ms, inputs).items():
        arrays["opt." + k] = v
    for k, v in init_samples(ms).items():
        arrays["init." + k] = v
    for k, v in layer_outputs(ms, inputs).items():
        arrays["layer." + k] = v
    # checkpoints: typed entries written here; ours read here
    save_typed_checkpoint(ms, inputs, os.path.join(outdir, "ref_typed.ckpt"))
    ours = os.path.join(outdir, "ours_typed.ckpt")
    got = read_checkpoint(ms, ours)
    info["read_ours_typed"] = {k: [str(v.dtype), list(v.shape)] for k, v in got.items()}
    for k, v in got.items():
        arrays["read_ours_typed." + k] = v
    # a network's checkpoint, both ways
    net = checkpoint_net(ms.nn)
    fill_net(ms, net, 1)
    ms.save_checkpoint(net, os.path.join(outdir, "ref_net.ckpt"))
    net2 = checkpoint_net(ms.nn)
    params = ms.load_checkpoint(os.path.join(outdir, "ours_net.ckpt"))
    info["load_ours_net"] = [list(x) for x in ms.load_param_into_net(net2, params)]
    for n, p in net2.parameters_and_names():
        arrays["loaded_ours_net." + n] = p.asnumpy()
    # partial load: a checkpoint with an extra entry and a missing one
    partial = {k: v for k, v in params.items() if not k.startswith("head.")}
    partial["extra.entry"] = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="extra.entry")
    net3 = checkpoint_net(ms.nn)
    info["load_partial"] = [sorted(x) for x in ms.load_param_into_net(net3, partial)]
    with open(os.path.join(outdir, "ref.json"), "w") as f:
        json.dump(info, f, indent=1)
    np.savez(os.path.join(outdir, "ref.npz"), **arrays)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    if len(sys.argv) > 3:
        import os
        import runpy
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ms_digits_lenet.py")
        sys.argv = [script, sys.argv[3], os.path.join(sys.argv[2], "ref_digits.json")]
        runpy.run_path(script, run_name="__main__")

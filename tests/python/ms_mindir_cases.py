"""The real MindSpore's side of test_mindir.py; run by the MindSpore reference
interpreter (scripts/install_deps.sh's venv), never imported by the tests.

  ms_mindir_cases.py <dir>

1. Builds the reference networks below with seeded weights, exports each to
   <dir>/ref_<name>.mindir with mindspore.export, runs MindSpore's own
   inference on <dir>/ref_<name>_in.npy (written here, seeded) and saves its
   outputs to <dir>/ref_<name>_out.npz.
2. Loads every <dir>/ours_<name>.mindir (exported by our package) with
   mindspore.load + nn.GraphCell, runs it on <dir>/ours_<name>_in.npy and
   saves <dir>/ours_<name>_ref_out.npz (or <dir>/ours_<name>_ref_error.txt).
3. Exports <dir>/unsupported.mindir: a network using primitives atc has no
   lowering for (CumSum, Atan)."""
import glob
import os
import sys
import traceback

import numpy as np
import mindspore as ms
from mindspore import mint, nn, ops

ms.set_context(mode=ms.GRAPH_MODE)


class LeNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
        self.c2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flat = nn.Flatten()
        self.f1 = nn.Dense(16 * 4 * 4, 120)
        self.f2 = nn.Dense(120, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.c1(x)))
        x = self.pool(self.relu(self.c2(x)))
        return self.f2(self.relu(self.f1(self.flat(x))))


class ConvBnPools(nn.Cell):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, pad_mode="same", has_bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.mp = nn.MaxPool2d(3, 1, pad_mode="same")
        self.ap = nn.AvgPool2d(2, 2)

    def construct(self, x):
        return self.ap(self.mp(self.relu(self.bn(self.c(x)))))


class ConvVariants(nn.Cell):
    """Grouped and depthwise convolutions, explicit padding, stride, dilation, SAME average pooling."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(4, 4, 3, stride=2, pad_mode="pad", padding=(1, 2, 0, 1), group=2, has_bias=True)
        self.c2 = nn.Conv2d(4, 4, 3, pad_mode="same", group=4, dilation=2)
        self.ap = nn.AvgPool2d(3, 2, pad_mode="same")
        self.mp = nn.MaxPool2d(2, 2, pad_mode="valid")
        self.r6 = nn.ReLU6()

    def construct(self, x):
        return self.mp(self.ap(self.r6(self.c2(self.c(x)))))


class DenseGeluNorm(nn.Cell):
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
    """Activations, arithmetic with scalars and a Parameter, shape ops, reductions, two outputs."""

    def __init__(self):
        super().__init__()
        self.d = nn.Dense(12, 8, activation="sigmoid")
        self.t = nn.Tanh()
        self.silu = nn.SiLU()
        self.k = ms.Parameter(ms.Tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8)), name="k")

    def construct(self, x):
        y = self.d(x) * 2.0 + self.k
        y = self.t(y) - ops.exp(y) / 3.0
        y = self.silu(y)
        z = ops.reshape(y, (2, 2, 4))
        z = ops.transpose(z, (0, 2, 1))
        z = ops.squeeze(ops.expand_dims(z, 1), 1)
        m = ops.ReduceMean(keep_dims=True)(z, -1)
        s = ops.ReduceSum()(z, (1, 2))
        c = ops.concat((z.reshape(2, 8), s.reshape(2, 1)), 1)
        return ops.log_softmax(c, -1), m


class CastsAndMath(nn.Cell):
    def __init__(self):
        super().__init__()
        self.s = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU(), nn.Dense(8, 3)])
        self.lr = nn.LeakyReLU(0.2)

    def construct(self, x):
        y = ops.cast(ops.cast(self.s(x), ms.float16), ms.float32)
        return self.lr(y), ops.erf(y), ops.sqrt(ops.abs(y)), ops.maximum(y, 0.5), ops.matmul(y, y.T)


class Elementwise(nn.Cell):
    """The remaining one-input primitives, binary ones, reductions, Gather and batched products."""

    def __init__(self):
        super().__init__()
        self.hs = nn.HSwish()
        self.hsig = nn.HSigmoid()
        self.elu = nn.ELU()
        self.fg = ops.FastGeLU()
        self.softsign = ops.Softsign()
        self.idx = ms.Tensor(np.array([2, 0, 1], np.int32))
        self.w = ms.Parameter(ms.Tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)), name="w")
        self.b = ms.Parameter(ms.Tensor(np.array([0.5, -0.5, 1, 0], np.float32)), name="b")

    def construct(self, x):
        a = ops.floor(x) + ops.ceil(x) * ops.sign(x) + ops.round(x)
        b = ops.sin(x) * ops.cos(x) - ops.neg(ops.square(x)) + ops.rsqrt(ops.abs(x) + 1.0)
        c = ops.reciprocal(ops.abs(x) + 2.0) + ops.log(ops.abs(x) + 1.0) + ops.pow(ops.abs(x), 1.5)
        d = self.hs(x) + self.hsig(x) + self.elu(x) + self.fg(x) + self.softsign(x)
        e = ops.minimum(a, b) + ops.maximum(c, d) / 2.0
        r = ops.ReduceMax(keep_dims=True)(e, 2) - ops.ReduceMin(keep_dims=False)(e, (2,)).expand_dims(2)
        g = ops.gather(e, self.idx, 1)
        bmm = ops.BatchMatMul(transpose_b=True)(e, g)
        dense = ops.dense(ops.identity(e), self.w, self.b)
        return r, bmm, ops.matmul(e, g.transpose(0, 2, 1)), dense, mint.bmm(e, g.transpose(0, 2, 1))


class Unsupported(nn.Cell):
    def construct(self, x):
        return ops.atan(ops.cumsum(x, 1))


NETS = {
    "lenet": (LeNet, (1, 1, 28, 28)),
    "conv_bn_pools": (ConvBnPools, (1, 3, 16, 16)),
    "conv_variants": (ConvVariants, (1, 4, 17, 17)),
    "dense_gelu_norm": (DenseGeluNorm, (2, 16)),
    "mlp": (Mlp, (2, 12)),
    "casts_math": (CastsAndMath, (4, 8)),
    "elementwise": (Elementwise, (2, 3, 5)),
}


def seeded(net, seed):
    """Weights (and BatchNorm statistics) from a seed, so that nothing is left at a trivial default."""
    rng = np.random.default_rng(seed)
    for p in net.get_parameters():
        shape = p.shape
        if "moving_variance" in p.name:
            v = rng.uniform(0.5, 1.5, shape)
        else:
            v = rng.normal(0, 0.5, shape)
        p.set_data(ms.Tensor(v.astype(np.float32)))
    return net


def outputs(result):
    if isinstance(result, (tuple, list)):
        return [np.asarray(r.asnumpy()) for r in result]
    return [np.asarray(result.asnumpy())]


def main(d):
    for k, (name, (cls, shape)) in enumerate(NETS.items()):
        net = seeded(cls(), 100 + k)
        net.set_train(False)
        x = np.random.default_rng(k).normal(0, 1, shape).astype(np.float32)
        np.save(os.path.join(d, f"ref_{name}_in.npy"), x)
        ms.export(net, ms.Tensor(x), file_name=os.path.join(d, f"ref_{name}"), file_format="MINDIR")
        np.savez(os.path.join(d, f"ref_{name}_out.npz"), *outputs(net(ms.Tensor(x))))
    net = Unsupported()
    net.set_train(False)
    ms.export(net, ms.Tensor(np.ones((2, 4), np.float32)), file_name=os.path.join(d, "unsupported"),
              file_format="MINDIR")
    for path in sorted(glob.glob(os.path.join(d, "ours_*.mindir"))):
        stem = path[:-len(".mindir")]
        try:
            graph = ms.load(path)
            cell = nn.GraphCell(graph)
            x = np.load(stem + "_in.npy")
            np.savez(stem + "_ref_out.npz", *outputs(cell(ms.Tensor(x))))
        except Exception:  # the test reports it
            with open(stem + "_ref_error.txt", "w") as f:
                f.write(traceback.format_exc())
    print("ms_mindir_cases: done")


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Training throughput of the mindspore package (a compiled TrainOneStepCell:
forward, backward and the optimizer's in-place update in one program) against
PyTorch eager on the same models, batch sizes and optimizer, in the same run:
each (framework, model, threads) measurement is its own process, the two
frameworks alternating round by round; medians of the per-step times.

    python3 bench/train_bench.py --models digits,resnet18,transformer --threads 1,2 --rounds 3

Also reports the first step of ours (trace + compile + run) and each
process's peak resident memory. Prints a markdown table (docs/benchmarks.md)."""
import argparse
import json
import os
import statistics
import subprocess
import sys

from bench_host import cpu_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# model: (batch, input shape without batch, classes, steps timed)
MODELS = {"digits": (50, (1, 8, 8), 10, 60), "resnet18": (32, (3, 32, 32), 10, 8),
          "transformer": (8, (128,), 10, 8)}




# ---- the models, written once per framework -------------------------------------------

def ms_model(name):
    from mindspore import nn, ops

    if name == "digits":
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="pad", padding=1, has_bias=True)
                self.bn1 = nn.BatchNorm2d(16)
                self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="pad", padding=1, has_bias=True)
                self.pool = nn.MaxPool2d(2, 2)
                self.relu = nn.ReLU()
                self.flatten = nn.Flatten()
                self.fc1 = nn.Dense(32 * 2 * 2, 64)
                self.fc2 = nn.Dense(64, 10)

            def construct(self, x):
                x = self.pool(self.relu(self.bn1(self.conv1(x))))
                x = self.pool(self.relu(self.conv2(x)))
                return self.fc2(self.relu(self.fc1(self.flatten(x))))
        return Net()

    if name == "resnet18":
        class Block(nn.Cell):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.conv1 = nn.Conv2d(cin, cout, 3, stride, pad_mode="pad", padding=1)
                self.bn1 = nn.BatchNorm2d(cout)
                self.conv2 = nn.Conv2d(cout, cout, 3, 1, pad_mode="pad", padding=1)
                self.bn2 = nn.BatchNorm2d(cout)
                self.relu = nn.ReLU()
                self.down = None
                if stride != 1 or cin != cout:
                    self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride, pad_mode="valid"),
                                                   nn.BatchNorm2d(cout)])

            def construct(self, x):
                y = self.relu(self.bn1(self.conv1(x)))
                y = self.bn2(self.conv2(y))
                return self.relu(y + (self.down(x) if self.down is not None else x))

        class ResNet18(nn.Cell):
            def __init__(self):
                super().__init__()
                self.stem = nn.SequentialCell([nn.Conv2d(3, 64, 3, 1, pad_mode="pad", padding=1),
                                               nn.BatchNorm2d(64), nn.ReLU()])
                blocks, cin = [], 64
                for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
                    blocks += [Block(cin, cout, stride), Block(cout, cout, 1)]
                    cin = cout
                self.blocks = nn.SequentialCell(blocks)
                self.pool = nn.AdaptiveAvgPool2d(1)
                self.flatten = nn.Flatten()
                self.fc = nn.Dense(512, 10)

            def construct(self, x):
                return self.fc(self.flatten(self.pool(self.blocks(self.stem(x)))))
        return ResNet18()

    class Encoder(nn.Cell):  # 4 layers, d 256, 4 heads, ff 1024, seq 128, dropout 0
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 256)
            self.layers = nn.CellList([nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
                                       for _ in range(4)])
            self.fc = nn.Dense(256, 10)

        def construct(self, ids):
            h = self.embed(ids)
            for layer in self.layers:
                h = layer(h)
            return self.fc(ops.mean(h, 1))
    return Encoder()


def torch_model(name):
    import torch
    from torch import nn

    if name == "digits":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    if name == "resnet18":
        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
                self.bn1 = nn.BatchNorm2d(cout)
                self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
                self.bn2 = nn.BatchNorm2d(cout)
                self.down = None
                if stride != 1 or cin != cout:
                    self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

            def forward(self, x):
                y = torch.relu(self.bn1(self.conv1(x)))
                y = self.bn2(self.conv2(y))
                return torch.relu(y + (self.down(x) if self.down is not None else x))

        blocks, cin = [], 64
        for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            blocks += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        return nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), *blocks,
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 256)
            self.layers = nn.ModuleList([nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
                                         for _ in range(4)])
            self.fc = nn.Linear(256, 10)

        def forward(self, ids):
            h = self.embed(ids)
            for layer in self.layers:
                h = layer(h)
            return self.fc(h.mean(1))
    return Encoder()


def data(name, seed=0):
    import numpy as np
    batch, shape, classes, _ = MODELS[name]
    rng = np.random.default_rng(seed)
    if name == "transformer":
        x = rng.integers(0, 1000, (batch,) + shape).astype(np.int32)
    else:
        x = rng.standard_normal((batch,) + shape).astype(np.float32)
    return x, rng.integers(0, classes, batch).astype(np.int32)


def peak_rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def worker(framework, name, threads):
    import time
    x, y = data(name)
    steps = MODELS[name][3]
    times = []
    if framework == "ours":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import mindspore as ms
        from mindspore import Tensor, nn
        ms.set_context(mode=ms.GRAPH_MODE, runtime_num_threads=threads)
        ms.set_seed(0)
        net = ms_model(name)
        opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), opt)
        step.set_train(True)
        tx, ty = Tensor(x), Tensor(y)
        t0 = time.perf_counter()
        step(tx, ty)
        first = time.perf_counter() - t0
        for _ in range(steps):
            t0 = time.perf_counter()
            step(tx, ty)
            times.append(time.perf_counter() - t0)
    else:
        import torch
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        net = torch_model(name)
        opt = torch.optim.SGD(net.parameters(), 0.01, 0.9)
        loss_fn = torch.nn.CrossEntropyLoss()
        tx, ty = torch.from_numpy(x).long() if name == "transformer" else torch.from_numpy(x), \
            torch.from_numpy(y).long()
        net.train()

        def one():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(tx), ty)
            loss.backward()
            opt.step()

        t0 = time.perf_counter()
        one()
        first = time.perf_counter() - t0
        for _ in range(steps):
            t0 = time.perf_counter()
            one()
            times.append(time.perf_counter() - t0)
    print(json.dumps({"step": statistics.median(times), "first": first, "rss": peak_rss_mb()}))


def measure(framework, name, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENCANN_NUM_THREADS=str(threads))
    p = subprocess.run([sys.executable, __file__, "--worker", framework, name, str(threads)], capture_output=True,
                       text=True, env=env, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"{framework} {name} x{threads} failed:\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="digits,resnet18,transformer")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", nargs=3)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker[0], a.worker[1], int(a.worker[2]))
        return
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs")
    print("| model | batch | threads | ours samples/s | torch eager samples/s | ours / torch | ours first step (s) "
          "| torch first step (s) | ours peak RSS (MB) | torch peak RSS (MB) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in a.models.split(","):
        batch = MODELS[name][0]
        for threads in [int(t) for t in a.threads.split(",")]:
            res = {"ours": [], "torch": []}
            for r in range(a.rounds):
                order = ["ours", "torch"] if r % 2 == 0 else ["torch", "ours"]
                for fw in order:
                    res[fw].append(measure(fw, name, threads))
            med = {fw: statistics.median(m["step"] for m in res[fw]) for fw in res}
            first = {fw: statistics.median(m["first"] for m in res[fw]) for fw in res}
            rss = {fw: max(m["rss"] for m in res[fw]) for fw in res}
            print(f"| {name} | {batch} | {threads} | {batch / med['ours']:.0f} | {batch / med['torch']:.0f} | "
                  f"{med['torch'] / med['ours']:.2f} | {first['ours']:.2f} | {first['torch']:.2f} | "
                  f"{rss['ours']:.0f} | {rss['torch']:.0f} |", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Train a LeNet-style CNN on scikit-learn's handwritten digits with the
MindSpore API, then deploy it: checkpoint, ONNX export, atc, msame.

    PYTHONPATH=python python3 samples/train/digits_cnn.py [--out DIR] [--epochs N] [--graph]

Written only against MindSpore's documented API: the same file runs under the
real MindSpore. The deploy steps at the end use OpenCANN's atc and msame."""
import argparse
import os
import shutil
import subprocess
import time

import numpy as np
from sklearn.datasets import load_digits

import mindspore as ms
import mindspore.dataset as ds
from mindspore import Tensor, nn
from mindspore.train import LossMonitor, Model, TimeMonitor


class LeNet(nn.Cell):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="pad", padding=1, has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(32 * 2 * 2, 64)
        self.fc2 = nn.Dense(64, num_classes)

    def construct(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out/train_digits")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--graph", action="store_true", help="GRAPH_MODE (default: PYNATIVE_MODE)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ms.set_context(mode=ms.GRAPH_MODE if args.graph else ms.PYNATIVE_MODE)
    ms.set_seed(1)

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = y.astype(np.int32)
    idx = np.random.default_rng(0).permutation(len(x))
    x, y = x[idx], y[idx]
    train = ds.NumpySlicesDataset((x[:1500], y[:1500]), column_names=["image", "label"], shuffle=True).batch(50)
    test = ds.NumpySlicesDataset((x[1500:], y[1500:]), column_names=["image", "label"], shuffle=False).batch(50)

    net = LeNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    model = Model(net, loss_fn=loss, optimizer=opt, metrics={"accuracy"})
    t0 = time.perf_counter()
    model.train(args.epochs, train, callbacks=[LossMonitor(30), TimeMonitor()])
    print(f"trained {args.epochs} epochs in {time.perf_counter() - t0:.2f} s")
    acc = model.eval(test)["accuracy"]
    print(f"test accuracy: {acc:.4f}")

    ckpt = os.path.join(args.out, "lenet.ckpt")
    ms.save_checkpoint(net, ckpt)
    net.set_train(False)
    batch = x[1500:1564]
    onnx_path = ms.export(net, Tensor(batch), file_name=os.path.join(args.out, "lenet"), file_format="ONNX")
    np.save(os.path.join(args.out, "batch.npy"), batch)
    print(f"saved {ckpt} and {onnx_path}")

    # Deploy with OpenCANN's tools when they are built (make build).
    build = os.environ.get("OC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
    atc, msame = os.path.join(build, "atc"), os.path.join(build, "msame")
    if not (os.path.exists(atc) and os.path.exists(msame)):
        print("atc/msame not built: skipping the deploy step")
        return
    om_stem = os.path.join(args.out, "lenet")
    subprocess.run([atc, f"--model={onnx_path}", "--framework=5", f"--output={om_stem}"], check=True)
    res = os.path.join(args.out, "msame")
    shutil.rmtree(res, ignore_errors=True)
    subprocess.run([msame, "--model", om_stem + ".om", "--input", os.path.join(args.out, "batch.npy"),
                    "--output", res, "--outfmt", "NPY"], check=True)
    deployed = np.load(os.path.join(res, "lenet_output_0.npy"))
    same = (deployed.argmax(1) == net(Tensor(batch)).asnumpy().argmax(1)).mean()
    print(f"msame on the .om: {same:.0%} of the predictions equal to the trained network's, "
          f"accuracy {(deployed.argmax(1) == y[1500:1564]).mean():.4f} on those {len(batch)} images")


if __name__ == "__main__":
    main()

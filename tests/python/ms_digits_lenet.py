"""A LeNet-style CNN trained on scikit-learn's 8x8 digits, written only against
MindSpore's documented API. tests/python/test_mindspore_reference.py runs this
same file under the real MindSpore and under ours.

    python ms_digits_lenet.py DIGITS.npz RESULT.json

DIGITS.npz holds x_train, y_train, x_test, y_test (the caller loads the digits
with scikit-learn, which the reference environment does not need); RESULT.json
receives the test accuracy, the losses and the wall time."""
import json
import sys
import time

import numpy as np

import mindspore as ms
from mindspore import nn
from mindspore.dataset import NumpySlicesDataset
from mindspore.train import LossMonitor, Model


class LeNet(nn.Cell):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.conv2 = nn.Conv2d(16, 32, 3, pad_mode="same", has_bias=True)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(32 * 2 * 2, 64)
        self.fc2 = nn.Dense(64, num_classes)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


class LossLog(ms.train.Callback):
    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_epoch_end(self, run_context):
        loss = run_context.original_args().net_outputs
        self.losses.append(float(np.asarray(loss.asnumpy() if hasattr(loss, "asnumpy") else loss).reshape(-1)[0]))


def main(data_path, result_path):
    start = time.time()
    ms.set_seed(1)
    ms.set_context(mode=ms.GRAPH_MODE)
    d = np.load(data_path)
    train = NumpySlicesDataset({"image": d["x_train"], "label": d["y_train"]}, shuffle=True).batch(32)
    test = NumpySlicesDataset({"image": d["x_test"], "label": d["y_test"]}, shuffle=False).batch(64)
    net = LeNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    model = Model(net, loss, opt, metrics={"accuracy"})
    log = LossLog()
    model.train(15, train, callbacks=[LossMonitor(20), log], dataset_sink_mode=False)
    acc = model.eval(test, dataset_sink_mode=False)["accuracy"]
    with open(result_path, "w") as f:
        json.dump({"accuracy": float(acc), "epoch_losses": log.losses, "seconds": time.time() - start,
                   "version": ms.__version__}, f)
    print(f"accuracy {acc:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""Metrics for Model.eval: Accuracy, Loss, MAE, MSE, Top1/Top5."""
import numpy as np


def _np(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


class Metric:
    def __init__(self):
        self.clear()

    def clear(self):
        raise NotImplementedError

    def update(self, *inputs):
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError


class Accuracy(Metric):
    def __init__(self, eval_type="classification"):
        super().__init__()

    def clear(self):
        self._correct = 0
        self._total = 0

    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"Accuracy.update takes (y_pred, y), got {len(inputs)} inputs")
        pred, y = _np(inputs[0]), _np(inputs[1])
        labels = pred.argmax(-1)
        if y.ndim == pred.ndim:  # one-hot
            y = y.argmax(-1)
        self._correct += int((labels == y.reshape(labels.shape)).sum())
        self._total += labels.size

    def eval(self):
        if self._total == 0:
            raise RuntimeError("Accuracy.eval before any update")
        return self._correct / self._total


class TopKCategoricalAccuracy(Metric):
    def __init__(self, k):
        self.k = k
        super().__init__()

    def clear(self):
        self._correct = 0
        self._total = 0

    def update(self, *inputs):
        pred, y = _np(inputs[0]), _np(inputs[1])
        if y.ndim == pred.ndim:
            y = y.argmax(-1)
        top = np.argsort(-pred, axis=-1)[..., :self.k]
        self._correct += int((top == y.reshape(-1, 1)).any(-1).sum())
        self._total += y.size

    def eval(self):
        return self._correct / self._total


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(5)


class Loss(Metric):
    def clear(self):
        self._sum = 0.0
        self._n = 0

    def update(self, *inputs):
        loss = _np(inputs[0])
        self._sum += float(loss.mean()) if loss.size else 0.0
        self._n += 1

    def eval(self):
        if self._n == 0:
            raise RuntimeError("Loss.eval before any update")
        return self._sum / self._n


class MAE(Metric):
    def clear(self):
        self._sum, self._n = 0.0, 0

    def update(self, *inputs):
        p, y = _np(inputs[0]), _np(inputs[1])
        self._sum += float(np.abs(p.reshape(y.shape) - y).sum())
        self._n += y.shape[0]

    def eval(self):
        return self._sum / self._n


class MSE(MAE):
    def update(self, *inputs):
        p, y = _np(inputs[0]), _np(inputs[1])
        self._sum += float(((p.reshape(y.shape) - y) ** 2).sum())
        self._n += y.shape[0]


_BY_NAME = {"accuracy": Accuracy, "acc": Accuracy, "loss": Loss, "mae": MAE, "mse": MSE,
            "top_1_accuracy": Top1CategoricalAccuracy, "top_5_accuracy": Top5CategoricalAccuracy}


def get_metric_fn(name, *args, **kwargs):
    cls = _BY_NAME.get(name.lower())
    if cls is None:
        raise ValueError(f"unknown metric '{name}' (known: {', '.join(sorted(_BY_NAME))})")
    return cls(*args, **kwargs)

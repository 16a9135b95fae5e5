"""`mindspore.train.Model`: train / eval / predict over a network, a loss and
an optimizer. Training compiles one step (forward, backward, in-place update)
and runs it for every batch; evaluation and prediction compile the network's
inference graph."""
import numpy as np

from .. import _compile
from ..common.tensor import Tensor
from ..nn.cell import Cell
from ..nn.metrics import Metric, get_metric_fn
from ..nn.wrap import TrainOneStepCell, WithLossCell
from .callback import Callback, RunContext, _Params


def _callbacks(callbacks):
    if callbacks is None:
        return []
    if isinstance(callbacks, Callback):
        return [callbacks]
    cbs = list(callbacks)
    for c in cbs:
        if not isinstance(c, Callback):
            raise TypeError(f"callbacks must be Callback objects, got {type(c).__name__}")
    return cbs


def _batches(dataset):
    if hasattr(dataset, "create_tuple_iterator"):
        return dataset.create_tuple_iterator(num_epochs=1)
    return iter(dataset)


def _dataset_size(dataset):
    if hasattr(dataset, "get_dataset_size"):
        return dataset.get_dataset_size()
    return len(dataset)


class _Compiled(Cell):
    """A network's forward, always compiled (Model.eval / predict)."""

    def __init__(self, net):
        super().__init__(auto_prefix=False)
        self.net = net
        self._jit = True

    def construct(self, *args):
        return self.net(*args)


class Model:
    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
                 amp_level="O0", boost_level="O0", **kwargs):
        if amp_level not in ("O0", None):
            raise NotImplementedError(f"Model: amp_level '{amp_level}' is not supported yet (only O0)")
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._metric_fns = self._metrics(metrics)
        if loss_fn is not None and optimizer is not None:
            self._train_network = TrainOneStepCell(WithLossCell(network, loss_fn), optimizer)
        elif optimizer is not None:
            self._train_network = TrainOneStepCell(network, optimizer)  # the network returns the loss
        else:
            self._train_network = None
        self._eval_network = eval_network
        self._predict = _Compiled(network)

    @staticmethod
    def _metrics(metrics):
        if metrics is None:
            return {}
        if isinstance(metrics, dict):
            return {k: v if isinstance(v, Metric) else get_metric_fn(v) for k, v in metrics.items()}
        return {m: get_metric_fn(m) for m in metrics}

    @property
    def train_network(self):
        return self._train_network

    @property
    def predict_network(self):
        return self._network

    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        if self._train_network is None:
            raise ValueError("Model.train needs an optimizer (and a loss_fn unless the network returns the loss)")
        if epoch <= initial_epoch:
            raise ValueError(f"Model.train: epoch ({epoch}) must exceed initial_epoch ({initial_epoch})")
        cbs = _callbacks(callbacks)
        net = self._train_network
        net.set_train(True)
        size = _dataset_size(train_dataset)
        cb = _Params(epoch_num=epoch, batch_num=size, cur_epoch_num=initial_epoch, cur_step_num=initial_epoch * size,
                     train_network=net, network=self._network, optimizer=self._optimizer, loss_fn=self._loss_fn,
                     train_dataset=train_dataset, net_outputs=None, mode="train", dataset_sink_mode=False)
        ctx = RunContext(cb)
        for c in cbs:
            c.on_train_begin(ctx)
        try:
            for e in range(initial_epoch, epoch):
                cb.cur_epoch_num = e + 1
                for c in cbs:
                    c.on_train_epoch_begin(ctx)
                for batch in _batches(train_dataset):
                    cb.cur_step_num += 1
                    for c in cbs:
                        c.on_train_step_begin(ctx)
                    cb.net_outputs = net(*batch)
                    for c in cbs:
                        c.on_train_step_end(ctx)
                    if ctx.get_stop_requested():
                        break
                for c in cbs:
                    c.on_train_epoch_end(ctx)
                if ctx.get_stop_requested():
                    break
        finally:
            for c in cbs:
                c.on_train_end(ctx)
            self._network.set_train(False)

    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False):
        if not self._metric_fns:
            raise ValueError("Model.eval needs metrics: Model(..., metrics={'accuracy'})")
        self._network.set_train(False)
        for m in self._metric_fns.values():
            m.clear()
        loss_net = None
        if self._loss_fn is not None:
            loss_net = _Compiled(self._loss_fn)
        for batch in _batches(valid_dataset):
            data, label = batch[:-1], batch[-1]
            logits = self._predict(*data)
            for name, m in self._metric_fns.items():
                if type(m).__name__ == "Loss":
                    if loss_net is None:
                        raise ValueError("the 'loss' metric needs the Model's loss_fn")
                    m.update(loss_net(logits, label))
                else:
                    m.update(logits, label)
        return {name: m.eval() for name, m in self._metric_fns.items()}

    def predict(self, *predict_data, backend=None, config=None):
        self._network.set_train(False)
        return self._predict(*predict_data)

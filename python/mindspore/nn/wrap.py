"""WithLossCell, TrainOneStepCell, WithEvalCell.

TrainOneStepCell is always compiled whole — forward, backward and the
optimizer's in-place update in one program — in PyNative mode as well (the
values are the same; MindSpore would run it op by op there)."""
from ..ops import functional as F
from ..ops.composite import GradOperation
from .cell import Cell


class WithLossCell(Cell):
    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self):
        return self._backbone


class WithEvalCell(Cell):
    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        self._network = network
        self._loss_fn = loss_fn

    def construct(self, data, label):
        outputs = self._network(data)
        return self._loss_fn(outputs, label), outputs, label


class TrainOneStepCell(Cell):
    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        if return_grad:
            raise NotImplementedError("TrainOneStepCell(return_grad=True) is not supported yet")
        self.network = network
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.sens = sens
        self.grad = GradOperation(get_by_list=True, sens_param=sens is not None)
        self.grad_reducer = F.identity
        self._jit = True

    def construct(self, *inputs):
        loss = self.network(*inputs)
        if self.sens is not None:
            grads = self.grad(self.network, self.weights)(*inputs, F.fill(loss.dtype, loss.shape, self.sens))
        else:
            grads = self.grad(self.network, self.weights)(*inputs)
        self.optimizer(grads)
        return loss

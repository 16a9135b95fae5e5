"""Loss cells."""
from ..ops import functional as F
from .cell import Cell


class LossBase(Cell):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{type(self).__name__}: reduction must be 'mean', 'sum' or 'none', got '{reduction}'")
        self.reduction = reduction

    def get_loss(self, x, weights=1.0):
        if not (isinstance(weights, float) and weights == 1.0):
            x = F.mul(x, weights)
        return F._reduce_loss(x, self.reduction)


class SoftmaxCrossEntropyWithLogits(LossBase):
    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        self.sparse = sparse

    def construct(self, logits, labels):
        if self.sparse:
            return F.cross_entropy(logits, labels, reduction=self.reduction)
        per = F.neg(F.reduce_sum(F.mul(F.log_softmax(logits, -1), labels), -1))
        return F._reduce_loss(per, self.reduction)


class CrossEntropyLoss(LossBase):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def construct(self, logits, labels):
        return F.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class NLLLoss(LossBase):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def construct(self, logits, labels):
        return F.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class MSELoss(LossBase):
    def construct(self, logits, labels):
        return F.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    def construct(self, logits, labels):
        return F.l1_loss(logits, labels, self.reduction)


class BCEWithLogitsLoss(LossBase):
    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def construct(self, logits, labels):
        return F.binary_cross_entropy_with_logits(logits, labels, self.weight, self.pos_weight, self.reduction)

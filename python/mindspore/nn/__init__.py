"""`mindspore.nn`: cells, layers, losses, optimizers and training wrappers."""
from .cell import Cell
from .graph_cell import GraphCell
from .layer import *  # noqa: F401,F403
from .loss import (LossBase, SoftmaxCrossEntropyWithLogits, CrossEntropyLoss, NLLLoss, MSELoss, L1Loss,
                   BCEWithLogitsLoss)
from .optim import (Optimizer, SGD, Momentum, Adam, AdamWeightDecay, AdamW, LearningRateSchedule, ExponentialDecayLR,
                    CosineDecayLR, PolynomialDecayLR, WarmUpLR, piecewise_constant_lr, exponential_decay_lr,
                    cosine_decay_lr)
from .wrap import WithLossCell, WithEvalCell, TrainOneStepCell
from .metrics import (Metric, Accuracy, Loss, MAE, MSE, Top1CategoricalAccuracy, Top5CategoricalAccuracy,
                      TopKCategoricalAccuracy, get_metric_fn)

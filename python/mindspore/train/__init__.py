"""`mindspore.train`: Model, callbacks, checkpoints, export."""
from .model import Model
from .callback import (Callback, RunContext, LossMonitor, TimeMonitor, ModelCheckpoint, CheckpointConfig,
                       LearningRateScheduler)
from .serialization import save_checkpoint, load_checkpoint, load_param_into_net, export, load
from . import callback, serialization


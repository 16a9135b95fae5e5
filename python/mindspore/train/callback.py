"""Training callbacks: Callback, RunContext, LossMonitor, TimeMonitor,
ModelCheckpoint / CheckpointConfig, LearningRateScheduler."""
import os
import time

import numpy as np


class _Params(dict):
    """cb_params: a dict whose keys read as attributes too."""

    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k) from None

    def __setattr__(self, k, v):
        self[k] = v


class RunContext:
    def __init__(self, original_args):
        self._args = original_args
        self._stop = False

    def original_args(self):
        return self._args

    def request_stop(self):
        self._stop = True

    def get_stop_requested(self):
        return self._stop


class Callback:
    # MindSpore 2.x names and the older ones both reach a callback.
    def on_train_begin(self, run_context): self.begin(run_context)
    def on_train_epoch_begin(self, run_context): self.epoch_begin(run_context)
    def on_train_step_begin(self, run_context): self.step_begin(run_context)
    def on_train_step_end(self, run_context): self.step_end(run_context)
    def on_train_epoch_end(self, run_context): self.epoch_end(run_context)
    def on_train_end(self, run_context): self.end(run_context)
    def on_eval_begin(self, run_context): pass
    def on_eval_epoch_begin(self, run_context): pass
    def on_eval_step_begin(self, run_context): pass
    def on_eval_step_end(self, run_context): pass
    def on_eval_epoch_end(self, run_context): pass
    def on_eval_end(self, run_context): pass
    def begin(self, run_context): pass
    def epoch_begin(self, run_context): pass
    def step_begin(self, run_context): pass
    def step_end(self, run_context): pass
    def epoch_end(self, run_context): pass
    def end(self, run_context): pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _loss_value(outputs):
    if isinstance(outputs, (tuple, list)):
        outputs = outputs[0]
    a = outputs.asnumpy() if hasattr(outputs, "asnumpy") else np.asarray(outputs)
    return float(np.mean(a))


class LossMonitor(Callback):
    def __init__(self, per_print_times=1):
        if not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError(f"LossMonitor: per_print_times must be an int >= 0, got {per_print_times!r}")
        self._per = per_print_times

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        loss = _loss_value(cb.net_outputs)
        step_in_epoch = (cb.cur_step_num - 1) % cb.batch_num + 1
        if not np.isfinite(loss):
            raise ValueError(f"epoch: {cb.cur_epoch_num} step: {step_in_epoch}. Invalid loss {loss}, terminating "
                             "training.")
        if self._per and cb.cur_step_num % self._per == 0:
            print(f"epoch: {cb.cur_epoch_num} step: {step_in_epoch}, loss is {loss}", flush=True)


class TimeMonitor(Callback):
    def __init__(self, data_size=None):
        self.data_size = data_size
        self._t = None

    def on_train_epoch_begin(self, run_context):
        self._t = time.perf_counter()

    def on_train_epoch_end(self, run_context):
        ms = (time.perf_counter() - self._t) * 1000
        n = self.data_size or run_context.original_args().batch_num
        print(f"epoch time: {ms:5.3f} ms, per step time: {ms / max(n, 1):5.3f} ms", flush=True)


class CheckpointConfig:
    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False, saved_network=None,
                 append_info=None, enc_key=None, enc_mode="AES-GCM", exception_save=False, **kwargs):
        if save_checkpoint_steps is not None and save_checkpoint_steps <= 0:
            raise ValueError("CheckpointConfig: save_checkpoint_steps must be > 0")
        self.save_checkpoint_steps = save_checkpoint_steps
        self.save_checkpoint_seconds = save_checkpoint_seconds
        self.keep_checkpoint_max = keep_checkpoint_max
        self.saved_network = saved_network


class ModelCheckpoint(Callback):
    def __init__(self, prefix="CKP", directory=None, config=None):
        self.prefix = prefix
        self.directory = directory or os.getcwd()
        self.config = config or CheckpointConfig()
        self._saved = []
        os.makedirs(self.directory, exist_ok=True)

    def _save(self, cb, step_in_epoch):
        from .serialization import save_checkpoint
        net = self.config.saved_network or cb.train_network
        path = os.path.join(self.directory, f"{self.prefix}-{cb.cur_epoch_num}_{step_in_epoch}.ckpt")
        save_checkpoint(net, path)
        self._saved.append(path)
        while self.config.keep_checkpoint_max and len(self._saved) > self.config.keep_checkpoint_max:
            old = self._saved.pop(0)
            if os.path.exists(old):
                os.remove(old)
        self.latest_ckpt_file_name = path

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        step_in_epoch = (cb.cur_step_num - 1) % cb.batch_num + 1
        n = self.config.save_checkpoint_steps
        if n and cb.cur_step_num % n == 0:
            self._save(cb, step_in_epoch)

    def on_train_end(self, run_context):
        cb = run_context.original_args()
        step_in_epoch = (cb.cur_step_num - 1) % cb.batch_num + 1
        path = os.path.join(self.directory, f"{self.prefix}-{cb.cur_epoch_num}_{step_in_epoch}.ckpt")
        if path not in self._saved:
            self._save(cb, step_in_epoch)


class LearningRateScheduler(Callback):
    def __init__(self, learning_rate_function):
        self.fn = learning_rate_function

    def on_train_step_end(self, run_context):
        cb = run_context.original_args()
        opt = cb.optimizer
        new = self.fn(opt._lr_value(), cb.cur_step_num)
        if not isinstance(opt._lr, (list, tuple)) and not hasattr(opt._lr, "_at"):
            opt._lr = float(new)


_Params.__module__ = __name__

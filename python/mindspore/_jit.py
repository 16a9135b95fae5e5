"""`mindspore.jit`: compile a function (or a Cell's construct) into one graph."""
import functools

from . import _compile, _engine


def jit(function=None, *, mode="PSJit", input_signature=None, hash_args=None, jit_config=None, compile_once=False,
        **kwargs):
    def wrap(fn):
        cache = _compile.FunctionCache(fn, getattr(fn, "__name__", "jit"))

        @functools.wraps(fn)
        def run(*args):
            if _engine.current_trace() is not None:
                return fn(*args)
            if args and hasattr(args[0], "cells_and_names") and getattr(fn, "__name__", "") == "construct":
                return cache(args, args[0]._training_flags())  # a decorated method: self is the Cell
            return cache(args)

        run.__wrapped_jit__ = True
        return run

    if function is not None and callable(function):
        return wrap(function)
    return wrap

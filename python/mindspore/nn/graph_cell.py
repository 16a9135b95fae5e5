"""GraphCell: runs a model read by mindspore.load (MINDIR) as a Cell."""
import numpy as np

from .cell import Cell


class GraphCell(Cell):
    """Inference over a loaded MINDIR graph: its inputs in, its outputs (a
    Tensor, or a tuple for several) out. The graph is compiled on first use,
    with the weights the file holds; it is not trainable."""

    def __init__(self, graph, params_init=None, obf_random_seed=None):
        super().__init__()
        from ..train.serialization import MindIRGraph
        if not isinstance(graph, MindIRGraph):
            raise TypeError(f"GraphCell: graph must be what mindspore.load returns, got {type(graph).__name__}")
        if params_init is not None or obf_random_seed is not None:
            raise NotImplementedError("GraphCell: params_init and obf_random_seed are not supported")
        object.__setattr__(self, "_graph", graph)
        object.__setattr__(self, "_program", None)

    def __call__(self, *inputs):
        # Not traced in graph mode: the loaded graph is already compiled whole.
        return self.construct(*inputs)

    def construct(self, *inputs):
        from .. import _backend, _engine
        from ..common.tensor import Tensor
        if _engine.current_trace() is not None:
            raise NotImplementedError("GraphCell: a loaded graph cannot be called inside a traced network yet")
        if self._program is None:
            object.__setattr__(self, "_program", _backend.Program(self._graph._data, {}, mindir=True))
        arrays = [x.asnumpy() if isinstance(x, Tensor) else np.asarray(x) for x in inputs]
        outs = self._program.run(arrays)
        tensors = tuple(Tensor._wrap(o) for o in outs)
        return tensors[0] if len(tensors) == 1 else tensors

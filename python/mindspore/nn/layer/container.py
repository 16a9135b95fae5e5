"""SequentialCell and CellList."""
from collections import OrderedDict

from ..cell import Cell


class SequentialCell(Cell):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            for i, c in enumerate(args[0]):
                self.insert_child_to_cell(str(i), c)
        elif len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, c in args[0].items():
                self.insert_child_to_cell(name, c)
        else:
            for i, c in enumerate(args):
                self.insert_child_to_cell(str(i), c)

    def __getitem__(self, i):
        cells = list(self._cells.values())
        if isinstance(i, slice):
            return SequentialCell(cells[i])
        return cells[i]

    def __len__(self):
        return len(self._cells)

    def append(self, cell):
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def construct(self, x):
        for c in self._cells.values():
            x = c(x)
        return x


class CellList(Cell):
    def __init__(self, *args):
        super().__init__()
        cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        for c in cells:
            self.append(c)

    def __getitem__(self, i):
        cells = list(self._cells.values())
        return CellList(cells[i]) if isinstance(i, slice) else cells[i]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def append(self, cell):
        self.insert_child_to_cell(str(len(self._cells)), cell)

    def extend(self, cells):
        for c in cells:
            self.append(c)
        return self

    def construct(self, *inputs):
        raise NotImplementedError("CellList has no construct: call its cells")

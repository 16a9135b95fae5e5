"""A first `mindspore.dataset`: in-memory and generator sources with shuffle,
map, batch, repeat, take and skip, iterated in the calling thread. (Parallel
workers, MindRecord and the built-in C++ transforms are the data-pipeline
issue's; see docs/training.md.)"""
import numpy as np

from ..common.tensor import Tensor


class Dataset:
    def __init__(self):
        self._parent = None

    # ---- iteration ------------------------------------------------------------------
    def _rows(self):
        raise NotImplementedError

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        for row in self._rows():
            yield [np.asarray(c) if output_numpy else Tensor(np.asarray(c)) for c in row]

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        names = self.get_col_names()
        for row in self.create_tuple_iterator(output_numpy=output_numpy):
            yield dict(zip(names, row))

    def __iter__(self):
        return self.create_tuple_iterator()

    def get_dataset_size(self):
        return sum(1 for _ in self._rows())

    def get_col_names(self):
        return self._parent.get_col_names()

    def get_batch_size(self):
        return self._parent.get_batch_size() if self._parent else 1

    # ---- transformations ------------------------------------------------------------
    def shuffle(self, buffer_size):
        return _Shuffle(self, buffer_size)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, per_batch_map=None,
              input_columns=None, output_columns=None, **kwargs):
        return _Batch(self, batch_size, drop_remainder, per_batch_map)

    def map(self, operations=None, input_columns=None, output_columns=None, num_parallel_workers=None, **kwargs):
        return _Map(self, operations, input_columns, output_columns)

    def repeat(self, count=None):
        return _Repeat(self, count)

    def take(self, count=-1):
        return _Take(self, count)

    def skip(self, count):
        return _Skip(self, count)


def _shuffle_seed():
    from ..common.initializer import _next_seed
    return _next_seed()


class NumpySlicesDataset(Dataset):
    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None):
        super().__init__()
        if isinstance(data, dict):
            column_names = list(data.keys())
            cols = [np.asarray(v) for v in data.values()]
        elif isinstance(data, tuple):
            cols = [np.asarray(v) for v in data]
        else:
            cols = [np.asarray(data)]
        n = len(cols[0])
        for c in cols:
            if len(c) != n:
                raise ValueError(f"NumpySlicesDataset: columns have {n} and {len(c)} rows")
        self._cols = cols
        self._names = column_names or [f"column_{i}" for i in range(len(cols))]
        if len(self._names) != len(cols):
            raise ValueError(f"NumpySlicesDataset: {len(self._names)} column names for {len(cols)} columns")
        self._shuffle = True if shuffle is None else shuffle
        self._num_samples = num_samples
        self._shard = (num_shards, shard_id) if num_shards else None

    def _order(self, shuffled=True):
        n = len(self._cols[0])
        idx = np.arange(n)
        if self._shuffle and shuffled:
            idx = np.random.default_rng(_shuffle_seed()).permutation(n)
        if self._shard:
            k, i = self._shard
            idx = idx[i::k]
        if self._num_samples:
            idx = idx[:self._num_samples]
        return idx

    def _rows(self):
        for i in self._order():
            yield tuple(c[i] for c in self._cols)

    def get_dataset_size(self):
        return len(self._order(shuffled=False))

    def get_col_names(self):
        return list(self._names)


class GeneratorDataset(Dataset):
    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None, **kwargs):
        super().__init__()
        self._source = source
        self._names = [column_names] if isinstance(column_names, str) else list(column_names or ["column_0"])
        random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        self._shuffle = (True if shuffle is None else shuffle) and random_access
        self._num_samples = num_samples
        self._random_access = random_access

    def _rows(self):
        if self._random_access:
            n = len(self._source)
            idx = np.random.default_rng(_shuffle_seed()).permutation(n) if self._shuffle else range(n)
            it = (self._source[int(i)] for i in idx)
        else:
            it = iter(self._source() if callable(self._source) else self._source)
        for k, row in enumerate(it):
            if self._num_samples and k >= self._num_samples:
                return
            yield tuple(row) if isinstance(row, (tuple, list)) else (row,)

    def get_col_names(self):
        return list(self._names)


class _Shuffle(Dataset):
    def __init__(self, parent, buffer_size):
        super().__init__()
        if buffer_size < 2:
            raise ValueError(f"shuffle: buffer_size must be >= 2, got {buffer_size}")
        self._parent, self._size = parent, buffer_size

    def _rows(self):
        rng = np.random.default_rng(_shuffle_seed())
        buf = []
        for row in self._parent._rows():
            buf.append(row)
            if len(buf) >= self._size:
                yield buf.pop(int(rng.integers(len(buf))))
        while buf:
            yield buf.pop(int(rng.integers(len(buf))))

    def get_dataset_size(self):
        return self._parent.get_dataset_size()


class _Batch(Dataset):
    def __init__(self, parent, batch_size, drop_remainder, per_batch_map):
        super().__init__()
        if batch_size <= 0:
            raise ValueError(f"batch: batch_size must be > 0, got {batch_size}")
        self._parent, self._n, self._drop, self._map = parent, batch_size, drop_remainder, per_batch_map

    def _emit(self, rows):
        cols = [np.stack([np.asarray(r[i]) for r in rows]) for i in range(len(rows[0]))]
        if self._map is not None:
            out = self._map(*cols, None)
            cols = list(out) if isinstance(out, (tuple, list)) else [out]
        return tuple(cols)

    def _rows(self):
        rows = []
        for row in self._parent._rows():
            rows.append(row)
            if len(rows) == self._n:
                yield self._emit(rows)
                rows = []
        if rows and not self._drop:
            yield self._emit(rows)

    def get_dataset_size(self):
        n = self._parent.get_dataset_size()
        return n // self._n if self._drop else -(-n // self._n)

    def get_batch_size(self):
        return self._n


class _Map(Dataset):
    def __init__(self, parent, operations, input_columns, output_columns):
        super().__init__()
        self._parent = parent
        self._ops = operations if isinstance(operations, (list, tuple)) else [operations]
        names = parent.get_col_names()
        cols = input_columns if input_columns is not None else names[:1]
        cols = [cols] if isinstance(cols, str) else list(cols)
        for c in cols:
            if c not in names:
                raise ValueError(f"map: input column '{c}' is not one of {names}")
        self._in = [names.index(c) for c in cols]
        if output_columns is not None and list(output_columns if not isinstance(output_columns, str)
                                               else [output_columns]) != cols:
            raise NotImplementedError("map: output_columns different from input_columns are not supported yet")

    def _rows(self):
        for row in self._parent._rows():
            vals = [row[i] for i in self._in]
            for op in self._ops:
                out = op(*vals)
                vals = list(out) if isinstance(out, tuple) else [out]
            row = list(row)
            for i, v in zip(self._in, vals):
                row[i] = v
            yield tuple(row)

    def get_dataset_size(self):
        return self._parent.get_dataset_size()


class _Repeat(Dataset):
    def __init__(self, parent, count):
        super().__init__()
        if count is None or count < 0:
            raise NotImplementedError("repeat() without a count (forever) is not supported here")
        self._parent, self._count = parent, count

    def _rows(self):
        for _ in range(self._count):
            yield from self._parent._rows()

    def get_dataset_size(self):
        return self._parent.get_dataset_size() * self._count


class _Take(Dataset):
    def __init__(self, parent, count):
        super().__init__()
        self._parent, self._count = parent, count

    def _rows(self):
        for k, row in enumerate(self._parent._rows()):
            if 0 <= self._count <= k:
                return
            yield row

    def get_dataset_size(self):
        n = self._parent.get_dataset_size()
        return n if self._count < 0 else min(n, self._count)


class _Skip(Dataset):
    def __init__(self, parent, count):
        super().__init__()
        self._parent, self._count = parent, count

    def _rows(self):
        for k, row in enumerate(self._parent._rows()):
            if k >= self._count:
                yield row

    def get_dataset_size(self):
        return max(self._parent.get_dataset_size() - self._count, 0)

"""numpy reference for tests/hccl_app/hccl_collectives.c: the same input formula
(Value() there) and the expected output of every case, checked exactly (the
inputs are small integers, exact in every type, so the order in which ranks are
reduced does not matter)."""
import os

import ml_dtypes
import numpy as np

# HcclDataType values -> numpy types.
DTYPES = {0: np.int8, 1: np.int16, 2: np.int32, 3: np.float16, 4: np.float32, 5: np.int64, 6: np.uint64,
          7: np.uint8, 8: np.uint16, 9: np.uint32, 10: np.float64, 11: ml_dtypes.bfloat16}
SUM, PROD, MAX, MIN = 0, 1, 2, 3


def value(rank, n, case, op, dt):
    """Rank `rank`'s input of `n` elements in case `case` (Value() in the C program)."""
    i = np.arange(n, dtype=np.int64)
    unsigned = np.dtype(dt).kind == "u"
    if op == PROD:
        v = np.where((rank + (i % 97) + case) % 3 == 0, 2, 1)
        if not unsigned:
            v = np.where((rank + i) % 2 == 1, -v, v)
    else:
        v = (rank * 7 + (i % 1009) * 3 + case) % 11
        if not unsigned:
            v = v - 5
    return v.astype(np.float64)


def reduce(arrays, op, dt):
    """Reduction across ranks with the type's own wrapping (integers) or rounding."""
    stack = np.stack([a.astype(dt) for a in arrays])
    if np.dtype(dt).kind in "iu":
        with np.errstate(over="ignore"):
            if op == SUM:
                return np.sum(stack, axis=0, dtype=dt)
            if op == PROD:
                return np.prod(stack, axis=0, dtype=dt)
    else:
        work = stack.astype(np.float64)
        if op == SUM:
            return np.sum(work, axis=0).astype(dt)
        if op == PROD:
            return np.prod(work, axis=0).astype(dt)
    if op == MAX:
        return np.max(stack, axis=0)
    return np.min(stack, axis=0)


def v_count(r, count):
    return count // 2 + r % 3


def vc_count(src, dst, count):
    return count // 4 + (src + 2 * dst) % 3


def a2av_count(src, dst, count):
    return (src + dst) % 3 + count // 2


def expected(kind, dt, op, count, root, case, rank, n):
    """The output rank `rank` of `n` must hold (None: nothing is written)."""
    if kind == "allreduce":
        return reduce([value(r, count, case, op, dt) for r in range(n)], op, dt)
    if kind == "reduce":
        if rank != root:
            return np.zeros(0, dt)
        return reduce([value(r, count, case, op, dt) for r in range(n)], op, dt)
    if kind == "reducescatter":
        full = reduce([value(r, count * n, case, op, dt) for r in range(n)], op, dt)
        return full[rank * count:(rank + 1) * count]
    if kind == "broadcast":
        return value(root, count, case, op, dt).astype(dt)
    if kind == "allgather":
        return np.concatenate([value(r, count, case, op, dt).astype(dt) for r in range(n)])
    if kind == "scatter":
        return value(root, count * n, case, op, dt).astype(dt)[rank * count:(rank + 1) * count]
    if kind == "alltoall":
        return np.concatenate([value(s, count * n, case, op, dt).astype(dt)[rank * count:(rank + 1) * count]
                               for s in range(n)])
    if kind == "alltoallv":
        parts = []
        for s in range(n):
            src = value(s, (count // 2 + 2) * n, case, op, dt).astype(dt)
            # Rank s packs its blocks in reverse rank order: block d starts after the blocks of d+1 .. n-1.
            off = sum(a2av_count(s, d, count) for d in range(rank + 1, n))
            parts.append(src[off:off + a2av_count(s, rank, count)])
        return np.concatenate(parts)
    if kind in ("sendrecv", "batch"):
        return value((rank + n - 1) % n, count, case, op, dt).astype(dt)
    if kind == "allgatherv":  # blocks in reverse rank order
        return np.concatenate([value(s, v_count(s, count), case, op, dt).astype(dt) for s in reversed(range(n))])
    if kind == "reducescatterv":
        counts = [v_count(q, count) for q in range(n)]
        displ = sum(counts[q] for q in range(rank + 1, n))
        total = sum(counts)
        return reduce([value(q, total, case, op, dt)[displ:displ + counts[rank]] for q in range(n)], op, dt)
    if kind == "alltoallvc":
        parts = []
        for i in range(n):
            src = value(i, sum(vc_count(i, j, count) for j in range(n)), case, op, dt).astype(dt)
            off = sum(vc_count(i, j, count) for j in range(rank))
            parts.append(src[off:off + vc_count(i, rank, count)])
        return np.concatenate(parts)
    if kind == "barrier":
        return np.zeros(0, dt)
    raise ValueError(kind)


def check_outputs(out_dir, n):
    """Compares every case of every rank; returns the number of cases checked."""
    lines = open(os.path.join(out_dir, "cases.txt")).read().split("\n")
    checked = 0
    for line in filter(None, lines):
        case, kind, t, op, count, root, _inplace = line.split()
        case, t, op, count, root = int(case), int(t), int(op), int(count), int(root)
        dt = DTYPES[t]
        for rank in range(n):
            path = os.path.join(out_dir, f"r{rank}_c{case}.bin")
            got = np.fromfile(path, dtype=np.uint8).view(dt)
            want = expected(kind, dt, op, count, root, case, rank, n)
            assert got.shape == want.shape, f"case {line!r} rank {rank}: {got.size} elements, expected {want.size}"
            if not np.array_equal(got.astype(np.float64), want.astype(np.float64)):
                bad = np.flatnonzero(got.astype(np.float64) != want.astype(np.float64))[0]
                raise AssertionError(f"case {line!r} rank {rank}: element {bad} is {got[bad]}, expected {want[bad]}")
        checked += 1
    return checked

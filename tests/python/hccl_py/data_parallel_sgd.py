"""Data-parallel training, as a user would write it with acl + hccl: each rank
computes the gradient of a least-squares loss on its shard of the batch, the
ranks all-reduce the gradients, and every rank applies the same averaged
update. Writes the final weights to OUT/w<rank>.npy.

    python3 data_parallel_sgd.py RANK NRANKS ROOT_FILE OUT
"""
import os
import sys
import time

import numpy as np

import acl
import hccl

rank, nranks, root_file, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
assert acl.init() == 0
assert acl.rt.set_device(rank % 8) == 0
stream, ret = acl.rt.create_stream()
assert ret == 0

if rank == 0:
    info, ret = hccl.get_root_info()
    assert ret == 0, hccl.get_error_string(ret)
    with open(root_file + ".tmp", "wb") as f:
        f.write(info)
    os.rename(root_file + ".tmp", root_file)
else:
    while not os.path.exists(root_file):
        time.sleep(0.01)
    info = open(root_file, "rb").read()
comm, ret = hccl.comm_init_root_info(nranks, info, rank)
assert ret == 0, hccl.get_error_string(ret)

rng = np.random.default_rng(7)          # the same data on every rank; each takes its shard
x = rng.standard_normal((96, 5))
y = x @ np.array([1.5, -2.0, 0.5, 3.0, -1.0]) + 0.1 * rng.standard_normal(96)
shard = slice(rank * 96 // nranks, (rank + 1) * 96 // nranks)
w = np.zeros(5)
for step in range(40):
    xs, ys = x[shard], y[shard]
    grad = 2 * xs.T @ (xs @ w - ys)                  # sum over this rank's rows
    total, ret = hccl.all_reduce_numpy(grad, hccl.HCCL_REDUCE_SUM, comm, stream)
    assert ret == 0, hccl.get_error_string(ret)
    w -= 0.01 * total / 96
np.save(os.path.join(out, f"w{rank}.npy"), w)
assert hccl.comm_destroy(comm) == 0
assert acl.rt.destroy_stream(stream) == 0
acl.finalize()
print(f"rank {rank}: trained")

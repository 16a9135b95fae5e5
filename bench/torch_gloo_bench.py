#!/usr/bin/env python3
"""torch.distributed's gloo backend, timed as bench/mpi_collectives_bench.c
times OpenMPI: the peer bench/hccl_bench.py runs beside ours when torch is
installed. Starts NRANKS processes of itself on this host.

    python3 bench/torch_gloo_bench.py allreduce 2 -b 1K -e 64M -f 8 -n 10 -w 3

Prints hccl_test's columns from rank 0 (data_size, aveg_time, alg_bandwidth,
check_result = NULL, bus_bandwidth); sizes and bus-bandwidth factors as in the
MPI driver. An operation the backend lacks prints "unsupported: <why>"."""
import os
import socket
import subprocess
import sys
import time


def parse_size(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * units[s[-1].upper()]) if s[-1].upper() in units else int(s)


def worker(op, rank, n, port, lo, hi, factor, iters, warmup):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    if rank == 0:
        print(f"{'data_size(Bytes):':<15} | {'aveg_time(us):':<12} | {'alg_bandwidth(GB/s):':<18} | "
              f"{'check_result:':<13} | bus_bandwidth(GB/s):", flush=True)
    size = lo
    while size <= hi:
        elems = max(size // 4, 1)
        count = elems if op == "allreduce" else (elems + n - 1) // n
        full = torch.arange(count * n, dtype=torch.float32) % 7
        part = full[:count].clone()
        if op == "allreduce":
            run = lambda: dist.all_reduce(part)
        elif op == "allgather":
            outs = torch.empty(count * n, dtype=torch.float32)
            run = lambda: dist.all_gather_into_tensor(outs, part)
        elif op == "reducescatter":
            out = torch.empty(count, dtype=torch.float32)
            run = lambda: dist.reduce_scatter_tensor(out, full)
        else:
            out = torch.empty(count * n, dtype=torch.float32)
            run = lambda: dist.all_to_all_single(out, full)
        try:
            for i in range(warmup + iters):
                if i == warmup:
                    dist.barrier()
                    t0 = time.perf_counter()
                run()
        except (RuntimeError, NotImplementedError) as e:
            if rank == 0:
                print(f"unsupported: {str(e).splitlines()[0]}", flush=True)
            break
        us = torch.tensor([(time.perf_counter() - t0) * 1e6 / iters], dtype=torch.float64)
        dist.all_reduce(us, op=dist.ReduceOp.MAX)
        data = count * 4 if op == "allreduce" else count * 4 * n
        alg = data / us.item() * 1e-3
        bus = alg * (2.0 * (n - 1) / n if op == "allreduce" else (n - 1) / n)
        if rank == 0:
            print(f"{data:<17} | {us.item():<14.2f} | {alg:<20.5f} | {'NULL':<13} | {bus:.5f}", flush=True)
        size = int(size * factor)
    dist.destroy_process_group()


def main():
    op, n = sys.argv[1], int(sys.argv[2])
    flags = dict(zip(sys.argv[3::2], sys.argv[4::2]))
    lo, hi = parse_size(flags.get("-b", "1K")), parse_size(flags.get("-e", "64M"))
    factor, iters, warmup = float(flags.get("-f", "2")), int(flags.get("-n", "10")), int(flags.get("-w", "3"))
    if "OC_TORCH_RANK" in os.environ:
        worker(op, int(os.environ["OC_TORCH_RANK"]), n, int(os.environ["OC_TORCH_PORT"]), lo, hi, factor, iters,
               warmup)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable] + sys.argv, env=dict(os.environ, OC_TORCH_RANK=str(r),
                                                                    OC_TORCH_PORT=str(port)))
             for r in range(n)]
    sys.exit(max(p.wait() for p in procs))


if __name__ == "__main__":
    main()

/* The peer for bench/hccl_bench.py: OpenMPI's own collectives on host memory,
 * timed like hccl_test (the mean of -n iterations after -w untimed ones, the
 * slowest rank's), printing the same columns:
 *
 *   mpirun -n 2 build/mpi_collectives_bench allreduce -b 1K -e 64M -f 4 -n 20 -w 5
 *
 * Operations: allreduce, allgather, reducescatter, alltoall (float32, sum). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long Size(const char* s) {
  char* end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  if (*end == 'M' || *end == 'm') v *= 1024.0 * 1024;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return (unsigned long long)v;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpi_collectives_bench allreduce|allgather|reducescatter|alltoall [-b -e -f -n -w]\n");
    MPI_Finalize();
    return 2;
  }
  const char* op = argv[1];
  unsigned long long lo = 1024, hi = 64ull << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) lo = Size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) hi = Size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
  }
  const int all = !strcmp(op, "allreduce"), gather = !strcmp(op, "allgather"), rs = !strcmp(op, "reducescatter"),
            a2a = !strcmp(op, "alltoall");
  if (!(all || gather || rs || a2a)) {
    if (rank == 0) fprintf(stderr, "unknown operation %s\n", op);
    MPI_Finalize();
    return 2;
  }
  if (rank == 0)
    printf("%-15s | %-12s | %-18s | %-13s | %s\n", "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):",
           "check_result:", "bus_bandwidth(GB/s):");
  for (unsigned long long bytes = lo; bytes <= hi; bytes = (unsigned long long)(bytes * factor)) {
    unsigned long long elems = bytes / 4 ? bytes / 4 : 1;
    unsigned long long count = all ? elems : (elems + (unsigned long long)n - 1) / (unsigned long long)n;
    size_t in_elems = all || gather ? count : count * (size_t)n;
    size_t out_elems = all || rs ? count : count * (size_t)n;
    float* in = malloc(in_elems * 4);
    float* out = malloc(out_elems * 4);
    for (size_t i = 0; i < in_elems; ++i) in[i] = (float)((i + (size_t)rank) % 7);
    int* counts = malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < n; ++r) counts[r] = (int)count;
    double t0 = 0;
    for (int it = 0; it < warmup + iters; ++it) {
      if (it == warmup) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
      }
      if (all) MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      else if (gather) MPI_Allgather(in, (int)count, MPI_FLOAT, out, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
      else if (rs) MPI_Reduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      else MPI_Alltoall(in, (int)count, MPI_FLOAT, out, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
    }
    double us = (MPI_Wtime() - t0) * 1e6 / iters, slowest;
    MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double data = all ? (double)count * 4 : (double)count * 4 * n;
    double alg = data / slowest * 1e-3;
    double bus = alg * (all ? 2.0 * (n - 1) / n : (double)(n - 1) / n);
    if (rank == 0) printf("%-17.0f | %-14.2f | %-20.5f | %-13s | %.5f\n", data, slowest, alg, "NULL", bus);
    free(in);
    free(out);
    free(counts);
  }
  MPI_Finalize();
  return 0;
}

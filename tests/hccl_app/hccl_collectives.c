/* An HCCL program written the way CANN's are: one process per rank, a device
 * per rank (rank % device count), the root info from HcclGetRootInfo handed to
 * the other ranks out of band (here: a file), device buffers from aclrtMalloc,
 * every operation queued on a stream. It runs a battery of collectives over
 * every data type and reduction and writes each result to OUT/r<rank>_c<case>.bin;
 * rank 0 writes OUT/cases.txt, one line per case: id kind dtype op count root
 * inplace. tests/python/test_hccl.py computes the expected results with numpy
 * from the same input formula (Value() below) and compares.
 *
 *   hccl_collectives rootinfo RANK NRANKS ROOT_FILE OUT [quick|large]
 *   hccl_collectives ranktable RANK RANK_TABLE OUT [quick|large]
 *       quick: 4 types, counts 1 and 1031; large: 4 types, counts 1 and 100003
 *   hccl_collectives all NDEV OUT [quick]      (HcclCommInitAll, one process)
 *   hccl_collectives loop RANK NRANKS ROOT_FILE ITERS
 *       ITERS all-reduces, each checked through an event recorded after it;
 *       a failure prints "HCCL_FAILED acl=<aclError> async=<HcclResult> <msg>"
 *       and exits 3 (the fault tests kill a rank meanwhile)
 *   hccl_collectives mismatch RANK NRANKS ROOT_FILE
 *       rank 1 calls an all-reduce of another count than the others; prints
 *       the result as in loop mode
 *   hccl_collectives subcomm RANK NRANKS ROOT_FILE
 *       even and odd ranks form sub-communicators and all-reduce their ranks
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hccl/hccl.h"

#define CHECK(call)                                                                                        \
  do {                                                                                                     \
    int rc_ = (int)(call);                                                                                 \
    if (rc_ != 0) {                                                                                        \
      fprintf(stderr, "rank %d: %s failed with %d (%s) at line %d\n", g_rank, #call, rc_,                   \
              aclGetRecentErrMsg(), __LINE__);                                                             \
      exit(2);                                                                                             \
    }                                                                                                      \
  } while (0)

static int g_rank = -1;

enum Kind { ALLREDUCE, BROADCAST, ALLGATHER, REDUCESCATTER, REDUCE, SCATTER, ALLTOALL, ALLTOALLV, SENDRECV, BATCH, BARRIER,
            ALLGATHERV, REDUCESCATTERV, ALLTOALLVC };
static const char* kKindNames[] = {"allreduce", "broadcast", "allgather", "reducescatter", "reduce", "scatter",
                                   "alltoall", "alltoallv", "sendrecv", "batch", "barrier", "allgatherv",
                                   "reducescatterv", "alltoallvc"};

/* Block sizes of the V forms (the same formulas in hccl_reference.py). */
static uint64_t VCount(int r, uint64_t count) { return count / 2 + (uint64_t)(r % 3); }
static uint64_t VcCount(int from, int to, uint64_t count) { return count / 4 + (uint64_t)((from + 2 * to) % 3); }

static size_t Size(HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    default: return 8;
  }
}

static int IsUnsigned(HcclDataType t) {
  return t == HCCL_DATA_TYPE_UINT8 || t == HCCL_DATA_TYPE_UINT16 || t == HCCL_DATA_TYPE_UINT32 || t == HCCL_DATA_TYPE_UINT64;
}

/* Element i of rank r's input in case c (small integers: exact in every type). */
static double Value(int r, uint64_t i, int c, HcclReduceOp op, HcclDataType t) {
  if (op == HCCL_REDUCE_PROD) {
    double v = ((r + (int)(i % 97) + c) % 3 == 0) ? 2.0 : 1.0;
    if (!IsUnsigned(t) && (r + i) % 2) v = -v;
    return v;
  }
  int v = (int)((r * 7 + (i % 1009) * 3 + (uint64_t)c) % 11);
  return IsUnsigned(t) ? v : v - 5;
}

static uint16_t FloatToHalf(float f) { /* exact for the small integers used here */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t m = (x >> 13) & 0x3ffu;
  if (f == 0.0f) return (uint16_t)sign;
  return (uint16_t)(sign | ((uint32_t)e << 10) | m);
}

static void Put(void* buf, uint64_t i, double v, HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: ((int8_t*)buf)[i] = (int8_t)v; break;
    case HCCL_DATA_TYPE_UINT8: ((uint8_t*)buf)[i] = (uint8_t)v; break;
    case HCCL_DATA_TYPE_INT16: ((int16_t*)buf)[i] = (int16_t)v; break;
    case HCCL_DATA_TYPE_UINT16: ((uint16_t*)buf)[i] = (uint16_t)v; break;
    case HCCL_DATA_TYPE_INT32: ((int32_t*)buf)[i] = (int32_t)v; break;
    case HCCL_DATA_TYPE_UINT32: ((uint32_t*)buf)[i] = (uint32_t)v; break;
    case HCCL_DATA_TYPE_INT64: ((int64_t*)buf)[i] = (int64_t)v; break;
    case HCCL_DATA_TYPE_UINT64: ((uint64_t*)buf)[i] = (uint64_t)v; break;
    case HCCL_DATA_TYPE_FP32: ((float*)buf)[i] = (float)v; break;
    case HCCL_DATA_TYPE_FP64: ((double*)buf)[i] = v; break;
    case HCCL_DATA_TYPE_FP16: ((uint16_t*)buf)[i] = FloatToHalf((float)v); break;
    case HCCL_DATA_TYPE_BFP16: {
      float f = (float)v;
      uint32_t x;
      memcpy(&x, &f, 4);
      ((uint16_t*)buf)[i] = (uint16_t)(x >> 16);
      break;
    }
    default: break;
  }
}

typedef struct {
  int nranks;
  HcclComm comm;
  aclrtStream stream;
  const char* out;
  FILE* manifest;
  int rank;
} Ctx;

static void* DevAlloc(size_t bytes) {
  void* p = NULL;
  CHECK(aclrtMalloc(&p, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
  return p;
}

static void Fill(void* dev, uint64_t n, int c, HcclReduceOp op, HcclDataType t, int rank) {
  size_t bytes = n * Size(t);
  void* host = malloc(bytes ? bytes : 1);
  for (uint64_t i = 0; i < n; ++i) Put(host, i, Value(rank, i, c, op, t), t);
  if (bytes) CHECK(aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  free(host);
}

static void Save(const Ctx* x, int c, const void* dev, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/r%d_c%d.bin", x->out, x->rank, c);
  void* host = malloc(bytes ? bytes : 1);
  if (bytes) CHECK(aclrtMemcpy(host, bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  FILE* f = fopen(path, "wb");
  if (!f || (bytes && fwrite(host, 1, bytes, f) != bytes)) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
  free(host);
}

static int g_case = 0;

/* One case: fill the inputs, run, synchronise, save this rank's output. */
static void RunCase(Ctx* x, enum Kind kind, HcclDataType t, HcclReduceOp op, uint64_t count, int root, int inplace) {
  const int c = g_case++;
  const int n = x->nranks, r = x->rank;
  const size_t e = Size(t);
  if (x->manifest) fprintf(x->manifest, "%d %s %d %d %llu %d %d\n", c, kKindNames[kind], (int)t, (int)op,
                           (unsigned long long)count, root, inplace);
  size_t in_elems = count, out_elems = count;
  if (kind == ALLGATHER) out_elems = count * (uint64_t)n;
  if (kind == REDUCESCATTER || kind == SCATTER || kind == ALLTOALL || kind == ALLTOALLV) in_elems = count * (uint64_t)n;
  if (kind == ALLTOALL) out_elems = count * (uint64_t)n;
  if (kind == ALLTOALLV) in_elems = out_elems = (count / 2 + 2) * (uint64_t)n;
  uint64_t vtotal = 0, vc_in = 0, vc_out = 0;
  for (int q = 0; q < n; ++q) {
    vtotal += VCount(q, count);
    vc_in += VcCount(r, q, count);
    vc_out += VcCount(q, r, count);
  }
  if (kind == ALLGATHERV) in_elems = VCount(r, count), out_elems = vtotal;
  if (kind == REDUCESCATTERV) in_elems = vtotal, out_elems = VCount(r, count);
  if (kind == ALLTOALLVC) in_elems = vc_in, out_elems = vc_out;
  void* in = DevAlloc(in_elems * e);
  /* inplace 1: out = in; 2 (reduce-scatter): out = this rank's own block of in, as NCCL's in-place form */
  void* out = inplace == 2 ? (char*)in + (size_t)r * count * e : inplace ? in : DevAlloc(out_elems * e);
  Fill(in, in_elems, c, op, t, r);
  if (!inplace && out_elems) CHECK(aclrtMemset(out, out_elems * e, 0, out_elems * e));
  switch (kind) {
    case ALLREDUCE: CHECK(HcclAllReduce(in, out, count, t, op, x->comm, x->stream)); break;
    case BROADCAST: CHECK(HcclBroadcast(in, count, t, (uint32_t)root, x->comm, x->stream)); out = in; break;
    case ALLGATHER: CHECK(HcclAllGather(in, out, count, t, x->comm, x->stream)); break;
    case REDUCESCATTER: CHECK(HcclReduceScatter(in, out, count, t, op, x->comm, x->stream)); break;
    case REDUCE: CHECK(HcclReduce(in, out, count, t, op, (uint32_t)root, x->comm, x->stream)); break;
    case SCATTER: CHECK(HcclScatter(in, out, count, t, (uint32_t)root, x->comm, x->stream)); break;
    case ALLTOALL: CHECK(HcclAlltoAll(in, count, t, out, count, t, x->comm, x->stream)); break;
    case ALLTOALLV: {
      /* Rank r sends (r + d) % 3 + count/2 elements to rank d, packed in reverse rank order. */
      uint64_t sc[64], sd[64], rc[64], rd[64], off = 0;
      for (int d = n - 1; d >= 0; --d) {
        sc[d] = (uint64_t)((r + d) % 3) + count / 2;
        sd[d] = off;
        off += sc[d];
      }
      off = 0;
      for (int s = 0; s < n; ++s) {
        rc[s] = (uint64_t)((s + r) % 3) + count / 2;
        rd[s] = off;
        off += rc[s];
      }
      CHECK(HcclAlltoAllV(in, sc, sd, t, out, rc, rd, t, x->comm, x->stream));
      break;
    }
    case SENDRECV: {
      /* A ring: even ranks send first, odd ranks receive first. */
      uint32_t next = (uint32_t)((r + 1) % n), prev = (uint32_t)((r + n - 1) % n);
      if (r % 2 == 0) {
        CHECK(HcclSend(in, count, t, next, x->comm, x->stream));
        CHECK(HcclRecv(out, count, t, prev, x->comm, x->stream));
      } else {
        CHECK(HcclRecv(out, count, t, prev, x->comm, x->stream));
        CHECK(HcclSend(in, count, t, next, x->comm, x->stream));
      }
      break;
    }
    case BATCH: {
      /* Everyone sends to next and receives from prev in one call. */
      HcclSendRecvItem items[2] = {{HCCL_SEND, in, count, t, (uint32_t)((r + 1) % n)},
                                   {HCCL_RECV, out, count, t, (uint32_t)((r + n - 1) % n)}};
      CHECK(HcclBatchSendRecv(items, 2, x->comm, x->stream));
      break;
    }
    case BARRIER: CHECK(HcclBarrier(x->comm, x->stream)); break;
    case ALLGATHERV:
    case REDUCESCATTERV: {
      /* Blocks packed in reverse rank order: block s starts after blocks s+1 .. n-1. */
      uint64_t counts[64], displs[64], off = 0;
      for (int q = n - 1; q >= 0; --q) {
        counts[q] = VCount(q, count);
        displs[q] = off;
        off += counts[q];
      }
      if (kind == ALLGATHERV)
        CHECK(HcclAllGatherV(in, VCount(r, count), out, counts, displs, t, x->comm, x->stream));
      else
        CHECK(HcclReduceScatterV(in, counts, displs, out, VCount(r, count), t, op, x->comm, x->stream));
      break;
    }
    case ALLTOALLVC: {
      uint64_t m[64 * 64];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) m[i * n + j] = VcCount(i, j, count);
      CHECK(HcclAlltoAllVC(in, m, t, out, t, x->comm, x->stream));
      break;
    }
  }
  CHECK(aclrtSynchronizeStream(x->stream));
  size_t save = out_elems * e;
  if (kind == REDUCESCATTER || kind == SCATTER) save = count * e;
  if (kind == ALLTOALLV) {
    save = 0;
    for (int s = 0; s < n; ++s) save += ((uint64_t)((s + r) % 3) + count / 2) * e;
  }
  if (kind == BARRIER) save = 0;
  if (kind == REDUCE && r != root) save = 0;
  if (kind == ALLGATHERV || kind == REDUCESCATTERV || kind == ALLTOALLVC) save = out_elems * e;
  Save(x, c, out, save);
  if (!inplace) CHECK(aclrtFree(out));
  CHECK(aclrtFree(in));
}

static void Battery(Ctx* x, int quick) {
  const HcclDataType all_types[] = {HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT16, HCCL_DATA_TYPE_INT32,
                                    HCCL_DATA_TYPE_INT64, HCCL_DATA_TYPE_UINT8, HCCL_DATA_TYPE_UINT16,
                                    HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_FP16,
                                    HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP64, HCCL_DATA_TYPE_BFP16};
  const HcclReduceOp ops[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN};
  const uint64_t counts_full[] = {0, 1, 7, 1031};
  const uint64_t counts_quick[] = {1, 1031};
  /* large: more than one step of a small shared-memory slot (HCCL_BUFFSIZE=1) */
  const uint64_t counts_large[] = {1, 100003};
  const uint64_t* counts = quick == 2 ? counts_large : quick ? counts_quick : counts_full;
  const int ncounts = quick ? 2 : 4;
  const int ntypes = quick ? 4 : 12;
  const HcclDataType quick_types[] = {HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_BFP16};
  const HcclDataType large_types[] = {HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP64};
  const HcclDataType* types = quick == 2 ? large_types : quick ? quick_types : all_types;
  const int root = x->nranks - 1;
  for (int ti = 0; ti < ntypes; ++ti) {
    HcclDataType t = types[ti];
    for (int ci = 0; ci < ncounts; ++ci) {
      uint64_t n = counts[ci];
      for (int oi = 0; oi < 4; ++oi) {
        RunCase(x, ALLREDUCE, t, ops[oi], n, 0, 0);
        RunCase(x, REDUCESCATTER, t, ops[oi], n, 0, 0);
        RunCase(x, REDUCE, t, ops[oi], n, root, 0);
        RunCase(x, REDUCESCATTERV, t, ops[oi], n, 0, 0);
      }
      RunCase(x, ALLGATHERV, t, HCCL_REDUCE_SUM, n, 0, 0);
      RunCase(x, ALLTOALLVC, t, HCCL_REDUCE_SUM, n, 0, 0);
      RunCase(x, ALLREDUCE, t, HCCL_REDUCE_SUM, n, 0, 1);
      RunCase(x, REDUCESCATTER, t, HCCL_REDUCE_SUM, n, 0, 1);
      RunCase(x, REDUCESCATTER, t, HCCL_REDUCE_SUM, n, 0, 2);
      RunCase(x, BROADCAST, t, HCCL_REDUCE_SUM, n, root, 1);
      RunCase(x, ALLGATHER, t, HCCL_REDUCE_SUM, n, 0, 0);
      RunCase(x, SCATTER, t, HCCL_REDUCE_SUM, n, root, 0);
      RunCase(x, ALLTOALL, t, HCCL_REDUCE_SUM, n, 0, 0);
      RunCase(x, ALLTOALLV, t, HCCL_REDUCE_SUM, n, 0, 0);
      if (x->nranks > 1) {
        RunCase(x, SENDRECV, t, HCCL_REDUCE_SUM, n, 0, 0);
        RunCase(x, BATCH, t, HCCL_REDUCE_SUM, n, 0, 0);
      }
    }
  }
  RunCase(x, BARRIER, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, 0, 0);
}

static void Finish(Ctx* x) {
  uint32_t size = 0, rank = 0;
  CHECK(HcclGetRankSize(x->comm, &size));
  CHECK(HcclGetRankId(x->comm, &rank));
  if ((int)size != x->nranks || (int)rank != x->rank) {
    fprintf(stderr, "rank %d: HcclGetRankSize/Id say %u/%u\n", x->rank, size, rank);
    exit(2);
  }
  HcclResult async = HCCL_E_INTERNAL;
  CHECK(HcclGetCommAsyncError(x->comm, &async));
  CHECK(async);
}

/* Rank 0 publishes the root info in `root_file`; the others wait for it. */
static void JoinRootInfo(int rank, int nranks, const char* root_file, HcclComm* comm) {
  HcclRootInfo info;
  if (rank == 0) {
    CHECK(HcclGetRootInfo(&info));
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", root_file);
    FILE* f = fopen(tmp, "wb");
    fwrite(&info, 1, sizeof info, f);
    fclose(f);
    rename(tmp, root_file);
  } else {
    FILE* f = NULL;
    for (int tries = 0; tries < 3000 && !(f = fopen(root_file, "rb")); ++tries) usleep(10000);
    if (!f || fread(&info, 1, sizeof info, f) != sizeof info) {
      fprintf(stderr, "rank %d: no root info in %s\n", rank, root_file);
      exit(2);
    }
    fclose(f);
  }
  CHECK(HcclCommInitRootInfo((uint32_t)nranks, &info, (uint32_t)rank, comm));
}

/* Syncs the stream and reports a failure as the fault tests expect. */
static int Reported(aclrtStream stream, HcclComm comm) {
  aclError e = aclrtSynchronizeStream(stream);
  if (e == ACL_SUCCESS) return 0;
  HcclResult async = HCCL_SUCCESS;
  HcclGetCommAsyncError(comm, &async);
  printf("HCCL_FAILED acl=%d async=%d %s\n", (int)e, (int)async, aclGetRecentErrMsg());
  fflush(stdout);
  return 1;
}

static int FaultModes(const char* mode, int rank, int nranks, const char* root_file, int iters) {
  HcclComm comm;
  aclrtStream stream;
  uint32_t ndevices = 0;
  CHECK(aclrtGetDeviceCount(&ndevices));
  CHECK(aclrtSetDevice(rank % (int)ndevices));
  JoinRootInfo(rank, nranks, root_file, &comm);
  CHECK(aclrtCreateStream(&stream));
  const uint64_t count = 4096;
  float* host = (float*)malloc(count * 4);
  void* dev = DevAlloc(count * 4);
  if (strcmp(mode, "loop") == 0) {
    aclrtEvent ev;
    CHECK(aclrtCreateEvent(&ev));
    for (int it = 0; it < iters; ++it) {
      for (uint64_t i = 0; i < count; ++i) host[i] = (float)(rank + 1);
      CHECK(aclrtMemcpy(dev, count * 4, host, count * 4, ACL_MEMCPY_HOST_TO_DEVICE));
      CHECK(HcclAllReduce(dev, dev, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
      CHECK(aclrtRecordEvent(ev, stream));
      /* The event follows the all-reduce on the stream: once it completes, the result is there. */
      if (aclrtSynchronizeEvent(ev) != ACL_SUCCESS || Reported(stream, comm)) {
        free(host);
        return 3;
      }
      CHECK(aclrtMemcpy(host, count * 4, dev, count * 4, ACL_MEMCPY_DEVICE_TO_HOST));
      const float want = (float)(nranks * (nranks + 1) / 2);
      for (uint64_t i = 0; i < count; ++i)
        if (host[i] != want) {
          fprintf(stderr, "rank %d iteration %d: element %llu is %g, expected %g\n", rank, it,
                  (unsigned long long)i, host[i], want);
          free(host);
          return 4;
        }
    }
    printf("rank %d: %d all-reduces checked\n", rank, iters);
  } else if (strcmp(mode, "mismatch") == 0) {
    CHECK(HcclAllReduce(dev, dev, rank == 1 ? count - 1 : count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    if (Reported(stream, comm)) {
      free(host);
      return 3;
    }
    printf("rank %d: no error\n", rank);
  } else if (strcmp(mode, "subcomm") == 0) {
    uint32_t ids[64], n = 0, me = 0;
    for (int r = rank % 2; r < nranks; r += 2) {
      if (r == rank) me = n;
      ids[n++] = (uint32_t)r;
    }
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    HcclComm sub = NULL;
    CHECK(HcclCreateSubCommConfig(&comm, n, ids, (uint64_t)(rank % 2), me, &config, &sub));
    uint32_t sub_size = 0, sub_rank = 0;
    CHECK(HcclGetRankSize(sub, &sub_size));
    CHECK(HcclGetRankId(sub, &sub_rank));
    host[0] = (float)rank;
    CHECK(aclrtMemcpy(dev, 4, host, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(HcclAllReduce(dev, dev, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, sub, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(host, 4, dev, 4, ACL_MEMCPY_DEVICE_TO_HOST));
    float want = 0;
    for (uint32_t i = 0; i < n; ++i) want += (float)ids[i];
    if (sub_size != n || sub_rank != me || host[0] != want) {
      fprintf(stderr, "rank %d: sub-communicator size %u rank %u sum %g, expected %u %u %g\n", rank, sub_size,
              sub_rank, host[0], n, me, want);
      free(host);
      return 4;
    }
    /* The parent still works after the split. */
    CHECK(HcclAllReduce(dev, dev, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(HcclCommDestroy(sub));
    printf("rank %d: sub-communicator of %u ranks, sum %g\n", rank, n, host[0]);
  }
  CHECK(aclrtFree(dev));
  free(host);
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclFinalize());
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: see the comment at the top of hccl_collectives.c\n");
    return 2;
  }
  CHECK(aclInit(NULL));
  uint32_t ndevices = 0;
  CHECK(aclrtGetDeviceCount(&ndevices));
  const char* mode = argv[1];
  if ((strcmp(mode, "loop") == 0 || strcmp(mode, "mismatch") == 0 || strcmp(mode, "subcomm") == 0) && argc >= 5) {
    g_rank = atoi(argv[2]);
    return FaultModes(mode, g_rank, atoi(argv[3]), argv[4], argc > 5 ? atoi(argv[5]) : 1);
  }
  if (strcmp(mode, "all") == 0) {
    int ndev = atoi(argv[2]);
    const char* out = argv[3];
    int quick = argc > 4;
    int32_t devices[64];
    HcclComm comms[64];
    aclrtStream streams[64];
    for (int i = 0; i < ndev; ++i) devices[i] = i;
    g_rank = 0;
    CHECK(HcclCommInitAll((uint32_t)ndev, devices, comms));
    for (int i = 0; i < ndev; ++i) {
      CHECK(aclrtSetDevice(devices[i]));
      CHECK(aclrtCreateStream(&streams[i]));
    }
    /* One all-reduce per rank, issued from this thread on each device's stream. */
    void* bufs[64];
    const uint64_t count = 1031;
    for (int i = 0; i < ndev; ++i) {
      CHECK(aclrtSetDevice(devices[i]));
      bufs[i] = DevAlloc(count * 4);
      Fill(bufs[i], count, 0, HCCL_REDUCE_SUM, HCCL_DATA_TYPE_FP32, i);
      CHECK(HcclAllReduce(bufs[i], bufs[i], count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[i], streams[i]));
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/cases.txt", out);
    FILE* m = fopen(path, "w");
    fprintf(m, "0 allreduce %d %d %llu 0 1\n", (int)HCCL_DATA_TYPE_FP32, (int)HCCL_REDUCE_SUM, (unsigned long long)count);
    fclose(m);
    for (int i = 0; i < ndev; ++i) {
      CHECK(aclrtSynchronizeStream(streams[i]));
      Ctx x = {ndev, comms[i], streams[i], out, NULL, i};
      Save(&x, 0, bufs[i], count * 4);
      CHECK(aclrtFree(bufs[i]));
      CHECK(HcclCommDestroy(comms[i]));
      CHECK(aclrtDestroyStream(streams[i]));
    }
    (void)quick;
    CHECK(aclFinalize());
    printf("hccl_collectives all: %d ranks done\n", ndev);
    return 0;
  }

  Ctx x;
  memset(&x, 0, sizeof x);
  int quick = 0;
  if (strcmp(mode, "rootinfo") == 0 && argc >= 6) {
    x.rank = atoi(argv[2]);
    x.nranks = atoi(argv[3]);
    const char* root_file = argv[4];
    x.out = argv[5];
    quick = argc > 6 ? (strcmp(argv[6], "large") == 0 ? 2 : 1) : 0;
    g_rank = x.rank;
    CHECK(aclrtSetDevice(x.rank % (int)ndevices));
    JoinRootInfo(x.rank, x.nranks, root_file, &x.comm);
  } else if (strcmp(mode, "ranktable") == 0 && argc >= 5) {
    x.rank = atoi(argv[2]);
    const char* table = argv[3];
    x.out = argv[4];
    quick = argc > 5 ? (strcmp(argv[5], "large") == 0 ? 2 : 1) : 0;
    g_rank = x.rank;
    CHECK(aclrtSetDevice(x.rank % (int)ndevices));
    CHECK(HcclCommInitClusterInfo(table, (uint32_t)x.rank, &x.comm));
    uint32_t size = 0;
    CHECK(HcclGetRankSize(x.comm, &size));
    x.nranks = (int)size;
  } else {
    fprintf(stderr, "unknown mode '%s'\n", mode);
    return 2;
  }
  CHECK(aclrtCreateStream(&x.stream));
  if (x.rank == 0) {
    char path[4096];
    snprintf(path, sizeof path, "%s/cases.txt", x.out);
    x.manifest = fopen(path, "w");
  }
  Battery(&x, quick);
  if (x.manifest) fclose(x.manifest);
  Finish(&x);
  CHECK(HcclCommDestroy(x.comm));
  CHECK(aclrtDestroyStream(x.stream));
  CHECK(aclFinalize());
  printf("rank %d: %d cases done\n", x.rank, g_case);
  return 0;
}

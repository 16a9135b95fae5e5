// hccl_test: the collective benchmarks CANN ships (all_reduce_test,
// all_gather_test, ...), written against the public HCCL and AscendCL headers
// and launched by mpirun the same way:
//
//   mpirun -n 4 build/all_reduce_test -b 8K -e 64M -f 2 -d fp32 -o sum -p 8
//
// Each MPI rank binds device rank % p, rank 0 makes the root info and MPI
// broadcasts it, every rank joins with HcclCommInitRootInfo. For each size from
// -b to -e the operation runs -w times untimed, then -n times between two
// events; rank 0 prints hccl_test's columns (data_size, aveg_time,
// alg_bandwidth, check_result) and, as nccl-tests does, the bus bandwidth.
// The check compares the last result with the exact expected values on every
// rank and combines the verdicts with MPI.
//
// One source, one binary per operation: HCCL_TEST_OP names it (CMakeLists.txt).
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hccl/hccl.h"

namespace {

enum Op { kAllReduce, kAllGather, kBroadcast, kReduceScatter, kReduce, kAlltoAll, kAlltoAllV, kScatter };

#ifndef HCCL_TEST_OP
#error "HCCL_TEST_OP must name the operation (kAllReduce, ...)"
#endif
constexpr Op kOp = HCCL_TEST_OP;

int g_rank = 0, g_size = 1;

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "rank %d: %s\n", g_rank, msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

#define ACL_OK(call)                                                                          \
  do {                                                                                        \
    aclError e_ = (call);                                                                     \
    if (e_ != ACL_SUCCESS) Die(std::string(#call) + " failed: " + aclGetRecentErrMsg());      \
  } while (0)
#define HCCL_OK(call)                                                                         \
  do {                                                                                        \
    HcclResult r_ = (call);                                                                   \
    if (r_ != HCCL_SUCCESS) Die(std::string(#call) + " failed: " + HcclGetErrorString(r_));   \
  } while (0)

struct Options {
  uint64_t min_bytes = 64ull << 20, max_bytes = 64ull << 20, step_bytes = 0;
  double step_factor = 0;
  int iters = 20, warmup = 10, root = 0, check = 1, npus = -1;
  HcclReduceOp reduce = HCCL_REDUCE_SUM;
  HcclDataType dtype = HCCL_DATA_TYPE_FP32;
  bool step_given = false;
};

uint64_t ParseSize(const char* s, const char* flag) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || v < 0) Die(std::string(flag) + " " + s + " is not a size");
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K': v *= 1024; ++end; break;
    case 'M': v *= 1024.0 * 1024; ++end; break;
    case 'G': v *= 1024.0 * 1024 * 1024; ++end; break;
    default: break;
  }
  if (*end) Die(std::string(flag) + " " + s + " is not a size (a number with an optional K, M or G)");
  return static_cast<uint64_t>(v);
}

int ParseInt(const char* s, const char* flag) {
  if (!*s || std::strspn(s, "0123456789") != std::strlen(s)) Die(std::string(flag) + " " + s + " is not a number");
  return std::atoi(s);
}

struct Named {
  const char* name;
  int value;
};
const Named kTypes[] = {{"int8", HCCL_DATA_TYPE_INT8},     {"int16", HCCL_DATA_TYPE_INT16},
                        {"int32", HCCL_DATA_TYPE_INT32},   {"fp16", HCCL_DATA_TYPE_FP16},
                        {"fp32", HCCL_DATA_TYPE_FP32},     {"int64", HCCL_DATA_TYPE_INT64},
                        {"uint64", HCCL_DATA_TYPE_UINT64}, {"uint8", HCCL_DATA_TYPE_UINT8},
                        {"uint16", HCCL_DATA_TYPE_UINT16}, {"uint32", HCCL_DATA_TYPE_UINT32},
                        {"fp64", HCCL_DATA_TYPE_FP64},     {"bfp16", HCCL_DATA_TYPE_BFP16}};
const Named kOps[] = {{"sum", HCCL_REDUCE_SUM}, {"prod", HCCL_REDUCE_PROD}, {"max", HCCL_REDUCE_MAX},
                      {"min", HCCL_REDUCE_MIN}};

void Usage() {
  std::printf(
      "usage: mpirun -n N <test> [options]\n"
      "  -b, --minbytes SIZE     first size (default 64M; K/M/G suffixes)\n"
      "  -e, --maxbytes SIZE     last size (default 64M)\n"
      "  -i, --stepbytes SIZE    step between sizes (default (max-min)/10)\n"
      "  -f, --stepfactor X      multiply the size by X (> 1) instead of stepping\n"
      "  -n, --iters N           timed iterations per size (default 20)\n"
      "  -w, --warmup_iters N    untimed iterations first (default 10)\n"
      "  -o, --op OP             sum, prod, max, min (default sum)\n"
      "  -d, --datatype TYPE     int8 int16 int32 fp16 fp32 int64 uint64 uint8 uint16 uint32 fp64 bfp16\n"
      "  -r, --root N            root of broadcast, reduce, scatter (default 0)\n"
      "  -c, --check 0|1         check the results (default 1)\n"
      "  -p, --npus N            devices per host: rank r uses device r %% N (default: all)\n"
      "  -z, --zero_copy 0|1     not supported here (0 only)\n");
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Die("option " + a + " needs a value");
      return argv[++i];
    };
    auto is = [&](const char* s, const char* l) { return a == s || a == l; };
    if (is("-h", "--help")) {
      if (g_rank == 0) Usage();
      MPI_Finalize();
      std::exit(0);
    } else if (is("-b", "--minbytes")) o.min_bytes = ParseSize(value(), "-b");
    else if (is("-e", "--maxbytes")) o.max_bytes = ParseSize(value(), "-e");
    else if (is("-i", "--stepbytes")) o.step_bytes = ParseSize(value(), "-i"), o.step_given = true;
    else if (is("-f", "--stepfactor")) {
      o.step_factor = std::atof(value());
      if (!(o.step_factor > 1.0)) Die("-f must be greater than 1");
    } else if (is("-n", "--iters")) o.iters = ParseInt(value(), "-n");
    else if (is("-w", "--warmup_iters")) o.warmup = ParseInt(value(), "-w");
    else if (is("-r", "--root")) o.root = ParseInt(value(), "-r");
    else if (is("-c", "--check")) o.check = ParseInt(value(), "-c");
    else if (is("-p", "--npus")) o.npus = ParseInt(value(), "-p");
    else if (is("-z", "--zero_copy")) {
      if (ParseInt(value(), "-z") != 0) Die("-z 1 (zero copy) is not supported: it needs device virtual memory");
    } else if (is("-o", "--op") || is("-d", "--datatype")) {
      const bool op = is("-o", "--op");
      std::string v = value();
      bool found = false;
      for (const Named& n : op ? std::vector<Named>(std::begin(kOps), std::end(kOps))
                               : std::vector<Named>(std::begin(kTypes), std::end(kTypes)))
        if (v == n.name) {
          if (op) o.reduce = static_cast<HcclReduceOp>(n.value);
          else o.dtype = static_cast<HcclDataType>(n.value);
          found = true;
        }
      if (!found) Die((op ? "-o " : "-d ") + v + " is not one of the choices (see -h)");
    } else {
      Die("unknown option " + a + " (see -h)");
    }
  }
  if (o.min_bytes > o.max_bytes) Die("-b is larger than -e");
  if (o.iters < 1) Die("-n must be at least 1");
  if (!o.step_given) o.step_bytes = o.min_bytes == o.max_bytes ? 1 : (o.max_bytes - o.min_bytes) / 10;
  return o;
}

size_t TypeSize(HcclDataType t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    default: return 8;
  }
}

bool IsUnsigned(HcclDataType t) {
  return t == HCCL_DATA_TYPE_UINT8 || t == HCCL_DATA_TYPE_UINT16 || t == HCCL_DATA_TYPE_UINT32 ||
         t == HCCL_DATA_TYPE_UINT64;
}

// Input element i of rank r: small integers, exact in every type, whose
// reductions stay in range (products are of 1s, -1s and one 2).
double Input(int r, uint64_t i, HcclReduceOp op, HcclDataType t) {
  if (kOp == kAllReduce || kOp == kReduce || kOp == kReduceScatter) {
    if (op == HCCL_REDUCE_PROD) {
      if (r == 0 && i % 5 == 0) return 2;
      return IsUnsigned(t) || (i + static_cast<uint64_t>(r)) % 2 ? 1 : -1;
    }
    return static_cast<double>((i + static_cast<uint64_t>(r)) % 7) - (IsUnsigned(t) ? 0 : 3);
  }
  return static_cast<double>((i * 3 + static_cast<uint64_t>(r) * 5) % 13);
}

uint16_t ToHalf(float f) {  // exact for the small integers used here
  if (f == 0) return 0;
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t e = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(e) << 10) | ((x >> 13) & 0x3ffu));
}

double FromHalf(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1 : 1;
  if (e == 0) return s * std::ldexp(m, -24);
  if (e == 31) return m ? NAN : s * INFINITY;
  return s * std::ldexp(1024 + m, e - 25);
}

void Store(std::vector<uint8_t>& buf, uint64_t i, double v, HcclDataType t) {
  uint8_t* p = buf.data() + i * TypeSize(t);
  switch (t) {
    case HCCL_DATA_TYPE_INT8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v); break;
    case HCCL_DATA_TYPE_UINT8: *p = static_cast<uint8_t>(v); break;
    case HCCL_DATA_TYPE_INT16: *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(v); break;
    case HCCL_DATA_TYPE_UINT16: *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(v); break;
    case HCCL_DATA_TYPE_INT32: *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(v); break;
    case HCCL_DATA_TYPE_UINT32: *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(v); break;
    case HCCL_DATA_TYPE_INT64: *reinterpret_cast<int64_t*>(p) = static_cast<int64_t>(v); break;
    case HCCL_DATA_TYPE_UINT64: *reinterpret_cast<uint64_t*>(p) = static_cast<uint64_t>(v); break;
    case HCCL_DATA_TYPE_FP32: *reinterpret_cast<float*>(p) = static_cast<float>(v); break;
    case HCCL_DATA_TYPE_FP64: *reinterpret_cast<double*>(p) = v; break;
    case HCCL_DATA_TYPE_FP16: *reinterpret_cast<uint16_t*>(p) = ToHalf(static_cast<float>(v)); break;
    case HCCL_DATA_TYPE_BFP16: {
      float f = static_cast<float>(v);
      uint32_t x;
      std::memcpy(&x, &f, 4);
      *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(x >> 16);
      break;
    }
    default: break;
  }
}

double Load(const std::vector<uint8_t>& buf, uint64_t i, HcclDataType t) {
  const uint8_t* p = buf.data() + i * TypeSize(t);
  switch (t) {
    case HCCL_DATA_TYPE_INT8: return *reinterpret_cast<const int8_t*>(p);
    case HCCL_DATA_TYPE_UINT8: return *p;
    case HCCL_DATA_TYPE_INT16: return *reinterpret_cast<const int16_t*>(p);
    case HCCL_DATA_TYPE_UINT16: return *reinterpret_cast<const uint16_t*>(p);
    case HCCL_DATA_TYPE_INT32: return *reinterpret_cast<const int32_t*>(p);
    case HCCL_DATA_TYPE_UINT32: return *reinterpret_cast<const uint32_t*>(p);
    case HCCL_DATA_TYPE_INT64: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case HCCL_DATA_TYPE_UINT64: return static_cast<double>(*reinterpret_cast<const uint64_t*>(p));
    case HCCL_DATA_TYPE_FP32: return *reinterpret_cast<const float*>(p);
    case HCCL_DATA_TYPE_FP64: return *reinterpret_cast<const double*>(p);
    case HCCL_DATA_TYPE_FP16: return FromHalf(*reinterpret_cast<const uint16_t*>(p));
    case HCCL_DATA_TYPE_BFP16: {
      uint32_t x = static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(p)) << 16;
      float f;
      std::memcpy(&f, &x, 4);
      return f;
    }
    default: return 0;
  }
}

double Reduced(uint64_t i, HcclReduceOp op, HcclDataType t) {
  double acc = Input(0, i, op, t);
  for (int r = 1; r < g_size; ++r) {
    const double v = Input(r, i, op, t);
    switch (op) {
      case HCCL_REDUCE_SUM: acc += v; break;
      case HCCL_REDUCE_PROD: acc *= v; break;
      case HCCL_REDUCE_MAX: acc = std::max(acc, v); break;
      default: acc = std::min(acc, v); break;
    }
  }
  return acc;
}

// Element counts of one size: per-rank input and output, and what data_size reports.
struct Counts {
  uint64_t count, in, out;
};
Counts CountsFor(uint64_t bytes, size_t tsize) {
  const uint64_t n = static_cast<uint64_t>(g_size);
  const uint64_t elems = std::max<uint64_t>(1, bytes / tsize);
  switch (kOp) {
    case kAllGather: { const uint64_t c = (elems + n - 1) / n; return {c, c, c * n}; }
    case kReduceScatter: case kScatter: { const uint64_t c = (elems + n - 1) / n; return {c, c * n, c}; }
    case kAlltoAll: case kAlltoAllV: { const uint64_t c = (elems + n - 1) / n; return {c, c * n, c * n}; }
    default: return {elems, elems, elems};
  }
}

double BusFactor() {
  const double n = g_size;
  switch (kOp) {
    case kAllReduce: return 2 * (n - 1) / n;
    case kBroadcast: case kReduce: return 1;
    default: return (n - 1) / n;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Options o = Parse(argc, argv);
  if (o.root < 0 || o.root >= g_size) Die("-r " + std::to_string(o.root) + " is not a rank (0.." + std::to_string(g_size - 1) + ")");

  ACL_OK(aclInit(nullptr));
  uint32_t devices = 0;
  ACL_OK(aclrtGetDeviceCount(&devices));
  const int npus = o.npus > 0 ? o.npus : static_cast<int>(devices);
  ACL_OK(aclrtSetDevice(g_rank % npus));
  HcclRootInfo root_info;
  if (g_rank == 0) HCCL_OK(HcclGetRootInfo(&root_info));
  MPI_Bcast(&root_info, HCCL_ROOT_INFO_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
  HcclComm comm;
  HCCL_OK(HcclCommInitRootInfo(static_cast<uint32_t>(g_size), &root_info, static_cast<uint32_t>(g_rank), &comm));
  aclrtStream stream;
  ACL_OK(aclrtCreateStream(&stream));
  aclrtEvent start, stop;
  ACL_OK(aclrtCreateEvent(&start));
  ACL_OK(aclrtCreateEvent(&stop));

  if (g_rank == 0) {
    std::printf("the minbytes is %llu, maxbytes is %llu, iters is %d, warmup_iters is %d\n",
                static_cast<unsigned long long>(o.min_bytes), static_cast<unsigned long long>(o.max_bytes), o.iters,
                o.warmup);
    std::printf("%-15s | %-12s | %-18s | %-13s | %s\n", "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):",
                "check_result:", "bus_bandwidth(GB/s):");
  }
  const size_t tsize = TypeSize(o.dtype);
  const uint64_t n = static_cast<uint64_t>(g_size);
  for (uint64_t bytes = o.min_bytes; bytes <= o.max_bytes;) {
    const Counts c = CountsFor(bytes, tsize);
    std::vector<uint8_t> host_in(c.in * tsize), host_out(c.out * tsize);
    for (uint64_t i = 0; i < c.in; ++i) Store(host_in, i, Input(g_rank, i, o.reduce, o.dtype), o.dtype);
    void *in = nullptr, *out = nullptr;
    ACL_OK(aclrtMalloc(&in, host_in.size(), ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_OK(aclrtMalloc(&out, host_out.size(), ACL_MEM_MALLOC_HUGE_FIRST));
    ACL_OK(aclrtMemcpy(in, host_in.size(), host_in.data(), host_in.size(), ACL_MEMCPY_HOST_TO_DEVICE));
    std::vector<uint64_t> counts(n, c.count), displs(n);
    for (uint64_t r = 0; r < n; ++r) displs[r] = r * c.count;
    auto run = [&] {
      switch (kOp) {
        case kAllReduce: HCCL_OK(HcclAllReduce(in, out, c.count, o.dtype, o.reduce, comm, stream)); break;
        case kAllGather: HCCL_OK(HcclAllGather(in, out, c.count, o.dtype, comm, stream)); break;
        case kBroadcast:
          // The root's input goes out in place; the others receive into theirs.
          HCCL_OK(HcclBroadcast(g_rank == o.root ? in : out, c.count, o.dtype, static_cast<uint32_t>(o.root), comm, stream));
          break;
        case kReduceScatter: HCCL_OK(HcclReduceScatter(in, out, c.count, o.dtype, o.reduce, comm, stream)); break;
        case kReduce:
          HCCL_OK(HcclReduce(in, out, c.count, o.dtype, o.reduce, static_cast<uint32_t>(o.root), comm, stream));
          break;
        case kAlltoAll: HCCL_OK(HcclAlltoAll(in, c.count, o.dtype, out, c.count, o.dtype, comm, stream)); break;
        case kAlltoAllV:
          HCCL_OK(HcclAlltoAllV(in, counts.data(), displs.data(), o.dtype, out, counts.data(), displs.data(), o.dtype,
                                comm, stream));
          break;
        case kScatter: HCCL_OK(HcclScatter(in, out, c.count, o.dtype, static_cast<uint32_t>(o.root), comm, stream)); break;
      }
    };
    for (int i = 0; i < o.warmup; ++i) run();
    ACL_OK(aclrtSynchronizeStream(stream));
    MPI_Barrier(MPI_COMM_WORLD);
    ACL_OK(aclrtRecordEvent(start, stream));
    for (int i = 0; i < o.iters; ++i) run();
    ACL_OK(aclrtRecordEvent(stop, stream));
    ACL_OK(aclrtSynchronizeStream(stream));
    float ms = 0;
    ACL_OK(aclrtEventElapsedTime(&ms, start, stop));
    double avg_us = 1000.0 * ms / o.iters;
    double slowest = 0;
    MPI_Allreduce(&avg_us, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    const char* verdict = "NULL";
    if (o.check) {
      ACL_OK(aclrtMemcpy(host_out.data(), host_out.size(), out, host_out.size(), ACL_MEMCPY_DEVICE_TO_HOST));
      if (kOp == kBroadcast && g_rank == o.root) host_out = host_in;
      int bad = 0;
      // A reduce leaves the other ranks' output undefined: only the root's is checked.
      const uint64_t checked = kOp == kReduce && g_rank != o.root ? 0 : c.out;
      for (uint64_t i = 0; i < checked && !bad; ++i) {
        double want;
        switch (kOp) {
          case kAllReduce: want = Reduced(i, o.reduce, o.dtype); break;
          case kReduce: want = Reduced(i, o.reduce, o.dtype); break;
          case kReduceScatter: want = Reduced(static_cast<uint64_t>(g_rank) * c.count + i, o.reduce, o.dtype); break;
          case kAllGather: want = Input(static_cast<int>(i / c.count), i % c.count, o.reduce, o.dtype); break;
          case kBroadcast: want = Input(o.root, i, o.reduce, o.dtype); break;
          case kScatter: want = Input(o.root, static_cast<uint64_t>(g_rank) * c.count + i, o.reduce, o.dtype); break;
          default:  // all-to-all: block s comes from rank s, its block for this rank
            want = Input(static_cast<int>(i / c.count), static_cast<uint64_t>(g_rank) * c.count + i % c.count,
                         o.reduce, o.dtype);
            break;
        }
        std::vector<uint8_t> w(tsize);
        Store(w, 0, want, o.dtype);  // the expected value in the type, with its wrapping
        if (std::memcmp(w.data(), host_out.data() + i * tsize, tsize) != 0) {
          bad = 1;
          std::fprintf(stderr, "rank %d: %llu bytes: element %llu is %g, expected %g\n", g_rank,
                       static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(i),
                       Load(host_out, i, o.dtype), want);
        }
      }
      int any = 0;
      MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      verdict = any ? "failed" : "success";
    }
    const double data_size = static_cast<double>(
        (kOp == kAllGather || kOp == kReduceScatter || kOp == kAlltoAll || kOp == kAlltoAllV || kOp == kScatter)
            ? c.count * tsize * n
            : c.count * tsize);
    const double alg_bw = data_size / slowest * 1e-3;
    if (g_rank == 0)
      std::printf("%-17llu | %-14.2f | %-20.5f | %-13s | %.5f\n", static_cast<unsigned long long>(data_size), slowest,
                  alg_bw, verdict, alg_bw * BusFactor());
    ACL_OK(aclrtFree(in));
    ACL_OK(aclrtFree(out));
    if (o.step_factor > 1) {
      const uint64_t next = static_cast<uint64_t>(static_cast<double>(bytes) * o.step_factor);
      bytes = next > bytes ? next : bytes + 1;
    } else if (o.step_bytes == 0) {
      continue;  // -i 0 repeats the first size until stopped
    } else {
      bytes += o.step_bytes;
    }
  }
  ACL_OK(aclrtDestroyEvent(start));
  ACL_OK(aclrtDestroyEvent(stop));
  ACL_OK(aclrtDestroyStream(stream));
  HCCL_OK(HcclCommDestroy(comm));
  ACL_OK(aclFinalize());
  MPI_Finalize();
  return 0;
}

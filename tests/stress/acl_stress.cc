// AscendCL stress test, written against the public API only (include/acl,
// -lascendcl), the way an application would use it.
//
// Phases:
//  1. concurrency: THREADS threads x RUNS runs each over two loaded models,
//     spread over STREAMS shared streams, alternating aclmdlExecute (default
//     stream), aclmdlExecuteAsync + synchronize, and two queued
//     aclmdlExecuteAsync calls before one synchronize. Output buffers are
//     poisoned before every run; every result must be bit-identical to a
//     single-threaded reference run made first.
//  2. load/unload: CYCLES aclmdlLoadFromFile + aclmdlUnload cycles (every 100th
//     also executes and checks the result); resident set size (/proc/self/statm)
//     must not grow by more than a small bound, nor the memory in use that
//     aclrtGetMemInfo reports.
//  3. fixed shapes: FIXED repeated executions on one model; no RSS growth.
//  4. thread-count changes: aclrtSetOpExecuteThreads called repeatedly while
//     four threads execute; no execution may fail (or crash).
//
// Usage: acl_stress A.om B.om [--threads N] [--runs N] [--streams N]
//                             [--cycles N] [--fixed N] [--rss-bound-kib N]
//                             [--meminfo-bound-mib N] [--thread-changes N]
// Prints one "figures:" line for docs/reliability.md; exit 0 only if all pass.
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <unistd.h>

#include "acl/acl.h"

namespace {

constexpr int kInputSets = 2;
constexpr int kPoison = 0xA5;

int g_failures = 0;

#define CHECK_ACL(call)                                                                                   \
  do {                                                                                                    \
    aclError rc_ = (call);                                                                                \
    if (rc_ != ACL_SUCCESS) {                                                                             \
      std::fprintf(stderr, "FATAL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, rc_,           \
                   aclGetRecentErrMsg());                                                                 \
      std::exit(1);                                                                                       \
    }                                                                                                     \
  } while (0)

void Fail(const char* what) {
  ++g_failures;
  std::fprintf(stderr, "FAIL: %s\n", what);
}

size_t RssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f) {
    if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Bytes of the machine's memory not available (MemTotal - MemAvailable).
size_t SystemUsed() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  char key[64];
  unsigned long long kib = 0, total = 0, avail = 0;
  if (!f) return 0;
  while (std::fscanf(f, "%63s %llu kB", key, &kib) == 2) {
    if (std::strcmp(key, "MemTotal:") == 0) total = kib;
    else if (std::strcmp(key, "MemAvailable:") == 0) avail = kib;
  }
  std::fclose(f);
  return avail <= total ? static_cast<size_t>(total - avail) * 1024 : 0;
}

// Device memory in use as aclrtGetMemInfo reports it (total - free). On the
// CPU device "free" is also capped by the machine's available memory, which
// other processes move; `own` subtracts that system-wide part (sampled on both
// sides of the call), leaving what the runtime itself holds beyond it.
struct MemInfoSample {
  size_t used = 0;
  size_t own = 0;
};
MemInfoSample DeviceUsed() {
  size_t free_bytes = 0, total = 0;
  size_t before = SystemUsed();
  CHECK_ACL(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total));
  size_t after = SystemUsed();
  MemInfoSample s;
  s.used = total - free_bytes;
  size_t sys = before > after ? before : after;
  s.own = s.used > sys ? s.used - sys : 0;
  return s;
}

// Bytes the C allocator has handed out and not yet had back: exact, unlike
// RSS, so a leak of a few bytes per cycle shows.
size_t HeapInUse() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return mallinfo2().uordblks;
#else
  return 0;
#endif
}

double MiB(double bytes) { return bytes / (1024.0 * 1024.0); }

struct Model {
  std::string path;
  uint32_t id = 0;
  aclmdlDesc* desc = nullptr;
  std::vector<size_t> in_bytes, out_bytes;
  std::vector<std::vector<uint8_t>> inputs[kInputSets];  // host input data per set
  std::vector<std::vector<uint8_t>> refs[kInputSets];    // reference outputs per set
};

// Deterministic input data: floats in [-1.5, 1.5], integers in {0, 1} (valid
// as token ids and as an attention mask).
std::vector<uint8_t> MakeInput(aclDataType dt, size_t bytes, int set, size_t index) {
  std::vector<uint8_t> v(bytes);
  uint32_t state = 2654435761u * static_cast<uint32_t>(set * 31 + index + 1);
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  switch (dt) {
    case ACL_FLOAT:
      for (size_t k = 0; k + 4 <= bytes; k += 4) {
        float x = static_cast<float>(static_cast<int>(next() % 13) - 6) * 0.25f;
        std::memcpy(&v[k], &x, 4);
      }
      break;
    case ACL_INT64:
      for (size_t k = 0; k + 8 <= bytes; k += 8) {
        int64_t x = (next() % 5) != 0;
        std::memcpy(&v[k], &x, 8);
      }
      break;
    case ACL_INT32:
      for (size_t k = 0; k + 4 <= bytes; k += 4) {
        int32_t x = (next() % 5) != 0;
        std::memcpy(&v[k], &x, 4);
      }
      break;
    default:
      for (auto& b : v) b = static_cast<uint8_t>(next() & 1);
  }
  return v;
}

// Device-side buffers for one execution of one model: inputs filled from a set.
struct Buffers {
  aclmdlDataset* in = nullptr;
  aclmdlDataset* out = nullptr;

  Buffers(const Model& m, int set) {
    in = aclmdlCreateDataset();
    out = aclmdlCreateDataset();
    for (size_t i = 0; i < m.in_bytes.size(); ++i) {
      void* dev = nullptr;
      size_t n = m.in_bytes[i];
      CHECK_ACL(aclrtMalloc(&dev, n ? n : 1, ACL_MEM_MALLOC_HUGE_FIRST));
      if (n) CHECK_ACL(aclrtMemcpy(dev, n, m.inputs[set][i].data(), n, ACL_MEMCPY_HOST_TO_DEVICE));
      CHECK_ACL(aclmdlAddDatasetBuffer(in, aclCreateDataBuffer(dev, n)));
    }
    for (size_t i = 0; i < m.out_bytes.size(); ++i) {
      void* dev = nullptr;
      size_t n = m.out_bytes[i];
      CHECK_ACL(aclrtMalloc(&dev, n ? n : 1, ACL_MEM_MALLOC_HUGE_FIRST));
      CHECK_ACL(aclmdlAddDatasetBuffer(out, aclCreateDataBuffer(dev, n)));
    }
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    for (aclmdlDataset* ds : {in, out}) {
      for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(ds); ++i) {
        aclDataBuffer* b = aclmdlGetDatasetBuffer(ds, i);
        aclrtFree(aclGetDataBufferAddr(b));
        aclDestroyDataBuffer(b);
      }
      aclmdlDestroyDataset(ds);
    }
  }

  // Overwrites every output so that a run that skips writing one is caught.
  void Poison() const {
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(out); ++i) {
      aclDataBuffer* b = aclmdlGetDatasetBuffer(out, i);
      size_t n = aclGetDataBufferSizeV2(b);
      if (n) CHECK_ACL(aclrtMemset(aclGetDataBufferAddr(b), n, kPoison, n));
    }
  }

  std::vector<std::vector<uint8_t>> Read(const Model& m) const {
    std::vector<std::vector<uint8_t>> host(m.out_bytes.size());
    for (size_t i = 0; i < host.size(); ++i) {
      host[i].resize(m.out_bytes[i]);
      if (!host[i].empty())
        CHECK_ACL(aclrtMemcpy(host[i].data(), host[i].size(), aclGetDataBufferAddr(aclmdlGetDatasetBuffer(out, i)),
                              host[i].size(), ACL_MEMCPY_DEVICE_TO_HOST));
    }
    return host;
  }

  bool Matches(const Model& m, int set) const { return Read(m) == m.refs[set]; }
};

void LoadModel(Model* m) {
  CHECK_ACL(aclmdlLoadFromFile(m->path.c_str(), &m->id));
  m->desc = aclmdlCreateDesc();
  CHECK_ACL(aclmdlGetDesc(m->desc, m->id));
  for (size_t i = 0; i < aclmdlGetNumInputs(m->desc); ++i) m->in_bytes.push_back(aclmdlGetInputSizeByIndex(m->desc, i));
  for (size_t i = 0; i < aclmdlGetNumOutputs(m->desc); ++i)
    m->out_bytes.push_back(aclmdlGetOutputSizeByIndex(m->desc, i));
  for (int s = 0; s < kInputSets; ++s) {
    for (size_t i = 0; i < m->in_bytes.size(); ++i)
      m->inputs[s].push_back(MakeInput(aclmdlGetInputDataType(m->desc, i), m->in_bytes[i], s, i));
    // The reference: one plain synchronous run, before any concurrency.
    Buffers b(*m, s);
    b.Poison();
    CHECK_ACL(aclmdlExecute(m->id, b.in, b.out));
    m->refs[s] = b.Read(*m);
  }
  if (m->refs[0] == m->refs[1]) std::fprintf(stderr, "note: %s gives equal outputs for both input sets\n", m->path.c_str());
}

struct ThreadResult {
  int runs = 0, mismatches = 0, errors = 0;
  int sync = 0, async = 0, queued = 0;
};

void Worker(aclrtContext ctx, Model* models, aclrtStream stream, int thread, int runs, ThreadResult* r) {
  if (aclrtSetCurrentContext(ctx) != ACL_SUCCESS) {
    r->errors++;
    return;
  }
  // One set of buffers per (model, input set): queued runs must not share outputs.
  std::vector<std::unique_ptr<Buffers>> bufs;
  for (int m = 0; m < 2; ++m)
    for (int s = 0; s < kInputSets; ++s) bufs.push_back(std::make_unique<Buffers>(models[m], s));
  for (int i = 0; i < runs; ++i) {
    int m = (thread + i) % 2;
    int s = (i / 2) % kInputSets;
    Buffers& b = *bufs[m * kInputSets + s];
    switch (i % 3) {
      case 0:  // synchronous, on the context's default stream (shared by all threads)
        b.Poison();
        if (aclmdlExecute(models[m].id, b.in, b.out) != ACL_SUCCESS) {
          std::fprintf(stderr, "thread %d run %d: aclmdlExecute: %s\n", thread, i, aclGetRecentErrMsg());
          r->errors++;
        } else if (!b.Matches(models[m], s)) {
          r->mismatches++;
        }
        r->sync++;
        break;
      case 1:  // asynchronous on this thread's stream
        b.Poison();
        if (aclmdlExecuteAsync(models[m].id, b.in, b.out, stream) != ACL_SUCCESS ||
            aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
          std::fprintf(stderr, "thread %d run %d: async: %s\n", thread, i, aclGetRecentErrMsg());
          r->errors++;
        } else if (!b.Matches(models[m], s)) {
          r->mismatches++;
        }
        r->async++;
        break;
      default: {  // both input sets queued before one synchronize
        Buffers& b2 = *bufs[m * kInputSets + (s + 1) % kInputSets];
        b.Poison();
        b2.Poison();
        if (aclmdlExecuteAsync(models[m].id, b.in, b.out, stream) != ACL_SUCCESS ||
            aclmdlExecuteAsync(models[m].id, b2.in, b2.out, stream) != ACL_SUCCESS ||
            aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
          std::fprintf(stderr, "thread %d run %d: queued: %s\n", thread, i, aclGetRecentErrMsg());
          r->errors++;
        } else {
          if (!b.Matches(models[m], s)) r->mismatches++;
          if (!b2.Matches(models[m], (s + 1) % kInputSets)) r->mismatches++;
        }
        r->queued += 2;
        break;
      }
    }
    r->runs++;
  }
}

int Arg(int argc, char** argv, const char* name, int def) {
  for (int i = 3; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return def;
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s A.om B.om [--threads N] [--runs N] [--streams N] [--cycles N] [--fixed N] "
                 "[--rss-bound-kib N] [--meminfo-bound-mib N] [--thread-changes N]\n",
                 argv[0]);
    return 2;
  }
  const int threads = Arg(argc, argv, "--threads", 8);
  const int runs = Arg(argc, argv, "--runs", 100);
  const int num_streams = Arg(argc, argv, "--streams", 4);
  const int cycles = Arg(argc, argv, "--cycles", 1000);
  const int fixed = Arg(argc, argv, "--fixed", 2000);
  const size_t rss_bound = static_cast<size_t>(Arg(argc, argv, "--rss-bound-kib", 4096)) * 1024;
  const int swaps = Arg(argc, argv, "--thread-changes", 200);
  const size_t meminfo_bound = static_cast<size_t>(Arg(argc, argv, "--meminfo-bound-mib", 64)) << 20;

  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtContext ctx = nullptr;
  CHECK_ACL(aclrtGetCurrentContext(&ctx));

  Model models[2];
  models[0].path = argv[1];
  models[1].path = argv[2];
  for (Model& m : models) LoadModel(&m);

  // ---- 1. concurrency -----------------------------------------------------------
  std::vector<aclrtStream> streams(static_cast<size_t>(num_streams));
  for (auto& s : streams) CHECK_ACL(aclrtCreateStream(&s));
  std::vector<ThreadResult> results(static_cast<size_t>(threads));
  auto t0 = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back(Worker, ctx, models, streams[static_cast<size_t>(t % num_streams)], t, runs,
                        &results[static_cast<size_t>(t)]);
    for (auto& th : pool) th.join();
  }
  double conc_s = Seconds(t0);
  ThreadResult total;
  for (const auto& r : results) {
    total.runs += r.runs;
    total.mismatches += r.mismatches;
    total.errors += r.errors;
    total.sync += r.sync;
    total.async += r.async;
    total.queued += r.queued;
  }
  std::printf("concurrency: %d threads x %d runs over %d streams, %d executions (%d sync, %d async, %d queued) "
              "in %.1f s: %d mismatches, %d errors\n",
              threads, runs, num_streams, total.sync + total.async + total.queued, total.sync, total.async,
              total.queued, conc_s, total.mismatches, total.errors);
  if (total.mismatches || total.errors || total.runs != threads * runs) Fail("concurrent results differ from the reference");
  for (auto s : streams) CHECK_ACL(aclrtDestroyStream(s));

  // ---- 2. load/unload cycles ------------------------------------------------------
  auto cycle = [&](int c) {
    Model& m = models[c % 2];
    uint32_t id = 0;
    CHECK_ACL(aclmdlLoadFromFile(m.path.c_str(), &id));
    if (c % 100 == 99) {
      Buffers b(m, c % kInputSets);
      b.Poison();
      CHECK_ACL(aclmdlExecute(id, b.in, b.out));
      if (!b.Matches(m, c % kInputSets)) Fail("a reloaded model gives a different result");
    }
    CHECK_ACL(aclmdlUnload(id));
  };
  // Warm-up: the allocator settles (glibc raises its mmap threshold as large
  // blocks are freed) within the first ~100-300 cycles, after which RSS is flat.
  for (int c = 0; c < 200; ++c) cycle(c);
  size_t rss0 = RssBytes(), heap0 = HeapInUse();
  MemInfoSample dev0 = DeviceUsed();
  t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < cycles; ++c) {
    cycle(c);
    if (std::getenv("OC_STRESS_TRACE") && c % 100 == 99)
      std::printf("  cycle %d: RSS %zu KiB, heap %zu B\n", c + 1, RssBytes() / 1024, HeapInUse());
  }
  double cyc_s = Seconds(t0);
  size_t rss1 = RssBytes(), heap1 = HeapInUse();
  MemInfoSample dev1 = DeviceUsed();
  std::printf("load/unload: %d cycles in %.1f s, RSS %.1f -> %.1f MiB (%+.0f KiB), heap in use %+lld B, "
              "aclrtGetMemInfo used %.1f -> %.1f MiB (beyond the system's: %.1f -> %.1f MiB)\n",
              cycles, cyc_s, MiB(rss0), MiB(rss1), (static_cast<double>(rss1) - rss0) / 1024,
              static_cast<long long>(heap1) - static_cast<long long>(heap0), MiB(dev0.used), MiB(dev1.used),
              MiB(dev0.own), MiB(dev1.own));
  if (rss1 > rss0 + rss_bound) Fail("RSS grew over the load/unload cycles");
  if (dev1.own > dev0.own + meminfo_bound) Fail("aclrtGetMemInfo's used memory grew over the load/unload cycles");

  // ---- 3. repeated runs at fixed shapes ----------------------------------------------
  size_t rss2 = 0, rss3 = 0;
  {
    Buffers b(models[0], 0);
    for (int i = 0; i < 20; ++i) CHECK_ACL(aclmdlExecute(models[0].id, b.in, b.out));
    rss2 = RssBytes();
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < fixed; ++i) CHECK_ACL(aclmdlExecute(models[0].id, b.in, b.out));
    double fixed_s = Seconds(t0);
    rss3 = RssBytes();
    if (!b.Matches(models[0], 0)) Fail("fixed-shape runs changed the result");
    std::printf("fixed shapes: %d runs in %.1f s, RSS %.1f -> %.1f MiB (%+.0f KiB)\n", fixed, fixed_s, MiB(rss2),
                MiB(rss3), (static_cast<double>(rss3) - rss2) / 1024);
    if (rss3 > rss2 + rss_bound / 4) Fail("RSS grew over repeated fixed-shape runs");
  }

  // ---- 4. thread-count changes during executions ----------------------------------
  // aclrtSetOpExecuteThreads replaces the thread pool that running executions
  // use (a use-after-free until the runtime gated it). Results may differ in
  // the last bits with the thread count, so only errors are counted here.
  {
    std::atomic<bool> stop{false};
    std::atomic<int> errors{0}, done{0};
    std::vector<std::thread> runners;
    for (int t = 0; t < 4; ++t) {
      runners.emplace_back([&, t] {
        if (aclrtSetCurrentContext(ctx) != ACL_SUCCESS) { errors++; return; }
        aclrtStream s = nullptr;
        if (aclrtCreateStream(&s) != ACL_SUCCESS) { errors++; return; }
        Buffers b(models[t % 2], 0);
        while (!stop) {
          if (aclmdlExecuteAsync(models[t % 2].id, b.in, b.out, s) != ACL_SUCCESS ||
              aclrtSynchronizeStream(s) != ACL_SUCCESS)
            errors++;
          done++;
        }
        aclrtDestroyStream(s);
      });
    }
    for (int i = 0; i < swaps; ++i) {
      if (aclrtSetOpExecuteThreads(static_cast<uint32_t>(1 + i % 3)) != ACL_SUCCESS) errors++;
    }
    stop = true;
    for (auto& th : runners) th.join();
    std::printf("thread-count changes: %d aclrtSetOpExecuteThreads calls during %d executions: %d errors\n", swaps,
                done.load(), errors.load());
    if (errors) Fail("executions failed while the thread count changed");
  }

  for (Model& m : models) {
    CHECK_ACL(aclmdlDestroyDesc(m.desc));
    CHECK_ACL(aclmdlUnload(m.id));
  }
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  std::printf("figures: threads=%d runs_per_thread=%d streams=%d executions=%d mismatches=%d concurrency_s=%.1f "
              "cycles=%d rss_before_kib=%zu rss_after_kib=%zu fixed_runs=%d fixed_rss_before_kib=%zu "
              "fixed_rss_after_kib=%zu\n",
              threads, runs, num_streams, total.sync + total.async + total.queued, total.mismatches, conc_s, cycles,
              rss0 / 1024, rss1 / 1024, fixed, rss2 / 1024, rss3 / 1024);
  if (g_failures) {
    std::fprintf(stderr, "acl_stress: %d failures\n", g_failures);
    return 1;
  }
  std::printf("acl_stress: PASS\n");
  return 0;
}

// Times one offline model through the public AscendCL API, the way an
// application runs it: load (aclmdlLoadFromFile), device buffers filled once,
// then warm-up and timed synchronous aclmdlExecute calls. Prints one JSON
// object on stdout, so bench/model_bench.py can compare it with onnxruntime.
//
//   model_bench model.om [--input FILE]... [--warmup N] [--runs N]
//
// Each --input is the raw bytes of one model input, in input order (a missing
// one is zero-filled). Threads: OPENCANN_NUM_THREADS.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of the whole process (all threads), in ms: on a loaded machine a
// 1-thread run's CPU time is steadier than its wall time, since waiting for a
// core is not counted.
double ProcessCpuMs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

bool Check(aclError rc, const char* call) {
  if (rc == ACL_SUCCESS) return true;
  std::fprintf(stderr, "model_bench: %s failed with error %d: %s\n", call, rc, aclGetRecentErrMsg());
  return false;
}

// Peak resident set of this process in MiB: VmHWM, which (unlike ru_maxrss)
// does not inherit the parent's size through fork + exec. -1 where unknown.
double PeakRssMiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return -1;
}

bool ReadFile(const std::string& path, std::vector<char>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

struct Buffers {
  std::vector<void*> dev;
  std::vector<aclDataBuffer*> bufs;
  aclmdlDataset* ds = nullptr;
  ~Buffers() {
    for (aclDataBuffer* b : bufs) aclDestroyDataBuffer(b);
    for (void* p : dev) if (p) aclrtFree(p);
    if (ds) aclmdlDestroyDataset(ds);
  }
  bool Add(size_t bytes) {
    void* p = nullptr;
    if (bytes && !Check(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_NORMAL_ONLY), "aclrtMalloc")) return false;
    dev.push_back(p);
    if (p && !Check(aclrtMemset(p, bytes, 0, bytes), "aclrtMemset")) return false;
    bufs.push_back(aclCreateDataBuffer(p, bytes));
    return Check(aclmdlAddDatasetBuffer(ds, bufs.back()), "aclmdlAddDatasetBuffer");
  }
};

int Bench(const std::string& model, const std::vector<std::string>& inputs, int warmup, int runs) {
  uint32_t id = 0;
  auto t0 = Clock::now();
  const double cpu0 = ProcessCpuMs();
  if (!Check(aclmdlLoadFromFile(model.c_str(), &id), "aclmdlLoadFromFile")) return 1;
  double load_ms = MsSince(t0);
  const double load_cpu_ms = ProcessCpuMs() - cpu0;

  aclmdlDesc* desc = aclmdlCreateDesc();
  if (!desc || !Check(aclmdlGetDesc(desc, id), "aclmdlGetDesc")) return 1;
  int rc = 1;
  {
    Buffers in, out;
    in.ds = aclmdlCreateDataset();
    out.ds = aclmdlCreateDataset();
    size_t n_in = aclmdlGetNumInputs(desc), n_out = aclmdlGetNumOutputs(desc);
    bool ok = true;
    for (size_t i = 0; ok && i < n_in; ++i) {
      size_t bytes = aclmdlGetInputSizeByIndex(desc, i);
      ok = in.Add(bytes);
      if (ok && i < inputs.size()) {
        std::vector<char> host;
        if (!ReadFile(inputs[i], &host) || host.size() != bytes) {
          std::fprintf(stderr, "model_bench: input %zu (%s) must hold %zu bytes\n", i, inputs[i].c_str(), bytes);
          ok = false;
        } else {
          ok = Check(aclrtMemcpy(in.dev[i], bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
        }
      }
    }
    for (size_t i = 0; ok && i < n_out; ++i) ok = out.Add(aclmdlGetOutputSizeByIndex(desc, i));
    std::vector<double> ms, cpu_ms;
    for (int r = 0; ok && r < warmup + runs; ++r) {
      auto t = Clock::now();
      const double c = ProcessCpuMs();
      ok = Check(aclmdlExecute(id, in.ds, out.ds), "aclmdlExecute");
      if (r >= warmup) ms.push_back(MsSince(t)), cpu_ms.push_back(ProcessCpuMs() - c);
    }
    if (ok) {
      std::printf("{\"load_ms\": %.3f, \"load_cpu_ms\": %.3f, \"run_ms\": [", load_ms, load_cpu_ms);
      for (size_t i = 0; i < ms.size(); ++i) std::printf("%s%.4f", i ? ", " : "", ms[i]);
      std::printf("], \"run_cpu_ms\": [");
      for (size_t i = 0; i < cpu_ms.size(); ++i) std::printf("%s%.4f", i ? ", " : "", cpu_ms[i]);
      std::printf("], \"peak_rss_mb\": %.1f}\n", PeakRssMiB());
      rc = 0;
    }
  }
  aclmdlDestroyDesc(desc);
  aclmdlUnload(id);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  std::vector<std::string> inputs;
  int warmup = 3, runs = 30;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--input" && has_value) inputs.push_back(argv[++i]);
    else if (a == "--warmup" && has_value) warmup = std::atoi(argv[++i]);
    else if (a == "--runs" && has_value) runs = std::atoi(argv[++i]);
    else if (model.empty() && a.rfind("--", 0) != 0) model = a;
    else {
      std::fprintf(stderr, "usage: model_bench model.om [--input FILE]... [--warmup N] [--runs N]\n");
      return 2;
    }
  }
  if (model.empty() || warmup < 0 || runs < 1) {
    std::fprintf(stderr, "usage: model_bench model.om [--input FILE]... [--warmup N] [--runs N]\n");
    return 2;
  }
  if (!Check(aclInit(nullptr), "aclInit")) return 1;
  aclrtContext ctx = nullptr;
  int rc = 1;
  if (Check(aclrtSetDevice(0), "aclrtSetDevice")) {
    if (Check(aclrtCreateContext(&ctx, 0), "aclrtCreateContext")) {
      rc = Bench(model, inputs, warmup, runs);
      aclrtDestroyContext(ctx);
    }
    aclrtResetDevice(0);
  }
  aclFinalize();
  return rc;
}

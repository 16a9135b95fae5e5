#include "executor/node_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <time.h>

namespace oc {
namespace {

struct ModelProfile {
  std::string model;
  int64_t runs;
  std::vector<NodeTime> times;
};

struct Registry {
  std::mutex mu;
  std::vector<ModelProfile> models;
  bool exited = false;  // the at-exit report ran: later records print at once
};

// Never destroyed: Executables owned by other statics may record during static
// destruction, after the at-exit report.
Registry& Reg() {
  static Registry& r = [] () -> Registry& {
    static Registry* leaked = new Registry();  // intentionally leaked (see above)
    std::atexit([] {
      PrintNodeProfiles();
      std::lock_guard<std::mutex> lock(Reg().mu);
      Reg().exited = true;
    });
    return *leaked;
  }();
  return r;
}

}  // namespace

bool NodeProfilingEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("OPENCANN_PROFILE_NODES");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

namespace {
bool CpuClock() {
  static const bool cpu = [] {
    const char* v = std::getenv("OPENCANN_PROFILE_CLOCK");
    if (!v || !*v || std::string(v) == "wall") return false;
    if (std::string(v) == "cpu") return true;
    std::fprintf(stderr, "[profile] OPENCANN_PROFILE_CLOCK=%s is neither 'cpu' nor 'wall': wall time is used\n", v);
    return false;
  }();
  return cpu;
}
}  // namespace

int64_t ProfileClockNs() {
  if (CpuClock()) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* ProfileClockName() { return CpuClock() ? "cpu" : "wall"; }

void RecordNodeProfile(const std::string& model, int64_t runs, std::vector<NodeTime> times) {
  Registry& r = Reg();
  bool now;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.models.push_back({model, runs, std::move(times)});
    now = r.exited;
  }
  if (now) PrintNodeProfiles();
}

void PrintNodeProfiles() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const ModelProfile& m : r.models) {
    int64_t total = 0;
    struct TypeTotal { int64_t ns = 0, nodes = 0; };
    std::map<std::string, TypeTotal> by_type;
    for (const NodeTime& t : m.times) {
      total += t.ns;
      by_type[t.op_type].ns += t.ns;
      by_type[t.op_type].nodes += 1;
    }
    std::vector<std::pair<std::string, TypeTotal>> rows(by_type.begin(), by_type.end());
    std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.ns > b.second.ns; });
    const double per_run_ms = 1e-6 / static_cast<double>(std::max<int64_t>(m.runs, 1));
    std::fprintf(stderr, "[profile] model '%s': %lld runs, %.3f ms per run in %zu nodes (%s time)\n",
                 m.model.c_str(), static_cast<long long>(m.runs), total * per_run_ms, m.times.size(),
                 ProfileClockName());
    std::fprintf(stderr, "[profile] %-28s %6s %12s %7s\n", "op type", "nodes", "ms/run", "share");
    for (auto& [type, t] : rows)
      std::fprintf(stderr, "[profile] %-28s %6lld %12.3f %6.1f%%\n", type.c_str(), static_cast<long long>(t.nodes),
                   t.ns * per_run_ms, total ? 100.0 * t.ns / total : 0.0);
    std::vector<const NodeTime*> slow;
    for (const NodeTime& t : m.times) slow.push_back(&t);
    // OPENCANN_PROFILE_NODES=N (N > 1) lists the N slowest nodes; else 15.
    const long want = std::strtol(std::getenv("OPENCANN_PROFILE_NODES") ? std::getenv("OPENCANN_PROFILE_NODES") : "",
                                  nullptr, 10);
    const size_t top = std::min<size_t>(want > 1 ? static_cast<size_t>(want) : 15, slow.size());
    std::partial_sort(slow.begin(), slow.begin() + top, slow.end(),
                      [](const NodeTime* a, const NodeTime* b) { return a->ns > b->ns; });
    std::fprintf(stderr, "[profile] slowest nodes:\n");
    for (size_t i = 0; i < top; ++i)
      std::fprintf(stderr, "[profile]   %9.3f ms  %-16s %-40s -> %s\n", slow[i]->ns * per_run_ms,
                   slow[i]->op_type.c_str(), slow[i]->name.c_str(), slow[i]->shape.c_str());
  }
  r.models.clear();
}

}  // namespace oc

// Per-node timing for OPENCANN_PROFILE_NODES=1 (off by default). Executables
// time each step when it is on and hand their totals over when destroyed; the
// process prints one table per model to stderr at exit: time per op type, then
// the slowest nodes (OPENCANN_PROFILE_NODES=N: the N slowest). Meant for finding where a model spends its time, not for
// production use (each step pays two clock reads while it is on).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace oc {

struct NodeTime {
  std::string op_type, name, shape;  // shape: the first output's
  int64_t ns = 0;                    // summed over runs
};

// OPENCANN_PROFILE_NODES is set to something other than "" or "0" (read once).
bool NodeProfilingEnabled();
// The clock the per-node times use, in nanoseconds: wall time (monotonic) by
// default; OPENCANN_PROFILE_CLOCK=cpu: the process's CPU time, which is what a
// node costs when other jobs share the cores (at 1 thread, or at N threads
// with OPENCANN_SPIN_US=0 so that waiting workers do not count).
int64_t ProfileClockNs();
// "cpu" or "wall".
const char* ProfileClockName();
// Keeps one model's totals for the report at exit.
void RecordNodeProfile(const std::string& model, int64_t runs, std::vector<NodeTime> times);
// Writes the report now (also called at exit); clears what it printed.
void PrintNodeProfiles();

}  // namespace oc

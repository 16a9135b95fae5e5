// Profiling output: the raw per-process data file the library writes under
// msprof, and the reports made from it (by msprof, or by the library at
// aclprofFinalize):
//   op_summary_<ts>.csv    one row per executed node
//   op_statistic_<ts>.csv  per op type: count, total, mean, min, max, share
//   api_statistic_<ts>.csv per AscendCL API (and memory copies, model loads/runs)
//   msprof_<ts>.json       the timeline, Chrome trace format (Perfetto opens it)
//   report.html            self-contained: time per op type, the 20 slowest ops
// docs/profiling.md describes every column.
//
// Raw file format (".ocprof", text, one record per line, fields separated by
// tabs; tabs and newlines inside names are written as spaces):
//   OCPROF 1
//   process <pid> <name>
//   dropped <records lost to full rings>
//   thread <pid> <os tid> <stream>                         (index = order)
//   graph <name> <node count>                              (index = order)
//   node <name> <op type> <in shapes> <in dtypes> <in formats>
//        <out shapes> <out dtypes> <out formats> <flops>   (follow their graph)
//   event <kind> <start ns> <end ns> <thread> <stream> <model> <graph> <node>
//         <bytes> <name>
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/trace.h"

namespace oc::trace {

Status WriteRaw(const std::string& path, const ProfData& d);
Expected<ProfData> ReadRaw(const std::string& path);
// Concatenates several processes' (or sessions') data, renumbering threads
// and graphs.
ProfData Merge(std::vector<ProfData> parts);

// "20261130024512" (local time) for file names.
std::string ProfTimestamp();

// Writes the five report files into `dir` (created if missing) with `ts` in
// their names.
Status WriteReports(const ProfData& d, const std::string& dir, const std::string& ts);

// One row of op_summary (exposed for tests).
struct OpRow {
  const Event* ev = nullptr;
  const GraphInfo* graph = nullptr;
  const NodeInfo* node = nullptr;
  int64_t run = -1;      // the model execution it belongs to (per model, from 1); -1 if none
  int64_t wait_ns = 0;   // since the previous node of the run ended (or the run began)
};
std::vector<OpRow> OpRows(const ProfData& d);

}  // namespace oc::trace

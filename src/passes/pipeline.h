// The compile pipeline: the ordered list of passes that turn a parsed graph into
// a static, optimised, memory-planned graph ready for Executable::Create and the
// .om writer. Each pass lives in its own file with a stable name and summary,
// listed in passes.inc.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

struct CompileOptions {
  bool fold_constants = true;
  bool fuse = true;              // Conv/Gemm/MatMul + bias + activation, Conv+BN
  bool verify_each_pass = false; // run Graph::Verify after every pass (debug, tests)
  // Dynamic mode: graph inputs may have unknown (-1) dims. Shape inference keeps
  // what it cannot resolve unknown instead of failing, the other passes run on
  // what is static, and memory planning is left to run time (the graph is then
  // specialised per input-shape signature: runtime/shape_specializer.h). A graph
  // that comes out static is planned as usual.
  bool allow_dynamic = false;
  // "force_fp32" or "must_keep_origin_dtype" (both keep float32 here), or a
  // bf16 mode ("allow_fp32_to_bf16", "allow_mix_precision_bf16",
  // "mixed_bfloat16": Conv/MatMul/Gemm in bfloat16, the rest float32).
  std::string precision_mode = "force_fp32";
  // Optimisation passes to skip, by stable name (atc --fusion_switch_file).
  // Only IsSwitchablePass() names are accepted: the other passes are needed for
  // a correct, planned graph.
  std::vector<std::string> disabled_passes;
  // Called as each pass starts / ends (atc --log=info prints these).
  std::function<void(const std::string& line)> log;
};

struct PassInfo {
  const char* name;     // stable, kebab-case: "shape-inference"
  const char* summary;  // one line
  Status (*run)(Graph& graph, const CompileOptions& options);
  bool switchable;  // an optimisation pass that disabled_passes may name
};

// The passes in pipeline order.
const std::vector<PassInfo>& Passes();

// The passes that only optimise (fusions, the layout pass; OC_OPT_PASS in
// passes.inc): skipping one leaves the results the same up to rounding. In
// pipeline order.
const std::vector<std::string>& SwitchablePasses();
bool IsSwitchablePass(std::string_view name);

// Runs every pass. On success every value is static, constants are folded, and
// Graph::arena_size / arena_size_no_reuse and Value::arena_offset are set
// (with allow_dynamic and a graph that stays dynamic: arena_size is 0 and no
// value has an arena offset; IsDynamicGraph() tells).
Status RunPipeline(Graph& graph, const CompileOptions& options);

// True when some graph input or node output is not static (rank or a dim unknown).
bool IsDynamicGraph(const Graph& graph);

}  // namespace oc

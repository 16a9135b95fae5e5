// Declarations of the individual passes (from passes.inc) and helpers they share.
// The public entry points are in pipeline.h; tests call passes one by one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "passes/pipeline.h"

namespace oc {
struct OpDef;
}

namespace oc {

#define OC_PASS(fn, name, summary) Status fn(Graph& graph, const CompileOptions& options);
#define OC_OPT_PASS(fn, name, summary) OC_PASS(fn, name, summary)
#include "passes/passes.inc"
#undef OC_OPT_PASS
#undef OC_PASS

// fuse-bias-activation with a switch for tests: when `only_registered` is true
// (the pipeline's setting) a Fused* op is produced only if the op registry has a
// kernel for it, so the pipeline never emits a graph that cannot run.
Status FuseBiasActivation(Graph& graph, bool only_registered);

// Outputs of an evaluated node become constants; the node itself stays.
// Shared by shape-inference and constant-folding.
Status EvaluateIntoConstants(Node& node);

// True when legalize-types would wrap `node` in Casts: a float16/bfloat16 input
// or output that `def`'s kernel does not take (OpDef::native_types). Such a node
// is not evaluated during the shape-inference sweep.
bool NeedsTypeLegalization(const Node& node, const OpDef& def);

// True when every present input of `node` is constant.
bool AllInputsConstant(const Node& node);

// Number of node inputs that read `v` (a node reading it twice counts twice).
int CountUses(const Graph& graph, const Value* v);

// The opset a Cast added to `graph` takes (the graph's default-domain opset, at least 6).
int CastOpset(const Graph& graph);
// A new value shaped like `like`, of element type `dtype`, named UniqueName(prefix).
Value* NewValueLike(Graph& graph, const Value& like, const std::string& prefix, DataType dtype);
// A Cast node in -> out converting to `to`, named UniqueName(name).
Node* AddCast(Graph& graph, Value* in, Value* out, DataType to, const std::string& name);

// The data of `v` when it is a static float32 constant of exactly `count`
// elements (a per-channel parameter), else nullptr.
const float* ConstantFloats(const Value* v, int64_t count);

// Stats of the last memory plan, for reports and tests: the arena each strategy
// produced ("in-order best-fit" and "largest-first best-fit").
struct MemoryPlanStats {
  int64_t in_order_bytes = 0;
  int64_t largest_first_bytes = 0;
  int64_t no_reuse_bytes = 0;  // every activation in its own bytes
  int64_t aliased = 0;         // view outputs placed on their input's bytes
  const char* chosen = "";
};
// Plans the arena and returns the figures for both strategies.
Expected<MemoryPlanStats> PlanMemory(Graph& graph);

}  // namespace oc

#include "passes/pipeline.h"

#include <algorithm>
#include <chrono>

#include "executor/executable.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "passes/passes.h"

namespace oc {

const std::vector<PassInfo>& Passes() {
  static const std::vector<PassInfo> passes = {
#define OC_PASS(fn, name, summary) PassInfo{name, summary, &fn, false},
#define OC_OPT_PASS(fn, name, summary) PassInfo{name, summary, &fn, true},
#include "passes/passes.inc"
#undef OC_OPT_PASS
#undef OC_PASS
  };
  return passes;
}

const std::vector<std::string>& SwitchablePasses() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const PassInfo& p : Passes())
      if (p.switchable) v.push_back(p.name);
    return v;
  }();
  return names;
}

bool IsSwitchablePass(std::string_view name) {
  for (const std::string& n : SwitchablePasses())
    if (n == name) return true;
  return false;
}

static Status CheckDisabledPasses(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (IsSwitchablePass(name)) continue;
    std::string list;
    for (const std::string& n : SwitchablePasses()) list += (list.empty() ? "" : ", ") + n;
    bool is_pass = false;
    for (const PassInfo& p : Passes()) is_pass |= name == p.name;
    return InvalidArgument("pass '", name, "' ",
                           is_pass ? "is required and cannot be switched off" : "does not exist",
                           "; the passes that can be switched off are: ", list);
  }
  return Status::Ok();
}

bool AllInputsConstant(const Node& node) {
  for (const Value* v : node.inputs)
    if (v && !v->constant) return false;
  return true;
}

int CountUses(const Graph& graph, const Value* v) {
  int uses = 0;
  for (auto& n : graph.nodes())
    for (const Value* in : n->inputs) uses += in == v;
  return uses;
}

const float* ConstantFloats(const Value* v, int64_t count) {
  if (!v || !v->constant || v->dtype != DataType::kFloat32 || !v->IsStatic() || v->NumElements() != count)
    return nullptr;
  return v->constant->as<float>();
}

Status EvaluateIntoConstants(Node& node) {
  auto results = EvaluateNode(node);
  if (!results.ok())
    return results.status().WithContext(StrCat("while folding ", node.Describe(), " at compile time"));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Value* out = node.outputs[i];
    if (!out) continue;
    out->constant = std::move((*results)[i]);
  }
  return Status::Ok();
}

static Status CheckPrecisionMode(const std::string& mode) {
  if (mode == "force_fp32" || mode == "must_keep_origin_dtype" || gemm::IsBf16PrecisionMode(mode))
    return Status::Ok();
  return NotSupported("precision_mode '", mode,
                      "' is not supported (use force_fp32, must_keep_origin_dtype, or a bf16 mode: "
                      "allow_fp32_to_bf16, allow_mix_precision_bf16, mixed_bfloat16)");
}

bool IsDynamicGraph(const Graph& graph) {
  for (const Value* v : graph.inputs)
    if (!v->IsStatic()) return true;
  for (auto& n : graph.nodes())
    for (const Value* v : n->outputs)
      if (v && !v->IsStatic()) return true;
  return false;
}

Status RunPipeline(Graph& graph, const CompileOptions& options) {
  OC_RETURN_IF_ERROR(CheckPrecisionMode(options.precision_mode));
  OC_RETURN_IF_ERROR(CheckDisabledPasses(options.disabled_passes));
  OC_RETURN_IF_ERROR(graph.TopologicalSort());
  if (options.verify_each_pass) {
    Status st = graph.Verify();
    if (!st.ok()) return st.WithContext("before the first pass");
  }
  using Clock = std::chrono::steady_clock;
  for (const PassInfo& pass : Passes()) {
    if (std::find(options.disabled_passes.begin(), options.disabled_passes.end(), pass.name) !=
        options.disabled_passes.end()) {
      if (options.log) options.log(StrCat("pass ", pass.name, ": switched off"));
      continue;
    }
    const size_t nodes_before = graph.nodes().size();
    const auto start = Clock::now();
    Status st = pass.run(graph, options);
    if (!st.ok()) return st.WithContext(StrCat("pass ", pass.name));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (options.log) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", ms);
      options.log(StrCat("pass ", pass.name, ": ", pass.summary, " (", buf, " ms, nodes ",
                         nodes_before, " -> ", graph.nodes().size(), ")"));
    }
    if (options.verify_each_pass) {
      Status v = graph.Verify();
      if (!v.ok()) return v.WithContext(StrCat("IR invalid after pass ", pass.name));
    }
  }
  // Folded constants and rewired values leave unreferenced Values behind.
  graph.Compact();
  return graph.Verify();
}

}  // namespace oc

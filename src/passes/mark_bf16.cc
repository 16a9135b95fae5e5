// mark-bf16: with a bf16 precision mode (--precision_mode=allow_fp32_to_bf16,
// allow_mix_precision_bf16, --precision_mode_v2=mixed_bfloat16) the matrix
// products - Conv, MatMul, Gemm and their fused forms on float32 - are marked
// to compute in bfloat16 with float32 accumulation; every other node stays
// float32. The mark is a node attribute, so it travels in the .om and the
// kernel sees it when it is created (a CPU without AMX-BF16 / AVX512_BF16
// keeps the fp32 kernels and says so once). Subgraph bodies are left float32.
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace oc {
namespace {

bool IsMatrixOp(const Node& node) {
  static const char* const kOnnx[] = {"Conv", "MatMul", "Gemm"};
  static const char* const kFused[] = {"FusedConv", "FusedMatMul", "FusedGemm"};
  if (node.domain.empty()) {
    for (const char* t : kOnnx)
      if (node.op_type == t) return true;
  } else if (node.domain == kOpenCannDomain) {
    for (const char* t : kFused)
      if (node.op_type == t) return true;
  }
  return false;
}

}  // namespace

Status RunMarkBf16(Graph& graph, const CompileOptions& options) {
  if (!gemm::IsBf16PrecisionMode(options.precision_mode)) return Status::Ok();
  int marked = 0;
  for (auto& up : graph.nodes()) {
    Node& node = *up;
    if (!IsMatrixOp(node) || !node.input(0) || node.input(0)->dtype != DataType::kFloat32) continue;
    node.SetString(gemm::kPrecisionAttr, "bf16");
    ++marked;
  }
  if (options.log) {
    const bool cpu = gemm::DefaultBf16Ukernel() != nullptr;
    options.log(StrCat("mark-bf16: ", marked, " Conv/MatMul/Gemm nodes compute in bf16 (precision_mode ",
                       options.precision_mode, ")",
                       cpu ? "" : "; this CPU has neither AMX-BF16 nor AVX512_BF16, so here they run in float32"));
  }
  return Status::Ok();
}

}  // namespace oc

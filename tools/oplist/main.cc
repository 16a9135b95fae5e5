// Prints the operator table of docs/operators.md from the op registry, so the
// documentation cannot drift from what is registered. ctest compares the two.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ops/op_registry.h"

int main() {
  using oc::OpDef;
  std::map<std::pair<std::string, std::string>, std::vector<const OpDef*>> ops;
  for (const OpDef* d : oc::OpRegistry::Global().All()) ops[{d->domain, d->op_type}].push_back(d);
  std::printf("# Supported operators\n\n");
  std::printf("Generated from the op registry by `build/oc_list_ops > docs/operators.md`;\n");
  std::printf("ctest (`operators_doc_up_to_date`) fails when this file is stale.\n\n");
  std::printf("Every op runs on the CPU device. Opsets: the ONNX opset versions whose semantics\n");
  std::printf("are implemented (older forms are rewritten to the newest at parse time).\n");
  std::printf("Data types per op are listed by the kernel's error message when unsupported.\n");
  std::printf("float16 / bfloat16: where the half column says \"float32\", the compiler pass\n");
  std::printf("legalize-types runs the node in float32 between Casts (each output rounded once to\n");
  std::printf("the half type), as onnxruntime does on CPU; \"native\" kernels take them as they are.\n");
  std::printf("float64 is never narrowed: a kernel computes it in double or reports the type.\n\n");
  size_t onnx_count = 0;
  for (auto& [key, defs] : ops) onnx_count += key.first.empty();
  std::printf("%zu ops in the default ONNX domain, %zu in com.opencann (fused ops made by atc).\n\n",
              onnx_count, ops.size() - onnx_count);
  std::printf("| domain | op | opsets | half |\n| --- | --- | --- | --- |\n");
  for (auto& [key, defs] : ops) {
    int lo = INT_MAX, hi = 0;
    bool native = true;
    for (const OpDef* d : defs) {
      lo = std::min(lo, d->min_opset);
      hi = std::max(hi, d->max_opset);
      native &= oc::KernelTakesType(*d, oc::DataType::kFloat16) && oc::KernelTakesType(*d, oc::DataType::kBFloat16);
    }
    std::string range = hi == INT_MAX ? std::to_string(lo) + "+" : std::to_string(lo) + "–" + std::to_string(hi);
    std::printf("| %s | %s | %s | %s |\n", key.first.empty() ? "ai.onnx" : key.first.c_str(), key.second.c_str(),
                range.c_str(), native ? "native" : "float32");
  }
  return 0;
}

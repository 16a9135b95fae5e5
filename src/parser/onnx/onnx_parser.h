// ONNX frontend: ModelProto -> Graph. Initializers (also those listed as graph
// inputs) and Constant nodes become constant Values; external-data weights are
// read relative to the model's folder. Every node is checked against the op
// registry at its opset, and all unsupported (domain, op, opset) are reported
// together, with node names, in one error. Older opset forms are rewritten by
// each op's canonicalize hook.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

struct OnnxParseOptions {
  // --input_shape: replaces the named inputs' shapes (all dims must be >= 0 here).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // --out_nodes: graph outputs to use instead of the model's ("node_name:index"
  // or a tensor name). Empty = the model's outputs.
  std::vector<std::string> out_nodes;
};

Expected<std::unique_ptr<Graph>> ParseOnnxFile(const std::string& path, const OnnxParseOptions& options);
// `base_dir` resolves external-data locations ("" = current directory).
Expected<std::unique_ptr<Graph>> ParseOnnxBytes(const void* data, size_t size, const std::string& base_dir,
                                                const OnnxParseOptions& options);

}  // namespace oc

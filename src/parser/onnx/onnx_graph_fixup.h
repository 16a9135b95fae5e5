// The steps after a ModelProto became a Graph: user overrides (--input_shape,
// --out_nodes), topological order, op-registry checks and canonicalisation.
#pragma once

#include "base/status.h"
#include "graph/graph.h"
#include "parser/onnx/onnx_parser.h"

namespace oc::onnx_parser {

Status ApplyInputShapes(Graph& graph, const OnnxParseOptions& options);
// Replaces the graph outputs and drops nodes that no longer feed any output.
Status ApplyOutNodes(Graph& graph, const OnnxParseOptions& options);
// Every node must be known to the registry at its opset; all that are not are
// reported in one NotSupported error. Known nodes are canonicalised.
Status CheckAndCanonicalize(Graph& graph);
// All of the above, in order, plus TopologicalSort and Verify.
Status FinishGraph(Graph& graph, const OnnxParseOptions& options);

}  // namespace oc::onnx_parser

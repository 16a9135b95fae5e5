// MindSpore frontend: a MINDIR file (mind_ir.ModelProto, written by
// mindspore.export(..., file_format="MINDIR")) -> Graph. MindSpore's graph
// is lowered node by node: each primitive call (a "REF::" node naming one of
// the model's PrimitiveProtos) becomes default-domain IR nodes; Constant
// nodes, tuples and the side-effect bookkeeping are resolved at parse time;
// Parameters become constants named by their network names ("conv1.weight");
// inputs keep their Python argument names ("x"). Every primitive that has no
// lowering is reported in one NotSupported error with its node names.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "graph/graph.h"
#include "parser/onnx/onnx_parser.h"

namespace oc {

// --input_shape / --out_nodes as for ONNX (input names as MINDIR names them, "x").
using MindirParseOptions = OnnxParseOptions;

Expected<std::unique_ptr<Graph>> ParseMindirFile(const std::string& path, const MindirParseOptions& options);
Expected<std::unique_ptr<Graph>> ParseMindirBytes(const void* data, size_t size, const MindirParseOptions& options);

}  // namespace oc

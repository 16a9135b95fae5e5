// --output_type and --input_fp16_nodes: Cast nodes at the model's edges, so
// that outputs come in the asked type and the named inputs take float16 data.
#pragma once

#include <optional>
#include <string>

#include "atc_flags.h"
#include "graph/graph.h"

namespace oc::atc {

// output_type: "FP32" | "FP16" | "UINT8" for every output, or
// "node:index:TYPE;tensor:TYPE;..." for some. input_fp16_nodes: "in1;in2".
// Inputs and outputs keep their names.
std::optional<AtcError> ApplyIoTypes(Graph& graph, const std::string& output_type,
                                     const std::string& input_fp16_nodes);

}  // namespace oc::atc

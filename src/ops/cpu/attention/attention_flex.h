// FlexAttention's canonicalize hook (attention_flex.cc).
#pragma once

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

// With a score_mod or prob_mod subgraph: expands the node into ai.onnx nodes
// that run the mods and turns it into an Identity of their result. Without:
// leaves it for the fused kernel.
Status ExpandFlexAttentionMods(Node& node, Graph& graph);

}  // namespace oc

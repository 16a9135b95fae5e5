// Deep copy of a Graph: new Values and Nodes with the same names, order, ids,
// shapes, attributes and metadata. Constant bytes are shared, not copied
// (TensorData keeps its owner alive), so cloning a large model costs the IR
// only; subgraph attributes are shared too (they are immutable once compiled).
// Used to specialise a dynamic-shape graph per input-shape signature.
#pragma once

#include <memory>

#include "graph/graph.h"

namespace oc {

std::unique_ptr<Graph> CloneGraph(const Graph& graph);

}  // namespace oc

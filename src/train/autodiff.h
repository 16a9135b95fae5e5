// Reverse-mode automatic differentiation on the IR.
//
// AppendGradients extends a graph with the nodes that compute the gradient of
// a scalar loss with respect to chosen values (parameters, inputs): it walks
// the nodes between them backwards, asks each op's gradient rule (OpDef::grad,
// ops/grad.h) for its inputs' gradients, and sums the contributions of values
// used more than once. The result is an ordinary graph — forward and backward
// in one — that the compile pipeline optimises and memory-plans as a whole.
#pragma once

#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc::train {

struct GradientOptions {
  // The gradient of the loss to start from: nullptr for 1 (the loss must then
  // have one element); else a value shaped like the loss.
  Value* seed = nullptr;
  // Prefix of the generated nodes' and values' names.
  std::string prefix = "grad/";
};

// Appends to `graph` (its shapes are inferred first: they must come out
// static) the nodes computing d loss / d w for each w in `wrt`, and returns
// those gradient values, in order, each shaped and typed like its w (a w the
// loss does not depend on gets zeros). The gradients are not made graph
// outputs: the caller decides (a training step feeds them to the optimiser).
// Fails naming the node when an op on the way has no gradient rule, and when
// `loss` or a w is not a floating-point tensor of the graph.
Expected<std::vector<Value*>> AppendGradients(Graph& graph, Value* loss, const std::vector<Value*>& wrt,
                                              const GradientOptions& options = {});

}  // namespace oc::train

// pack-qkv (see pack_qkv.cc): MatMuls that share an input and have constant
// weights of equal K -> one MatMul (+ Add of the packed biases) + Split.
// Not in the default pipeline (pack_qkv.cc says why); callable on its own.
#pragma once

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

Status PackQkv(Graph& graph);

}  // namespace oc

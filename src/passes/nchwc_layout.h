// nchwc-layout: rewrite connected regions of 2-D convolutions and the ops
// between them (Add/Sub/Mul of equal shapes, Relu-like activations, Max/Average
// pools, GlobalAveragePool, Concat on channels) to the blocked NCHWc layout of
// src/ops/cpu/nchwc/nchwc.h, with reorders only where a region meets the rest of the
// graph. The pipeline runs it with the block size of the ISA atc runs on
// (nchwc::BlockForIsa(SelectedIsa())) when OPENCANN_NCHWC=1, or by default when
// it measured faster (docs/nchwc.md); OPENCANN_NCHWC=0 turns it off, =all also
// blocks graphs with fewer than 3 convs (testing).
#pragma once

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

// Rewrites `graph` for block size 8 or 16 (a no-op for other values) when it
// has at least `min_convs` eligible convs (the pipeline asks for 3).
Status RewriteToNchwc(Graph& graph, int block, int min_convs = 1);

// Whether the pipeline runs the pass (OPENCANN_NCHWC=1/0, else the default).
bool NchwcLayoutEnabled();

}  // namespace oc

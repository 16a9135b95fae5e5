// Optimisers as a graph: the update of every trained parameter from its
// gradient, one com.opencann SGDUpdate / AdamUpdate node per parameter
// (src/ops/cpu/ml/optimizer_update.cc gives the formulas), after an optional
// clipping of the gradients' global L2 norm. The graph is compiled like any
// model and run with each updated tensor's output bound to its input's buffer,
// so parameters and optimiser state change in place.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc::train {

struct OptimizerSpec {
  enum class Kind { kNone, kSgd, kAdam };
  Kind kind = Kind::kNone;
  // SGD (also MindSpore's Momentum: dampening 0).
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  // Adam.
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  bool decoupled_weight_decay = false;  // AdamW / MindSpore's AdamWeightDecay
  bool bias_correction = true;
  std::string epsilon_mode = "corrected";  // "raw": MindSpore's nn.Adam
  // Per parameter (empty: none).
  std::vector<double> weight_decay;
  // > 0: the gradients are scaled by min(1, max_grad_norm / (norm + 1e-6)),
  // norm the L2 norm of all of them together (torch's clip_grad_norm_).
  double max_grad_norm = 0;
  // Names of the state tensors, each the prefix + the parameter's name: SGD
  // with momentum has one ("moments."), Adam two ("moment1.", "moment2."),
  // MindSpore's names, so checkpoints carry them as MindSpore's do.
  std::vector<std::string> state_prefixes;
  // The int64 scalar tensor counting the updates done.
  std::string step_name = "global_step";

  // How many state tensors each parameter has (0, 1 or 2).
  size_t StatesPerParam() const;
  // state_prefixes, or MindSpore's defaults for the kind.
  std::vector<std::string> StatePrefixes() const;
  // Checks the hyper-parameters; the message names the one at fault.
  Status Validate(size_t num_params) const;
};

// The update graph's inputs, in order: lr (float32 scalar), step (int64
// scalar), then per parameter p (in `params` order) x_p, g_p and its states;
// its outputs: per parameter x_p' and its states' (so output k updates the
// input listed in `UpdateGraph::aliases[k]`).
struct UpdateGraph {
  std::shared_ptr<Graph> graph;
  std::vector<size_t> aliases;  // per output, the input index it overwrites
};

struct ParamInfo {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
};

Expected<UpdateGraph> BuildUpdateGraph(const std::vector<ParamInfo>& params, const OptimizerSpec& spec);

}  // namespace oc::train

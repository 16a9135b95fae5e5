// Ops the Interpreter evaluates itself instead of through a Kernel: control
// flow (If, Loop, Scan, SequenceMap: they run subgraphs), sequence and optional
// ops (their values are not dense tensors), and Identity (any kind, no copy).
// Implemented in src/ops/cpu/control_flow/control_flow.cc, sequence.cc, optional.cc.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "executor/interpreter.h"

namespace oc {

// A Loop/Scan body run by static Executables per input-shape signature
// (control_flow.cc); shared by the runs of one node.
class FastBody;
// A body compiled for more input-shape signatures than this (shapes that
// change every iteration, a growing state) runs node by node from then on.
inline constexpr uint64_t kMaxBodySpecializations = 8;

// One evaluation of a native op.
struct NativeCall {
  const Node& node;
  // The node's inputs (explicit, then implicit ones that bind subgraph
  // captures); nullptr for an omitted optional input.
  std::vector<const RtValue*> inputs;
  std::vector<RtValue> outputs;  // sized like node.outputs; fill the present ones
  ThreadPool& pool;
  // Interpreters of the node's subgraphs, created once per node and shared by runs.
  std::mutex* body_mu;
  std::map<const Graph*, std::unique_ptr<Interpreter>>* bodies;
  // Static-executable runners of the bodies (guarded by body_mu too).
  std::map<const Graph*, std::shared_ptr<FastBody>>* fast_bodies = nullptr;

  // The explicit input i, or nullptr (absent or past the explicit ones).
  const RtValue* in(size_t i) const { return i < node.NumExplicitInputs() ? inputs[i] : nullptr; }
  size_t num_explicit_inputs() const { return node.NumExplicitInputs(); }
  // The interpreter for graph attribute `attr` (error if the node has none).
  Expected<const Interpreter*> Body(const std::string& attr);
  // The values bound to the captures of graph attribute `attr` (see graph.h).
  std::vector<RtValue> CapturesOf(const std::string& attr) const;
  // The tensor in explicit input i; error naming the node if absent or not a tensor.
  Expected<const HostTensor*> TensorIn(size_t i) const;
};

using NativeOpFn = Status (*)(NativeCall& call);

// nullptr when the op runs through its Kernel.
NativeOpFn FindNativeOp(const std::string& domain, const std::string& op_type);
NativeOpFn FindSequenceOp(const std::string& op_type);  // sequence.cc
NativeOpFn FindOptionalOp(const std::string& op_type);  // optional.cc

// True when `graph` (top level) has a node the static Executable cannot run:
// a natively evaluated op other than Identity, or a non-tensor value.
bool NeedsInterpreter(const Graph& graph);

// Tensor helpers shared by the native ops (sequence.cc).
// Slices [begin, begin+count) of `axis`.
HostTensor SliceAxis(const HostTensor& t, int64_t axis, int64_t begin, int64_t count);
// Concatenates along `axis` (all other dims equal); with `new_axis`, stacks
// along a new axis inserted at `axis`. Error names `what`.
Expected<HostTensor> ConcatTensors(std::span<const HostTensor> parts, int64_t axis, bool new_axis,
                                   DataType dtype, const std::string& what);
// Reads a scalar (or 1-element) integer tensor.
Expected<int64_t> ScalarInt(const HostTensor& t, const std::string& what);

}  // namespace oc

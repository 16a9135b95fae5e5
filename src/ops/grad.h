// Gradient rules: how each op's inputs' gradients follow from its outputs'.
//
// An op declares its rule in its OpDef (`.grad = GradMatMul`), next to its
// shape inference and kernels; src/train/autodiff.h walks a graph backwards and
// calls the rules. A rule emits ordinary IR nodes through a GradBuilder, so the
// backward graph is compiled, fused and memory-planned like any other graph.
//
// A rule sees the forward node with its inputs' and outputs' dtypes and static
// shapes (the graph is shape-inferred first), the gradient of each output
// (nullptr where no gradient flows), and which inputs need one; it sets the
// gradient of each input that needs one, shaped and typed like that input, or
// leaves nullptr where the input is not differentiable (an index, a shape).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

class GradBuilder {
 public:
  // Nodes and values are named after `prefix` ("grad/").
  GradBuilder(Graph& graph, std::string prefix) : graph_(graph), prefix_(std::move(prefix)) {}

  Graph& graph() { return graph_; }

  // A node of the default domain at the opset gradient nodes use (their input
  // forms: axes as inputs), with one output; returns it.
  Value* Op(const std::string& op_type, std::vector<Value*> inputs, std::map<std::string, Attribute> attrs = {});
  // The same with `n` outputs.
  std::vector<Value*> OpN(const std::string& op_type, std::vector<Value*> inputs, size_t n,
                          std::map<std::string, Attribute> attrs = {});

  // Constants: a scalar of a floating type (rank 0), and a 1-D int64 tensor.
  Value* Scalar(double v, DataType dtype);
  Value* Int64s(const std::vector<int64_t>& v);
  // A tensor of zeros shaped and typed like `like` (static).
  Value* ZerosLike(const Value& like);

  // Gradient plumbing for numpy broadcasting: `g` has shape `from` (the
  // broadcast result); sums it down to `to` (the operand's shape).
  Value* SumTo(Value* g, const std::vector<int64_t>& from, const std::vector<int64_t>& to);
  // Reshape to a static shape (no node when it already has it).
  Value* ReshapeTo(Value* v, const std::vector<int64_t>& from, const std::vector<int64_t>& to);

  static Attribute Int(int64_t v);
  static Attribute Float(float v);
  static Attribute Ints(std::vector<int64_t> v);
  static Attribute String(std::string v);

  // The opset of the default domain the emitted nodes are written for.
  static constexpr int kOpset = 18;

 private:
  Graph& graph_;
  std::string prefix_;
};

// The gradient of each output (dy), which inputs need one (needs), and where
// the rule puts each input's gradient (dx, pre-sized to the inputs, nullptr).
struct GradArgs {
  const Node& node;
  const std::vector<Value*>& dy;
  const std::vector<bool>& needs;
  std::vector<Value*>& dx;
};
using GradFn = Status (*)(GradBuilder& b, const GradArgs& a);

// Numpy broadcasting of two static shapes (the result's shape).
std::vector<int64_t> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace oc

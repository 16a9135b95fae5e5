// The op registry: the one place where an op is declared. Each OpDef carries the
// opset range whose semantics are implemented, shape/type inference, an optional
// canonicalisation of older opset forms, and the kernel factory per device.
// Parser, passes, the .om loader and the runtime all look ops up here.
//
// Ops are declared in groups (src/ops/cpu/<group>.cc, each defining
// `void Register<Group>Ops(OpRegistry&)`); op_groups.inc lists the groups.
#pragma once

#include <climits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "ops/kernel.h"

namespace oc {

// Sets dtype and shape of node.outputs from node.inputs (which have dtype and,
// where known, shape and constant data). May also set an output's `constant`
// when it is computable from shapes alone (Shape, Size). Errors name the node and
// say what was expected.
using InferFn = Status (*)(Node& node);
// Rewrites an older-opset form into the form the kernel implements (for example
// Squeeze's `axes` attribute into a constant input). May add constant values.
using CanonicalizeFn = Status (*)(Node& node, Graph& graph);
using KernelFactory = Expected<KernelPtr> (*)(const KernelInit& init);

struct OpDef {
  std::string domain;  // "" = ai.onnx; "com.opencann" for our fused ops
  std::string op_type;
  int min_opset = 1;   // implemented for opset versions [min_opset, max_opset]
  int max_opset = INT_MAX;
  InferFn infer = nullptr;
  KernelFactory cpu = nullptr;
  CanonicalizeFn canonicalize = nullptr;
  bool foldable = true;  // may be evaluated at compile time when all inputs are constant
  // Half-precision contract, read by the legalize-types pass: the element types
  // the CPU kernel computes in natively, as a set of DataTypeBit(t). Only the
  // float16 and bfloat16 bits are consulted: a node that has a float16/bfloat16
  // input or output whose bit is not set here runs in float32 between Casts
  // (half inputs cast up, half outputs computed in float32 and cast back), as
  // onnxruntime does for its CPU kernels. So the default 0 means "float16 and
  // bfloat16 are legalized to float32"; other types are never rewritten (a
  // float64 or integer tensor the kernel lacks still fails in its factory).
  // Set DataTypeBit(kFloat16) | ... when the kernel handles half itself, and
  // kAllDataTypes for ops that only move bytes (Reshape, Transpose, Concat, ...)
  // or convert types (Cast), so that no Casts are wrapped around them.
  uint64_t native_types = 0;
};

// True when the CPU kernel of `def` takes `t` as it is (see OpDef::native_types):
// false only for float16 / bfloat16 outside the op's native set.
inline bool KernelTakesType(const OpDef& def, DataType t) {
  if (t != DataType::kFloat16 && t != DataType::kBFloat16) return true;
  return (def.native_types & DataTypeBit(t)) != 0;
}

inline constexpr const char* kOpenCannDomain = "com.opencann";

class OpRegistry {
 public:
  // The registry with every op group registered.
  static const OpRegistry& Global();

  void Register(OpDef def);
  // nullptr when (domain, op_type) is unknown or `opset` is outside its range.
  const OpDef* Find(const std::string& domain, const std::string& op_type, int opset) const;
  // Any version of the op, for "known but not at this opset" messages.
  const OpDef* FindAnyVersion(const std::string& domain, const std::string& op_type) const;
  std::vector<const OpDef*> All() const;

 private:
  std::multimap<std::pair<std::string, std::string>, OpDef> ops_;
};

// Normalises "ai.onnx" to "".
std::string CanonicalDomain(const std::string& domain);

}  // namespace oc

// The op registry: the one place where an op is declared. Each OpDef carries the
// opset range whose semantics are implemented, shape/type inference, an optional
// canonicalisation of older opset forms, and its kernels, one factory per device
// type (KernelTable). Parser, passes, the .om loader and the runtime all look ops
// up here.
//
// Ops are declared in groups (src/ops/cpu/<family>/<group>.cc, each defining
// `void Register<Group>Ops(OpRegistry&)`); op_groups.inc lists the groups. Every
// op has a CPU kernel: the CPU is the reference device and the fallback of every
// other one. Another device adds its kernels to existing ops with
// OpRegistry::RegisterKernel (src/runtime/device/device.h tells how nodes are
// placed).
#pragma once

#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "ops/grad.h"
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

// The device type name CPU kernels are registered under.
inline constexpr std::string_view kCpuDevice = "cpu";

// An op's kernels: at most one factory per device type, named by the device
// type's string (a string literal or another string of static storage). Small
// and searched linearly; looked up when kernels are created, never per run.
class KernelTable {
 public:
  static constexpr size_t kMaxDevices = 4;
  constexpr KernelTable() = default;

  // Sets (or replaces) the kernel of `device`. False when the table is full.
  // A null `factory` takes the device's kernel off.
  constexpr bool Set(std::string_view device, KernelFactory factory) {
    for (Entry& e : entries_)
      if (e.factory != nullptr && e.device == device) {
        e.factory = factory;
        return true;
      }
    if (factory == nullptr) return true;
    for (Entry& e : entries_)
      if (e.factory == nullptr) {
        e = {device, factory};
        return true;
      }
    return false;
  }
  // nullptr when `device` has no kernel for the op.
  constexpr KernelFactory Find(std::string_view device) const {
    for (const Entry& e : entries_)
      if (e.factory != nullptr && e.device == device) return e.factory;
    return nullptr;
  }
  // The device types that have a kernel, in registration order.
  std::vector<std::string_view> Devices() const {
    std::vector<std::string_view> out;
    for (const Entry& e : entries_)
      if (e.factory) out.push_back(e.device);
    return out;
  }

 private:
  struct Entry {
    std::string_view device;
    KernelFactory factory = nullptr;
  };
  std::array<Entry, kMaxDevices> entries_{};
};

// The table of an op declared with its CPU kernel: `.kernels = CpuKernel(MakeX)`.
constexpr KernelTable CpuKernel(KernelFactory factory) {
  KernelTable t;
  t.Set(kCpuDevice, factory);
  return t;
}

struct OpDef {
  std::string domain;  // "" = ai.onnx; "com.opencann" for our fused ops
  std::string op_type;
  int min_opset = 1;   // implemented for opset versions [min_opset, max_opset]
  int max_opset = INT_MAX;
  InferFn infer = nullptr;
  KernelTable kernels;
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
  // The gradient rule (ops/grad.h), for training; nullptr: the op is not
  // differentiable here, and differentiating through it fails naming it.
  GradFn grad = nullptr;
};

// The CPU kernel of `def` (nullptr for ops without one).
inline KernelFactory CpuKernelOf(const OpDef& def) { return def.kernels.Find(kCpuDevice); }

// True when the CPU kernel of `def` takes `t` as it is (see OpDef::native_types):
// false only for float16 / bfloat16 outside the op's native set.
inline bool KernelTakesType(const OpDef& def, DataType t) {
  if (t != DataType::kFloat16 && t != DataType::kBFloat16) return true;
  return (def.native_types & DataTypeBit(t)) != 0;
}

inline constexpr const char* kOpenCannDomain = "com.opencann";

class OpRegistry {
 public:
  // The registry with every op group registered. Registration (Register,
  // RegisterKernel) after start-up is for op packages and devices that load
  // later; it must not race with compiling or loading models that use the op
  // being changed (look-ups of other ops may run meanwhile).
  static OpRegistry& Global();

  void Register(OpDef def);
  // Adds `device`'s kernel to every registered opset version of the op (a
  // device claims an op: src/runtime/device/device.h). `device` must have
  // static storage. NotFound when the op is unknown; ResourceExhausted when a
  // version's table is full.
  Status RegisterKernel(std::string_view device, const std::string& domain,
                        const std::string& op_type, KernelFactory factory);
  // Takes `device`'s kernel off every version of the op (tests; no-op if absent).
  void UnregisterKernel(std::string_view device, const std::string& domain,
                        const std::string& op_type);
  // nullptr when (domain, op_type) is unknown or `opset` is outside its range.
  const OpDef* Find(const std::string& domain, const std::string& op_type, int opset) const;
  // Any version of the op, for "known but not at this opset" messages.
  const OpDef* FindAnyVersion(const std::string& domain, const std::string& op_type) const;
  std::vector<const OpDef*> All() const;

 private:
  mutable std::mutex mu_;  // guards the map's structure (entries never move)
  std::multimap<std::pair<std::string, std::string>, OpDef> ops_;
};

// Normalises "ai.onnx" to "".
std::string CanonicalDomain(const std::string& domain);

}  // namespace oc

// Test helper for the data-movement op groups: one-node graphs built by hand,
// run through the registry (canonicalize -> infer -> EvaluateNode), plus the
// index arithmetic the tests use to compute their references independently.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "executor/executable.h"
#include "ops/op_registry.h"

namespace oc::tt {

struct T {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  template <typename E> std::vector<E> as() const {
    std::vector<E> v(bytes.size() / sizeof(E));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(E));
    return v;
  }
};

template <typename E>
T Make(std::vector<int64_t> shape, const std::vector<E>& data, DataType dtype = DataTypeOf<E>::value) {
  T t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.resize(data.size() * sizeof(E));
  if (!data.empty()) std::memcpy(t.bytes.data(), data.data(), t.bytes.size());
  return t;
}
inline T I64(std::vector<int64_t> v) { int64_t n = static_cast<int64_t>(v.size()); return Make<int64_t>({n}, v); }
inline T I64Scalar(int64_t v) { return Make<int64_t>({}, {v}); }

// Sequential data 0, 1, 2, ... of `shape` with element type E.
template <typename E>
T Iota(std::vector<int64_t> shape, E start = E(0)) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<E> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<E>(start + static_cast<E>(i));
  return Make<E>(std::move(shape), v);
}

using AttrFn = std::function<void(Node&)>;

struct Result {
  Status status;
  std::vector<T> outputs;
  const T& operator[](size_t i) const { return outputs[i]; }
};

// Runs op_type at `opset` on constant inputs (nullopt = omitted input).
inline Result RunOp(const std::string& op_type, const std::vector<std::optional<T>>& inputs, AttrFn attrs = nullptr,
                  int opset = 18, size_t num_outputs = 1) {
  Graph g;
  g.opset_imports[""] = opset;
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) { ins.push_back(nullptr); continue; }
    const T& t = *inputs[i];
    ins.push_back(g.AddConstant("in" + std::to_string(i), t.dtype, t.shape,
                                TensorData::Copy(t.bytes.data(), t.bytes.size())));
  }
  std::vector<Value*> outs;
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back(g.AddValue("out" + std::to_string(i)));
  Node* node = g.AddNode(op_type, "node_" + op_type, ins, outs);
  if (attrs) attrs(*node);
  Result r;
  const OpDef* def = OpRegistry::Global().Find("", op_type, opset);
  if (!def) { r.status = NotFound("no OpDef for ", op_type, " at opset ", opset); return r; }
  if (def->canonicalize) {
    r.status = def->canonicalize(*node, g);
    if (!r.status.ok()) return r;
  }
  r.status = def->infer(*node);
  if (!r.status.ok()) return r;
  auto data = EvaluateNode(*node);
  if (!data.ok()) { r.status = data.status(); return r; }
  for (size_t i = 0; i < node->outputs.size(); ++i) {
    T t;
    t.dtype = node->outputs[i]->dtype;
    t.shape = node->outputs[i]->shape;
    const TensorData& d = (*data)[i];
    t.bytes.assign(d.data(), d.data() + d.size());
    r.outputs.push_back(std::move(t));
  }
  return r;
}

inline std::vector<int64_t> StridesOf(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}
inline std::vector<int64_t> Unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) { idx[d] = i % shape[d]; i /= shape[d]; }
  return idx;
}
inline int64_t Ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + idx[d];
  return off;
}
inline int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace oc::tt

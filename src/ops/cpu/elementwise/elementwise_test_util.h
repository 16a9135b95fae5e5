// Test helper for the element-wise op groups: builds a one-node graph with
// constant inputs, runs canonicalize + infer from the registry, creates the
// CPU kernel and runs it (EvaluateNode), and returns typed outputs.
#pragma once

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "executor/executable.h"
#include "ops/op_registry.h"

namespace oc::ewtest {

struct Tensor {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  template <typename T> std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

template <typename T>
Tensor Make(std::vector<int64_t> shape, const std::vector<T>& data,
            DataType dtype = DataTypeOf<T>::value) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.resize(data.size() * sizeof(T));
  if (!data.empty()) std::memcpy(t.bytes.data(), data.data(), t.bytes.size());
  return t;
}
template <typename T>
Tensor Scalar(T v) { return Make<T>({}, {v}); }

using AttrFn = std::function<void(Node&)>;

// Runs `op_type` at `opset` on constant inputs (std::nullopt = omitted optional
// input). Output count is `num_outputs`; omitted ones are given as false in
// `want_output` when set.
inline Expected<std::vector<Tensor>> RunOp(const std::string& op_type,
                                           const std::vector<std::optional<Tensor>>& inputs,
                                           AttrFn attrs = nullptr, int opset = 18,
                                           size_t num_outputs = 1,
                                           std::vector<bool> want_output = {}) {
  Graph g;
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) { ins.push_back(nullptr); continue; }
    const Tensor& t = *inputs[i];
    ins.push_back(g.AddConstant("in" + std::to_string(i), t.dtype, t.shape,
                                TensorData::Copy(t.bytes.data(), t.bytes.size())));
  }
  std::vector<Value*> outs;
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!want_output.empty() && !want_output[i]) { outs.push_back(nullptr); continue; }
    outs.push_back(g.AddValue("out" + std::to_string(i)));
  }
  Node* node = g.AddNode(op_type, "n", ins, outs);
  node->opset = opset;
  if (attrs) attrs(*node);
  const OpDef* def = OpRegistry::Global().Find("", op_type, opset);
  if (!def) return NotFound("no OpDef for ", op_type, " at opset ", opset);
  if (def->canonicalize) OC_RETURN_IF_ERROR(def->canonicalize(*node, g));
  OC_RETURN_IF_ERROR(def->infer(*node));
  OC_ASSIGN_OR_RETURN(auto data, EvaluateNode(*node));
  std::vector<Tensor> result;
  for (size_t i = 0; i < node->outputs.size(); ++i) {
    Tensor t;
    if (Value* v = node->outputs[i]) {
      t.dtype = v->dtype;
      t.shape = v->shape;
      t.bytes.assign(data[i].data(), data[i].data() + data[i].size());
    }
    result.push_back(std::move(t));
  }
  return result;
}

// Deterministic pseudo-random values in [lo, hi).
inline std::vector<float> RandomFloats(size_t n, float lo, float hi, uint32_t seed = 1) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) * (1.0f / 16777216.0f);
  }
  return v;
}

// Index of the input element feeding output element `flat` under numpy broadcast.
inline int64_t BroadcastIndex(const std::vector<int64_t>& in_shape,
                              const std::vector<int64_t>& out_shape, int64_t flat) {
  int64_t idx = 0, stride = 1;
  size_t r = out_shape.size(), ri = in_shape.size();
  for (size_t i = r; i-- > 0;) {
    int64_t coord = flat % out_shape[i];
    flat /= out_shape[i];
    if (i + ri >= r) {
      int64_t d = in_shape[i + ri - r];
      if (d != 1) idx += coord * stride;
      stride *= d;
    }
  }
  return idx;
}

}  // namespace oc::ewtest

// Test harness shared by the pooling, normalisation, RNN, Resize and Pad op
// tests: builds a one-node graph with constant inputs, runs the op's
// canonicalize + infer hooks as the compiler would, then evaluates the node
// through its CPU kernel (EvaluateNode).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "executor/executable.h"
#include "ops/op_registry.h"

namespace oc::testing {

struct OpResult {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<TensorData> data;

  std::vector<float> F(size_t i) const {
    std::vector<float> v(data[i].size() / 4);
    if (!v.empty()) std::memcpy(v.data(), data[i].data(), v.size() * 4);
    return v;
  }
  std::vector<double> D(size_t i) const {
    std::vector<double> v(data[i].size() / 8);
    if (!v.empty()) std::memcpy(v.data(), data[i].data(), v.size() * 8);
    return v;
  }
  std::vector<int64_t> I64(size_t i) const {
    std::vector<int64_t> v(data[i].size() / 8);
    if (!v.empty()) std::memcpy(v.data(), data[i].data(), v.size() * 8);
    return v;
  }
};

class OpTester {
 public:
  OpTester(std::string op_type, int opset) {
    node_ = graph_.AddNode(op_type, "test_" + op_type, {}, {});
    node_->opset = opset;
    graph_.opset_imports[""] = opset;
  }

  template <typename T>
  OpTester& Input(std::vector<int64_t> shape, const std::vector<T>& data) {
    Value* v = graph_.AddConstant(graph_.UniqueName("in"), DataTypeOf<T>::value, shape,
                                  TensorData::Copy(data.data(), data.size() * sizeof(T)));
    v->has_shape = true;
    v->shape = shape;
    v->dim_params.assign(shape.size(), "");
    node_->inputs.push_back(v);
    return *this;
  }
  OpTester& InputF(std::vector<int64_t> shape, const std::vector<float>& data) { return Input(shape, data); }
  OpTester& InputI64(std::vector<int64_t> shape, const std::vector<int64_t>& data) { return Input(shape, data); }
  // A graph input (not constant) of the given shape.
  OpTester& DynamicInput(DataType dtype, std::vector<int64_t> shape) {
    Value* v = graph_.AddValue(graph_.UniqueName("dyn"));
    v->dtype = dtype;
    v->has_shape = true;
    v->shape = shape;
    v->dim_params.assign(shape.size(), "");
    graph_.inputs.push_back(v);
    node_->inputs.push_back(v);
    return *this;
  }
  OpTester& NoInput() { node_->inputs.push_back(nullptr); return *this; }
  OpTester& Outputs(int n) {
    for (int i = 0; i < n; ++i) node_->outputs.push_back(graph_.AddValue(graph_.UniqueName("out")));
    return *this;
  }
  OpTester& NoOutput() { node_->outputs.push_back(nullptr); return *this; }
  Node& node() { return *node_; }

  // Canonicalize + infer only.
  Status Prepare() {
    const OpDef* def = OpRegistry::Global().Find(node_->domain, node_->op_type, node_->opset);
    if (!def) return NotFound("no OpDef for ", node_->op_type, " at opset ", node_->opset);
    if (def->canonicalize) {
      OC_RETURN_IF_ERROR(def->canonicalize(*node_, graph_));
      def = OpRegistry::Global().Find(node_->domain, node_->op_type, node_->opset);
      if (!def) return NotFound("no OpDef for canonical ", node_->op_type, " at opset ", node_->opset);
    }
    return def->infer(*node_);
  }

  Expected<OpResult> Run() {
    OC_RETURN_IF_ERROR(Prepare());
    OC_ASSIGN_OR_RETURN(auto outs, EvaluateNode(*node_));
    OpResult r;
    for (Value* v : node_->outputs) r.shapes.push_back(v ? v->shape : std::vector<int64_t>{});
    r.data = std::move(outs);
    return r;
  }

 private:
  Graph graph_;
  Node* node_;
};

inline void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol,
                       const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) { EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i; continue; }
    float t = tol * std::max(1.f, std::fabs(want[i]));
    ASSERT_NEAR(got[i], want[i], t) << what << " at element " << i;
  }
}

// Deterministic pseudo-random floats in [lo, hi).
inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

}  // namespace oc::testing

// Helpers for the pass tests: hand-built graphs with typed, shaped values.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ops/op_registry.h"

namespace oc::testing {

inline Value* Tensor(Graph& g, const std::string& name, std::vector<int64_t> shape,
                     DataType dtype = DataType::kFloat32) {
  Value* v = g.AddValue(name);
  v->dtype = dtype;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  return v;
}

template <typename T>
Value* Const(Graph& g, const std::string& name, std::vector<int64_t> shape, const std::vector<T>& data) {
  return g.AddConstant(name, DataTypeOf<T>::value, std::move(shape),
                       TensorData::Copy(data.data(), data.size() * sizeof(T)));
}

inline std::vector<float> Floats(const Value* v) {
  const float* p = v->constant->as<float>();
  return std::vector<float>(p, p + v->constant->size() / sizeof(float));
}

// "Conv", "com.opencann::FusedConv", ... in node order.
inline std::vector<std::string> OpSequence(const Graph& g) {
  std::vector<std::string> ops;
  for (auto& n : g.nodes()) ops.push_back(n->domain.empty() ? n->op_type : n->domain + "::" + n->op_type);
  return ops;
}

inline bool Registered(const char* op, const std::string& domain = "") {
  return OpRegistry::Global().FindAnyVersion(domain, op) != nullptr;
}

// Deterministic pseudo-random floats in [lo, hi).
inline std::vector<float> Pattern(size_t n, float lo, float hi, uint32_t seed = 1) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

}  // namespace oc::testing

// Skips the test until the named op is registered by its kernel group.
#define OC_REQUIRE_OP(...)                                                        \
  do {                                                                            \
    if (!::oc::testing::Registered(__VA_ARGS__))                                  \
      GTEST_SKIP() << "op " << #__VA_ARGS__ << " is not registered yet";           \
  } while (0)

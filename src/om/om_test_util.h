// Test helpers for the .om tests: a hand-built planned graph that covers every
// field of the format, and a deep graph comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "graph/graph.h"
#include "ops/op_registry.h"

namespace oc::om_test {

template <typename T>
TensorData MakeData(const std::vector<T>& v) {
  return TensorData::Copy(v.data(), v.size() * sizeof(T));
}

inline Value* AddActivation(Graph& g, const std::string& name, DataType dtype,
                            std::vector<int64_t> shape, int64_t arena_offset) {
  Value* v = g.AddValue(name);
  v->dtype = dtype;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
  v->arena_offset = arena_offset;
  return v;
}

// The first registered op of the com.opencann domain, or nullptr.
inline const OpDef* FindFusedOp() {
  for (const OpDef* d : OpRegistry::Global().All())
    if (d->domain == kOpenCannDomain) return d;
  return nullptr;
}

// A planned graph with constants, attributes of every kind, an absent optional
// input and output, a graph input that is also an output, a constant output,
// and (when the build registers one) a fused com.opencann node.
inline std::unique_ptr<Graph> MakeTestGraph() {
  auto g = std::make_unique<Graph>();
  g->name = "om_test_model";
  g->producer_name = "hand-built";
  g->ir_version = 9;
  g->opset_imports = {{"", 17}};
  g->metadata = {{"input_format", "NCHW"}, {"quote\"and\\slash", "line\nbreak\ttab"}};

  Value* x = AddActivation(*g, "x", DataType::kFloat32, {2, 4}, -1);
  x->dim_params = {"batch", ""};
  Value* w = g->AddConstant("w", DataType::kFloat32, {2, 4},
                            MakeData<float>({1, 2, 3, 4, 5, 6, 7, 8}));
  Value* ratio = g->AddConstant("ratio", DataType::kFloat32, {}, MakeData<float>({0.25f}));
  Value* tmode = g->AddConstant("training_mode", DataType::kBool, {}, MakeData<uint8_t>({0}));
  Value* table = g->AddConstant("table", DataType::kInt64, {3}, MakeData<int64_t>({-1, 0, 1LL << 40}));
  Value* empty = g->AddConstant("empty", DataType::kInt32, {0, 5}, TensorData::Allocate(0));
  Value* a = AddActivation(*g, "a", DataType::kFloat32, {2, 4}, 0);
  Value* y = AddActivation(*g, "y", DataType::kFloat32, {2, 4}, -1);
  Value* mask = AddActivation(*g, "mask", DataType::kBool, {2, 4}, 64);
  Value* c = AddActivation(*g, "c", DataType::kFloat32, {2, 4}, 128);
  Value* d = AddActivation(*g, "d", DataType::kFloat32, {2, 4}, 0);
  Value* e = AddActivation(*g, "e", DataType::kInt64, {3}, -1);
  g->inputs = {x};

  Node* id1 = g->AddNode("Identity", "identity_with_attrs", {x}, {a});
  id1->SetInt("int_attr", -(1LL << 50));
  id1->SetFloat("float_attr", -1.5e-7f);
  id1->SetString("string_attr", std::string("bytes\0\xff\"<>", 10));
  id1->SetInts("ints_attr", {1, -2, 3, INT64_MIN});
  id1->SetFloats("floats_attr", {0.5f, -0.0f, 3.25e10f});
  {
    Attribute s;
    s.kind = Attribute::Kind::kStrings;
    s.strings = {"", "one", "two\nlines", "\xc3\xa9t\xc3\xa9"};
    id1->attrs["strings_attr"] = s;
    Attribute t;
    t.kind = Attribute::Kind::kTensor;
    t.tensor_dtype = DataType::kInt16;
    t.tensor_shape = {2, 3};
    t.tensor = MakeData<int16_t>({1, -2, 3, -4, 5, -32768});
    id1->attrs["tensor_attr"] = t;
    Attribute empty_t;
    empty_t.kind = Attribute::Kind::kTensor;
    empty_t.tensor_dtype = DataType::kFloat32;
    empty_t.tensor_shape = {0};
    empty_t.tensor = TensorData::Allocate(0);
    id1->attrs["empty_tensor_attr"] = empty_t;
  }
  // Dropout with its optional ratio omitted, and one without its mask output.
  g->AddNode("Dropout", "dropout_full", {a, nullptr, tmode}, {y, mask});
  Node* drop2 = g->AddNode("Dropout", "dropout_no_mask", {w, ratio}, {c, nullptr});
  drop2->SetFloat("seed", 3.f);
  if (const OpDef* fused = FindFusedOp()) {
    Node* f = g->AddNode(fused->op_type, "fused", {c}, {d}, kOpenCannDomain);
    f->opset = fused->min_opset;
    g->opset_imports[kOpenCannDomain] = fused->min_opset;
  } else {
    g->AddNode("Identity", "identity_plain", {c}, {d});
  }
  g->AddNode("Identity", "identity_const", {table}, {e});
  g->outputs = {y, mask, d, e, x, empty};
  g->arena_size = 192;
  g->arena_size_no_reuse = 256;
  return g;
}

inline std::vector<std::vector<uint8_t>> MakePrepacked(size_t nodes) {
  std::vector<std::vector<uint8_t>> p(nodes);
  p[0] = {1, 2, 3};
  if (nodes > 2) {
    p[2].resize(100);
    for (size_t i = 0; i < 100; ++i) p[2][i] = static_cast<uint8_t>(i * 7);
  }
  return p;
}

inline void ExpectBytesEqual(const TensorData& a, const TensorData& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  if (a.size()) {
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size()), 0) << what;
  }
}

inline int IdOf(const Value* v) { return v ? v->id : -1; }

inline void ExpectGraphsEqual(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.producer_name, b.producer_name);
  EXPECT_EQ(a.ir_version, b.ir_version);
  EXPECT_EQ(a.opset_imports, b.opset_imports);
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.arena_size, b.arena_size);
  EXPECT_EQ(a.arena_size_no_reuse, b.arena_size_no_reuse);
  ASSERT_EQ(a.values().size(), b.values().size());
  for (size_t i = 0; i < a.values().size(); ++i) {
    const Value& va = *a.values()[i];
    const Value& vb = *b.values()[i];
    SCOPED_TRACE("value " + va.name);
    EXPECT_EQ(va.id, vb.id);
    EXPECT_EQ(va.name, vb.name);
    EXPECT_EQ(va.dtype, vb.dtype);
    EXPECT_EQ(va.has_shape, vb.has_shape);
    EXPECT_EQ(va.shape, vb.shape);
    EXPECT_EQ(va.dim_params, vb.dim_params);
    EXPECT_EQ(va.arena_offset, vb.arena_offset);
    EXPECT_EQ(va.producer == nullptr, vb.producer == nullptr);
    ASSERT_EQ(va.IsConstant(), vb.IsConstant());
    if (va.IsConstant()) ExpectBytesEqual(*va.constant, *vb.constant, va.name);
  }
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& na = *a.nodes()[i];
    const Node& nb = *b.nodes()[i];
    SCOPED_TRACE("node " + na.name);
    EXPECT_EQ(na.name, nb.name);
    EXPECT_EQ(na.domain, nb.domain);
    EXPECT_EQ(na.op_type, nb.op_type);
    EXPECT_EQ(na.opset, nb.opset);
    ASSERT_EQ(na.inputs.size(), nb.inputs.size());
    for (size_t k = 0; k < na.inputs.size(); ++k) EXPECT_EQ(IdOf(na.inputs[k]), IdOf(nb.inputs[k]));
    ASSERT_EQ(na.outputs.size(), nb.outputs.size());
    for (size_t k = 0; k < na.outputs.size(); ++k) {
      EXPECT_EQ(IdOf(na.outputs[k]), IdOf(nb.outputs[k]));
      if (nb.outputs[k]) {
        EXPECT_EQ(nb.outputs[k]->producer, &nb);
      }
    }
    ASSERT_EQ(na.attrs.size(), nb.attrs.size());
    for (const auto& [name, x] : na.attrs) {
      SCOPED_TRACE("attribute " + name);
      const Attribute* y = nb.FindAttr(name);
      ASSERT_NE(y, nullptr);
      EXPECT_EQ(x.kind, y->kind);
      EXPECT_EQ(x.i, y->i);
      EXPECT_EQ(std::memcmp(&x.f, &y->f, sizeof(float)), 0);  // bitwise (-0.0)
      EXPECT_EQ(x.s, y->s);
      EXPECT_EQ(x.ints, y->ints);
      ASSERT_EQ(x.floats.size(), y->floats.size());
      if (!x.floats.empty()) {
        EXPECT_EQ(std::memcmp(x.floats.data(), y->floats.data(), x.floats.size() * sizeof(float)), 0);
      }
      EXPECT_EQ(x.strings, y->strings);
      EXPECT_EQ(x.tensor_dtype, y->tensor_dtype);
      EXPECT_EQ(x.tensor_shape, y->tensor_shape);
      ExpectBytesEqual(x.tensor, y->tensor, name);
    }
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i) EXPECT_EQ(IdOf(a.inputs[i]), IdOf(b.inputs[i]));
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i) EXPECT_EQ(IdOf(a.outputs[i]), IdOf(b.outputs[i]));
  EXPECT_EQ(a.Dump(), b.Dump());
}

}  // namespace oc::om_test

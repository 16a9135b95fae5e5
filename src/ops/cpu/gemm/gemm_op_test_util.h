// Test harness for the GEMM-backed ops (Gemm, MatMul, Conv, ConvTranspose and
// their fused forms): a one-node graph whose inputs are either constants (so
// the kernel pre-packs them) or runtime tensors, run through the op's infer
// function and CPU kernel on a chosen thread pool.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace oc::gemm_testing {

inline std::vector<float> Rand(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

class OpCase {
 public:
  OpCase(const std::string& op_type, int opset, const std::string& domain = "") {
    node_ = graph_.AddNode(op_type, "t_" + op_type, {}, {}, domain);
    node_->opset = opset;
    node_->outputs.push_back(graph_.AddValue("y"));
  }
  // Adds input `data` of `shape`; constant inputs are visible to the factory.
  OpCase& In(std::vector<int64_t> shape, std::vector<float> data, bool constant) {
    Value* v;
    if (constant) {
      v = graph_.AddConstant(graph_.UniqueName("c"), DataType::kFloat32, shape,
                             TensorData::Copy(data.data(), data.size() * sizeof(float)));
    } else {
      v = graph_.AddValue(graph_.UniqueName("x"));
      v->dtype = DataType::kFloat32;
    }
    v->has_shape = true;
    v->shape = shape;
    v->dim_params.assign(shape.size(), "");
    node_->inputs.push_back(v);
    data_.push_back(std::move(data));
    return *this;
  }
  OpCase& Missing() {
    node_->inputs.push_back(nullptr);
    data_.emplace_back();
    return *this;
  }
  Node& node() { return *node_; }

  Status Infer() {
    const OpDef* def = OpRegistry::Global().Find(node_->domain, node_->op_type, node_->opset);
    if (!def) return NotFound("no OpDef for ", node_->op_type, " opset ", node_->opset);
    return def->infer(*node_);
  }
  const std::vector<int64_t>& OutShape() const { return node_->outputs[0]->shape; }

  // Infers, builds the kernel (optionally from `prepacked`), runs it; returns Y.
  Expected<std::vector<float>> Run(ThreadPool* pool, std::span<const uint8_t> prepacked = {},
                                   std::vector<uint8_t>* exported = nullptr) {
    OC_RETURN_IF_ERROR(Infer());
    const OpDef* def = OpRegistry::Global().Find(node_->domain, node_->op_type, node_->opset);
    OC_ASSIGN_OR_RETURN(KernelPtr k, CpuKernelOf(*def)(KernelInit{*node_, prepacked, pool ? pool->num_threads() : 1}));
    if (exported) *exported = k->ExportPrepacked();
    std::vector<const void*> ins;
    for (size_t i = 0; i < node_->inputs.size(); ++i)
      ins.push_back(node_->inputs[i] ? static_cast<const void*>(data_[i].data()) : nullptr);
    std::vector<float> y(static_cast<size_t>(node_->outputs[0]->NumElements()), std::nanf(""));
    void* outs[] = {y.data()};
    // Per-run scratch as the executor provides it (64-byte aligned).
    std::vector<uint8_t> scratch(k->ScratchBytes() + 64);
    void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
    KernelIO io{ins.data(), ins.size(), outs, 1, pool, aligned};
    OC_RETURN_IF_ERROR(k->Run(io));
    return y;
  }

 private:
  Graph graph_;
  Node* node_;
  std::vector<std::vector<float>> data_;
};

inline void ExpectClose(const std::vector<float>& got, const std::vector<float>& want,
                        const std::string& what, float tol = 2e-4f) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i]))) && ++bad <= 3)
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
  EXPECT_EQ(bad, 0) << what;
}

}  // namespace oc::gemm_testing

// pack-qkv: MatMuls that read the same activation with constant 2-D weights of
// the same K (the Q, K and V projections of attention, a gated MLP's gate and
// up projections) become one MatMul with the weights concatenated along N, an
// optional Add of the concatenated biases, and a Split back to the original
// values. One GEMM with a wider N reads the activation once and keeps the
// kernel's tiles fuller than two or three narrow ones, in theory.
// Not in the default pipeline: measured on x86-64 at 1 and 2 threads
// (x [1, S, 768], three 768x768 projections) it was no faster at S = 1 and
// 128 and 5-8% slower at S = 16, the Split copy costing more than the wider
// GEMM saves with this GEMM. Kept, tested, for targets where that changes;
// run it before fuse-bias-activation, which turns MatMul + Add into FusedMatMul.
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "passes/fusion/fusion_util.h"
#include "passes/fusion/pack_qkv.h"

namespace oc {
namespace {

using fusion::IsF32Static;
using fusion::IsOp;

struct Projection {
  Node* matmul;
  Node* add = nullptr;   // the bias Add, when there is one
  Value* bias = nullptr; // its [N] constant (any [1,..,1,N] shape)
  int64_t n;
  Value* out;            // the value the Split must produce
};

struct Packer {
  Graph& graph;
  fusion::Uses uses{graph};

  // A constant [1,..,1,n] bias added to `y` by its sole reader.
  Node* BiasAdd(const Value* y, int64_t n, Value** bias) const {
    Node* add = uses.Sole(y);
    Value* b = fusion::Other(add, "Add", y);
    if (!IsF32Static(b) || !b->constant || b->shape.empty() || b->shape.back() != n) return nullptr;
    if (b->shape.size() > y->shape.size()) return nullptr;
    for (size_t i = 0; i + 1 < b->shape.size(); ++i)
      if (b->shape[i] != 1) return nullptr;
    if (add->output(0)->shape != y->shape) return nullptr;
    *bias = b;
    return add;
  }

  bool TryPack(Value* x) {
    if (!IsF32Static(x) || x->shape.size() < 2) return false;
    const int64_t k = x->shape.back();
    std::vector<Projection> projs;
    for (Node* r : uses.Of(x)) {
      if (!IsOp(r, "MatMul") || r->inputs.size() != 2 || r->inputs[0] != x || r->inputs[1] == x) continue;
      const Value* w = r->inputs[1];
      if (!IsF32Static(w) || !w->constant || w->shape.size() != 2 || w->shape[0] != k) continue;
      if (!IsF32Static(r->output(0))) continue;
      bool dup = false;
      for (const auto& p : projs) dup |= p.matmul == r;
      if (dup) continue;
      Projection p{r};
      p.n = w->shape[1];
      p.add = BiasAdd(r->output(0), p.n, &p.bias);
      p.out = p.add ? p.add->output(0) : r->output(0);
      projs.push_back(p);
    }
    if (projs.size() < 2) return false;

    int64_t total = 0;
    bool any_bias = false;
    for (const auto& p : projs) {
      total += p.n;
      any_bias |= p.add != nullptr;
    }
    std::vector<int64_t> out_shape = projs[0].out->shape;
    out_shape.back() = total;
    for (const auto& p : projs) {
      std::vector<int64_t> s = p.out->shape;
      s.back() = total;
      if (s != out_shape) return false;
    }
    // Weights [K, sum N]: row by row, each projection's columns side by side.
    std::vector<float> w(static_cast<size_t>(k * total));
    std::vector<float> b(static_cast<size_t>(total), 0.f);
    int64_t col = 0;
    for (const auto& p : projs) {
      const float* src = p.matmul->inputs[1]->constant->as<float>();
      for (int64_t row = 0; row < k; ++row)
        std::memcpy(&w[row * total + col], src + row * p.n, sizeof(float) * p.n);
      if (p.bias) std::memcpy(&b[col], p.bias->constant->as<float>(), sizeof(float) * p.n);
      col += p.n;
    }
    const std::string base = projs[0].matmul->name.empty() ? "qkv" : projs[0].matmul->name + "_packed";
    Value* wv = graph.AddConstant(graph.UniqueName(base + "_weight"), DataType::kFloat32, {k, total},
                                  TensorData::Copy(w.data(), w.size() * sizeof(float)));
    std::vector<int64_t> splits;
    std::vector<Value*> outs;
    for (const auto& p : projs) {
      splits.push_back(p.n);
      outs.push_back(p.out);
    }
    for (const auto& p : projs) {
      if (p.add) graph.RemoveNode(p.add);
      graph.RemoveNode(p.matmul);
    }
    Value* packed = fusion::NewValue(graph, base, DataType::kFloat32, out_shape);
    fusion::AddOnnxNode(graph, "MatMul", 13, base, {x, wv}, {packed});
    if (any_bias) {
      Value* bv = graph.AddConstant(graph.UniqueName(base + "_bias"), DataType::kFloat32, {total},
                                    TensorData::Copy(b.data(), b.size() * sizeof(float)));
      Value* biased = fusion::NewValue(graph, base + "_biased", DataType::kFloat32, out_shape);
      fusion::AddOnnxNode(graph, "Add", 14, base + "_bias_add", {packed, bv}, {biased});
      packed = biased;
    }
    Value* sv = graph.AddConstant(graph.UniqueName(base + "_splits"), DataType::kInt64,
                                  {static_cast<int64_t>(splits.size())},
                                  TensorData::Copy(splits.data(), splits.size() * sizeof(int64_t)));
    fusion::AddOnnxNode(graph, "Split", 13, base + "_split", {packed, sv}, outs)
        ->SetInt("axis", static_cast<int64_t>(out_shape.size()) - 1);
    uses.Rebuild();
    return true;
  }
};

}  // namespace

Status PackQkv(Graph& graph) {
  Packer p{graph};
  std::vector<Value*> candidates;
  for (auto& n : graph.nodes())
    if (IsOp(n.get(), "MatMul") && n->input(0) && p.uses.Of(n->input(0)).size() >= 2)
      candidates.push_back(n->input(0));
  bool changed = false;
  std::unordered_set<const Value*> done;
  for (Value* x : candidates)
    if (done.insert(x).second) changed |= p.TryPack(x);
  if (!changed) return Status::Ok();
  return graph.TopologicalSort();
}

}  // namespace oc

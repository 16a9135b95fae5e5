// Gradient rules of MatMul and Gemm (see grads.h and ops/grad.h).
#include "ops/cpu/gemm/grads.h"

namespace oc::gemm {
namespace {

// Swaps the last two dims of a rank-r value.
Value* SwapLast(GradBuilder& b, Value* v, size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return b.Op("Transpose", {v}, {{"perm", GradBuilder::Ints(perm)}});
}

}  // namespace

// Y = A B with numpy's matmul rules: a 1-D A is a row [1, k], a 1-D B a column
// [k, 1] (the added dim is dropped from Y), batch dims broadcast. On the 2-D+
// views: dA = dY B^T and dB = A^T dY, each summed over the batch dims its
// operand was broadcast along.
Status GradMatMul(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  Value* w = a.node.input(1);
  std::vector<int64_t> xs = x->shape, ws = w->shape;
  if (xs.empty() || ws.empty()) return InvalidArgument(a.node.Describe(), ": MatMul of a scalar");
  if (xs.size() == 1) xs.insert(xs.begin(), 1);
  if (ws.size() == 1) ws.push_back(1);
  const std::vector<int64_t> xb(xs.begin(), xs.end() - 2), wb(ws.begin(), ws.end() - 2);
  std::vector<int64_t> ys = BroadcastShapes(xb, wb);
  const int64_t m = xs[xs.size() - 2], k = xs.back(), n = ws.back();
  ys.push_back(m);
  ys.push_back(n);
  Value* dy = b.ReshapeTo(a.dy[0], a.node.output(0)->shape, ys);
  Value* xv = b.ReshapeTo(x, x->shape, xs);
  Value* wv = b.ReshapeTo(w, w->shape, ws);
  if (a.needs[0]) {
    std::vector<int64_t> full = BroadcastShapes(xb, wb);
    full.push_back(m);
    full.push_back(k);
    Value* g = b.Op("MatMul", {dy, SwapLast(b, wv, ws.size())});
    a.dx[0] = b.ReshapeTo(b.SumTo(g, full, xs), xs, x->shape);
  }
  if (a.needs[1]) {
    std::vector<int64_t> full = BroadcastShapes(xb, wb);
    full.push_back(k);
    full.push_back(n);
    Value* g = b.Op("MatMul", {SwapLast(b, xv, xs.size()), dy});
    a.dx[1] = b.ReshapeTo(b.SumTo(g, full, ws), ws, w->shape);
  }
  return Status::Ok();
}

// Y = alpha op(A) op(B) + beta C, op = transpose when transA / transB.
Status GradGemm(GradBuilder& b, const GradArgs& a) {
  const Node& n = a.node;
  const int64_t ta = n.GetInt("transA", 0), tb = n.GetInt("transB", 0);
  const float alpha = n.GetFloat("alpha", 1.f), beta = n.GetFloat("beta", 1.f);
  Value* x = n.input(0);
  Value* w = n.input(1);
  Value* dy = a.dy[0];
  auto gemm = [&](Value* p, Value* q, int64_t tp, int64_t tq) {
    return b.Op("Gemm", {p, q},
                {{"alpha", GradBuilder::Float(alpha)}, {"transA", GradBuilder::Int(tp)}, {"transB", GradBuilder::Int(tq)}});
  };
  // dA = alpha dY op(B)^T, transposed back when transA.
  if (a.needs[0]) a.dx[0] = ta ? gemm(w, dy, tb, 1) : gemm(dy, w, 0, tb ? 0 : 1);
  // dB = alpha op(A)^T dY, transposed back when transB.
  if (a.needs[1]) a.dx[1] = tb ? gemm(dy, x, 1, ta) : gemm(x, dy, ta ? 0 : 1, 0);
  if (n.inputs.size() > 2 && n.input(2) && a.needs[2]) {
    Value* g = beta == 1.f ? dy : b.Op("Mul", {dy, b.Scalar(beta, n.output(0)->dtype)});
    a.dx[2] = b.SumTo(g, n.output(0)->shape, n.input(2)->shape);
  }
  return Status::Ok();
}

}  // namespace oc::gemm

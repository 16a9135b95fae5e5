// Gradient rules of the element-wise ops (see grads.h and ops/grad.h).
#include <cmath>

#include "ops/cpu/elementwise/grads.h"

#include "ops/op_registry.h"

namespace oc::ew {
namespace {

const std::vector<int64_t>& Shape(const Value* v) { return v->shape; }

// dx[i] = the output's gradient `g` summed down to input i's shape, if needed.
void SetSummed(GradBuilder& b, const GradArgs& a, size_t i, Value* g) {
  if (i < a.needs.size() && a.needs[i]) a.dx[i] = b.SumTo(g, Shape(a.node.output(0)), Shape(a.node.input(i)));
}

// For unary ops: dx[0] = g when the input needs it.
void SetUnary(const GradArgs& a, Value* g) {
  if (a.needs[0]) a.dx[0] = g;
}

DataType TypeOf(const GradArgs& a) { return a.node.input(0)->dtype; }

}  // namespace

Status GradAdd(GradBuilder& b, const GradArgs& a) {
  SetSummed(b, a, 0, a.dy[0]);
  SetSummed(b, a, 1, a.dy[0]);
  return Status::Ok();
}

Status GradSub(GradBuilder& b, const GradArgs& a) {
  SetSummed(b, a, 0, a.dy[0]);
  if (a.needs[1]) SetSummed(b, a, 1, b.Op("Neg", {a.dy[0]}));
  return Status::Ok();
}

Status GradMul(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  Value* y = a.node.input(1);
  if (a.needs[0]) SetSummed(b, a, 0, b.Op("Mul", {a.dy[0], y}));
  if (a.needs[1]) SetSummed(b, a, 1, b.Op("Mul", {a.dy[0], x}));
  return Status::Ok();
}

Status GradDiv(GradBuilder& b, const GradArgs& a) {
  Value* y = a.node.input(1);
  Value* q = a.node.output(0);
  if (a.needs[0]) SetSummed(b, a, 0, b.Op("Div", {a.dy[0], y}));
  // d(x / y)/dy = -(x / y) / y
  if (a.needs[1]) SetSummed(b, a, 1, b.Op("Neg", {b.Op("Div", {b.Op("Mul", {a.dy[0], q}), y})}));
  return Status::Ok();
}

Status GradPow(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  Value* e = a.node.input(1);
  Value* y = a.node.output(0);
  const DataType t = x->dtype;
  Value* ef = e->dtype == t ? e : b.Op("Cast", {e}, {{"to", GradBuilder::Int(static_cast<int64_t>(t))}});
  if (a.needs[0]) {
    // e * x^(e - 1)
    Value* d = b.Op("Mul", {ef, b.Op("Pow", {x, b.Op("Sub", {ef, b.Scalar(1, t)})})});
    SetSummed(b, a, 0, b.Op("Mul", {a.dy[0], d}));
  }
  if (a.needs[1]) SetSummed(b, a, 1, b.Op("Mul", {a.dy[0], b.Op("Mul", {y, b.Op("Log", {x})})}));
  return Status::Ok();
}

Status GradSum(GradBuilder& b, const GradArgs& a) {
  for (size_t i = 0; i < a.node.inputs.size(); ++i) SetSummed(b, a, i, a.dy[0]);
  return Status::Ok();
}

// Each input gets the gradient where it equals the result (on ties, every
// tied input gets all of it).
Status GradMaxMin(GradBuilder& b, const GradArgs& a) {
  Value* y = a.node.output(0);
  Value* zero = b.Scalar(0, y->dtype);
  for (size_t i = 0; i < a.node.inputs.size(); ++i)
    if (a.needs[i]) SetSummed(b, a, i, b.Op("Where", {b.Op("Equal", {a.node.input(i), y}), a.dy[0], zero}));
  return Status::Ok();
}

Status GradWhere(GradBuilder& b, const GradArgs& a) {
  Value* c = a.node.input(0);
  Value* zero = b.Scalar(0, a.node.output(0)->dtype);
  if (a.needs[1]) SetSummed(b, a, 1, b.Op("Where", {c, a.dy[0], zero}));
  if (a.needs[2]) SetSummed(b, a, 2, b.Op("Where", {c, zero, a.dy[0]}));
  return Status::Ok();
}

Status GradCast(GradBuilder& b, const GradArgs& a) {
  const DataType from = a.node.input(0)->dtype;
  if (a.needs[0] && IsFloatingPoint(from))
    a.dx[0] = b.Op("Cast", {a.dy[0]}, {{"to", GradBuilder::Int(static_cast<int64_t>(from))}});
  return Status::Ok();
}

Status GradRelu(GradBuilder& b, const GradArgs& a) {
  const DataType t = TypeOf(a);
  if (t == DataType::kFloat32 || t == DataType::kFloat64) {  // one com.opencann ReluGrad node (relu_grad.cc)
    Graph& g = b.graph();
    Value* dx = g.AddValue(g.UniqueName("grad/ReluGrad_out"));
    // From the output (y > 0 exactly where x > 0), so that a fusion may drop the pre-activation.
    Node* n = g.AddNode("ReluGrad", g.UniqueName("grad/ReluGrad"), {a.dy[0], a.node.output(0)}, {dx}, kOpenCannDomain);
    n->opset = 1;
    g.opset_imports.emplace(kOpenCannDomain, 1);
    SetUnary(a, dx);
    return Status::Ok();
  }
  Value* zero = b.Scalar(0, t);
  SetUnary(a, b.Op("Where", {b.Op("Greater", {a.node.input(0), zero}), a.dy[0], zero}));
  return Status::Ok();
}

Status GradLeakyRelu(GradBuilder& b, const GradArgs& a) {
  const float alpha = a.node.GetFloat("alpha", 0.01f);
  const DataType t = TypeOf(a);
  Value* neg = b.Op("Mul", {a.dy[0], b.Scalar(alpha, t)});
  SetUnary(a, b.Op("Where", {b.Op("Greater", {a.node.input(0), b.Scalar(0, t)}), a.dy[0], neg}));
  return Status::Ok();
}

Status GradSigmoid(GradBuilder& b, const GradArgs& a) {
  Value* y = a.node.output(0);
  Value* d = b.Op("Mul", {y, b.Op("Sub", {b.Scalar(1, y->dtype), y})});
  SetUnary(a, b.Op("Mul", {a.dy[0], d}));
  return Status::Ok();
}

Status GradTanh(GradBuilder& b, const GradArgs& a) {
  Value* y = a.node.output(0);
  Value* d = b.Op("Sub", {b.Scalar(1, y->dtype), b.Op("Mul", {y, y})});
  SetUnary(a, b.Op("Mul", {a.dy[0], d}));
  return Status::Ok();
}

Status GradExp(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.Op("Mul", {a.dy[0], a.node.output(0)}));
  return Status::Ok();
}

Status GradLog(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.Op("Div", {a.dy[0], a.node.input(0)}));
  return Status::Ok();
}

Status GradSqrt(GradBuilder& b, const GradArgs& a) {
  Value* y = a.node.output(0);
  SetUnary(a, b.Op("Div", {a.dy[0], b.Op("Mul", {y, b.Scalar(2, y->dtype)})}));
  return Status::Ok();
}

Status GradNeg(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.Op("Neg", {a.dy[0]}));
  return Status::Ok();
}

Status GradAbs(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.Op("Mul", {a.dy[0], b.Op("Sign", {a.node.input(0)})}));
  return Status::Ok();
}

Status GradReciprocal(GradBuilder& b, const GradArgs& a) {
  Value* y = a.node.output(0);
  SetUnary(a, b.Op("Neg", {b.Op("Mul", {a.dy[0], b.Op("Mul", {y, y})})}));
  return Status::Ok();
}

Status GradErf(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  const DataType t = x->dtype;
  // 2 / sqrt(pi) * exp(-x^2)
  Value* e = b.Op("Exp", {b.Op("Neg", {b.Op("Mul", {x, x})})});
  SetUnary(a, b.Op("Mul", {a.dy[0], b.Op("Mul", {e, b.Scalar(2.0 / std::sqrt(M_PI), t)})}));
  return Status::Ok();
}

Status GradSin(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.Op("Mul", {a.dy[0], b.Op("Cos", {a.node.input(0)})}));
  return Status::Ok();
}

Status GradCos(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.Op("Neg", {b.Op("Mul", {a.dy[0], b.Op("Sin", {a.node.input(0)})})}));
  return Status::Ok();
}

Status GradSoftplus(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.Op("Mul", {a.dy[0], b.Op("Sigmoid", {a.node.input(0)})}));
  return Status::Ok();
}

Status GradElu(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  const DataType t = x->dtype;
  // x > 0: 1; else alpha * exp(x) = y + alpha
  Value* neg = b.Op("Mul", {a.dy[0], b.Op("Add", {a.node.output(0), b.Scalar(a.node.GetFloat("alpha", 1.f), t)})});
  SetUnary(a, b.Op("Where", {b.Op("Greater", {x, b.Scalar(0, t)}), a.dy[0], neg}));
  return Status::Ok();
}

Status GradGelu(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  const DataType t = x->dtype;
  auto c = [&](double v) { return b.Scalar(v, t); };
  auto mul = [&](Value* p, Value* q) { return b.Op("Mul", {p, q}); };
  auto add = [&](Value* p, Value* q) { return b.Op("Add", {p, q}); };
  Value* d = nullptr;
  if (a.node.GetString("approximate", "none") == "tanh") {
    // u = k (x + 0.044715 x^3); y = x/2 (1 + tanh u)
    // y' = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) k (1 + 3 * 0.044715 x^2)
    const double k = std::sqrt(2.0 / M_PI);
    Value* x2 = mul(x, x);
    Value* u = mul(c(k), add(x, mul(c(0.044715), mul(x2, x))));
    Value* th = b.Op("Tanh", {u});
    Value* left = mul(c(0.5), add(c(1), th));
    Value* sech2 = b.Op("Sub", {c(1), mul(th, th)});
    Value* du = mul(c(k), add(c(1), mul(c(3 * 0.044715), x2)));
    d = add(left, mul(mul(c(0.5), x), mul(sech2, du)));
  } else {
    // y' = Phi(x) + x phi(x)
    Value* phi_big = mul(c(0.5), add(c(1), b.Op("Erf", {mul(x, c(1 / std::sqrt(2.0)))})));
    Value* phi = mul(c(1 / std::sqrt(2 * M_PI)), b.Op("Exp", {mul(c(-0.5), mul(x, x))}));
    d = add(phi_big, mul(x, phi));
  }
  SetUnary(a, mul(a.dy[0], d));
  return Status::Ok();
}

Status GradHardSigmoid(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  const DataType t = x->dtype;
  const float alpha = a.node.GetFloat("alpha", 0.2f), beta = a.node.GetFloat("beta", 0.5f);
  Value* s = b.Op("Add", {b.Op("Mul", {x, b.Scalar(alpha, t)}), b.Scalar(beta, t)});
  Value* inside = b.Op("And", {b.Op("Greater", {s, b.Scalar(0, t)}), b.Op("Less", {s, b.Scalar(1, t)})});
  SetUnary(a, b.Op("Where", {inside, b.Op("Mul", {a.dy[0], b.Scalar(alpha, t)}), b.Scalar(0, t)}));
  return Status::Ok();
}

// The gradient passes where min <= x <= max (the bounds' own gradients are
// not taken: they are constants in practice).
Status GradClip(GradBuilder& b, const GradArgs& a) {
  Value* x = a.node.input(0);
  Value* inside = nullptr;
  if (Value* lo = a.node.input(1)) inside = b.Op("GreaterOrEqual", {x, lo});
  if (Value* hi = a.node.input(2)) {
    Value* le = b.Op("LessOrEqual", {x, hi});
    inside = inside ? b.Op("And", {inside, le}) : le;
  }
  SetUnary(a, inside ? b.Op("Where", {inside, a.dy[0], b.Scalar(0, x->dtype)}) : a.dy[0]);
  return Status::Ok();
}

Status GradZero(GradBuilder& b, const GradArgs& a) {
  SetUnary(a, b.ZerosLike(*a.node.input(0)));
  return Status::Ok();
}

}  // namespace oc::ew

// Activations shared by the element-wise ops and by the fused epilogues of
// FusedConv / FusedGemm / FusedMatMul.
//
// Fused-op contract (domain "com.opencann", opset 1), produced by the fusion
// passes and implemented by the conv/gemm kernels:
//   FusedConv(X, W, [B], [Z]) : Conv attributes + activation attributes. Z, when
//       present, has the output's shape and is added before the activation
//       (residual add).
//   FusedGemm(A, B, [C], [Z]) : Gemm attributes + activation attributes.
//   FusedMatMul(A, B, [bias], [Z]) : MatMul; bias is 1-D with the last output
//       dim, added before the activation.
//   For FusedGemm / FusedMatMul, Z (residual add) has as many values as the
//   output and is read in the output's row-major order (its shape may differ,
//   e.g. [1, S, D] for a [S, D] Gemm); added before the activation.
// Activation attributes: "activation" (string; "" or absent = none, else one of
// Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh, Gelu, GeluTanh,
// Swish), "activation_alpha", "activation_beta" (floats): LeakyRelu alpha; Clip
// min/max; HardSigmoid alpha/beta; Swish alpha (x * sigmoid(alpha x), default 1:
// SiLU). Gelu is the exact (erf) form, GeluTanh the tanh one.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "graph/graph.h"

namespace oc {

enum class ActivationKind {
  kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kTanh, kGelu, kGeluTanh, kSwish
};

struct Activation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0.f;
  float beta = 0.f;
};

// Reads the activation attributes of a fused node; error names the node and the
// unknown activation.
Expected<Activation> ActivationFromNode(const Node& node);
// Parses a name ("Relu", ...); nullopt-like kNone with ok=false if unknown.
bool ParseActivationName(const std::string& name, ActivationKind* kind);
const char* ActivationName(ActivationKind kind);
// Applies `act` in place to n floats. Safe to call from many threads on
// disjoint ranges; no allocation.
void ApplyActivation(const Activation& act, float* data, int64_t n);

}  // namespace oc

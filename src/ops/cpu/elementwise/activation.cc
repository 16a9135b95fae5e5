#include "ops/cpu/elementwise/activation.h"

#include <algorithm>
#include <limits>

#include "ops/cpu/elementwise/elementwise_math.h"

namespace oc {

namespace {
struct NamedKind {
  const char* name;
  ActivationKind kind;
};
constexpr NamedKind kKinds[] = {
    {"", ActivationKind::kNone},
    {"Relu", ActivationKind::kRelu},
    {"LeakyRelu", ActivationKind::kLeakyRelu},
    {"Clip", ActivationKind::kClip},
    {"Sigmoid", ActivationKind::kSigmoid},
    {"HardSigmoid", ActivationKind::kHardSigmoid},
    {"HardSwish", ActivationKind::kHardSwish},
    {"Tanh", ActivationKind::kTanh},
    {"Gelu", ActivationKind::kGelu},
    {"GeluTanh", ActivationKind::kGeluTanh},
    {"Swish", ActivationKind::kSwish},
};
}  // namespace

bool ParseActivationName(const std::string& name, ActivationKind* kind) {
  for (const auto& k : kKinds) {
    if (name == k.name) {
      *kind = k.kind;
      return true;
    }
  }
  *kind = ActivationKind::kNone;
  return false;
}

const char* ActivationName(ActivationKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

Expected<Activation> ActivationFromNode(const Node& node) {
  Activation act;
  std::string name = node.GetString("activation", "");
  if (!ParseActivationName(name, &act.kind))
    return NotSupported(node.Describe(), ": unknown fused activation '", name,
                        "' (expected one of Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, "
                        "HardSwish, Tanh, Gelu, GeluTanh, Swish)");
  // Absent parameters take the defaults of the standalone ONNX op.
  float def_alpha = 0.f, def_beta = 0.f;
  switch (act.kind) {
    case ActivationKind::kLeakyRelu: def_alpha = 0.01f; break;
    case ActivationKind::kHardSigmoid: def_alpha = 0.2f; def_beta = 0.5f; break;
    case ActivationKind::kSwish: def_alpha = 1.f; break;
    case ActivationKind::kClip:
      def_alpha = -std::numeric_limits<float>::infinity();
      def_beta = std::numeric_limits<float>::infinity();
      break;
    default: break;
  }
  act.alpha = node.GetFloat("activation_alpha", def_alpha);
  act.beta = node.GetFloat("activation_beta", def_beta);
  return act;
}

void ApplyActivation(const Activation& act, float* data, int64_t n) {
  const float a = act.alpha, b = act.beta;
  switch (act.kind) {
    case ActivationKind::kNone: return;
    case ActivationKind::kRelu:
      for (int64_t i = 0; i < n; ++i) data[i] = data[i] < 0.f ? 0.f : data[i];
      return;
    case ActivationKind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) data[i] = data[i] < 0.f ? data[i] * a : data[i];
      return;
    case ActivationKind::kClip:
      // Same order as ONNX Clip: max with the lower bound, then min with the upper.
      for (int64_t i = 0; i < n; ++i) {
        float v = data[i] < a ? a : data[i];
        data[i] = v > b ? b : v;
      }
      return;
    case ActivationKind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) data[i] = std::min(1.f, std::max(0.f, a * data[i] + b));
      return;
    case ActivationKind::kHardSwish:
      for (int64_t i = 0; i < n; ++i)
        data[i] = data[i] * std::min(1.f, std::max(0.f, data[i] * (1.f / 6.f) + 0.5f));
      return;
    case ActivationKind::kSigmoid: ew::MathKernels().sigmoid(data, data, n); return;
    case ActivationKind::kTanh: ew::MathKernels().tanh(data, data, n); return;
    case ActivationKind::kGelu: ew::MathKernels().gelu(data, data, n); return;
    case ActivationKind::kGeluTanh: ew::MathKernels().gelu_tanh(data, data, n); return;
    case ActivationKind::kSwish: {
      // x * sigmoid(alpha x) with the Sigmoid op's own sigmoid: the fused
      // result equals Sigmoid followed by Mul bit for bit. alpha 1 (SiLU, what
      // the fusion pass makes) in one pass.
      if (a == 1.f) {
        ew::MathKernels().silu(data, data, n);
        return;
      }
      constexpr int64_t kChunk = 256;
      float s[kChunk];
      for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
        const int64_t m = std::min(kChunk, n - i0);
        for (int64_t i = 0; i < m; ++i) s[i] = a * data[i0 + i];
        ew::MathKernels().sigmoid(s, s, m);
        for (int64_t i = 0; i < m; ++i) data[i0 + i] *= s[i];
      }
      return;
    }
  }
}

}  // namespace oc

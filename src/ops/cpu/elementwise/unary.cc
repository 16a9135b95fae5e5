// Unary element-wise ops (activations, math, rounding, predicates) and Clip.
// float32 Exp/Tanh/Sigmoid/Erf/Gelu go through the ISA-selected array kernels
// of elementwise_math.h; everything else is a functor over a vectorisable loop.
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/cpu/elementwise/grads.h"
#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/cpu/elementwise/elementwise_math.h"
#include "ops/cpu/common/low_precision.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct Params {
  float alpha = 0.f, beta = 0.f, gamma = 0.f;
  bool flag_a = true, flag_b = true;
};

template <typename T>
using Wide = std::conditional_t<std::is_signed_v<T>, std::make_unsigned_t<T>, T>;

#define OC_UNARY(NAME, EXPR)                                   \
  struct NAME {                                                \
    Params p;                                                  \
    template <typename T> T operator()(T x) const { return EXPR; } \
  };

OC_UNARY(ReluF, x < T(0) ? T(0) : x)
OC_UNARY(LeakyReluF, x < T(0) ? static_cast<T>(x * T(p.alpha)) : x)
OC_UNARY(SigmoidF, T(1) / (T(1) + std::exp(-x)))
OC_UNARY(TanhF, std::tanh(x))
OC_UNARY(ExpF, std::exp(x))
OC_UNARY(LogF, std::log(x))
OC_UNARY(SqrtF, std::sqrt(x))
OC_UNARY(ErfF, std::erf(x))
OC_UNARY(ReciprocalF, T(1) / x)
OC_UNARY(FloorF, std::floor(x))
OC_UNARY(CeilF, std::ceil(x))
OC_UNARY(RoundF, std::nearbyint(x))  // half to even under the default rounding mode
OC_UNARY(SinF, std::sin(x))
OC_UNARY(CosF, std::cos(x))
OC_UNARY(SoftplusF, x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
OC_UNARY(SoftsignF, x / (T(1) + std::fabs(x)))
OC_UNARY(EluF, x < T(0) ? T(p.alpha) * std::expm1(x) : x)
OC_UNARY(SeluF, T(p.gamma) * (x <= T(0) ? T(p.alpha) * std::expm1(x) : x))
OC_UNARY(CeluF, std::max(T(0), x) + std::min(T(0), T(p.alpha) * std::expm1(x / T(p.alpha))))
OC_UNARY(ThresholdedReluF, x > T(p.alpha) ? x : T(0))
OC_UNARY(HardSigmoidF, std::max(T(0), std::min(T(1), T(p.alpha) * x + T(p.beta))))
OC_UNARY(HardSwishF, x * std::max(T(0), std::min(T(1), x * T(1.0 / 6.0) + T(0.5))))
OC_UNARY(GeluF, T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440))))
OC_UNARY(GeluTanhF, T(0.5) * x * (T(1) + std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x))))
OC_UNARY(MishF, x * std::tanh(SoftplusF{}(x)))
#undef OC_UNARY

struct NegF {
  Params p;
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(x));
    else return -x;
  }
};
struct AbsF {
  Params p;
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x;
    else if constexpr (std::is_integral_v<T>) return x < 0 ? NegF{}(x) : x;
    else return std::fabs(x);
  }
};
// NaN stays NaN (onnxruntime); zero of either sign gives 0.
struct SignF {
  Params p;
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));
    else return x > T(0) ? T(1) : (x < T(0) ? static_cast<T>(-1) : T(0));
  }
};
struct IsNaNF {
  Params p;
  template <typename T> bool operator()(T x) const { return x != x; }
};
struct IsInfF {
  Params p;
  template <typename T> bool operator()(T x) const {
    return (p.flag_a && x == -std::numeric_limits<T>::infinity()) ||
           (p.flag_b && x == std::numeric_limits<T>::infinity());
  }
};
struct NotF {
  Params p;
  bool operator()(bool x) const { return !x; }
};

template <typename TI, typename TO, typename F>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(F f, int64_t n) : f_(f), n_(n) {}
  Status Run(const KernelIO& io) override {
    const TI* x = io.in<TI>(0);
    TO* y = io.out<TO>(0);
    const F f = f_;
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = f(x[i]);
    });
    return Status::Ok();
  }

 private:
  F f_;
  int64_t n_;
};

class F32ArrayKernel final : public Kernel {
 public:
  F32ArrayKernel(ew::F32ArrayFn fn, int64_t n) : fn_(fn), n_(n) {}
  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    float* y = io.out<float>(0);
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t b, int64_t e) { fn_(x + b, y + b, e - b); });
    return Status::Ok();
  }

 private:
  ew::F32ArrayFn fn_;
  int64_t n_;
};

enum TypeMask : unsigned { kFloats = 1, kSignedInts = 2, kUnsignedInts = 4, kInts = 6, kBool = 8 };

// Which float32 array kernel (if any) implements F.
template <typename F>
ew::F32ArrayFn ArrayFnFor() {
  const auto& k = ew::MathKernels();
  if constexpr (std::is_same_v<F, ExpF>) return k.exp;
  else if constexpr (std::is_same_v<F, TanhF>) return k.tanh;
  else if constexpr (std::is_same_v<F, SigmoidF>) return k.sigmoid;
  else if constexpr (std::is_same_v<F, ErfF>) return k.erf;
  else if constexpr (std::is_same_v<F, GeluF>) return k.gelu;
  else if constexpr (std::is_same_v<F, GeluTanhF>) return k.gelu_tanh;
  else return nullptr;
}

template <typename F, unsigned kMask, bool kPredicate = false>
Expected<KernelPtr> MakeUnaryTyped(const Node& n, Params p) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (!n.input(0) || !n.output(0)) return InvalidArgument(n.Describe(), ": expects one input and one output");
  const int64_t count = n.input(0)->NumElements();
  const DataType dt = n.input(0)->dtype;
  F f{p};
#define OC_UCASE(DT, T, MASK)                                                     \
  case DT:                                                                        \
    if constexpr ((kMask & (MASK)) != 0) {                                        \
      using TO = std::conditional_t<kPredicate, bool, T>;                         \
      return KernelPtr(new UnaryKernel<T, TO, F>(f, count));                      \
    }                                                                             \
    break;
  switch (dt) {
    case DataType::kFloat32:
      if constexpr ((kMask & kFloats) != 0) {
        if constexpr (!kPredicate) {
          if (ew::F32ArrayFn fn = ArrayFnFor<F>()) return KernelPtr(new F32ArrayKernel(fn, count));
        }
        using TO = std::conditional_t<kPredicate, bool, float>;
        return KernelPtr(new UnaryKernel<float, TO, F>(f, count));
      }
      break;
    OC_UCASE(DataType::kFloat64, double, kFloats)
    OC_UCASE(DataType::kInt8, int8_t, kSignedInts)
    OC_UCASE(DataType::kInt16, int16_t, kSignedInts)
    OC_UCASE(DataType::kInt32, int32_t, kSignedInts)
    OC_UCASE(DataType::kInt64, int64_t, kSignedInts)
    OC_UCASE(DataType::kUInt8, uint8_t, kUnsignedInts)
    OC_UCASE(DataType::kUInt16, uint16_t, kUnsignedInts)
    OC_UCASE(DataType::kUInt32, uint32_t, kUnsignedInts)
    OC_UCASE(DataType::kUInt64, uint64_t, kUnsignedInts)
    default: break;
  }
#undef OC_UCASE
  return ew::UnsupportedDtype(n, dt);
}

Status InferUnary(Node& node) {
  if (node.inputs.size() != 1) return InvalidArgument(node.Describe(), ": expects exactly 1 input, got ", node.inputs.size());
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}
Status InferPredicate(Node& node) {
  OC_RETURN_IF_ERROR(InferUnary(node));
  node.output(0)->dtype = DataType::kBool;
  return Status::Ok();
}
Status InferNot(Node& node) {
  OC_RETURN_IF_ERROR(InferUnary(node));
  if (node.input(0)->dtype != DataType::kBool)
    return InvalidArgument(node.Describe(), ": input must be bool, got ", DataTypeName(node.input(0)->dtype));
  return Status::Ok();
}
Status InferGelu(Node& node) {
  OC_RETURN_IF_ERROR(InferUnary(node));
  std::string a = node.GetString("approximate", "none");
  if (a != "none" && a != "tanh")
    return InvalidArgument(node.Describe(), ": approximate must be \"none\" or \"tanh\", got \"", a, "\"");
  return Status::Ok();
}

template <typename F, unsigned kMask>
Expected<KernelPtr> MakePlain(const KernelInit& init) {
  return MakeUnaryTyped<F, kMask>(init.node, Params{});
}
Expected<KernelPtr> MakeLeakyRelu(const KernelInit& init) {
  return MakeUnaryTyped<LeakyReluF, kFloats>(init.node, {.alpha = init.node.GetFloat("alpha", 0.01f)});
}
Expected<KernelPtr> MakeElu(const KernelInit& init) {
  return MakeUnaryTyped<EluF, kFloats>(init.node, {.alpha = init.node.GetFloat("alpha", 1.f)});
}
Expected<KernelPtr> MakeSelu(const KernelInit& init) {
  return MakeUnaryTyped<SeluF, kFloats>(
      init.node, {.alpha = init.node.GetFloat("alpha", 1.67326319217681884765625f),
                  .gamma = init.node.GetFloat("gamma", 1.05070102214813232421875f)});
}
Expected<KernelPtr> MakeCelu(const KernelInit& init) {
  return MakeUnaryTyped<CeluF, kFloats>(init.node, {.alpha = init.node.GetFloat("alpha", 1.f)});
}
Expected<KernelPtr> MakeThresholdedRelu(const KernelInit& init) {
  return MakeUnaryTyped<ThresholdedReluF, kFloats>(init.node, {.alpha = init.node.GetFloat("alpha", 1.f)});
}
Expected<KernelPtr> MakeHardSigmoid(const KernelInit& init) {
  return MakeUnaryTyped<HardSigmoidF, kFloats>(
      init.node, {.alpha = init.node.GetFloat("alpha", 0.2f), .beta = init.node.GetFloat("beta", 0.5f)});
}
Expected<KernelPtr> MakeGelu(const KernelInit& init) {
  if (init.node.GetString("approximate", "none") == "tanh")
    return MakeUnaryTyped<GeluTanhF, kFloats>(init.node, {});
  return MakeUnaryTyped<GeluF, kFloats>(init.node, {});
}
// IsNaN / IsInf on the float8 types (opset 20): a 256-entry answer per code.
class Float8PredicateKernel final : public Kernel {
 public:
  Float8PredicateKernel(std::array<bool, 256> table, int64_t n) : table_(table), n_(n) {}
  Status Run(const KernelIO& io) override {
    const uint8_t* x = io.in<uint8_t>(0);
    bool* y = io.out<bool>(0);
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = table_[x[i]];
    });
    return Status::Ok();
  }

 private:
  std::array<bool, 256> table_;
  int64_t n_;
};

template <typename F>
Expected<KernelPtr> MakeFloat8Predicate(const Node& n, F f) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const lp::MiniFloat* fmt = lp::MiniFloatOf(n.input(0)->dtype);
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = f(lp::MiniToFloat(static_cast<uint8_t>(c), *fmt));
  return KernelPtr(new Float8PredicateKernel(table, n.input(0)->NumElements()));
}

bool IsFloat8(DataType t) { return IsLowPrecisionFloat(t) && DataTypeBits(t) == 8 && t != DataType::kFloat8E8M0; }

Expected<KernelPtr> MakeIsNaN(const KernelInit& init) {
  if (init.node.input(0) && IsFloat8(init.node.input(0)->dtype))
    return MakeFloat8Predicate(init.node, [](float v) { return std::isnan(v); });
  return MakeUnaryTyped<IsNaNF, kFloats, true>(init.node, {});
}
Expected<KernelPtr> MakeIsInf(const KernelInit& init) {
  Params p;
  p.flag_a = init.node.GetInt("detect_negative", 1) != 0;
  p.flag_b = init.node.GetInt("detect_positive", 1) != 0;
  if (init.node.input(0) && IsFloat8(init.node.input(0)->dtype))
    return MakeFloat8Predicate(init.node, IsInfF{p});
  return MakeUnaryTyped<IsInfF, kFloats, true>(init.node, p);
}
Expected<KernelPtr> MakeNot(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (n.input(0)->dtype != DataType::kBool) return ew::UnsupportedDtype(n, n.input(0)->dtype);
  return KernelPtr(new UnaryKernel<bool, bool, NotF>(NotF{}, n.input(0)->NumElements()));
}

// ---- Clip ----------------------------------------------------------------------

template <typename T>
T ReadScalarAs(const void* p, DataType dt) {
  switch (dt) {
    case DataType::kFloat32: return static_cast<T>(*static_cast<const float*>(p));
    case DataType::kFloat64: return static_cast<T>(*static_cast<const double*>(p));
    case DataType::kInt8: return static_cast<T>(*static_cast<const int8_t*>(p));
    case DataType::kUInt8: return static_cast<T>(*static_cast<const uint8_t*>(p));
    case DataType::kInt16: return static_cast<T>(*static_cast<const int16_t*>(p));
    case DataType::kUInt16: return static_cast<T>(*static_cast<const uint16_t*>(p));
    case DataType::kInt32: return static_cast<T>(*static_cast<const int32_t*>(p));
    case DataType::kUInt32: return static_cast<T>(*static_cast<const uint32_t*>(p));
    case DataType::kInt64: return static_cast<T>(*static_cast<const int64_t*>(p));
    case DataType::kUInt64: return static_cast<T>(*static_cast<const uint64_t*>(p));
    default: return T(0);
  }
}

template <typename T>
class ClipKernel final : public Kernel {
 public:
  // Bounds come from attributes (opset < 11) or from the optional inputs 1 and 2
  // (read at run time; they need not be constant).
  ClipKernel(int64_t n, T lo, T hi, DataType min_dt, DataType max_dt)
      : n_(n), lo_(lo), hi_(hi), min_dt_(min_dt), max_dt_(max_dt) {}
  Status Run(const KernelIO& io) override {
    T lo = lo_, hi = hi_;
    if (min_dt_ != DataType::kUndefined && io.num_inputs > 1 && io.inputs[1]) lo = ReadScalarAs<T>(io.inputs[1], min_dt_);
    if (max_dt_ != DataType::kUndefined && io.num_inputs > 2 && io.inputs[2]) hi = ReadScalarAs<T>(io.inputs[2], max_dt_);
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        T v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
  T lo_, hi_;
  DataType min_dt_, max_dt_;
};

template <typename T>
Expected<KernelPtr> MakeClipTyped(const Node& n) {
  T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  DataType min_dt = DataType::kUndefined, max_dt = DataType::kUndefined;
  if (n.HasAttr("min")) lo = static_cast<T>(n.GetFloat("min", 0.f));
  if (n.HasAttr("max")) hi = static_cast<T>(n.GetFloat("max", 0.f));
  for (size_t i = 1; i <= 2; ++i) {
    const Value* v = n.input(i);
    if (!v) continue;
    if (v->NumElements() != 1)
      return InvalidArgument(n.Describe(), ": ", i == 1 ? "min" : "max", " must be a scalar, got shape ", v->ShapeString());
    if (v->dtype == DataType::kFloat16 || v->dtype == DataType::kBFloat16 || DataTypeSize(v->dtype) == 0)
      return ew::UnsupportedDtype(n, v->dtype);
    (i == 1 ? min_dt : max_dt) = v->dtype;
  }
  return KernelPtr(new ClipKernel<T>(n.input(0)->NumElements(), lo, hi, min_dt, max_dt));
}

Expected<KernelPtr> MakeClip(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return MakeClipTyped<float>(n);
    case DataType::kFloat64: return MakeClipTyped<double>(n);
    case DataType::kInt8: return MakeClipTyped<int8_t>(n);
    case DataType::kUInt8: return MakeClipTyped<uint8_t>(n);
    case DataType::kInt16: return MakeClipTyped<int16_t>(n);
    case DataType::kUInt16: return MakeClipTyped<uint16_t>(n);
    case DataType::kInt32: return MakeClipTyped<int32_t>(n);
    case DataType::kInt64: return MakeClipTyped<int64_t>(n);
    case DataType::kUInt32: return MakeClipTyped<uint32_t>(n);
    case DataType::kUInt64: return MakeClipTyped<uint64_t>(n);
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
}

Status InferClip(Node& node) {
  if (node.inputs.empty() || node.inputs.size() > 3)
    return InvalidArgument(node.Describe(), ": expects 1 to 3 inputs (input, min, max)");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const Value* v = node.input(i);
    if (v && v->has_shape && !v->shape.empty() && !(v->shape.size() == 1 && v->shape[0] == 1) &&
        v->IsStatic())
      return InvalidArgument(node.Describe(), ": ", i == 1 ? "min" : "max", " must be a scalar, got shape ",
                             v->ShapeString());
  }
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

// Opset < 11 keeps the bounds in attributes; turn them into scalar inputs of
// the input's float type.
Status CanonicalizeClip(Node& node, Graph& graph) {
  if (node.opset >= 11 || (!node.HasAttr("min") && !node.HasAttr("max"))) return Status::Ok();
  const Value* x = node.input(0);
  if (!x) return InvalidArgument(node.Describe(), ": input 0 is missing");
  DataType dt = x->dtype == DataType::kUndefined ? DataType::kFloat32 : x->dtype;
  if (dt != DataType::kFloat32 && dt != DataType::kFloat64) return Status::Ok();  // kernel reads attrs
  auto make = [&](const char* name, float v) {
    if (dt == DataType::kFloat64) {
      double d = v;
      return graph.AddConstant(graph.UniqueName(node.name + "_" + name), dt, {}, TensorData::Copy(&d, sizeof d));
    }
    return graph.AddConstant(graph.UniqueName(node.name + "_" + name), dt, {}, TensorData::Copy(&v, sizeof v));
  };
  node.inputs.resize(3, nullptr);
  if (node.HasAttr("min")) node.inputs[1] = make("min", node.GetFloat("min", 0.f));
  if (node.HasAttr("max")) node.inputs[2] = make("max", node.GetFloat("max", 0.f));
  node.attrs.erase("min");
  node.attrs.erase("max");
  return Status::Ok();
}

}  // namespace

void RegisterUnaryOps(OpRegistry& r) {
  auto reg = [&](const char* op, int min_opset, KernelFactory f, GradFn grad = nullptr, InferFn infer = InferUnary) {
    r.Register({.op_type = op, .min_opset = min_opset, .infer = infer, .kernels = CpuKernel(f), .grad = grad});
  };
  reg("Relu", 6, MakePlain<ReluF, kFloats | kSignedInts>, ew::GradRelu);
  reg("LeakyRelu", 6, MakeLeakyRelu, ew::GradLeakyRelu);
  reg("Sigmoid", 6, MakePlain<SigmoidF, kFloats>, ew::GradSigmoid);
  reg("Tanh", 6, MakePlain<TanhF, kFloats>, ew::GradTanh);
  reg("Exp", 6, MakePlain<ExpF, kFloats>, ew::GradExp);
  reg("Log", 6, MakePlain<LogF, kFloats>, ew::GradLog);
  reg("Sqrt", 6, MakePlain<SqrtF, kFloats>, ew::GradSqrt);
  reg("Erf", 9, MakePlain<ErfF, kFloats>, ew::GradErf);
  reg("Neg", 6, MakePlain<NegF, kFloats | kSignedInts>, ew::GradNeg);
  reg("Abs", 6, MakePlain<AbsF, kFloats | kInts>, ew::GradAbs);
  reg("Reciprocal", 6, MakePlain<ReciprocalF, kFloats>, ew::GradReciprocal);
  reg("Floor", 6, MakePlain<FloorF, kFloats>, ew::GradZero);
  reg("Ceil", 6, MakePlain<CeilF, kFloats>, ew::GradZero);
  reg("Round", 11, MakePlain<RoundF, kFloats>, ew::GradZero);
  reg("Sign", 9, MakePlain<SignF, kFloats | kInts>, ew::GradZero);
  reg("Sin", 7, MakePlain<SinF, kFloats>, ew::GradSin);
  reg("Cos", 7, MakePlain<CosF, kFloats>, ew::GradCos);
  reg("Softplus", 1, MakePlain<SoftplusF, kFloats>, ew::GradSoftplus);
  reg("Softsign", 1, MakePlain<SoftsignF, kFloats>);
  reg("Elu", 6, MakeElu, ew::GradElu);
  reg("Selu", 6, MakeSelu);
  reg("Celu", 12, MakeCelu);
  reg("ThresholdedRelu", 10, MakeThresholdedRelu);
  reg("HardSigmoid", 6, MakeHardSigmoid, ew::GradHardSigmoid);
  reg("HardSwish", 14, MakePlain<HardSwishF, kFloats>);
  reg("Gelu", 20, MakeGelu, ew::GradGelu, InferGelu);
  reg("Mish", 18, MakePlain<MishF, kFloats>);
  reg("IsNaN", 9, MakeIsNaN, nullptr, InferPredicate);
  reg("IsInf", 10, MakeIsInf, nullptr, InferPredicate);
  reg("Not", 1, MakeNot, nullptr, InferNot);
  r.Register({.op_type = "Clip", .min_opset = 6, .infer = InferClip, .kernels = CpuKernel(MakeClip),
              .canonicalize = CanonicalizeClip, .grad = ew::GradClip});
}

}  // namespace oc

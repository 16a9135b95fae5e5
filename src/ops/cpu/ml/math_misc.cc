// Element-wise math that the unary table does not cover: the inverse and
// hyperbolic trigonometric functions and Tan, Shrink, Swish, and the ai.onnx.ml
// Binarizer. Kept apart from unary.cc so that file's dtype work stays separate.
#include <cmath>
#include <type_traits>

#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct MathParams {
  double a = 0.0, b = 0.0;
};

#define OC_MATH_FN(NAME, EXPR)                                      \
  struct NAME {                                                     \
    MathParams p;                                                   \
    template <typename T> T operator()(T x) const { return EXPR; }  \
  };

OC_MATH_FN(TanF, std::tan(x))
OC_MATH_FN(AcosF, std::acos(x))
OC_MATH_FN(AsinF, std::asin(x))
OC_MATH_FN(AtanF, std::atan(x))
OC_MATH_FN(SinhF, std::sinh(x))
OC_MATH_FN(CoshF, std::cosh(x))
OC_MATH_FN(AsinhF, std::asinh(x))
OC_MATH_FN(AcoshF, std::acosh(x))
OC_MATH_FN(AtanhF, std::atanh(x))
// x * sigmoid(alpha * x); the exp argument is kept non-positive so large |x| never overflows.
OC_MATH_FN(SwishF, x * (x * T(p.a) >= T(0) ? T(1) / (T(1) + std::exp(-T(p.a) * x))
                                            : std::exp(T(p.a) * x) / (T(1) + std::exp(T(p.a) * x))))
#undef OC_MATH_FN

// Shrink: p.a = lambd, p.b = bias. Integer inputs compare and subtract in
// double; a result outside T's range wraps through int64 (as numpy's cast back
// does) instead of the undefined double -> narrow-integer conversion.
struct ShrinkF {
  MathParams p;
  template <typename T> T operator()(T x) const {
    const double v = static_cast<double>(x);
    const double r = v < -p.a ? v + p.b : (v > p.a ? v - p.b : 0.0);
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(r);
    else return static_cast<T>(static_cast<int64_t>(r));
  }
};

// Binarizer (ai.onnx.ml): 1 where x > threshold, else 0, in the input's type.
struct BinarizerF {
  MathParams p;
  template <typename T> T operator()(T x) const { return static_cast<double>(x) > p.a ? T(1) : T(0); }
};

template <typename T, typename F>
class MapKernel final : public Kernel {
 public:
  MapKernel(F f, int64_t n) : f_(f), n_(n) {}
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
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

enum Types : unsigned { kFloats = 1, kSigned = 2, kUnsigned = 4 };

template <typename F, unsigned kTypes>
Expected<KernelPtr> MakeMap(const Node& n, MathParams p) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (!n.input(0) || !n.output(0)) return InvalidArgument(n.Describe(), ": expects one input and one output");
  const int64_t count = n.input(0)->NumElements();
  const F f{p};
  switch (n.input(0)->dtype) {
#define OC_CASE(DT, T, MASK) \
  case DT:                   \
    if constexpr ((kTypes & (MASK)) != 0) return KernelPtr(new MapKernel<T, F>(f, count)); \
    break;
    OC_CASE(DataType::kFloat32, float, kFloats)
    OC_CASE(DataType::kFloat64, double, kFloats)
    OC_CASE(DataType::kInt8, int8_t, kSigned)
    OC_CASE(DataType::kInt16, int16_t, kSigned)
    OC_CASE(DataType::kInt32, int32_t, kSigned)
    OC_CASE(DataType::kInt64, int64_t, kSigned)
    OC_CASE(DataType::kUInt8, uint8_t, kUnsigned)
    OC_CASE(DataType::kUInt16, uint16_t, kUnsigned)
    OC_CASE(DataType::kUInt32, uint32_t, kUnsigned)
    OC_CASE(DataType::kUInt64, uint64_t, kUnsigned)
#undef OC_CASE
    default: break;
  }
  return ew::UnsupportedDtype(n, n.input(0)->dtype);
}

Status InferSame(Node& node) {
  if (node.inputs.size() != 1) return InvalidArgument(node.Describe(), ": expects exactly 1 input, got ", node.inputs.size());
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

template <typename F>
Expected<KernelPtr> MakeFloatFn(const KernelInit& init) {
  return MakeMap<F, kFloats>(init.node, {});
}
Expected<KernelPtr> MakeSwish(const KernelInit& init) {
  return MakeMap<SwishF, kFloats>(init.node, {.a = init.node.GetFloat("alpha", 1.f)});
}
Expected<KernelPtr> MakeShrink(const KernelInit& init) {
  return MakeMap<ShrinkF, kFloats | kSigned | kUnsigned>(
      init.node, {.a = init.node.GetFloat("lambd", 0.5f), .b = init.node.GetFloat("bias", 0.f)});
}
Expected<KernelPtr> MakeBinarizer(const KernelInit& init) {
  return MakeMap<BinarizerF, kFloats | kSigned>(init.node, {.a = init.node.GetFloat("threshold", 0.f)});
}

}  // namespace

void RegisterMathMiscOps(OpRegistry& r) {
  auto reg = [&](const char* op, int min_opset, KernelFactory f) {
    r.Register({.op_type = op, .min_opset = min_opset, .infer = InferSame, .kernels = CpuKernel(f)});
  };
  reg("Tan", 7, MakeFloatFn<TanF>);
  reg("Acos", 7, MakeFloatFn<AcosF>);
  reg("Asin", 7, MakeFloatFn<AsinF>);
  reg("Atan", 7, MakeFloatFn<AtanF>);
  reg("Sinh", 9, MakeFloatFn<SinhF>);
  reg("Cosh", 9, MakeFloatFn<CoshF>);
  reg("Asinh", 9, MakeFloatFn<AsinhF>);
  reg("Acosh", 9, MakeFloatFn<AcoshF>);
  reg("Atanh", 9, MakeFloatFn<AtanhF>);
  reg("Swish", 24, MakeSwish);
  reg("Shrink", 9, MakeShrink);
  r.Register({.domain = "ai.onnx.ml", .op_type = "Binarizer", .infer = InferSame, .kernels = CpuKernel(MakeBinarizer)});
}

}  // namespace oc

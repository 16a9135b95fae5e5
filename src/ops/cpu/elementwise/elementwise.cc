// Binary arithmetic with numpy broadcasting: Add Sub Mul Div Pow Mod PRelu
// BitShift, and the variadic Sum Mean Max Min. Broadcast plans are built in the
// factory; Run is a ParallelFor over output chunks whose inner runs are plain
// loops specialised on whether each input is contiguous or a repeated scalar.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/cpu/elementwise/grads.h"
#include "ops/cpu/common/wrap_arith.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

using ew::BinaryStep;
using ew::BroadcastPlan;

template <typename T>
using Wide = std::conditional_t<std::is_signed_v<T>, std::make_unsigned_t<T>, T>;

// Functors. Integer wrap-around is done in unsigned arithmetic (onnxruntime wraps).
struct AddOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapU<T>>(a) + static_cast<WrapU<T>>(b));
    else return a + b;
  }
};
struct SubOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapU<T>>(a) - static_cast<WrapU<T>>(b));
    else return a - b;
  }
};
struct MulOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapU<T>>(a) * static_cast<WrapU<T>>(b));
    else return a * b;
  }
};
// Integer division truncates toward zero like onnxruntime; zero divisors are
// rejected before the loop runs.
struct DivOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return b == -1 ? static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(a)) : static_cast<T>(a / b);
    else return a / b;
  }
};
// Max/Min propagate NaN (as numpy and onnxruntime do).
struct MaxOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a != a || a >= b) ? a : b;
    else return a >= b ? a : b;
  }
};
struct MinOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a != a || a <= b) ? a : b;
    else return a <= b ? a : b;
  }
};
struct PowOp {
  template <typename A, typename B> A operator()(A a, B b) const {
    if constexpr (std::is_same_v<A, float> && std::is_same_v<B, float>) return std::pow(a, b);
    else return static_cast<A>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
};
// fmod=1: sign of the dividend (C fmod / %).
struct FmodOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return std::fmod(a, b);
    else if constexpr (std::is_signed_v<T>) return b == -1 ? T(0) : static_cast<T>(a % b);
    else return static_cast<T>(a % b);
  }
};
// fmod=0: sign of the divisor (Python %). Floats are allowed from opset 28:
// fmod's remainder moved into the divisor's sign; a zero takes the divisor's
// sign, and NaN/inf cases fall out of fmod as the spec lists them.
struct IntModOp {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      T r = std::fmod(a, b);
      if (r == T(0)) return std::copysign(T(0), b);
      return ((r < T(0)) != (b < T(0))) ? static_cast<T>(r + b) : r;
    } else if constexpr (std::is_signed_v<T>) {
      if (b == -1) return T(0);
      T r = static_cast<T>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    } else {
      return static_cast<T>(a % b);
    }
  }
};
struct PReluOp {
  template <typename T> T operator()(T x, T s) const { return x < T(0) ? static_cast<T>(x * s) : x; }
};
// Signed types (opset 28): left shifts discard bits past the sign bit, right
// shifts are arithmetic; a negative or too-wide shift leaves only the sign fill
// (-1 for a right shift of a negative value, else 0).
struct ShlOp {
  template <typename T> T operator()(T a, T b) const {
    if (b < T(0) || b >= T(sizeof(T) * 8)) return T(0);
    return static_cast<T>(static_cast<Wide<T>>(static_cast<Wide<T>>(a) << b));
  }
};
struct ShrOp {
  template <typename T> T operator()(T a, T b) const {
    if (b < T(0) || b >= T(sizeof(T) * 8)) return (std::is_signed_v<T> && a < T(0)) ? static_cast<T>(-1) : T(0);
    return static_cast<T>(a >> b);  // arithmetic for signed types (C++20)
  }
};

template <typename T>
bool HasZero(const T* p, int64_t n) {
  bool z = false;
  for (int64_t i = 0; i < n; ++i) z |= (p[i] == T(0));
  return z;
}

template <typename TA, typename TB, typename TO, typename Op>
class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const Node& node, BroadcastPlan plan, bool check_zero_divisor, int64_t b_elems)
      : step_(std::move(plan)), check_zero_(check_zero_divisor), b_elems_(b_elems),
        what_(node.Describe()) {}
  Status Run(const KernelIO& io) override {
    if constexpr (std::is_integral_v<TB>) {
      if (check_zero_ && HasZero(io.in<TB>(1), b_elems_))
        return InvalidArgument(what_, ": integer division by zero");
    }
    step_.Run(io.in<TA>(0), io.in<TB>(1), io.out<TO>(0), *io.pool);
    return Status::Ok();
  }

 private:
  BinaryStep<TA, TB, TO, Op> step_;
  bool check_zero_;
  int64_t b_elems_;
  std::string what_;
};

// Sum / Mean / Max / Min over 1..N inputs: out = op(in0, in1), then
// out = op(out, in_k) for the rest; Mean scales at the end.
template <typename T, typename Op>
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(std::vector<BinaryStep<T, T, T, Op>> steps, int64_t total, size_t first_bytes,
                 double scale)
      : steps_(std::move(steps)), total_(total), first_bytes_(first_bytes), scale_(scale) {}
  Status Run(const KernelIO& io) override {
    T* out = io.out<T>(0);
    if (steps_.empty()) {  // single input of the output's shape
      if (io.outputs[0] != io.inputs[0]) std::memcpy(out, io.inputs[0], first_bytes_);
    } else {
      steps_[0].Run(io.in<T>(0), io.in<T>(1), out, *io.pool);
      for (size_t k = 1; k < steps_.size(); ++k) steps_[k].Run(out, io.in<T>(k + 1), out, *io.pool);
    }
    if (scale_ != 1.0) {
      if constexpr (std::is_floating_point_v<T>) {
        const T s = static_cast<T>(scale_);
        io.pool->ParallelFor(total_, ew::kGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) out[i] *= s;
        });
      }
    }
    return Status::Ok();
  }

 private:
  std::vector<BinaryStep<T, T, T, Op>> steps_;
  int64_t total_;
  size_t first_bytes_;
  double scale_;
};

// ---- Inference -------------------------------------------------------------

Status InferBinarySameType(Node& node) {
  if (node.inputs.size() < 2 || !node.input(0) || !node.input(1))
    return InvalidArgument(node.Describe(), ": expects 2 inputs, got ", node.inputs.size());
  OC_RETURN_IF_ERROR(ew::RequireSameDtype(node));
  OC_ASSIGN_OR_RETURN(auto shape, ew::BroadcastAll(node));
  SetOutput(node, 0, node.input(0)->dtype, std::move(shape));
  return Status::Ok();
}

Status InferPow(Node& node) {
  if (node.inputs.size() != 2 || !node.input(0) || !node.input(1))
    return InvalidArgument(node.Describe(), ": expects 2 inputs (X, Y)");
  OC_ASSIGN_OR_RETURN(auto shape, ew::BroadcastAll(node));
  SetOutput(node, 0, node.input(0)->dtype, std::move(shape));
  return Status::Ok();
}

Status InferVariadic(Node& node) {
  if (node.inputs.empty()) return InvalidArgument(node.Describe(), ": needs at least one input");
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (!node.inputs[i]) return InvalidArgument(node.Describe(), ": input ", i, " is missing");
  OC_RETURN_IF_ERROR(ew::RequireSameDtype(node));
  OC_ASSIGN_OR_RETURN(auto shape, ew::BroadcastAll(node));
  SetOutput(node, 0, node.input(0)->dtype, std::move(shape));
  return Status::Ok();
}

// PRelu: slope broadcasts one way to X.
Status InferPRelu(Node& node) {
  if (node.inputs.size() != 2 || !node.input(0) || !node.input(1))
    return InvalidArgument(node.Describe(), ": expects 2 inputs (X, slope)");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  OC_RETURN_IF_ERROR(ew::RequireSameDtype(node));
  const Value& x = *node.input(0);
  OC_ASSIGN_OR_RETURN(auto shape, BroadcastShapes(node, x.shape, node.input(1)->shape));
  bool same = shape.size() == x.shape.size();
  for (size_t i = 0; same && i < shape.size(); ++i)
    if (x.shape[i] >= 0 && shape[i] >= 0 && shape[i] != x.shape[i]) same = false;
  if (!same)
    return InvalidArgument(node.Describe(), ": slope shape ", node.input(1)->ShapeString(),
                           " does not broadcast to X shape ", x.ShapeString());
  SetOutputLike(node, 0, x);
  return Status::Ok();
}

Status InferBitShift(Node& node) {
  OC_RETURN_IF_ERROR(InferBinarySameType(node));
  std::string dir = node.GetString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return InvalidArgument(node.Describe(), ": direction must be \"LEFT\" or \"RIGHT\", got \"", dir, "\"");
  return Status::Ok();
}

// ---- Factories ---------------------------------------------------------------

std::vector<std::vector<int64_t>> InShapes(const Node& n, std::initializer_list<size_t> idx) {
  std::vector<std::vector<int64_t>> s;
  for (size_t i : idx) s.push_back(n.input(i)->shape);
  return s;
}

template <typename TA, typename TB, typename Op>
Expected<KernelPtr> MakeBinaryTyped(const Node& n, bool check_zero = false) {
  OC_ASSIGN_OR_RETURN(BroadcastPlan plan, ew::MakeBroadcastPlan(n, InShapes(n, {0, 1}), n.output(0)->shape));
  return KernelPtr(new BinaryKernel<TA, TB, TA, Op>(n, std::move(plan), check_zero,
                                                     n.input(1)->NumElements()));
}

// Calls fn(T{}) for T the C++ type of `dt` among float, double and (when `ints`)
// the eight integer types; false for other types.
template <typename Fn>
bool VisitArithType(DataType dt, bool ints, Fn&& fn) {
  switch (dt) {
    case DataType::kFloat32: fn(float{}); return true;
    case DataType::kFloat64: fn(double{}); return true;
    default: break;
  }
  if (!ints) return false;
  switch (dt) {
    case DataType::kInt8: fn(int8_t{}); return true;
    case DataType::kInt16: fn(int16_t{}); return true;
    case DataType::kInt32: fn(int32_t{}); return true;
    case DataType::kInt64: fn(int64_t{}); return true;
    case DataType::kUInt8: fn(uint8_t{}); return true;
    case DataType::kUInt16: fn(uint16_t{}); return true;
    case DataType::kUInt32: fn(uint32_t{}); return true;
    case DataType::kUInt64: fn(uint64_t{}); return true;
    default: return false;
  }
}

template <typename Op>
Expected<KernelPtr> MakeArith(const Node& n, bool ints, bool check_zero) {
  Expected<KernelPtr> k = ew::UnsupportedDtype(n, n.input(0)->dtype);
  VisitArithType(n.input(0)->dtype, ints, [&](auto t) {
    using T = decltype(t);
    k = MakeBinaryTyped<T, T, Op>(n, std::is_integral_v<T> && check_zero);
  });
  return k;
}

Status CheckStatic(const Node& n, size_t num_inputs) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (n.inputs.size() < num_inputs || !n.output(0))
    return InvalidArgument(n.Describe(), ": expects ", num_inputs, " inputs and an output");
  for (size_t i = 0; i < num_inputs; ++i)
    if (!n.input(i)) return InvalidArgument(n.Describe(), ": input ", i, " is missing");
  return Status::Ok();
}

Expected<KernelPtr> MakeAdd(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  return MakeArith<AddOp>(init.node, true, false);
}
Expected<KernelPtr> MakeSub(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  return MakeArith<SubOp>(init.node, true, false);
}
Expected<KernelPtr> MakeMul(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  return MakeArith<MulOp>(init.node, true, false);
}
Expected<KernelPtr> MakeDiv(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  return MakeArith<DivOp>(init.node, true, true);
}
Expected<KernelPtr> MakePRelu(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  return MakeArith<PReluOp>(init.node, true, false);
}

Expected<KernelPtr> MakeMod(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  const Node& n = init.node;
  bool fmod = n.GetInt("fmod", 0) != 0;
  if (!fmod && ew::IsFloatType(n.input(0)->dtype) && n.opset < 28)
    return InvalidArgument(n.Describe(), ": fmod must be 1 for floating-point inputs before opset 28");
  if (fmod) return MakeArith<FmodOp>(n, true, true);
  return MakeArith<IntModOp>(n, true, true);
}

template <typename TA>
Expected<KernelPtr> MakePowFor(const Node& n) {
  Expected<KernelPtr> k = ew::UnsupportedDtype(n, n.input(1)->dtype);
  VisitArithType(n.input(1)->dtype, true, [&](auto e) { k = MakeBinaryTyped<TA, decltype(e), PowOp>(n); });
  return k;
}
Expected<KernelPtr> MakePow(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  const Node& n = init.node;
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return MakePowFor<float>(n);
    case DataType::kFloat64: return MakePowFor<double>(n);
    case DataType::kInt32: return MakePowFor<int32_t>(n);
    case DataType::kInt64: return MakePowFor<int64_t>(n);
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
}

Expected<KernelPtr> MakeBitShift(const KernelInit& init) {
  OC_RETURN_IF_ERROR(CheckStatic(init.node, 2));
  const Node& n = init.node;
  bool left = n.GetString("direction", "") == "LEFT";
  switch (n.input(0)->dtype) {
#define OC_SHIFT_CASE(DT, T) \
    case DT: return left ? MakeBinaryTyped<T, T, ShlOp>(n) : MakeBinaryTyped<T, T, ShrOp>(n);
    OC_SHIFT_CASE(DataType::kUInt8, uint8_t)
    OC_SHIFT_CASE(DataType::kUInt16, uint16_t)
    OC_SHIFT_CASE(DataType::kUInt32, uint32_t)
    OC_SHIFT_CASE(DataType::kUInt64, uint64_t)
    OC_SHIFT_CASE(DataType::kInt8, int8_t)
    OC_SHIFT_CASE(DataType::kInt16, int16_t)
    OC_SHIFT_CASE(DataType::kInt32, int32_t)
    OC_SHIFT_CASE(DataType::kInt64, int64_t)
#undef OC_SHIFT_CASE
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
}

template <typename T, typename Op>
Expected<KernelPtr> MakeVariadicTyped(const Node& n, bool mean) {
  std::vector<BinaryStep<T, T, T, Op>> steps;
  const auto& out = n.output(0)->shape;
  if (n.inputs.size() == 1) {
    if (n.input(0)->shape != out) return Internal(n.Describe(), ": output shape differs from input");
  } else {
    OC_ASSIGN_OR_RETURN(BroadcastPlan p0, ew::MakeBroadcastPlan(n, InShapes(n, {0, 1}), out));
    steps.emplace_back(std::move(p0));
    for (size_t k = 2; k < n.inputs.size(); ++k) {
      OC_ASSIGN_OR_RETURN(BroadcastPlan pk, ew::MakeBroadcastPlan(n, {out, n.input(k)->shape}, out));
      steps.emplace_back(std::move(pk));
    }
  }
  double scale = mean ? 1.0 / static_cast<double>(n.inputs.size()) : 1.0;
  return KernelPtr(new VariadicKernel<T, Op>(std::move(steps), n.output(0)->NumElements(),
                                             static_cast<size_t>(n.input(0)->ByteSize()), scale));
}

template <typename Op>
Expected<KernelPtr> MakeVariadicOf(const KernelInit& init, bool ints, bool mean) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(CheckStatic(n, 1));
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.inputs[i]) return InvalidArgument(n.Describe(), ": input ", i, " is missing");
  Expected<KernelPtr> k = ew::UnsupportedDtype(n, n.input(0)->dtype);
  VisitArithType(n.input(0)->dtype, ints, [&](auto t) { k = MakeVariadicTyped<decltype(t), Op>(n, mean); });
  return k;
}
Expected<KernelPtr> MakeSum(const KernelInit& init) { return MakeVariadicOf<AddOp>(init, true, false); }
Expected<KernelPtr> MakeMean(const KernelInit& init) { return MakeVariadicOf<AddOp>(init, false, true); }
Expected<KernelPtr> MakeMax(const KernelInit& init) { return MakeVariadicOf<MaxOp>(init, true, false); }
Expected<KernelPtr> MakeMin(const KernelInit& init) { return MakeVariadicOf<MinOp>(init, true, false); }

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  r.Register({.op_type = "Add", .min_opset = 7, .infer = InferBinarySameType, .kernels = CpuKernel(MakeAdd), .grad = ew::GradAdd});
  r.Register({.op_type = "Sub", .min_opset = 7, .infer = InferBinarySameType, .kernels = CpuKernel(MakeSub), .grad = ew::GradSub});
  r.Register({.op_type = "Mul", .min_opset = 7, .infer = InferBinarySameType, .kernels = CpuKernel(MakeMul), .grad = ew::GradMul});
  r.Register({.op_type = "Div", .min_opset = 7, .infer = InferBinarySameType, .kernels = CpuKernel(MakeDiv), .grad = ew::GradDiv});
  r.Register({.op_type = "Pow", .min_opset = 7, .infer = InferPow, .kernels = CpuKernel(MakePow), .grad = ew::GradPow});
  r.Register({.op_type = "Mod", .min_opset = 10, .infer = InferBinarySameType, .kernels = CpuKernel(MakeMod)});
  r.Register({.op_type = "PRelu", .min_opset = 7, .infer = InferPRelu, .kernels = CpuKernel(MakePRelu)});
  r.Register({.op_type = "BitShift", .min_opset = 11, .infer = InferBitShift, .kernels = CpuKernel(MakeBitShift)});
  r.Register({.op_type = "Sum", .min_opset = 6, .infer = InferVariadic, .kernels = CpuKernel(MakeSum), .grad = ew::GradSum});
  r.Register({.op_type = "Mean", .min_opset = 6, .infer = InferVariadic, .kernels = CpuKernel(MakeMean)});
  r.Register({.op_type = "Max", .min_opset = 6, .infer = InferVariadic, .kernels = CpuKernel(MakeMax), .grad = ew::GradMaxMin});
  r.Register({.op_type = "Min", .min_opset = 6, .infer = InferVariadic, .kernels = CpuKernel(MakeMin), .grad = ew::GradMaxMin});
}

}  // namespace oc

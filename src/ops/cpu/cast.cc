// Cast and CastLike between every numeric type and bool. float16 / bfloat16 are
// converted bit-exactly with round-to-nearest-even; float -> integer follows the
// x86 truncating conversion that onnxruntime's static_cast compiles to (values
// out of range give the "integer indefinite" pattern), so results match it.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/cpu/cast_util.h"
#include "ops/cpu/elementwise_common.h"
#include "ops/cpu/elementwise_math.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct F16 { uint16_t bits; };
struct BF16 { uint16_t bits; };

// cvttss2si semantics: NaN and out-of-range give the minimum value.
template <typename I, typename F>
I TruncToSigned(F x) {
  constexpr F lo = -static_cast<F>(std::numeric_limits<I>::max()) - F(1);  // -2^(n-1), exact
  if (!(x >= lo && x < -lo)) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}
// Unsigned: values >= 2^(n-1) go through the signed conversion of x - 2^(n-1).
template <typename U, typename F>
U TruncToUnsigned(F x) {
  using S = std::make_signed_t<U>;
  constexpr F half = static_cast<F>(std::numeric_limits<S>::max()) + F(1);
  if (x >= half) return static_cast<U>(static_cast<U>(TruncToSigned<S>(x - half)) ^ (U(1) << (sizeof(U) * 8 - 1)));
  return static_cast<U>(TruncToSigned<S>(x));
}

template <typename D, typename F>
D FloatTo(F x) {
  if constexpr (std::is_same_v<D, bool>) return x != F(0);
  else if constexpr (std::is_floating_point_v<D>) return static_cast<D>(x);
  else if constexpr (std::is_same_v<D, F16>) return F16{ew::FloatToHalf(static_cast<float>(x))};
  else if constexpr (std::is_same_v<D, BF16>) return BF16{ew::FloatToBFloat16(static_cast<float>(x))};
  else if constexpr (sizeof(D) < 4) {
    // Narrow integers (signed or not) take the low bits of the 32-bit conversion.
    return static_cast<D>(TruncToSigned<int32_t>(x));
  } else if constexpr (std::is_signed_v<D>) {
    return TruncToSigned<D>(x);
  } else {
    return TruncToUnsigned<D>(x);
  }
}

template <typename D, typename S>
D Convert(S s) {
  if constexpr (std::is_same_v<S, F16>) return FloatTo<D>(ew::HalfToFloat(s.bits));
  else if constexpr (std::is_same_v<S, BF16>) return FloatTo<D>(ew::BFloat16ToFloat(s.bits));
  else if constexpr (std::is_floating_point_v<S>) return FloatTo<D>(s);
  else if constexpr (std::is_same_v<D, F16>) return F16{ew::FloatToHalf(static_cast<float>(s))};
  else if constexpr (std::is_same_v<D, BF16>) return BF16{ew::FloatToBFloat16(static_cast<float>(s))};
  else if constexpr (std::is_same_v<D, bool>) return s != S(0);
  else return static_cast<D>(s);  // integer/bool -> integer or float
}

template <typename S, typename D>
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(int64_t n) : n_(n) {}
  Status Run(const KernelIO& io) override {
    const S* x = io.in<S>(0);
    D* y = io.out<D>(0);
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = Convert<D>(x[i]);
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
};

// float32 <-> float16 through the ISA-selected converters (F16C where present).
template <bool kToHalf>
class HalfKernel final : public Kernel {
 public:
  explicit HalfKernel(int64_t n) : n_(n) {}
  Status Run(const KernelIO& io) override {
    const auto& mk = ew::MathKernels();
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t b, int64_t e) {
      if constexpr (kToHalf) mk.f32_to_f16(io.in<float>(0) + b, io.out<uint16_t>(0) + b, e - b);
      else mk.f16_to_f32(io.in<uint16_t>(0) + b, io.out<float>(0) + b, e - b);
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
};

class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(size_t bytes) : bytes_(bytes) {}
  Status Run(const KernelIO& io) override {
    if (io.outputs[0] != io.inputs[0]) std::memcpy(io.outputs[0], io.inputs[0], bytes_);
    return Status::Ok();
  }

 private:
  size_t bytes_;
};

// Calls fn(T{}) with T the C++ type of `dt`; false for unsupported types.
template <typename Fn>
bool VisitType(DataType dt, Fn&& fn) {
  switch (dt) {
    case DataType::kFloat32: fn(float{}); return true;
    case DataType::kFloat64: fn(double{}); return true;
    case DataType::kFloat16: fn(F16{}); return true;
    case DataType::kBFloat16: fn(BF16{}); return true;
    case DataType::kInt8: fn(int8_t{}); return true;
    case DataType::kUInt8: fn(uint8_t{}); return true;
    case DataType::kInt16: fn(int16_t{}); return true;
    case DataType::kUInt16: fn(uint16_t{}); return true;
    case DataType::kInt32: fn(int32_t{}); return true;
    case DataType::kUInt32: fn(uint32_t{}); return true;
    case DataType::kInt64: fn(int64_t{}); return true;
    case DataType::kUInt64: fn(uint64_t{}); return true;
    case DataType::kBool: fn(bool{}); return true;
    default: return false;
  }
}

Expected<KernelPtr> MakeCastFor(const Node& n, DataType to) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const DataType from = n.input(0)->dtype;
  const int64_t count = n.input(0)->NumElements();
  if (from == to) return KernelPtr(new CopyKernel(static_cast<size_t>(n.input(0)->ByteSize())));
  if (from == DataType::kFloat32 && to == DataType::kFloat16) return KernelPtr(new HalfKernel<true>(count));
  if (from == DataType::kFloat16 && to == DataType::kFloat32) return KernelPtr(new HalfKernel<false>(count));
  KernelPtr k;
  bool ok_from = VisitType(from, [&](auto s) {
    using S = decltype(s);
    VisitType(to, [&](auto d) {
      using D = decltype(d);
      k = KernelPtr(new CastKernel<S, D>(count));
    });
  });
  if (!ok_from) return ew::UnsupportedDtype(n, from);
  if (!k) return ew::UnsupportedDtype(n, to);
  return k;
}

Expected<DataType> CastTarget(const Node& n) {
  if (n.op_type == "CastLike") {
    if (!n.input(1)) return InvalidArgument(n.Describe(), ": target_type input is missing");
    return n.input(1)->dtype;
  }
  const Attribute* to = n.FindAttr("to");
  if (!to) return InvalidArgument(n.Describe(), ": required attribute 'to' is missing");
  if (!IsKnownDataType(static_cast<int32_t>(to->i)))
    return NotSupported(n.Describe(), ": cast to ONNX data type ", to->i, " is not supported");
  return static_cast<DataType>(to->i);
}

Status InferCast(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_ASSIGN_OR_RETURN(DataType to, CastTarget(node));
  SetOutputLike(node, 0, *node.input(0));
  node.output(0)->dtype = to;
  return Status::Ok();
}

Expected<KernelPtr> MakeCast(const KernelInit& init) {
  OC_ASSIGN_OR_RETURN(DataType to, CastTarget(init.node));
  return MakeCastFor(init.node, to);
}

}  // namespace

void RegisterCastOps(OpRegistry& r) {
  r.Register({.op_type = "Cast", .min_opset = 6, .infer = InferCast, .cpu = MakeCast});
  r.Register({.op_type = "CastLike", .min_opset = 15, .infer = InferCast, .cpu = MakeCast});
}

}  // namespace oc

// Cast and CastLike between every numeric type and bool, including the float8
// family, float4, E8M0 and the packed 4/2-bit integers (low_precision.h, with
// ONNX's saturate and round_mode attributes). float16 / bfloat16 are converted
// bit-exactly with round-to-nearest-even; float -> integer follows the
// x86 truncating conversion that onnxruntime's static_cast compiles to (values
// out of range give the "integer indefinite" pattern), so results match it.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/cpu/elementwise/grads.h"
#include "ops/cpu/common/cast_util.h"
#include "ops/cpu/common/low_precision.h"
#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/cpu/elementwise/elementwise_math.h"
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

// ---- Low-precision types (float8, float4, E8M0, int4/uint4/int2/uint2) -------------
//
// A cast that involves one of these goes through a middle type in chunks: the
// source is loaded into M, then M is stored as the destination. M is chosen so
// that each step is the conversion ONNX defines, with at most one rounding:
// double for float8/float4/E8M0 targets, int32 for packed integer targets
// (float -> int truncates, then the low bits are kept, as for the 8/16-bit
// integers), otherwise float (from the small floats, exact) or int32 (from the
// packed integers, exact).

struct CastOptions {
  bool saturate = true;
  lp::E8M0Round round = lp::E8M0Round::kUp;
};

// Elements per chunk: a multiple of 4 so packed 2/4-bit outputs never share a
// byte between threads.
constexpr int64_t kChunk = 1024;

template <typename M>
using LoadFn = void (*)(const void* src, int64_t begin, int64_t n, M* mid);
template <typename M>
using StoreFn = void (*)(const M* mid, int64_t begin, int64_t n, void* dst, const CastOptions& o);

template <typename S, typename M>
void LoadClassic(const void* src, int64_t begin, int64_t n, M* mid) {
  const S* s = static_cast<const S*>(src) + begin;
  for (int64_t i = 0; i < n; ++i) mid[i] = Convert<M>(s[i]);
}

template <DataType kT, typename M>
void LoadLow(const void* src, int64_t begin, int64_t n, M* mid) {
  const uint8_t* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = begin + i;
    if constexpr (kT == DataType::kFloat8E8M0) {
      mid[i] = Convert<M>(lp::E8M0ToFloat(p[k]));
    } else if constexpr (kT == DataType::kFloat4E2M1) {
      mid[i] = Convert<M>(lp::MiniToFloat(lp::PackedGet(p, k, 4), lp::kE2M1));
    } else if constexpr (kT == DataType::kInt4 || kT == DataType::kInt2) {
      constexpr int bits = kT == DataType::kInt4 ? 4 : 2;
      mid[i] = Convert<M>(lp::SignExtend(lp::PackedGet(p, k, bits), bits));
    } else if constexpr (kT == DataType::kUInt4 || kT == DataType::kUInt2) {
      mid[i] = Convert<M>(static_cast<int32_t>(lp::PackedGet(p, k, kT == DataType::kUInt4 ? 4 : 2)));
    } else {
      mid[i] = Convert<M>(lp::MiniToFloat(p[k], *lp::MiniFloatOf(kT)));
    }
  }
}

template <typename D, typename M>
void StoreClassic(const M* mid, int64_t begin, int64_t n, void* dst, const CastOptions&) {
  D* d = static_cast<D*>(dst) + begin;
  for (int64_t i = 0; i < n; ++i) d[i] = Convert<D>(mid[i]);
}

// float8 / E8M0 from double (one byte each).
template <DataType kT>
void StoreLowFloat(const double* mid, int64_t begin, int64_t n, void* dst, const CastOptions& o) {
  uint8_t* d = static_cast<uint8_t*>(dst) + begin;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kT == DataType::kFloat8E8M0)
      d[i] = lp::E8M0FromFloat(static_cast<float>(mid[i]), o.saturate, o.round);
    else
      d[i] = lp::MiniFromDouble(mid[i], *lp::MiniFloatOf(kT), o.saturate);
  }
}

// Packed destinations: `begin` is a multiple of 4, so whole bytes are written.
template <int kBits, typename M, typename Code>
void StorePacked(const M* mid, int64_t begin, int64_t n, void* dst, Code code) {
  constexpr int per = 8 / kBits;
  uint8_t* d = static_cast<uint8_t*>(dst) + begin / per;
  for (int64_t i = 0; i < n; i += per) {
    uint8_t byte = 0;
    for (int k = 0; k < per && i + k < n; ++k)
      byte = static_cast<uint8_t>(byte | ((code(mid[i + k]) & ((1 << kBits) - 1)) << (k * kBits)));
    d[i / per] = byte;
  }
}
void StoreFloat4(const double* mid, int64_t begin, int64_t n, void* dst, const CastOptions& o) {
  StorePacked<4>(mid, begin, n, dst, [&](double v) { return lp::MiniFromDouble(v, lp::kE2M1, o.saturate); });
}
template <int kBits>
void StorePackedInt(const int32_t* mid, int64_t begin, int64_t n, void* dst, const CastOptions&) {
  StorePacked<kBits>(mid, begin, n, dst, [](int32_t v) { return static_cast<uint8_t>(v); });
}

template <typename M>
LoadFn<M> LowLoader(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return LoadLow<DataType::kFloat8E4M3FN, M>;
    case DataType::kFloat8E4M3FNUZ: return LoadLow<DataType::kFloat8E4M3FNUZ, M>;
    case DataType::kFloat8E5M2: return LoadLow<DataType::kFloat8E5M2, M>;
    case DataType::kFloat8E5M2FNUZ: return LoadLow<DataType::kFloat8E5M2FNUZ, M>;
    case DataType::kFloat8E8M0: return LoadLow<DataType::kFloat8E8M0, M>;
    case DataType::kFloat4E2M1: return LoadLow<DataType::kFloat4E2M1, M>;
    case DataType::kInt4: return LoadLow<DataType::kInt4, M>;
    case DataType::kUInt4: return LoadLow<DataType::kUInt4, M>;
    case DataType::kInt2: return LoadLow<DataType::kInt2, M>;
    case DataType::kUInt2: return LoadLow<DataType::kUInt2, M>;
    default: return nullptr;
  }
}

template <typename M>
LoadFn<M> Loader(DataType t) {
  LoadFn<M> fn = LowLoader<M>(t);
  if (!fn) VisitType(t, [&](auto s) { fn = LoadClassic<decltype(s), M>; });
  return fn;
}

bool IsLowFloat(DataType t) { return IsLowPrecisionFloat(t); }
bool IsPackedInt(DataType t) {
  return t == DataType::kInt4 || t == DataType::kUInt4 || t == DataType::kInt2 || t == DataType::kUInt2;
}

template <typename M>
class LowCastKernel final : public Kernel {
 public:
  LowCastKernel(int64_t n, LoadFn<M> load, StoreFn<M> store, CastOptions o)
      : n_(n), load_(load), store_(store), o_(o) {}
  Status Run(const KernelIO& io) override {
    const int64_t chunks = (n_ + kChunk - 1) / kChunk;
    io.pool->ParallelFor(chunks, 16, [&](int64_t cb, int64_t ce) {
      M mid[kChunk];
      for (int64_t c = cb; c < ce; ++c) {
        const int64_t b = c * kChunk, len = std::min(kChunk, n_ - b);
        load_(io.inputs[0], b, len, mid);
        store_(mid, b, len, io.outputs[0], o_);
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
  LoadFn<M> load_;
  StoreFn<M> store_;
  CastOptions o_;
};

template <typename M>
Expected<KernelPtr> MakeLowCast(const Node& n, DataType from, StoreFn<M> store, const CastOptions& o) {
  LoadFn<M> load = Loader<M>(from);
  if (!load) return ew::UnsupportedDtype(n, from);
  return KernelPtr(new LowCastKernel<M>(n.input(0)->NumElements(), load, store, o));
}

Expected<CastOptions> ReadCastOptions(const Node& n) {
  CastOptions o;
  o.saturate = n.GetInt("saturate", 1) != 0;
  const std::string mode = n.GetString("round_mode", "up");
  if (mode == "up") o.round = lp::E8M0Round::kUp;
  else if (mode == "down") o.round = lp::E8M0Round::kDown;
  else if (mode == "nearest") o.round = lp::E8M0Round::kNearest;
  else return InvalidArgument(n.Describe(), ": round_mode must be \"up\", \"down\" or \"nearest\", got \"", mode, "\"");
  return o;
}

Expected<KernelPtr> MakeLowCastFor(const Node& n, DataType from, DataType to, const CastOptions& o) {
  switch (to) {
    case DataType::kFloat8E4M3FN: return MakeLowCast<double>(n, from, StoreLowFloat<DataType::kFloat8E4M3FN>, o);
    case DataType::kFloat8E4M3FNUZ: return MakeLowCast<double>(n, from, StoreLowFloat<DataType::kFloat8E4M3FNUZ>, o);
    case DataType::kFloat8E5M2: return MakeLowCast<double>(n, from, StoreLowFloat<DataType::kFloat8E5M2>, o);
    case DataType::kFloat8E5M2FNUZ: return MakeLowCast<double>(n, from, StoreLowFloat<DataType::kFloat8E5M2FNUZ>, o);
    case DataType::kFloat8E8M0: return MakeLowCast<double>(n, from, StoreLowFloat<DataType::kFloat8E8M0>, o);
    case DataType::kFloat4E2M1: return MakeLowCast<double>(n, from, StoreFloat4, o);
    case DataType::kInt4: case DataType::kUInt4: return MakeLowCast<int32_t>(n, from, StorePackedInt<4>, o);
    case DataType::kInt2: case DataType::kUInt2: return MakeLowCast<int32_t>(n, from, StorePackedInt<2>, o);
    default: break;
  }
  // Classic destination, low-precision source.
  if (IsLowFloat(from)) {
    StoreFn<float> store = nullptr;
    if (!VisitType(to, [&](auto d) { store = StoreClassic<decltype(d), float>; })) return ew::UnsupportedDtype(n, to);
    return MakeLowCast<float>(n, from, store, o);
  }
  StoreFn<int32_t> store = nullptr;
  if (!VisitType(to, [&](auto d) { store = StoreClassic<decltype(d), int32_t>; })) return ew::UnsupportedDtype(n, to);
  return MakeLowCast<int32_t>(n, from, store, o);
}

Expected<KernelPtr> MakeCastFor(const Node& n, DataType to) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const DataType from = n.input(0)->dtype;
  const int64_t count = n.input(0)->NumElements();
  OC_ASSIGN_OR_RETURN(CastOptions opts, ReadCastOptions(n));
  if (from == to) return KernelPtr(new CopyKernel(static_cast<size_t>(n.input(0)->ByteSize())));
  if (IsLowFloat(from) || IsLowFloat(to) || IsPackedInt(from) || IsPackedInt(to))
    return MakeLowCastFor(n, from, to, opts);
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
  r.Register({.op_type = "Cast", .min_opset = 6, .infer = InferCast, .kernels = CpuKernel(MakeCast),
              .native_types = kAllDataTypes, .grad = ew::GradCast});
  r.Register({.op_type = "CastLike", .min_opset = 15, .infer = InferCast, .kernels = CpuKernel(MakeCast),
              .native_types = kAllDataTypes});
}

}  // namespace oc

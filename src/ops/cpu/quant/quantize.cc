// QuantizeLinear, DequantizeLinear (opsets 10..newest: per-tensor, per-axis and
// blocked scales, output_dtype, precision, saturate; 8/16/32-bit integers,
// packed int4/uint4/int2/uint2, the float8 family and float4 E2M1) and
// DynamicQuantizeLinear.
//
// Numerics follow the ONNX definition and its reference implementation:
//   Q:  y = saturate(rint(x / scale) + zero_point), rint = round half to even;
//       the division is rounded to the promoted type of x and scale (float16
//       / float16 divides in float16, float32 with float16 in float32, int32 x
//       in float64), or to `precision` when given (x and scale cast to it first).
//   DQ: y = (float32(x) - zero_point) * scale in float32, then cast to the
//       output type (output_dtype, else the scale's type).
// The element loops convert a chunk of up to kChunk values to double, do the
// arithmetic there (exact: every source type fits a double) with the rounding
// steps above, and store the chunk in the target type. float32 <-> 8/16-bit
// integers with one scale per row, the common case, have float fast paths
// (QuantizeRowF32 / DequantizeRowF32) with the same results. Packed sub-byte
// outputs are written by one thread (neighbouring chunks share bytes).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "base/cpu_features.h"
#include "ops/cpu/common/cast_util.h"
#include "ops/cpu/common/low_precision.h"
#include "ops/cpu/quant/quantize_row.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// Half-precision scales / data are read and written natively (no legalizing Casts).
constexpr uint64_t kHalfTypes = DataTypeBit(DataType::kFloat16) | DataTypeBit(DataType::kBFloat16);

constexpr int64_t kChunk = 256;

using ew::BFloat16ToFloat;
using ew::FloatToBFloat16;
using ew::FloatToHalf;
using ew::HalfToFloat;

bool IsQuantFloat(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// Integer quantized types and their saturation ranges.
bool IntRange(DataType t, double* lo, double* hi) {
  switch (t) {
    case DataType::kUInt8: *lo = 0, *hi = 255; return true;
    case DataType::kInt8: *lo = -128, *hi = 127; return true;
    case DataType::kUInt16: *lo = 0, *hi = 65535; return true;
    case DataType::kInt16: *lo = -32768, *hi = 32767; return true;
    case DataType::kInt32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
    case DataType::kUInt4: *lo = 0, *hi = 15; return true;
    case DataType::kInt4: *lo = -8, *hi = 7; return true;
    case DataType::kUInt2: *lo = 0, *hi = 3; return true;
    case DataType::kInt2: *lo = -2, *hi = 1; return true;
    default: return false;
  }
}

// Reads elements [off, off+n) of a tensor of type t as doubles.
void LoadChunk(DataType t, const void* base, int64_t off, int64_t n, double* dst) {
  switch (t) {
#define OC_LOAD_CASE(DT, CT, EXPR)                                     \
  case DataType::DT: {                                                 \
    const CT* p = static_cast<const CT*>(base) + off;                  \
    for (int64_t e = 0; e < n; ++e) dst[e] = static_cast<double>(EXPR); \
    return;                                                            \
  }
    OC_LOAD_CASE(kFloat32, float, p[e])
    OC_LOAD_CASE(kFloat64, double, p[e])
    OC_LOAD_CASE(kFloat16, uint16_t, HalfToFloat(p[e]))
    OC_LOAD_CASE(kBFloat16, uint16_t, BFloat16ToFloat(p[e]))
    OC_LOAD_CASE(kUInt8, uint8_t, p[e])
    OC_LOAD_CASE(kInt8, int8_t, p[e])
    OC_LOAD_CASE(kUInt16, uint16_t, p[e])
    OC_LOAD_CASE(kInt16, int16_t, p[e])
    OC_LOAD_CASE(kInt32, int32_t, p[e])
    OC_LOAD_CASE(kFloat8E8M0, uint8_t, lp::E8M0ToFloat(p[e]))
#undef OC_LOAD_CASE
    default:
      break;
  }
  const uint8_t* p = static_cast<const uint8_t*>(base);
  if (const lp::MiniFloat* f = lp::MiniFloatOf(t)) {
    if (t == DataType::kFloat4E2M1) {
      for (int64_t e = 0; e < n; ++e) dst[e] = lp::MiniToFloat(lp::PackedGet(p, off + e, 4), *f);
    } else {
      for (int64_t e = 0; e < n; ++e) dst[e] = lp::MiniToFloat(p[off + e], *f);
    }
    return;
  }
  const int bits = DataTypeBits(t);
  const bool is_signed = t == DataType::kInt4 || t == DataType::kInt2;
  if (IsSubByteType(t)) {
    for (int64_t e = 0; e < n; ++e) {
      const uint8_t v = lp::PackedGet(p, off + e, bits);
      dst[e] = is_signed ? lp::SignExtend(v, bits) : v;
    }
    return;
  }
  for (int64_t e = 0; e < n; ++e) dst[e] = 0;
}

// Sets packed element i (the byte's other bits are kept; the output starts zeroed).
inline void PackedOr(uint8_t* p, int64_t i, int bits, uint32_t v) {
  const int per = 8 / bits;
  p[i / per] = static_cast<uint8_t>(p[i / per] | ((v & ((1u << bits) - 1)) << ((i % per) * bits)));
}

// v rounded to float type t (float64: unchanged). Rounding through float32
// first is harmless for float16/bfloat16 (24 >= 2*11+2 bits).
double RoundToFloatType(DataType t, double v) {
  switch (t) {
    case DataType::kFloat32: return static_cast<float>(v);
    case DataType::kFloat16: return HalfToFloat(FloatToHalf(static_cast<float>(v)));
    case DataType::kBFloat16: return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v)));
    default: return v;
  }
}

// numpy's result type for x / scale, as the reference divides.
DataType DivisionType(DataType x, DataType scale) {
  if (x == DataType::kInt32 || scale == DataType::kInt32) return DataType::kFloat64;
  if (x == scale) return x;
  return DataType::kFloat32;
}

template <typename T>
void StoreInt(const double* q, int64_t n, double lo, double hi, T* y) {
  for (int64_t e = 0; e < n; ++e) {
    const double v = q[e];
    y[e] = static_cast<T>(v >= lo ? (v <= hi ? v : hi) : lo);  // NaN -> lo, like the reference
  }
}

void StoreFloat(DataType t, const float* v, int64_t n, void* base, int64_t off) {
  switch (t) {
    case DataType::kFloat32: std::memcpy(static_cast<float*>(base) + off, v, static_cast<size_t>(n) * 4); return;
    case DataType::kFloat16: {
      uint16_t* y = static_cast<uint16_t*>(base) + off;
      for (int64_t e = 0; e < n; ++e) y[e] = FloatToHalf(v[e]);
      return;
    }
    case DataType::kBFloat16: {
      uint16_t* y = static_cast<uint16_t*>(base) + off;
      for (int64_t e = 0; e < n; ++e) y[e] = FloatToBFloat16(v[e]);
      return;
    }
    default: return;
  }
}

// How a scale / zero-point tensor maps onto x viewed as [outer, dim, inner].
struct QuantLayout {
  enum class Mode { kTensor, kAxis, kBlocked } mode = Mode::kTensor;
  int64_t outer = 1, dim = 1, inner = 1;
  int64_t block = 0, blocks = 1;  // blocked: block size and ceil(dim / block)
  int64_t count = 1;              // scale elements
};

Expected<QuantLayout> ResolveLayout(const Node& n, const Value& x, const Value& scale, const Value* zp) {
  QuantLayout l;
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  l.inner = std::max<int64_t>(x.NumElements(), 0);
  if (zp && zp->has_shape && zp->shape != scale.shape && !(zp->NumElements() == 1 && scale.NumElements() == 1))
    return InvalidArgument(n.Describe(), ": zero point shape ", zp->ShapeString(), " differs from scale shape ",
                           scale.ShapeString());
  const int64_t block = n.GetInt("block_size", 0);
  const int64_t scale_n = scale.NumElements();
  if (block < 0) return InvalidArgument(n.Describe(), ": block_size ", block, " must be positive");
  if (block == 0 && (scale.shape.empty() || (scale_n == 1 && scale.shape.size() == 1))) return l;
  if (rank == 0)
    return InvalidArgument(n.Describe(), ": scale ", scale.ShapeString(), " must be a scalar for a scalar input");
  OC_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(n, n.GetInt("axis", 1), rank));
  l.outer = ShapeProduct(x.shape, 0, static_cast<size_t>(axis));
  l.dim = x.shape[static_cast<size_t>(axis)];
  l.inner = ShapeProduct(x.shape, static_cast<size_t>(axis) + 1, x.shape.size());
  l.count = scale_n;
  if (block == 0) {
    if (scale.shape.size() != 1 || scale.shape[0] != l.dim)
      return InvalidArgument(n.Describe(), ": per-axis scale must be 1-D of length ", l.dim, " (axis ", axis,
                             " of input ", x.ShapeString(), "), got ", scale.ShapeString());
    l.mode = QuantLayout::Mode::kAxis;
    return l;
  }
  // Blocked: scale is x's shape with dim `axis` cut into blocks.
  bool ok = scale.shape.size() == x.shape.size();
  for (int64_t i = 0; ok && i < rank; ++i)
    if (i != axis && scale.shape[static_cast<size_t>(i)] != x.shape[static_cast<size_t>(i)]) ok = false;
  const int64_t s = ok ? scale.shape[static_cast<size_t>(axis)] : 0;
  if (!ok || s <= 0 || block * s < l.dim || block * (s - 1) >= l.dim)
    return InvalidArgument(n.Describe(), ": blocked scale ", scale.ShapeString(), " does not fit input ",
                           x.ShapeString(), " with axis ", axis, " and block_size ", block,
                           " (expected the input shape with ceil(", l.dim, "/", block, ") at the axis)");
  l.mode = QuantLayout::Mode::kBlocked;
  l.block = block;
  l.blocks = s;
  return l;
}

// Scale (and zero point) values of row r = (o, d): pointer and per-element stride.
inline const double* RowParams(const QuantLayout& l, const double* p, int64_t r, int64_t* stride) {
  *stride = 0;
  switch (l.mode) {
    case QuantLayout::Mode::kTensor: return p;
    case QuantLayout::Mode::kAxis: return p + r % l.dim;
    case QuantLayout::Mode::kBlocked: {
      *stride = 1;
      const int64_t o = r / l.dim, d = r % l.dim;
      return p + (o * l.blocks + d / l.block) * l.inner;
    }
  }
  return p;
}

// Fast path of Q for float32 x and scale into an 8/16-bit integer type with
// one scale per row (quantize_row.h): AVX-512 intrinsics, else the generic
// loop vectorised by the compiler for the selected ISA. All give the same bits.
template <typename T>
void QuantizeRowF32(const float* x, int64_t n, float s, float zp, float lo, float hi, T* y) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (SelectedIsa()) {
    case Isa::kAvx512: return QuantizeRowF32Avx512(x, n, s, zp, lo, hi, y);
    case Isa::kAvx2: return QuantizeRowF32Avx2(x, n, s, zp, lo, hi, y);
    default: break;
  }
#endif
  QuantizeRowF32Generic(x, n, s, zp, lo, hi, y);
}

// Fast path of DQ into float32: y = (x - zp) * s with one scale per row.
template <typename T>
void DequantizeRowF32(const T* x, int64_t n, float s, float zp, float* y) {
#if defined(__x86_64__) || defined(_M_X64)
  if (SelectedIsa() == Isa::kAvx512) return DequantizeRowF32Avx512(x, n, s, zp, y);
#endif
  DequantizeRowF32Generic(x, n, s, zp, y);
}

// Shared by Q and DQ: element types and the layout, all fixed at creation.
struct QdqPlan {
  QuantLayout layout;
  DataType x_type, scale_type, zp_type, y_type;
  bool has_zp = false;
  DataType div_type = DataType::kFloat32;  // Q: the division's precision
  DataType cast_inputs_to = DataType::kUndefined;  // Q with `precision`
  double lo = 0, hi = 0;                  // Q: integer saturation range
  bool saturate = true;                   // Q to float8: clamp overflow (else inf/NaN)
  bool fast = false;                      // float32 on the float side, 8/16-bit integers: *RowF32
};

class QdqKernel final : public Kernel {
 public:
  QdqKernel(QdqPlan plan, bool quantize) : p_(plan), quantize_(quantize) {}

  size_t ScratchBytes() const override { return static_cast<size_t>(2 * p_.layout.count) * sizeof(double); }

  Status Run(const KernelIO& io) override {
    const QuantLayout& l = p_.layout;
    double* scale = static_cast<double*>(io.scratch);
    double* zp = scale + l.count;
    LoadChunk(p_.scale_type, io.inputs[1], 0, l.count, scale);
    if (p_.cast_inputs_to != DataType::kUndefined)
      for (int64_t i = 0; i < l.count; ++i) scale[i] = RoundToFloatType(p_.cast_inputs_to, scale[i]);
    const void* zp_in = io.num_inputs > 2 ? io.inputs[2] : nullptr;
    if (p_.has_zp && zp_in) LoadChunk(p_.zp_type, zp_in, 0, l.count, zp);
    else std::fill(zp, zp + l.count, 0.0);
    const int64_t per_row = (l.inner + kChunk - 1) / kChunk;
    const int64_t units = l.outer * l.dim * per_row;
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) {
        const int64_t r = u / per_row, c0 = (u % per_row) * kChunk;
        const int64_t n = std::min(kChunk, l.inner - c0);
        if (!quantize_) DequantizeChunk(io, scale, zp, r, c0, n);
        else if (lp::MiniFloatOf(p_.y_type)) QuantizeFloatChunk(io, scale, zp, r, c0, n);
        else QuantizeChunk(io, scale, zp, r, c0, n);
      }
    };
    if (quantize_ && IsSubByteType(p_.y_type)) {
      // Packed output: neighbouring chunks share bytes, so one thread writes
      // them all into a zeroed buffer.
      std::memset(io.outputs[0], 0, static_cast<size_t>(DataTypeByteSize(p_.y_type, l.outer * l.dim * l.inner)));
      body(0, units);
    } else {
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, std::min(l.inner, kChunk)));
      io.pool->ParallelFor(units, grain, [&](int64_t b, int64_t e) { body(b, e); });
    }
    return Status::Ok();
  }

 private:
  void QuantizeChunk(const KernelIO& io, const double* scale, const double* zp, int64_t r, int64_t c0,
                     int64_t n) const {
    const int64_t off = r * p_.layout.inner + c0;
    int64_t ss, zs;
    const double* s = RowParams(p_.layout, scale, r, &ss) + ss * c0;
    const double* z = RowParams(p_.layout, zp, r, &zs) + zs * c0;
    if (p_.fast && ss == 0) {
      const float* x = static_cast<const float*>(io.inputs[0]) + off;
      const float sf = static_cast<float>(s[0]), zf = static_cast<float>(z[0]);
      const float lo = static_cast<float>(p_.lo), hi = static_cast<float>(p_.hi);
      void* y = io.outputs[0];
      switch (p_.y_type) {
        case DataType::kUInt8: QuantizeRowF32(x, n, sf, zf, lo, hi, static_cast<uint8_t*>(y) + off); return;
        case DataType::kInt8: QuantizeRowF32(x, n, sf, zf, lo, hi, static_cast<int8_t*>(y) + off); return;
        case DataType::kUInt16: QuantizeRowF32(x, n, sf, zf, lo, hi, static_cast<uint16_t*>(y) + off); return;
        case DataType::kInt16: QuantizeRowF32(x, n, sf, zf, lo, hi, static_cast<int16_t*>(y) + off); return;
        default: break;
      }
    }
    double q[kChunk];
    LoadChunk(p_.x_type, io.inputs[0], off, n, q);
    const DataType ct = p_.cast_inputs_to;
    for (int64_t e = 0; e < n; ++e) {
      const double x = ct == DataType::kUndefined ? q[e] : RoundToFloatType(ct, q[e]);
      q[e] = std::nearbyint(RoundToFloatType(p_.div_type, x / s[e * ss])) + z[e * zs];
    }
    void* y = io.outputs[0];
    switch (p_.y_type) {
      case DataType::kUInt8: StoreInt(q, n, p_.lo, p_.hi, static_cast<uint8_t*>(y) + off); break;
      case DataType::kInt8: StoreInt(q, n, p_.lo, p_.hi, static_cast<int8_t*>(y) + off); break;
      case DataType::kUInt16: StoreInt(q, n, p_.lo, p_.hi, static_cast<uint16_t*>(y) + off); break;
      case DataType::kInt16: StoreInt(q, n, p_.lo, p_.hi, static_cast<int16_t*>(y) + off); break;
      case DataType::kUInt4:
      case DataType::kInt4:
      case DataType::kUInt2:
      case DataType::kInt2: {
        int32_t v[kChunk];
        StoreInt(q, n, p_.lo, p_.hi, v);
        const int bits = DataTypeBits(p_.y_type);
        for (int64_t e = 0; e < n; ++e) PackedOr(static_cast<uint8_t*>(y), off + e, bits, static_cast<uint32_t>(v[e]));
        break;
      }
      default: break;
    }
  }

  // Float targets: x / scale rounded to the division type, then (float4 only,
  // as the reference does) plus the zero point, cast with `saturate`.
  void QuantizeFloatChunk(const KernelIO& io, const double* scale, const double* zp, int64_t r, int64_t c0,
                          int64_t n) const {
    const int64_t off = r * p_.layout.inner + c0;
    int64_t ss, zs;
    const double* s = RowParams(p_.layout, scale, r, &ss) + ss * c0;
    const double* z = RowParams(p_.layout, zp, r, &zs) + zs * c0;
    double q[kChunk];
    LoadChunk(p_.x_type, io.inputs[0], off, n, q);
    const DataType ct = p_.cast_inputs_to;
    const lp::MiniFloat& f = *lp::MiniFloatOf(p_.y_type);
    uint8_t* y = static_cast<uint8_t*>(io.outputs[0]);
    for (int64_t e = 0; e < n; ++e) {
      const double x = ct == DataType::kUndefined ? q[e] : RoundToFloatType(ct, q[e]);
      double v = RoundToFloatType(p_.div_type, x / s[e * ss]);
      if (p_.y_type == DataType::kFloat4E2M1) {
        v = static_cast<float>(v + z[e * zs]);
        PackedOr(y, off + e, 4, lp::MiniFromDouble(v, f, true));
      } else {
        y[off + e] = lp::MiniFromDouble(v, f, p_.saturate);
      }
    }
  }

  void DequantizeChunk(const KernelIO& io, const double* scale, const double* zp, int64_t r, int64_t c0,
                       int64_t n) const {
    const int64_t off = r * p_.layout.inner + c0;
    int64_t ss, zs;
    const double* s = RowParams(p_.layout, scale, r, &ss) + ss * c0;
    const double* z = RowParams(p_.layout, zp, r, &zs) + zs * c0;
    if (p_.fast && ss == 0) {
      const void* x = io.inputs[0];
      float* y = static_cast<float*>(io.outputs[0]) + off;
      const float sf = static_cast<float>(s[0]), zf = static_cast<float>(z[0]);
      switch (p_.x_type) {
        case DataType::kUInt8: DequantizeRowF32(static_cast<const uint8_t*>(x) + off, n, sf, zf, y); return;
        case DataType::kInt8: DequantizeRowF32(static_cast<const int8_t*>(x) + off, n, sf, zf, y); return;
        case DataType::kUInt16: DequantizeRowF32(static_cast<const uint16_t*>(x) + off, n, sf, zf, y); return;
        case DataType::kInt16: DequantizeRowF32(static_cast<const int16_t*>(x) + off, n, sf, zf, y); return;
        default: break;
      }
    }
    double x[kChunk];
    float y[kChunk];
    LoadChunk(p_.x_type, io.inputs[0], off, n, x);
    for (int64_t e = 0; e < n; ++e) {
      const float d = static_cast<float>(x[e]) - static_cast<float>(z[e * zs]);
      y[e] = d * static_cast<float>(s[e * ss]);
    }
    StoreFloat(p_.y_type, y, n, io.outputs[0], off);
  }

  QdqPlan p_;
  bool quantize_;
};

std::string TypeList(std::initializer_list<DataType> types) {
  std::string s;
  for (DataType t : types) s += (s.empty() ? "" : ", ") + DataTypeName(t);
  return s;
}

// Q's output type: the zero point's, else output_dtype, else uint8.
Expected<DataType> QuantizeOutputType(const Node& n) {
  const Value* zp = n.input(2);
  const int64_t attr = n.GetInt("output_dtype", 0);
  if (zp) {
    if (attr != 0 && attr != static_cast<int64_t>(zp->dtype))
      return InvalidArgument(n.Describe(), ": output_dtype ", DataTypeName(static_cast<DataType>(attr)),
                             " differs from the zero point's type ", DataTypeName(zp->dtype));
    return zp->dtype;
  }
  return attr ? static_cast<DataType>(attr) : DataType::kUInt8;
}

Status InferQuantize(Node& n) {
  OC_RETURN_IF_ERROR(RequireInput(n, 0));
  OC_RETURN_IF_ERROR(RequireInput(n, 1));
  OC_ASSIGN_OR_RETURN(DataType out, QuantizeOutputType(n));
  SetOutputLike(n, 0, *n.input(0));
  n.output(0)->dtype = out;
  return Status::Ok();
}

Status InferDequantize(Node& n) {
  OC_RETURN_IF_ERROR(RequireInput(n, 0));
  OC_RETURN_IF_ERROR(RequireInput(n, 1));
  const int64_t attr = n.GetInt("output_dtype", 0);
  SetOutputLike(n, 0, *n.input(0));
  n.output(0)->dtype = attr ? static_cast<DataType>(attr) : n.input(1)->dtype;
  return Status::Ok();
}

Expected<QdqPlan> CommonPlan(const Node& n) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  QdqPlan p;
  const Value& x = *n.input(0);
  const Value& scale = *n.input(1);
  const Value* zp = n.input(2);
  OC_ASSIGN_OR_RETURN(p.layout, ResolveLayout(n, x, scale, zp));
  p.x_type = x.dtype;
  p.scale_type = scale.dtype;
  p.has_zp = zp != nullptr;
  p.zp_type = zp ? zp->dtype : DataType::kUndefined;
  p.y_type = n.output(0)->dtype;
  if (!IsQuantFloat(scale.dtype) && scale.dtype != DataType::kFloat8E8M0)
    return NotSupported(n.Describe(), ": scale element type ", DataTypeName(scale.dtype), " (supported: ",
                        TypeList({DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                  DataType::kFloat8E8M0}),
                        ")");
  return p;
}

Expected<KernelPtr> MakeQuantize(const KernelInit& init) {
  const Node& n = init.node;
  OC_ASSIGN_OR_RETURN(QdqPlan p, CommonPlan(n));
  if (!IsQuantFloat(p.x_type) && p.x_type != DataType::kInt32)
    return NotSupported(n.Describe(), ": input element type ", DataTypeName(p.x_type), " (supported: ",
                        TypeList({DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kInt32}),
                        ")");
  const bool float_target = lp::MiniFloatOf(p.y_type) != nullptr;
  if (p.y_type == DataType::kInt32 || (!float_target && !IntRange(p.y_type, &p.lo, &p.hi)))
    return NotSupported(n.Describe(), ": quantized element type ", DataTypeName(p.y_type), " (supported: ",
                        TypeList({DataType::kUInt8, DataType::kInt8, DataType::kUInt16, DataType::kInt16,
                                  DataType::kUInt4, DataType::kInt4, DataType::kUInt2, DataType::kInt2,
                                  DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                                  DataType::kFloat8E5M2FNUZ, DataType::kFloat4E2M1}),
                        ")");
  p.saturate = n.GetInt("saturate", 1) != 0;
  if (p.has_zp && p.zp_type != p.y_type)
    return InvalidArgument(n.Describe(), ": zero point type ", DataTypeName(p.zp_type), " differs from output ",
                           DataTypeName(p.y_type));
  p.div_type = DivisionType(p.x_type, p.scale_type);
  if (const int64_t precision = n.GetInt("precision", 0)) {
    const DataType pt = static_cast<DataType>(precision);
    if (!IsQuantFloat(pt) && pt != DataType::kFloat64)
      return NotSupported(n.Describe(), ": precision ", DataTypeName(pt), " (supported: float32, float16, "
                          "bfloat16, float64)");
    p.div_type = pt;
    p.cast_inputs_to = pt;
  }
  p.fast = p.x_type == DataType::kFloat32 && p.div_type == DataType::kFloat32 &&
           p.cast_inputs_to == DataType::kUndefined && DataTypeSize(p.y_type) <= 2 && !float_target &&
           !IsSubByteType(p.y_type);
  return KernelPtr(new QdqKernel(p, true));
}

Expected<KernelPtr> MakeDequantize(const KernelInit& init) {
  const Node& n = init.node;
  OC_ASSIGN_OR_RETURN(QdqPlan p, CommonPlan(n));
  double lo, hi;
  const bool float_source = lp::MiniFloatOf(p.x_type) != nullptr;
  if (!float_source && !IntRange(p.x_type, &lo, &hi))
    return NotSupported(n.Describe(), ": quantized element type ", DataTypeName(p.x_type), " (supported: ",
                        TypeList({DataType::kUInt8, DataType::kInt8, DataType::kUInt16, DataType::kInt16,
                                  DataType::kInt32, DataType::kUInt4, DataType::kInt4, DataType::kUInt2,
                                  DataType::kInt2, DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ,
                                  DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ, DataType::kFloat4E2M1}),
                        ")");
  if (p.has_zp && p.zp_type != p.x_type)
    return InvalidArgument(n.Describe(), ": zero point type ", DataTypeName(p.zp_type), " differs from input ",
                           DataTypeName(p.x_type));
  if (!IsQuantFloat(p.y_type))
    return NotSupported(n.Describe(), ": output element type ", DataTypeName(p.y_type), " (supported: ",
                        TypeList({DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}), ")");
  // Float sources have no zero point (the reference requires it to be zero, or ignores it for float4).
  if (float_source) p.has_zp = false;
  p.fast = p.y_type == DataType::kFloat32 && !float_source && DataTypeSize(p.x_type) <= 2 && !IsSubByteType(p.x_type);
  return KernelPtr(new QdqKernel(p, false));
}

// DynamicQuantizeLinear: uint8 with scale and zero point from the data range
// (widened to include 0), computed in float32 as the reference does. An
// all-zero input has no range: the scale is then 1 (onnxruntime's rule; the
// spec divides by zero there, and the reference's 1/255 is a precedence slip
// against its own comment).
class DynamicQuantizeKernel final : public Kernel {
 public:
  explicit DynamicQuantizeKernel(int64_t count) : count_(count) {}
  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < count_; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    const float scale = hi == lo ? 1.f : (hi - lo) / 255.f;
    const float zp_float = std::clamp(0.f - lo / scale, 0.f, 255.f);
    const float zp = std::nearbyint(zp_float);
    uint8_t* y = io.out<uint8_t>(0);
    io.pool->ParallelFor(count_, 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float v = std::nearbyint(x[i] / scale) + zp;
        y[i] = static_cast<uint8_t>(v >= 0.f ? (v <= 255.f ? v : 255.f) : 0.f);
      }
    });
    *io.out<float>(1) = scale;
    *io.out<uint8_t>(2) = static_cast<uint8_t>(zp);
    return Status::Ok();
  }

 private:
  int64_t count_;
};

Status InferDynamicQuantize(Node& n) {
  OC_RETURN_IF_ERROR(RequireInput(n, 0));
  if (n.input(0)->dtype != DataType::kFloat32)
    return NotSupported(n.Describe(), ": input element type ", DataTypeName(n.input(0)->dtype),
                        " (supported: float32)");
  SetOutputLike(n, 0, *n.input(0));
  n.output(0)->dtype = DataType::kUInt8;
  if (n.output(1)) SetOutput(n, 1, DataType::kFloat32, {});
  if (n.output(2)) SetOutput(n, 2, DataType::kUInt8, {});
  return Status::Ok();
}

Expected<KernelPtr> MakeDynamicQuantize(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  if (init.node.outputs.size() < 3 || !init.node.output(1) || !init.node.output(2))
    return InvalidArgument(init.node.Describe(), ": expected 3 outputs (y, y_scale, y_zero_point)");
  return KernelPtr(new DynamicQuantizeKernel(init.node.input(0)->NumElements()));
}

}  // namespace

void RegisterQuantizeOps(OpRegistry& r) {
  r.Register({.op_type = "QuantizeLinear", .min_opset = 10, .infer = InferQuantize, .kernels = CpuKernel(MakeQuantize),
              .native_types = kHalfTypes});
  r.Register({.op_type = "DequantizeLinear", .min_opset = 10, .infer = InferDequantize, .kernels = CpuKernel(MakeDequantize),
              .native_types = kHalfTypes});
  r.Register({.op_type = "DynamicQuantizeLinear", .min_opset = 11, .infer = InferDynamicQuantize,
              .kernels = CpuKernel(MakeDynamicQuantize)});
}

}  // namespace oc

// Helpers shared by the integer-GEMM ops (MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv): reading zero points and scales of any supported
// type at run time, the requantization epilogue, and carving the per-run
// scratch into aligned pieces.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "base/cpu_features.h"
#include "base/status.h"
#include "graph/graph.h"
#include "ops/cpu/common/cast_util.h"
#include "ops/cpu/gemm/integer_gemm.h"

namespace oc::qlinear {

inline bool IsInt8Type(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }
inline bool IsScaleType(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// Element i of an int8/uint8 tensor.
inline int32_t LoadQ(DataType t, const void* p, int64_t i) {
  return t == DataType::kInt8 ? static_cast<int32_t>(static_cast<const int8_t*>(p)[i])
                              : static_cast<int32_t>(static_cast<const uint8_t*>(p)[i]);
}

// Element i of a float32/float16/bfloat16 tensor.
inline float LoadScale(DataType t, const void* p, int64_t i) {
  switch (t) {
    case DataType::kFloat16: return ew::HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kBFloat16: return ew::BFloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

inline float RoundToScaleType(DataType t, float v) {
  switch (t) {
    case DataType::kFloat16: return ew::HalfToFloat(ew::FloatToHalf(v));
    case DataType::kBFloat16: return ew::BFloat16ToFloat(ew::FloatToBFloat16(v));
    default: return v;
  }
}

// The requantization multiplier a_scale * b_scale / y_scale, each step rounded
// to the scales' type, as the reference computes it.
inline double Multiplier(DataType t, float a_scale, float b_scale, float y_scale) {
  return RoundToScaleType(t, RoundToScaleType(t, a_scale * b_scale) / y_scale);
}

// Requantizes exact int32 GEMM results into the int8/uint8 output:
//   y = saturate(rint((acc + bias[row]) * mult[row*rs + col*cs]) + zero_point)
// with the product in double (the reference multiplies int32 by the float
// multiplier in float64). `y` is the GEMM's C(0, 0), leading dim ldy.
struct RequantCtx {
  const double* mult = nullptr;
  int64_t mult_row_stride = 0, mult_col_stride = 0;
  const int32_t* bias = nullptr;  // per GEMM row, or null
  int32_t zero_point = 0;
  bool out_signed = false;
  void* y = nullptr;
  int64_t ldy = 0;
};

// One row: clamp to the output range less the zero point (integer bounds, so
// clamping and rounding commute), then round half to even by adding and
// subtracting 1.5 * 2^52 - plain double arithmetic the compiler vectorises.
template <typename T, bool kPerColumn>
inline void RequantRow(const int32_t* t, int64_t n, int32_t bias, const double* mult, double qlo, double qhi,
                       int32_t zp, T* y) {
  constexpr double kMagic = 6755399441055744.0;
  for (int64_t j = 0; j < n; ++j) {
    const int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(t[j]) + static_cast<uint32_t>(bias));
    double v = static_cast<double>(acc) * mult[kPerColumn ? j : 0];
    v = v >= qlo ? v : qlo;
    v = v <= qhi ? v : qhi;
    v = (v + kMagic) - kMagic;
    y[j] = static_cast<T>(static_cast<int32_t>(v) + zp);
  }
}

#if defined(__x86_64__) || defined(_M_X64)
// RequantRow for int8/uint8 outputs with AVX-512 (qlinear_requant_avx512.cc).
void RequantRow_avx512(const int32_t* t, int64_t n, int32_t bias, const double* mult, bool per_column, double qlo,
                       double qhi, int32_t zp, uint8_t* y);
#endif

template <typename T>
void RequantTileT(const RequantCtx& c, int64_t m0, int64_t n0, int64_t m, int64_t n, const int32_t* tile,
                  int64_t ldt) {
  const double lo = c.out_signed ? -128.0 : 0.0, hi = c.out_signed ? 127.0 : 255.0;
  const double qlo = lo - c.zero_point, qhi = hi - c.zero_point;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t row = m0 + i;
    const int32_t bias = c.bias ? c.bias[row] : 0;
    const double* mult = c.mult + row * c.mult_row_stride + n0 * c.mult_col_stride;
    T* y = static_cast<T*>(c.y) + row * c.ldy + n0;
#if defined(__x86_64__) || defined(_M_X64)
    static const bool avx512 = SelectedIsa() == Isa::kAvx512;
    if (avx512) {
      RequantRow_avx512(tile + i * ldt, n, bias, mult, c.mult_col_stride != 0, qlo, qhi, c.zero_point,
                        reinterpret_cast<uint8_t*>(y));
      continue;
    }
#endif
    if (c.mult_col_stride) RequantRow<T, true>(tile + i * ldt, n, bias, mult, qlo, qhi, c.zero_point, y);
    else RequantRow<T, false>(tile + i * ldt, n, bias, mult, qlo, qhi, c.zero_point, y);
  }
}

inline void RequantTile(const void* ctx, int64_t m0, int64_t n0, int64_t m, int64_t n, const int32_t* tile,
                        int64_t ldt) {
  const RequantCtx& c = *static_cast<const RequantCtx*>(ctx);
  if (c.out_signed) RequantTileT<int8_t>(c, m0, n0, m, n, tile, ldt);
  else RequantTileT<uint8_t>(c, m0, n0, m, n, tile, ldt);
}

// Lays out named pieces of the per-run scratch, each 64-byte aligned: call
// Add() at creation to get offsets and the total, then At() at run time.
class ScratchLayout {
 public:
  size_t Add(size_t bytes) {
    const size_t off = total_;
    total_ += (bytes + 63) / 64 * 64;
    return off;
  }
  size_t total() const { return total_; }
  template <typename T> static T* At(void* scratch, size_t off) {
    return reinterpret_cast<T*>(static_cast<uint8_t*>(scratch) + off);
  }

 private:
  size_t total_ = 0;
};

// Checks a quantization parameter: scalar (or one element), or 1-D of `count`
// when `count` > 0 is allowed. Returns the number of values (1 or count).
inline Expected<int64_t> CheckParamShape(const Node& n, size_t input, const char* what, int64_t count) {
  const Value* v = n.input(input);
  if (!v) return int64_t{1};
  const int64_t e = v->NumElements();
  if (e == 1 && v->shape.size() <= 1) return int64_t{1};
  if (count > 0 && v->shape.size() == 1 && e == count) return count;
  return NotSupported(n.Describe(), ": ", what, " (input ", input, ") has shape ", v->ShapeString(),
                      count > 0 ? std::string(", expected a scalar or 1-D of ") + std::to_string(count)
                                : std::string(", expected a scalar"));
}

// Input positions of an integer-GEMM op: `a` is the data operand (A, X), `b`
// the weights (B, W); the scales and the output zero point exist in the QLinear
// forms only. `a_name` / `b_name` ("a"/"b", "x"/"w") name them in messages.
struct QuantSlots {
  size_t a, b, a_zp, b_zp;
  size_t a_scale = 0, b_scale = 0, y_scale = 0, y_zp = 0;
  const char* a_name = "a";
  const char* b_name = "b";
};

// The operands are int8/uint8 and each zero point has its operand's type.
inline Status CheckQuantOperands(const Node& n, const QuantSlots& s) {
  const Value& a = *n.input(s.a);
  const Value& b = *n.input(s.b);
  if (!IsInt8Type(a.dtype) || !IsInt8Type(b.dtype)) {
    std::string an(s.a_name), bn(s.b_name);
    for (auto& c : an) c = static_cast<char>(std::toupper(c));
    for (auto& c : bn) c = static_cast<char>(std::toupper(c));
    return NotSupported(n.Describe(), ": element types ", an, " ", DataTypeName(a.dtype), ", ", bn, " ",
                        DataTypeName(b.dtype), " (supported: uint8, int8)");
  }
  for (auto [zp, like] : {std::pair{s.a_zp, &a}, std::pair{s.b_zp, &b}})
    if (const Value* z = n.input(zp); z && z->dtype != like->dtype)
      return InvalidArgument(n.Describe(), ": zero point (input ", zp, ") is ", DataTypeName(z->dtype),
                             " but its operand is ", DataTypeName(like->dtype));
  return Status::Ok();
}

// The zero points' and scales' shapes (scalars, or 1-D of `channels` for the
// weights' per-channel forms), the scales' common type and the output type.
struct QuantParams {
  int64_t b_zp_count = 1, b_scale_count = 1;
  DataType scale_type = DataType::kFloat32;
  DataType y_type = DataType::kInt32;
};
inline Expected<QuantParams> CheckQuantParams(const Node& n, const QuantSlots& s, bool qlinear,
                                              int64_t channels) {
  const std::string an(s.a_name), bn(s.b_name);
  QuantParams p;
  OC_RETURN_IF_ERROR(CheckParamShape(n, s.a_zp, (an + "_zero_point").c_str(), 0).status());
  OC_ASSIGN_OR_RETURN(p.b_zp_count, CheckParamShape(n, s.b_zp, (bn + "_zero_point").c_str(), channels));
  if (!qlinear) return p;
  OC_RETURN_IF_ERROR(CheckParamShape(n, s.a_scale, (an + "_scale").c_str(), 0).status());
  OC_ASSIGN_OR_RETURN(p.b_scale_count, CheckParamShape(n, s.b_scale, (bn + "_scale").c_str(), channels));
  OC_RETURN_IF_ERROR(CheckParamShape(n, s.y_scale, "y_scale", 0).status());
  OC_RETURN_IF_ERROR(CheckParamShape(n, s.y_zp, "y_zero_point", 0).status());
  p.scale_type = n.input(s.a_scale)->dtype;
  for (size_t i : {s.a_scale, s.b_scale, s.y_scale})
    if (!IsScaleType(n.input(i)->dtype) || n.input(i)->dtype != p.scale_type)
      return NotSupported(n.Describe(), ": scales must share one type of float32, float16, bfloat16; input ", i,
                          " is ", DataTypeName(n.input(i)->dtype));
  p.y_type = n.output(0)->dtype;
  if (!IsInt8Type(p.y_type))
    return NotSupported(n.Describe(), ": output element type ", DataTypeName(p.y_type), " (supported: uint8, int8)");
  return p;
}

}  // namespace oc::qlinear

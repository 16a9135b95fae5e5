// Bit-exact conversions between float and the low-precision ONNX types: the
// float8 family (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ), float4 E2M1, the E8M0
// scale type and the packed 4-bit / 2-bit integers. float16 / bfloat16 live in
// cast_util.h.
//
// Rounding is to nearest, ties to even (ONNX Cast). Overflow follows ONNX's
// `saturate`: true clamps to the largest finite value (infinities too); false
// gives infinity where the format has one (E5M2) and NaN otherwise. The NaN
// patterns, the sign of zero after underflow and float4's saturation without
// `saturate` match ml_dtypes (the ONNX reference implementation), which
// low_precision_test.cc checks over every code and a dense set of floats.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "graph/dtype.h"

namespace oc::lp {

// Layout of a small float: sign, `exp_bits` exponent bits with `bias`,
// `man_bits` mantissa bits, and what the top codes mean.
enum class Special {
  kIeee,    // all-ones exponent: infinity (mantissa 0) or NaN (E5M2)
  kFn,      // finite; all-ones exponent and mantissa is NaN (E4M3FN)
  kFnuz,    // finite; the "negative zero" code 0x80 is the one NaN
  kFinite,  // no infinity, no NaN (E2M1)
};

struct MiniFloat {
  int exp_bits, man_bits, bias;
  Special special;
  float max;  // largest finite value
};

inline constexpr MiniFloat kE4M3FN{4, 3, 7, Special::kFn, 448.f};
inline constexpr MiniFloat kE4M3FNUZ{4, 3, 8, Special::kFnuz, 240.f};
inline constexpr MiniFloat kE5M2{5, 2, 15, Special::kIeee, 57344.f};
inline constexpr MiniFloat kE5M2FNUZ{5, 2, 16, Special::kFnuz, 57344.f};
inline constexpr MiniFloat kE2M1{2, 1, 1, Special::kFinite, 6.f};

constexpr int SignShift(const MiniFloat& f) { return f.exp_bits + f.man_bits; }
constexpr uint8_t MaxCode(const MiniFloat& f) {
  // Largest finite magnitude: all-ones exponent minus what the special codes take.
  const int all_exp = (1 << f.exp_bits) - 1, all_man = (1 << f.man_bits) - 1;
  switch (f.special) {
    case Special::kIeee: return static_cast<uint8_t>(((all_exp - 1) << f.man_bits) | all_man);
    case Special::kFn: return static_cast<uint8_t>((all_exp << f.man_bits) | (all_man - 1));
    default: return static_cast<uint8_t>((all_exp << f.man_bits) | all_man);
  }
}

inline float MiniToFloat(uint8_t code, const MiniFloat& f) {
  const int s = SignShift(f);
  const bool neg = (code >> s) & 1;
  const int exp = (code >> f.man_bits) & ((1 << f.exp_bits) - 1);
  const int man = code & ((1 << f.man_bits) - 1);
  const int all_exp = (1 << f.exp_bits) - 1, all_man = (1 << f.man_bits) - 1;
  if (f.special == Special::kFnuz && code == (1u << s)) return std::nanf("");
  if (f.special == Special::kFn && exp == all_exp && man == all_man) return neg ? -std::nanf("") : std::nanf("");
  if (f.special == Special::kIeee && exp == all_exp) {
    if (man) return neg ? -std::nanf("") : std::nanf("");
    return neg ? -INFINITY : INFINITY;
  }
  const float v = exp == 0 ? std::ldexp(static_cast<float>(man), 1 - f.bias - f.man_bits)
                           : std::ldexp(static_cast<float>(man + (1 << f.man_bits)), exp - f.bias - f.man_bits);
  return neg ? -v : v;
}

inline uint8_t MiniFromDouble(double x, const MiniFloat& f, bool saturate) {
  const int s = SignShift(f);
  const uint8_t sign = static_cast<uint8_t>(std::signbit(x) ? 1u << s : 0u);
  const uint8_t max_code = MaxCode(f);
  const int all_exp = (1 << f.exp_bits) - 1;
  auto nan_code = [&]() -> uint8_t {
    switch (f.special) {
      case Special::kIeee: return static_cast<uint8_t>(sign | (all_exp << f.man_bits) | (1 << (f.man_bits - 1)));
      case Special::kFn: return static_cast<uint8_t>(sign | max_code | 1);
      case Special::kFnuz: return static_cast<uint8_t>(1u << s);
      case Special::kFinite: return static_cast<uint8_t>(sign ^ (1u << s));  // ml_dtypes: NaN -> zero of the other sign
    }
    return 0;
  };
  auto overflow_code = [&]() -> uint8_t {
    if (saturate || f.special == Special::kFinite) return static_cast<uint8_t>(sign | max_code);
    if (f.special == Special::kIeee) return static_cast<uint8_t>(sign | (all_exp << f.man_bits));
    return nan_code();
  };
  if (std::isnan(x)) return nan_code();
  const double a = std::fabs(x);
  if (std::isinf(a)) return overflow_code();
  const int emin = 1 - f.bias;  // exponent of the smallest normal
  int e2 = 0;
  std::frexp(a, &e2);           // a = m * 2^e2, m in [0.5, 1): floor(log2 a) = e2 - 1
  int q = (a == 0 ? emin : std::max(e2 - 1, emin)) - f.man_bits;  // exponent of one ulp
  double r = std::nearbyint(std::ldexp(a, -q));  // ties to even in the default FP mode
  if (r == 0) return f.special == Special::kFnuz ? 0 : sign;
  if (std::ldexp(r, q) > static_cast<double>(f.max)) return overflow_code();
  const double one = std::ldexp(1.0, f.man_bits);
  if (r < one) return static_cast<uint8_t>(sign | static_cast<int>(r));  // subnormal
  if (r >= 2 * one) {  // rounded up into the next binade
    r /= 2;
    ++q;
  }
  const int exp_field = q + f.man_bits + f.bias;
  return static_cast<uint8_t>(sign | (exp_field << f.man_bits) | static_cast<int>(r - one));
}

// ---- E8M0: 2^(code - 127), 0xFF is NaN, no sign, no zero ----------------------

enum class E8M0Round { kUp, kDown, kNearest };

inline float E8M0ToFloat(uint8_t code) {
  if (code == 0xFF) return std::nanf("");
  return std::ldexp(1.0f, code - 127);  // code 0 is 2^-127, a float32 subnormal
}

// ONNX's rule (numpy_helper.to_float8e8m0): the float32 exponent field, rounded
// by the mantissa per `mode`; infinities and NaN give 0xFF; with `saturate` the
// largest code 0xFE never rounds up into 0xFF.
inline uint8_t E8M0FromFloat(float x, bool saturate, E8M0Round mode) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint32_t exp = (bits >> 23) & 0xFF;
  if (exp == 0xFF) return 0xFF;
  bool up = false;
  if (mode == E8M0Round::kUp) {
    up = (bits & 0x7FFFFF) != 0;
  } else if (mode == E8M0Round::kNearest) {
    const bool g = bits & 0x400000, r = bits & 0x200000, st = bits & 0x1FFFFF, lsb = exp > 0;
    up = g && (r || st || lsb);
  }
  if (up && saturate && exp == 0xFE) up = false;
  return static_cast<uint8_t>(exp + (up ? 1 : 0));
}

// ---- Packed sub-byte integers -------------------------------------------------

// Element i of a packed tensor of `bits`-wide elements (element 0 in the low bits).
inline uint8_t PackedGet(const uint8_t* p, int64_t i, int bits) {
  const int per = 8 / bits;
  return static_cast<uint8_t>((p[i / per] >> ((i % per) * bits)) & ((1 << bits) - 1));
}
// Sign-extends a `bits`-wide two's-complement field.
inline int32_t SignExtend(uint8_t v, int bits) {
  return static_cast<int32_t>(static_cast<int8_t>(static_cast<uint8_t>(v << (8 - bits)))) >> (8 - bits);
}

// The float format of a low-precision float type; nullptr for the others.
inline const MiniFloat* MiniFloatOf(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return &kE4M3FN;
    case DataType::kFloat8E4M3FNUZ: return &kE4M3FNUZ;
    case DataType::kFloat8E5M2: return &kE5M2;
    case DataType::kFloat8E5M2FNUZ: return &kE5M2FNUZ;
    case DataType::kFloat4E2M1: return &kE2M1;
    default: return nullptr;
  }
}

}  // namespace oc::lp

/* Cast between the vector unit's types with every RoundMode. */
#ifndef OPENCANN_ASCENDC_CAST_H_
#define OPENCANN_ASCENDC_CAST_H_

#include <limits>

#include "ascendc_cpu/vector_core.h"

namespace AscendC {
namespace ocimpl {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>;

/* Rounds x to an integer by `mode` (CAST_NONE and CAST_RINT: to nearest even). */
inline long double RoundInteger(long double x, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_FLOOR: return std::floor(x);
    case RoundMode::CAST_CEIL: return std::ceil(x);
    case RoundMode::CAST_ROUND: return std::round(x);
    case RoundMode::CAST_TRUNC: return std::trunc(x);
    case RoundMode::CAST_ODD: {
      long double t = std::trunc(x);
      if (t != x && std::fmod(t, 2.0L) == 0) t += x > 0 ? 1 : -1;
      return t;
    }
    default: return std::nearbyint(x);
  }
}

/* x rounded to a binary format of `digits` significant bits whose smallest
 * normal exponent is `emin` and largest finite value `max`, by `mode`. */
inline long double RoundToFormat(long double x, int digits, int emin, long double max, RoundMode mode) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e;
  std::frexp(x, &e);  // |x| = m * 2^e, m in [0.5, 1): the leading bit is 2^(e-1)
  int lead = std::max(e - 1, emin);
  long double quantum = std::ldexp(1.0L, lead - (digits - 1));
  long double r = RoundInteger(x / quantum, mode) * quantum;
  if (std::fabs(r) > max) {
    bool to_inf;
    switch (mode) {
      case RoundMode::CAST_TRUNC: case RoundMode::CAST_ODD: to_inf = false; break;
      case RoundMode::CAST_FLOOR: to_inf = r < 0; break;
      case RoundMode::CAST_CEIL: to_inf = r > 0; break;
      default: to_inf = true;
    }
    long double big = to_inf ? std::numeric_limits<long double>::infinity() : max;
    return r < 0 ? -big : big;
  }
  return r;
}

template <typename D>
inline D FromLongDouble(long double v) {
  if constexpr (std::is_same_v<D, half>) return static_cast<half>(static_cast<float>(v));  // exact: v is a half
  else if constexpr (std::is_same_v<D, bfloat16_t>) {
    float f = static_cast<float>(v);  // exact: v is a bfloat16
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return bfloat16_t::FromBits(static_cast<uint16_t>(u >> 16));
  } else if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(v);
  } else {  // integers saturate; NaN becomes 0
    if (std::isnan(v)) return 0;
    if (v <= static_cast<long double>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    if (v >= static_cast<long double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(v);
  }
}

template <typename D, typename S>
inline D CastOne(S s, RoundMode mode) {
  long double x = static_cast<long double>(static_cast<Calc<S>>(s));
  if constexpr (!kIsFloat<D>) {
    return FromLongDouble<D>(RoundInteger(x, mode));
  } else if constexpr (std::is_same_v<D, S>) {
    return mode == RoundMode::CAST_NONE ? s : FromLongDouble<D>(RoundInteger(x, mode));
  } else if constexpr (std::is_same_v<D, half>) {
    return FromLongDouble<D>(RoundToFormat(x, 11, -14, 65504.0L, mode));
  } else if constexpr (std::is_same_v<D, bfloat16_t>) {
    return FromLongDouble<D>(RoundToFormat(x, 8, -126, 3.3895313892515355e38L, mode));
  } else if constexpr (std::is_same_v<D, float>) {
    return FromLongDouble<D>(RoundToFormat(x, 24, -126, std::numeric_limits<float>::max(), mode));
  } else {
    return static_cast<D>(x);
  }
}

}  // namespace ocimpl

/* dst[i] = src[i] converted, rounded by roundMode where the conversion loses
 * precision (CAST_NONE: to nearest even, or exact). */
template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& roundMode,
                 const uint32_t calCount) {
  ocimpl::CheckCount("Cast", dst, calCount);
  ocimpl::CheckCount("Cast", src, calCount);
  if (roundMode == RoundMode::CAST_ODD && !(std::is_same_v<S, float> && std::is_same_v<D, half>))
    ocimpl::Fail("Cast", ocimpl::Format("CAST_ODD is defined for float -> half only, not %s -> %s",
                                        ocimpl::TypeName<S>::Get(), ocimpl::TypeName<D>::Get()));
  D* d = dst.GetPhyAddr();
  const S* s = src.GetPhyAddr();
  if constexpr ((std::is_same_v<S, half> && std::is_same_v<D, float>) ||
                (std::is_same_v<S, float> && std::is_same_v<D, half>)) {
    if (roundMode == RoundMode::CAST_NONE || roundMode == RoundMode::CAST_RINT || std::is_same_v<D, float>) {
      for (uint32_t i = 0; i < calCount; ++i) d[i] = static_cast<D>(s[i]);  // exact or nearest even
      return;
    }
  }
  for (uint32_t i = 0; i < calCount; ++i) d[i] = ocimpl::CastOne<D>(s[i], roundMode);
}

}  // namespace AscendC

#endif  // OPENCANN_ASCENDC_CAST_H_

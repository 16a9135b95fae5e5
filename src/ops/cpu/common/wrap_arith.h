// Integer sums and products that wrap (two's complement, as onnxruntime's and
// numpy's do) instead of overflowing a signed type, which is undefined
// behaviour: they are computed in an unsigned type at least as wide as int
// (8- and 16-bit types would otherwise promote to signed int, where even
// uint16 * uint16 can overflow). Floating point and bool: the plain operation.
#pragma once

#include <type_traits>

namespace oc {

template <typename T>
using WrapU = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(WrapU<T>(a) + WrapU<T>(b));
  else return static_cast<T>(a + b);
}

template <typename T>
T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(WrapU<T>(a) * WrapU<T>(b));
  else return static_cast<T>(a * b);
}

}  // namespace oc

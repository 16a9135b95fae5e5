// Bit-exact float16 / bfloat16 <-> float32 conversions (round to nearest even,
// NaN kept quiet, overflow to infinity, subnormals handled).
#pragma once

#include <bit>
#include <cstdint>

namespace oc::ew {

inline float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {
    // Subnormal half: value = man * 2^-24, exact in float.
    float f = static_cast<float>(man) * 0x1p-24f;
    bits = sign | std::bit_cast<uint32_t>(f);
  }
  return std::bit_cast<float>(bits);
}

inline uint16_t FloatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00 | (ax > 0x7f800000u ? (0x200 | ((ax >> 13) & 0x3ff)) : 0));
  }
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {
    // Below the smallest normal half (2^-14): scale into subnormal units of
    // 2^-24; the float addition rounds to nearest even.
    float a = std::bit_cast<float>(ax);
    float scaled = a * 0x1p24f;
    // Adding 2^23 makes the float's ulp 1, so the sum rounds `scaled` to an integer (RNE).
    uint32_t r = std::bit_cast<uint32_t>(scaled + 0x1p23f) - std::bit_cast<uint32_t>(0x1p23f);
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias exponent and round the 13 dropped mantissa bits to nearest even.
  uint32_t m = ax + 0xc8000000u;  // exponent - 112
  m += 0xfff + ((m >> 13) & 1);
  return static_cast<uint16_t>(sign | (m >> 13));
}

inline float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

inline uint16_t FloatToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace oc::ew

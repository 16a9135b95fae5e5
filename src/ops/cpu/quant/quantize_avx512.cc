// QuantizeLinear float32 -> 8/16-bit rows and DequantizeLinear 8/16-bit ->
// float32 rows with AVX-512 (see quantize_row.h).
// Bit-exact with QuantizeRowF32Generic: the same IEEE division, max/min
// return their second operand for a NaN first one (so NaN -> qlo as in the
// generic compare-and-select), and roundscale with round-to-nearest-even is
// rint. After the clamp the value is an integer inside [lo, hi], so the
// truncating narrow conversions are exact.
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on the undefined
// pass-through operand of the unmasked intrinsics it wraps (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <type_traits>

#include "ops/cpu/quant/quantize_row.h"

namespace oc {
namespace {

template <typename T>
inline void QuantizeRowImpl(const float* x, int64_t n, float s, float zp, float lo, float hi, T* y) {
  const __m512 vs = _mm512_set1_ps(s), vzp = _mm512_set1_ps(zp);
  const __m512 vqlo = _mm512_set1_ps(lo - zp), vqhi = _mm512_set1_ps(hi - zp);
  auto one = [&](__m512 v) {
    __m512 q = _mm512_div_ps(v, vs);
    q = _mm512_max_ps(q, vqlo);  // NaN in q -> qlo
    q = _mm512_min_ps(q, vqhi);
    q = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_cvtps_epi32(_mm512_add_ps(q, vzp));
  };
  int64_t e = 0;
  for (; e + 16 <= n; e += 16) {
    const __m512i i = one(_mm512_loadu_ps(x + e));
    if constexpr (sizeof(T) == 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(y + e), _mm512_cvtepi32_epi8(i));
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + e), _mm512_cvtepi32_epi16(i));
  }
  if (e < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - e)) - 1);
    const __m512i i = one(_mm512_maskz_loadu_ps(m, x + e));
    if constexpr (sizeof(T) == 1) _mm512_mask_cvtepi32_storeu_epi8(y + e, m, i);
    else _mm512_mask_cvtepi32_storeu_epi16(y + e, m, i);
  }
}

// Sixteen integers of x widened to int32 (masked: lanes outside m read as 0).
template <typename T>
inline __m512i Widen(const T* x, __mmask16 m) {
  if constexpr (std::is_same_v<T, uint8_t>) return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, x));
  else if constexpr (std::is_same_v<T, int8_t>) return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x));
  else if constexpr (std::is_same_v<T, uint16_t>) return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, x));
  else return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, x));
}

template <typename T>
inline void DequantizeRowImpl(const T* x, int64_t n, float s, float zp, float* y) {
  const __m512 vs = _mm512_set1_ps(s), vzp = _mm512_set1_ps(zp);
  int64_t e = 0;
  for (; e + 16 <= n; e += 16) {
    const __m512 v = _mm512_cvtepi32_ps(Widen(x + e, 0xFFFF));
    _mm512_storeu_ps(y + e, _mm512_mul_ps(_mm512_sub_ps(v, vzp), vs));
  }
  if (e < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - e)) - 1);
    const __m512 v = _mm512_cvtepi32_ps(Widen(x + e, m));
    _mm512_mask_storeu_ps(y + e, m, _mm512_mul_ps(_mm512_sub_ps(v, vzp), vs));
  }
}

}  // namespace

void DequantizeRowF32Avx512(const uint8_t* x, int64_t n, float s, float zp, float* y) {
  DequantizeRowImpl(x, n, s, zp, y);
}
void DequantizeRowF32Avx512(const int8_t* x, int64_t n, float s, float zp, float* y) {
  DequantizeRowImpl(x, n, s, zp, y);
}
void DequantizeRowF32Avx512(const uint16_t* x, int64_t n, float s, float zp, float* y) {
  DequantizeRowImpl(x, n, s, zp, y);
}
void DequantizeRowF32Avx512(const int16_t* x, int64_t n, float s, float zp, float* y) {
  DequantizeRowImpl(x, n, s, zp, y);
}

void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, uint8_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}
void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, int8_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}
void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, uint16_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}
void QuantizeRowF32Avx512(const float* x, int64_t n, float s, float zp, float lo, float hi, int16_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}

}  // namespace oc

// QuantizeLinear float32 -> 8/16-bit rows with AVX2 (see quantize_row.h).
// Bit-exact with QuantizeRowF32Generic for the reasons given in
// quantize_avx512.cc (the compiler does not vectorise the generic loop's
// NaN-aware selects and narrowing on its own). Eight values at a time; the
// narrowing of the exact int32 results goes through a small buffer, and the
// tail through the generic loop.
#include <immintrin.h>

#include "ops/cpu/quant/quantize_row.h"

namespace oc {
namespace {

template <typename T>
inline void QuantizeRowImpl(const float* x, int64_t n, float s, float zp, float lo, float hi, T* y) {
  const __m256 vs = _mm256_set1_ps(s), vzp = _mm256_set1_ps(zp);
  const __m256 vqlo = _mm256_set1_ps(lo - zp), vqhi = _mm256_set1_ps(hi - zp);
  int64_t e = 0;
  for (; e + 8 <= n; e += 8) {
    __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + e), vs);
    q = _mm256_max_ps(q, vqlo);  // NaN in q -> qlo
    q = _mm256_min_ps(q, vqhi);
    q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    alignas(32) int32_t v[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), _mm256_cvtps_epi32(_mm256_add_ps(q, vzp)));
    for (int i = 0; i < 8; ++i) y[e + i] = static_cast<T>(v[i]);
  }
  QuantizeRowF32Generic(x + e, n - e, s, zp, lo, hi, y + e);
}

}  // namespace

void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, uint8_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}
void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, int8_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}
void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, uint16_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}
void QuantizeRowF32Avx2(const float* x, int64_t n, float s, float zp, float lo, float hi, int16_t* y) {
  QuantizeRowImpl(x, n, s, zp, lo, hi, y);
}

}  // namespace oc

// NCHW <-> NCHWc reorders for block 16 with AVX-512: 16 channel rows x 16
// pixels are loaded (masked at the channel and pixel ends), transposed in
// registers and stored as 16 pixel vectors (and the reverse). Replaces 256
// scalar strided stores per 16x16 tile.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "ops/cpu/nchwc/nchwc.h"

namespace oc::nchwc {
namespace {

// In-place transpose of a 16x16 float tile held in r[0..15].
inline void Transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // t[2i]: per 128-bit lane a0 b0 a1 b1; t[2i+1]: a2 b2 a3 b3 (rows a = 2i, b = 2i+1).
  for (int i = 0; i < 4; ++i) {
    const __m512 *p = t + 4 * i;
    u[4 * i + 0] = _mm512_shuffle_ps(p[0], p[2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm512_shuffle_ps(p[0], p[2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm512_shuffle_ps(p[1], p[3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm512_shuffle_ps(p[1], p[3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // u[4i+k]: per 128-bit lane j, column 4j+k of rows 4i..4i+3.
  // Gather the 128-bit lanes: column c = 4j + k lives in lane j of u[4i + k].
  for (int k = 0; k < 4; ++k) {
    const __m512 a = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88);       // lanes 0,2 of rows 0-3, 4-7
    const __m512 b = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xdd);       // lanes 1,3
    const __m512 c = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);  // rows 8-11, 12-15
    const __m512 d = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xdd);
    r[k] = _mm512_shuffle_f32x4(a, c, 0x88);       // lane 0 -> column k
    r[8 + k] = _mm512_shuffle_f32x4(a, c, 0xdd);   // lane 2 -> column 8 + k
    r[4 + k] = _mm512_shuffle_f32x4(b, d, 0x88);   // lane 1 -> column 4 + k
    r[12 + k] = _mm512_shuffle_f32x4(b, d, 0xdd);  // lane 3 -> column 12 + k
  }
}

}  // namespace

void ReorderToBlocked16Avx512(const float* x, float* y, int64_t channels, int64_t h, int64_t w, int64_t begin,
                              int64_t end) {
  const int64_t blocks = (channels + 15) / 16, hw = h * w;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t row = u % h, cb = (u / h) % blocks, n = u / (h * blocks);
    float* dst = y + ((n * blocks + cb) * h + row) * w * 16;
    const int64_t lanes = std::min<int64_t>(16, channels - cb * 16);
    const float* src = x + (n * channels + cb * 16) * hw + row * w;
    for (int64_t i = 0; i < w; i += 16) {
      const int64_t cols = std::min<int64_t>(16, w - i);
      const __mmask16 m = static_cast<__mmask16>((1u << cols) - 1);
      __m512 r[16];
      for (int l = 0; l < 16; ++l) r[l] = l < lanes ? _mm512_maskz_loadu_ps(m, src + l * hw + i) : _mm512_setzero_ps();
      Transpose16(r);
      for (int64_t k = 0; k < cols; ++k) _mm512_storeu_ps(dst + (i + k) * 16, r[k]);
    }
  }
}

void ReorderFromBlocked16Avx512(const float* x, float* y, int64_t channels, int64_t h, int64_t w, int64_t begin,
                                int64_t end) {
  const int64_t blocks = (channels + 15) / 16, hw = h * w;
  for (int64_t u = begin; u < end; ++u) {
    const int64_t row = u % h, cb = (u / h) % blocks, n = u / (h * blocks);
    const float* src = x + ((n * blocks + cb) * h + row) * w * 16;
    const int64_t lanes = std::min<int64_t>(16, channels - cb * 16);
    float* dst = y + (n * channels + cb * 16) * hw + row * w;
    for (int64_t i = 0; i < w; i += 16) {
      const int64_t cols = std::min<int64_t>(16, w - i);
      const __mmask16 m = static_cast<__mmask16>((1u << cols) - 1);
      __m512 r[16];
      for (int k = 0; k < 16; ++k) r[k] = k < cols ? _mm512_loadu_ps(src + (i + k) * 16) : _mm512_setzero_ps();
      Transpose16(r);
      for (int64_t l = 0; l < lanes; ++l) _mm512_mask_storeu_ps(dst + l * hw + i, m, r[l]);
    }
  }
}

}  // namespace oc::nchwc

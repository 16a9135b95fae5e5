// 8x8 transpose of 32-bit elements in AVX2 registers: the micro-kernel of the
// blocked 2-D transpose in StridedCopy (only called when SelectedIsa() >= AVX2).
#include <immintrin.h>

#include <cstdint>

namespace oc {

// dst[i * dst_stride + j] = src[j * src_stride + i] for i, j < 8 (strides in elements).
void x32_transpose_8x8__avx2(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride) {
  const float* s = reinterpret_cast<const float*>(src);
  float* d = reinterpret_cast<float*>(dst);
  __m256 r0 = _mm256_loadu_ps(s + 0 * src_stride), r1 = _mm256_loadu_ps(s + 1 * src_stride);
  __m256 r2 = _mm256_loadu_ps(s + 2 * src_stride), r3 = _mm256_loadu_ps(s + 3 * src_stride);
  __m256 r4 = _mm256_loadu_ps(s + 4 * src_stride), r5 = _mm256_loadu_ps(s + 5 * src_stride);
  __m256 r6 = _mm256_loadu_ps(s + 6 * src_stride), r7 = _mm256_loadu_ps(s + 7 * src_stride);
  // Interleave pairs of rows, then quads, then swap 128-bit halves.
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(d + 0 * dst_stride, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(d + 1 * dst_stride, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(d + 2 * dst_stride, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(d + 3 * dst_stride, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(d + 4 * dst_stride, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(d + 5 * dst_stride, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(d + 6 * dst_stride, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(d + 7 * dst_stride, _mm256_permute2f128_ps(u3, u7, 0x31));
}

}  // namespace oc

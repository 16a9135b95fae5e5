// float32 vectors of one ISA behind one small interface, for kernels whose
// per-ISA versions differ only in vector width: write the loop once as a
// template over S and instantiate it in each *_avx2.cc / *_avx512.cc file
// (compiled with that ISA's flags), which sees only its own type here.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace oc::simd {

#if defined(__AVX512F__)
struct F32x16 {
  using V = __m512;
  static constexpr int64_t kLanes = 16;
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V Set1(float x) { return _mm512_set1_ps(x); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};
#elif defined(__AVX2__) && defined(__FMA__)
// Not defined in AVX-512 files: an inline copy compiled there could be the one
// the linker keeps for the AVX2 file too.
struct F32x8 {
  using V = __m256;
  static constexpr int64_t kLanes = 8;
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V Set1(float x) { return _mm256_set1_ps(x); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};
#endif

}  // namespace oc::simd

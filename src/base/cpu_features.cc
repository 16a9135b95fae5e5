#include "base/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif

namespace oc {

namespace {
CpuFeatures Detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    bool osxsave = c & (1u << 27);
    bool fma = c & (1u << 12);
    unsigned long long xcr0 = 0;
    if (osxsave) {
      unsigned lo, hi;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    bool ymm = (xcr0 & 0x6) == 0x6;
    bool zmm = (xcr0 & 0xe6) == 0xe6;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
      f.avx2 = ymm && (b & (1u << 5));
      f.fma = ymm && fma;
      f.avx512f = zmm && (b & (1u << 16));
      f.avx512dq = zmm && (b & (1u << 17));
      f.avx512bw = zmm && (b & (1u << 30));
      f.avx512vl = zmm && (b & (1u << 31));
      f.avx512_vnni = zmm && (c & (1u << 11));
      const bool tiles = (xcr0 & 0x60000) == 0x60000;
      f.amx_tile = tiles && (d & (1u << 24));
      f.amx_bf16 = f.amx_tile && (d & (1u << 22));
      f.amx_int8 = f.amx_tile && (d & (1u << 25));
      unsigned a1, b1, c1, d1;
      if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) f.avx512_bf16 = zmm && (a1 & (1u << 5));
    }
  }
#elif defined(__aarch64__)
  f.neon = true;
#endif
  return f;
}
}  // namespace

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures f = Detect();
  return f;
}

Isa SelectedIsa() {
  static const Isa isa = [] {
    const CpuFeatures& f = GetCpuFeatures();
    Isa best = Isa::kScalar;
    if (f.neon) best = Isa::kNeon;
    if (f.avx2 && f.fma) best = Isa::kAvx2;
    if (f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq) best = Isa::kAvx512;
    if (const char* env = std::getenv("OPENCANN_ISA")) {
      Isa cap = best;
      if (!std::strcmp(env, "scalar")) cap = Isa::kScalar;
      else if (!std::strcmp(env, "avx2")) cap = Isa::kAvx2;
      else if (!std::strcmp(env, "avx512")) cap = Isa::kAvx512;
      if (best != Isa::kNeon && static_cast<int>(cap) < static_cast<int>(best)) best = cap;
    }
    return best;
  }();
  return isa;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
  }
  return "?";
}

}  // namespace oc

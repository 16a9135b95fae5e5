// The cube unit of Ascend C on the CPU (include/ascendc/ascendc_cpu/matmul.h):
// one block's product on OpenCANN's GEMMs (src/ops/cpu/gemm/), on the block's
// thread. bfloat16 operands go to the bf16 GEMM where the CPU has one (AMX or
// AVX512_BF16: bf16 products summed in float, as the cube unit does), packed
// straight from their bf16 values; otherwise, and for half, they become float
// as their panels are packed (B) or in one pass (A) for the sgemm. Results
// other than a float store go through a float tile. Also the check of a
// TCubeTiling against the chip profile.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ascendc/context.h"
#include "kernel_operator.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace AscendC::ocimpl {
namespace {

using oc::gemm::GemmUkernel;

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void HalfToFloatF16C(const uint16_t* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(s[i])));
}
__attribute__((target("avx2"))) void Bf16ToFloatAvx2(const uint16_t* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm256_slli_epi32(w, 16));
  }
  for (; i < n; ++i) {
    uint32_t u = static_cast<uint32_t>(s[i]) << 16;
    std::memcpy(d + i, &u, 4);
  }
}
const bool kHasF16C = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
#endif

// n elements of `type` at src (element offset 0) as float.
void ToFloat(int type, const void* src, float* dst, int64_t n) {
  if (type == kMmFloat) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  } else if (type == kMmBf16) {
#if defined(__x86_64__)
    if (kHasAvx2) {
      Bf16ToFloatAvx2(static_cast<const uint16_t*>(src), dst, n);
      return;
    }
#endif
    const uint16_t* s = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
      uint32_t u = static_cast<uint32_t>(s[i]) << 16;
      std::memcpy(dst + i, &u, 4);
    }
  } else {
#if defined(__x86_64__)
    if (kHasF16C) {
      HalfToFloatF16C(static_cast<const uint16_t*>(src), dst, n);
      return;
    }
#endif
    const half* s = static_cast<const half*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
  }
}

size_t Bytes(int type) { return type == kMmFloat ? 4 : 2; }
const uint8_t* At(const void* p, int type, int64_t elements) {
  return static_cast<const uint8_t*>(p) + elements * static_cast<int64_t>(Bytes(type));
}

// What the B packer converting half / bfloat16 reads.
struct ConvertB {
  const void* b;
  int64_t ldb;
  bool trans;
  int type;
};

// PackBFn: rows [k0, k0 + kc), columns [n0, n0 + nc) of op(B) as NR-wide float
// panels (panel stride kc * NR, columns past nc zero).
void PackConvertedB(const void* ctx, const GemmUkernel& uk, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
                    float* dst) {
  const ConvertB& cb = *static_cast<const ConvertB*>(ctx);
  const int64_t nr = uk.nr;
  thread_local std::vector<float> column;
  for (int64_t p = 0; p * nr < nc; ++p) {
    float* d = dst + p * kc * nr;
    const int64_t j0 = n0 + p * nr, cols = std::min(nr, nc - p * nr);
    if (!cb.trans) {
      for (int64_t kk = 0; kk < kc; ++kk) {
        ToFloat(cb.type, At(cb.b, cb.type, (k0 + kk) * cb.ldb + j0), d + kk * nr, cols);
        for (int64_t j = cols; j < nr; ++j) d[kk * nr + j] = 0.f;
      }
    } else {
      if (column.size() < static_cast<size_t>(kc)) column.resize(static_cast<size_t>(kc));
      for (int64_t j = 0; j < nr; ++j) {
        if (j >= cols) {
          for (int64_t kk = 0; kk < kc; ++kk) d[kk * nr + j] = 0.f;
          continue;
        }
        ToFloat(cb.type, At(cb.b, cb.type, (j0 + j) * cb.ldb + k0), column.data(), kc);
        for (int64_t kk = 0; kk < kc; ++kk) d[kk * nr + j] = column[static_cast<size_t>(kk)];
      }
    }
  }
}

// Grow-only per-thread buffers (a block's thread reuses them block after block).
struct FloatBuffer {
  std::unique_ptr<float[], void (*)(float*)> p{nullptr, [](float* f) { ::operator delete[](f, std::align_val_t(64)); }};
  size_t floats = 0;
  float* Get(size_t n) {
    if (n > floats) {
      p.reset(static_cast<float*>(::operator new[](std::max<size_t>(n, 16) * sizeof(float), std::align_val_t(64))));
      floats = std::max<size_t>(n, 16);
    }
    return p.get();
  }
};
thread_local FloatBuffer t_plan_scratch, t_a, t_c, t_bias, t_packed_a, t_packed_b;

// bfloat16 op(A) (m x k) / op(B) (k x n) into the bf16 GEMM's full-K panels
// (gemm_bf16.h): the values are copied, not rounded.
void PackBf16A(const uint16_t* a, int64_t lda, bool trans, int64_t m, int64_t k, uint16_t* dst) {
  const int64_t kp = oc::gemm::Bf16PaddedK(k), mr = oc::gemm::kBf16MR;
  for (int64_t i0 = 0; i0 < m; i0 += mr, dst += kp * mr) {
    for (int64_t k0 = 0; k0 < kp; k0 += 32) {
      uint16_t* blk = dst + k0 * mr;
      const int64_t kn = std::max<int64_t>(0, std::min<int64_t>(32, k - k0));
      for (int64_t i = 0; i < mr; ++i) {
        uint16_t* row = blk + i * 32;
        const int64_t r = i0 + i;
        int64_t kk = 0;
        if (r < m && !trans) {
          std::memcpy(row, a + r * lda + k0, static_cast<size_t>(kn) * 2);
          kk = kn;
        } else if (r < m) {
          for (; kk < kn; ++kk) row[kk] = a[(k0 + kk) * lda + r];
        }
        for (; kk < 32; ++kk) row[kk] = 0;
      }
    }
  }
}
void PackBf16B(const uint16_t* b, int64_t ldb, bool trans, int64_t n, int64_t k, uint16_t* dst) {
  const int64_t kp = oc::gemm::Bf16PaddedK(k), nr = oc::gemm::kBf16NR;
  for (int64_t j0 = 0; j0 < n; j0 += nr, dst += kp * nr) {
    const int64_t cols = std::min(nr, n - j0);
    for (int64_t k2 = 0; k2 < kp; k2 += 2) {
      uint16_t* pair = dst + k2 * nr;  // (k2 / 2) * NR * 2
      for (int64_t j = 0; j < nr; ++j) {
        for (int64_t h = 0; h < 2; ++h) {
          const int64_t kk = k2 + h, col = j0 + j;
          pair[j * 2 + h] = j < cols && kk < k ? (trans ? b[col * ldb + kk] : b[kk * ldb + col]) : uint16_t{0};
        }
      }
    }
  }
}

template <typename T>
T* GetAs(FloatBuffer& buf, size_t bytes) {
  return reinterpret_cast<T*>(buf.Get((bytes + sizeof(float) - 1) / sizeof(float)));
}

template <typename T>
void StoreAs(void* c, int64_t idx, float v) {
  static_cast<T*>(c)[idx] = static_cast<T>(v);
}
float LoadAs(int type, const void* c, int64_t idx) {
  if (type == kMmFloat) return static_cast<const float*>(c)[idx];
  if (type == kMmHalf) return static_cast<float>(static_cast<const half*>(c)[idx]);
  return static_cast<float>(static_cast<const bfloat16_t*>(c)[idx]);
}

}  // namespace

void MatmulRun(const MatmulCall& mc) {
  if (mc.m <= 0 || mc.n <= 0) return;
  const GemmUkernel& uk = oc::gemm::DefaultUkernel();
  const bool direct = mc.c_type == kMmFloat && (mc.atomic == 0 || mc.atomic == 1);
  // bf16 A and B to the bf16 GEMM when there is one (they are packed below).
  const oc::gemm::Bf16Ukernel* bf16 = mc.ab_type == kMmBf16 ? oc::gemm::DefaultBf16Ukernel() : nullptr;
  oc::gemm::SgemmArgs g;
  g.m = mc.m, g.n = mc.n, g.k = mc.k;
  // A
  if (mc.ab_type == kMmFloat) {
    g.a = static_cast<const float*>(mc.a), g.lda = mc.lda, g.trans_a = mc.trans_a;
  } else if (!bf16) {
    // Converted in one pass into row-major float (the GEMM packs it per K
    // block, an L2-sized copy; converting into full-K panels measured slower).
    const int64_t rows = mc.trans_a ? mc.k : mc.m, cols = mc.trans_a ? mc.m : mc.k;
    float* a = t_a.Get(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) ToFloat(mc.ab_type, At(mc.a, mc.ab_type, r * mc.lda), a + r * cols, cols);
    g.a = a, g.lda = cols, g.trans_a = mc.trans_a;
  }
  // B
  ConvertB cb{mc.b, mc.ldb, mc.trans_b, mc.ab_type};
  if (mc.ab_type == kMmFloat) {
    g.b = static_cast<const float*>(mc.b), g.ldb = mc.ldb, g.trans_b = mc.trans_b;
  } else if (!bf16) {
    g.pack_b = &PackConvertedB, g.pack_b_ctx = &cb;
  }
  // bias, per column
  if (mc.bias) {
    g.epilogue.bias_kind = oc::gemm::Epilogue::Bias::kPerCol;
    if (mc.bias_type == kMmFloat) {
      g.epilogue.bias = static_cast<const float*>(mc.bias);
    } else {
      float* b = t_bias.Get(static_cast<size_t>(mc.n));
      ToFloat(mc.bias_type, mc.bias, b, mc.n);
      g.epilogue.bias = b;
    }
  }
  if (direct) {
    g.c = static_cast<float*>(mc.c), g.ldc = mc.ldc, g.beta = mc.atomic == 1 ? 1.f : 0.f;
  } else {
    g.c = t_c.Get(static_cast<size_t>(mc.m * mc.n)), g.ldc = mc.n, g.beta = 0.f;
  }
  if (bf16) {
    const int64_t k = std::max<int64_t>(mc.k, 1);
    uint16_t* pa = GetAs<uint16_t>(t_packed_a, static_cast<size_t>(oc::gemm::Bf16PackedASize(mc.m, k)) * 2);
    uint16_t* pb = GetAs<uint16_t>(t_packed_b, static_cast<size_t>(oc::gemm::Bf16PackedBSize(mc.n, k)) * 2);
    PackBf16A(static_cast<const uint16_t*>(mc.a), mc.lda, mc.trans_a, mc.m, mc.k, pa);
    PackBf16B(static_cast<const uint16_t*>(mc.b), mc.ldb, mc.trans_b, mc.n, mc.k, pb);
    oc::gemm::Bf16GemmPlan plan(*bf16, mc.m, mc.n, k, 1);
    plan.Run(g, pa, pb, nullptr, GetAs<uint8_t>(t_plan_scratch, plan.ScratchBytes() + 64));
  } else {
    oc::gemm::SgemmPlan plan(uk, mc.m, mc.n, std::max<int64_t>(mc.k, 1), 1);
    plan.Run(g, nullptr, t_plan_scratch.Get(plan.ScratchBytes() / sizeof(float) + 16));
  }
  if (direct) return;
  for (int64_t i = 0; i < mc.m; ++i) {
    for (int64_t j = 0; j < mc.n; ++j) {
      float v = g.c[i * mc.n + j];
      const int64_t idx = i * mc.ldc + j;
      if (mc.atomic) {
        float o = LoadAs(mc.c_type, mc.c, idx);
        v = mc.atomic == 1 ? o + v : mc.atomic == 2 ? std::max(o, v) : std::min(o, v);
      }
      if (mc.c_type == kMmFloat) StoreAs<float>(mc.c, idx, v);
      else if (mc.c_type == kMmHalf) StoreAs<half>(mc.c, idx, v);
      else StoreAs<bfloat16_t>(mc.c, idx, v);
    }
  }
}

void MatmulCheckTiling(const TCubeTiling& t, int ab_bytes) {
  const char* api = "Matmul::Init";
  const Block& b = Current();
  const char* soc = b.soc;
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) Fail(api, what);
  };
  need(t.M > 0 && t.N > 0 && t.Ka > 0 && t.Kb > 0,
       Format("the tiling's shape (M %d, N %d, Ka %d, Kb %d) must be positive", t.M, t.N, t.Ka, t.Kb));
  need(t.Ka == t.Kb, Format("the tiling's Ka %d and Kb %d differ: A's columns must be B's rows", t.Ka, t.Kb));
  need(t.singleCoreM > 0 && t.singleCoreN > 0 && t.singleCoreK > 0,
       Format("singleCoreM %d, singleCoreN %d, singleCoreK %d must be positive", t.singleCoreM, t.singleCoreN,
              t.singleCoreK));
  need(t.baseM > 0 && t.baseN > 0 && t.baseK > 0,
       Format("baseM %d, baseN %d, baseK %d must be positive", t.baseM, t.baseN, t.baseK));
  // The cube unit works on 16 x 16 fractals of 32-byte rows.
  const int k_align = 32 / ab_bytes;
  need(t.baseM % 16 == 0 && t.baseN % 16 == 0 && t.baseK % k_align == 0,
       Format("baseM %d and baseN %d must be multiples of 16 and baseK %d a multiple of %d (32 bytes of the input "
              "type): the cube unit works on 16 x 16 fractals",
              t.baseM, t.baseN, t.baseK, k_align));
  if (!b.mem[kL0A].size) return;  // outside a kernel: no chip to check against
  const int dbA = t.dbL0A > 1 ? 2 : 1, dbB = t.dbL0B > 1 ? 2 : 1, dbC = t.dbL0C > 1 ? 2 : 1;
  const uint64_t l0a = uint64_t(t.baseM) * t.baseK * ab_bytes * dbA;
  const uint64_t l0b = uint64_t(t.baseK) * t.baseN * ab_bytes * dbB;
  const uint64_t l0c = uint64_t(t.baseM) * t.baseN * sizeof(float) * dbC;
  need(l0a <= b.mem[kL0A].size,
       Format("baseM %d x baseK %d of a %d-byte type%s is %llu bytes, more than the L0A buffer of %s (%u bytes)",
              t.baseM, t.baseK, ab_bytes, dbA > 1 ? ", double-buffered (dbL0A 2)," : "",
              static_cast<unsigned long long>(l0a), soc, b.mem[kL0A].size));
  need(l0b <= b.mem[kL0B].size,
       Format("baseK %d x baseN %d of a %d-byte type%s is %llu bytes, more than the L0B buffer of %s (%u bytes)",
              t.baseK, t.baseN, ab_bytes, dbB > 1 ? ", double-buffered (dbL0B 2)," : "",
              static_cast<unsigned long long>(l0b), soc, b.mem[kL0B].size));
  need(l0c <= b.mem[kL0C].size,
       Format("baseM %d x baseN %d float accumulators%s are %llu bytes, more than the L0C buffer of %s (%u bytes)",
              t.baseM, t.baseN, dbC > 1 ? ", double-buffered (dbL0C 2)," : "", static_cast<unsigned long long>(l0c),
              soc, b.mem[kL0C].size));
  // L1 holds depthA1 A blocks and depthB1 B blocks (and the bias row).
  const uint64_t l1 = uint64_t(std::max(t.depthA1, 1)) * t.baseM * t.baseK * ab_bytes +
                      uint64_t(std::max(t.depthB1, 1)) * t.baseK * t.baseN * ab_bytes +
                      (t.isBias ? uint64_t(t.baseN) * sizeof(float) : 0);
  need(l1 <= b.mem[kL1].size,
       Format("depthA1 %d blocks of baseM %d x baseK %d and depthB1 %d blocks of baseK %d x baseN %d (%d-byte type)%s "
              "are %llu bytes, more than the L1 buffer of %s (%u bytes)",
              std::max(t.depthA1, 1), t.baseM, t.baseK, std::max(t.depthB1, 1), t.baseK, t.baseN, ab_bytes,
              t.isBias ? " with the bias row" : "", static_cast<unsigned long long>(l1), soc, b.mem[kL1].size));
}

}  // namespace AscendC::ocimpl

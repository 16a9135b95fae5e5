#include "llm/model/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace oc::llm {

namespace {

constexpr int64_t kBlock = 32;  // inputs per int4 storage block; rows are padded to it

int QMax(int bits) { return bits == 8 ? 127 : 7; }

void PutInt4(uint8_t* row, int64_t i, int v) {
  const int64_t b = i / kBlock, r = i % kBlock;
  uint8_t& byte = row[b * (kBlock / 2) + (r % 16)];
  const uint8_t u = static_cast<uint8_t>(v + 8);
  byte = r < 16 ? static_cast<uint8_t>((byte & 0xf0) | u) : static_cast<uint8_t>((byte & 0x0f) | (u << 4));
}

int GetInt4(const uint8_t* row, int64_t i) {
  const int64_t b = i / kBlock, r = i % kBlock;
  const uint8_t byte = row[b * (kBlock / 2) + (r % 16)];
  return (r < 16 ? (byte & 0x0f) : (byte >> 4)) - 8;
}

// The portable kernel: the contract of QGemvFn, one output at a time.
template <int Bits>
void QGemvScalar(const QGemvArgs& a, int64_t n0, int64_t n1) {
  const QuantizedMatrix& w = *a.w;
  for (int64_t j = n0; j < n1; ++j) {
    const uint8_t* row = w.data.data() + j * w.row_bytes();
    const float* sc = w.scales.data() + j * w.groups;
    for (int64_t i = 0; i < a.m; ++i) {
      const float* x = a.x + i * a.ldx;
      float acc = 0.f;
      for (int64_t g = 0; g < w.groups; ++g) {
        const float s = sc[g];
        const int64_t k1 = std::min(w.kp, (g + 1) * w.group);
        for (int64_t k = g * w.group; k < k1; ++k) {
          const int q = Bits == 8 ? static_cast<int8_t>(row[k]) : GetInt4(row, k);
          acc += x[k] * (static_cast<float>(q) * s);
        }
      }
      quant_detail::Store(a, i, j, acc);
    }
  }
}

constexpr QGemvKernel kScalar{"qgemv_scalar", Isa::kScalar, &QGemvScalar<8>, &QGemvScalar<4>};
#if defined(__x86_64__) || defined(_M_X64)
constexpr QGemvKernel kAvx2{"qgemv_avx2", Isa::kAvx2, &quant_detail::Int8Avx2, &quant_detail::Int4Avx2};
constexpr QGemvKernel kAvx512{"qgemv_avx512", Isa::kAvx512, &quant_detail::Int8Avx512, &quant_detail::Int4Avx512};
#endif

}  // namespace

Expected<QuantizedMatrix> Quantize(const float* w, int64_t n, int64_t k, int bits, int64_t group) {
  if (bits != 8 && bits != 4) return InvalidArgument("quantization to ", bits, " bits is not supported (8 or 4)");
  if (n < 1 || k < 1) return InvalidArgument("cannot quantize a ", n, " x ", k, " matrix");
  if (group < 0 || group % kBlock != 0)
    return InvalidArgument("quantization group size ", group, " is invalid (expected 0 or a positive multiple of 32)");
  QuantizedMatrix q;
  q.bits = bits;
  q.n = n;
  q.k = k;
  q.kp = (k + kBlock - 1) / kBlock * kBlock;
  q.group = group == 0 ? q.kp : group;
  q.groups = (k + q.group - 1) / q.group;
  q.data.assign(static_cast<size_t>(n * q.row_bytes()), bits == 8 ? 0 : 0x88);  // zero weights in the padding
  q.scales.resize(static_cast<size_t>(n * q.groups));
  const float qmax = static_cast<float>(QMax(bits));
  for (int64_t j = 0; j < n; ++j) {
    const float* src = w + j * k;
    uint8_t* row = q.data.data() + j * q.row_bytes();
    for (int64_t g = 0; g < q.groups; ++g) {
      const int64_t i0 = g * q.group, i1 = std::min(k, i0 + q.group);
      float amax = 0.f;
      for (int64_t i = i0; i < i1; ++i) {
        if (!std::isfinite(src[i]))
          return InvalidArgument("row ", j, " has a non-finite weight (", src[i], ") at input ", i,
                                 " (cannot quantize it)");
        amax = std::max(amax, std::fabs(src[i]));
      }
      const float s = amax / qmax;
      q.scales[static_cast<size_t>(j * q.groups + g)] = s;
      for (int64_t i = i0; i < i1; ++i) {
        const int v = s == 0.f ? 0 : static_cast<int>(std::clamp(std::nearbyint(src[i] / s), -qmax, qmax));
        if (bits == 8) row[i] = static_cast<uint8_t>(static_cast<int8_t>(v));
        else PutInt4(row, i, v);
      }
    }
  }
  return q;
}

int QuantizedValue(const QuantizedMatrix& q, int64_t j, int64_t i) {
  const uint8_t* row = q.data.data() + j * q.row_bytes();
  return q.bits == 8 ? static_cast<int8_t>(row[i]) : GetInt4(row, i);
}

void DequantizeRows(const QuantizedMatrix& q, int64_t n0, int64_t n1, float* dst) {
  for (int64_t j = n0; j < n1; ++j, dst += q.k) {
    const uint8_t* row = q.data.data() + j * q.row_bytes();
    const float* sc = q.scales.data() + j * q.groups;
    if (q.bits == 8) {
      for (int64_t i = 0; i < q.k; ++i) dst[i] = static_cast<float>(static_cast<int8_t>(row[i])) * sc[i / q.group];
    } else {
      for (int64_t i = 0; i < q.k; ++i) dst[i] = static_cast<float>(GetInt4(row, i)) * sc[i / q.group];
    }
  }
}

const QGemvKernel* QGemvKernelForIsa(Isa isa) {
  if (isa == Isa::kScalar) return &kScalar;
#if defined(__x86_64__) || defined(_M_X64)
  const CpuFeatures& f = GetCpuFeatures();
  if (isa == Isa::kAvx2 && f.avx2 && f.fma) return &kAvx2;
  if (isa == Isa::kAvx512 && f.avx512f && f.avx512bw && f.avx512vl && f.fma) return &kAvx512;
#endif
  return nullptr;
}

const QGemvKernel& DefaultQGemvKernel() {
  static const QGemvKernel* k = [] {
    const Isa sel = SelectedIsa();
    for (Isa isa : {Isa::kAvx512, Isa::kAvx2}) {
      if (static_cast<int>(isa) > static_cast<int>(sel) || sel == Isa::kNeon) continue;
      if (const QGemvKernel* q = QGemvKernelForIsa(isa)) return q;
    }
    return &kScalar;
  }();
  return *k;
}

int64_t QuantGemm::ChunkRows(int64_t k) {
  // About 4 MiB of float32 per chunk: large enough for sgemm's blocking, small enough for L3.
  const int64_t rows = (int64_t{1} << 20) / std::max<int64_t>(k, 1);
  return std::max<int64_t>(64, rows / 64 * 64);
}

void QuantGemm::Run(const QGemvKernel& kern, QGemvArgs a, ThreadPool* pool, const gemm::SgemmPlan& plan,
                    void* scratch, std::vector<float>& pad, std::vector<float>& deq) {
  const QuantizedMatrix& w = *a.w;
  if (a.m <= 0) return;
  if (a.m <= kQGemvMaxRows) {
    if (w.k != w.kp) {
      pad.assign(static_cast<size_t>(a.m * w.kp), 0.f);
      for (int64_t i = 0; i < a.m; ++i)
        std::memcpy(&pad[static_cast<size_t>(i * w.kp)], a.x + i * a.ldx, static_cast<size_t>(w.k) * 4);
      a.x = pad.data();
      a.ldx = w.kp;
    }
    const QGemvFn fn = w.bits == 8 ? kern.int8 : kern.int4;
    constexpr int64_t kUnit = 16;  // output channels per work unit
    const int64_t units = (w.n + kUnit - 1) / kUnit;
    // A chunk worth a thread: ~64 KiB of weights.
    const int64_t grain = std::max<int64_t>(1, (int64_t{64} << 10) / std::max<int64_t>(1, kUnit * w.row_bytes()));
    auto body = [&](int64_t u0, int64_t u1) { fn(a, u0 * kUnit, std::min(w.n, u1 * kUnit)); };
    if (pool) pool->ParallelFor(units, grain, std::move(body));
    else body(0, units);
    return;
  }
  const int64_t chunk = std::min(ChunkRows(w.k), w.n);
  deq.resize(static_cast<size_t>(chunk * w.k));
  for (int64_t n0 = 0; n0 < w.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, w.n - n0);
    auto body = [&](int64_t r0, int64_t r1) {
      DequantizeRows(w, n0 + r0, n0 + r1, deq.data() + r0 * w.k);
    };
    if (pool) pool->ParallelFor(nc, 16, std::move(body));
    else body(0, nc);
    gemm::SgemmArgs g;
    g.m = a.m;
    g.n = nc;
    g.k = w.k;
    g.a = a.x;
    g.lda = a.ldx;
    g.b = deq.data();
    g.ldb = w.k;
    g.trans_b = true;
    g.c = a.y + n0;
    g.ldc = a.ldy;
    if (a.bias) {
      g.epilogue.bias_kind = gemm::Epilogue::Bias::kPerCol;
      g.epilogue.bias = a.bias + n0;
    }
    if (a.residual) {
      g.epilogue.residual = a.residual + n0;
      g.epilogue.ldr = a.ldr;
    }
    plan.Run(g, pool, scratch);
  }
}

}  // namespace oc::llm

// Weight-only int8 / int4 matrices and their GEMM (y = x W^T with float32
// activations, W dequantized on the fly).
//
// Scheme (symmetric, per output channel and group of inputs):
//   W is [n outputs, k inputs]. Row j is cut into groups of `group` inputs
//   (a multiple of 32; the last group of a row may be shorter when k is not a
//   multiple of it; group == 0 asks for one group per row). For each group
//     s = max|w| / Q (float32; Q = 127 for int8, 7 for int4),
//     q = round-to-nearest-even(w / s) clamped to [-Q, Q] (q = 0 when s = 0),
//   and the weight the GEMM uses is float32(q * s).
// Storage: each row padded with zero weights to kp = k rounded up to 32.
//   int8: one signed byte per weight, row j at data[j * kp].
//   int4: 16 bytes per 32 inputs, row j at data[j * kp / 2]; byte i of the
//         block starting at input b holds q[b + i] + 8 in its low nibble and
//         q[b + 16 + i] + 8 in its high nibble (i < 16).
//   scales: [n, groups] float32.
//
// Kernels (QGemvKernel): for decode-shaped products (few rows of x), each
// output channel's weights are read once per call and dequantized in
// registers (AVX-512 16 and AVX2 8 inputs at a time, or scalar), shared by a
// tile of up to 4 rows of x (AVX-512 int8 and AVX2: 2) and 4 output channels;
// picked at run time from the CPU (and OPENCANN_ISA). QuantGemm::Run uses them for m <= kQGemvMaxRows and
// otherwise dequantizes a few hundred output channels at a time into float32
// and runs the project's sgemm on them.
#pragma once

#include <cstdint>
#include <vector>

#include "base/cpu_features.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "ops/cpu/gemm/gemm_kernel.h"

namespace oc::llm {

struct QuantizedMatrix {
  int bits = 8;           // 8 or 4
  int64_t n = 0, k = 0;   // outputs, inputs
  int64_t kp = 0;         // k rounded up to 32
  int64_t group = 0;      // inputs per scale (a multiple of 32)
  int64_t groups = 0;     // scales per row: ceil(k / group)
  std::vector<uint8_t> data;
  std::vector<float> scales;  // [n, groups]

  int64_t row_bytes() const { return bits == 8 ? kp : kp / 2; }
  int64_t bytes() const {
    return static_cast<int64_t>(data.size()) + static_cast<int64_t>(scales.size()) * 4;
  }
};

// Quantizes row-major w [n, k] (ld k). bits 8 or 4; group 0 (one per row) or
// a positive multiple of 32, else InvalidArgument.
Expected<QuantizedMatrix> Quantize(const float* w, int64_t n, int64_t k, int bits, int64_t group);
// The integer value of weight (j, i) (tests, reference).
int QuantizedValue(const QuantizedMatrix& q, int64_t j, int64_t i);
// Rows [n0, n1) dequantized into dst [(n1 - n0), k] (ld k): float32(q * s).
void DequantizeRows(const QuantizedMatrix& q, int64_t n0, int64_t n1, float* dst);

// One product y[i, j] = sum_i' x[i, i'] * W(j, i') (+ bias[j]) (+ residual[i, j])
// for i < m and output channels j in [n0, n1).
struct QGemvArgs {
  const QuantizedMatrix* w = nullptr;
  const float* x = nullptr;  // m rows, ld ldx, each readable up to w->kp with zeros past w->k
  int64_t ldx = 0;
  int64_t m = 0;
  float* y = nullptr;
  int64_t ldy = 0;
  const float* bias = nullptr;      // w->n values or null
  const float* residual = nullptr;  // may equal y (then ldr == ldy)
  int64_t ldr = 0;
};
using QGemvFn = void (*)(const QGemvArgs& a, int64_t n0, int64_t n1);

struct QGemvKernel {
  const char* name;  // qgemv_<isa>
  Isa isa;
  QGemvFn int8;
  QGemvFn int4;
};

// The kernel for `isa`, or nullptr when this build or CPU lacks it.
const QGemvKernel* QGemvKernelForIsa(Isa isa);
// The best for this CPU, capped by OPENCANN_ISA (SelectedIsa()).
const QGemvKernel& DefaultQGemvKernel();

inline constexpr int64_t kQGemvMaxRows = 16;

// The whole product over a thread pool. Rows of x need not be padded: when
// k is not a multiple of 32 they are copied into `pad` first. For m >
// kQGemvMaxRows, output channels are dequantized in chunks into `deq` and
// multiplied by `plan` (an SgemmPlan covering m x chunk x k; scratch its
// ScratchBytes()).
class QuantGemm {
 public:
  // Output channels dequantized per sgemm call (a multiple of 64, >= 64).
  static int64_t ChunkRows(int64_t k);
  static void Run(const QGemvKernel& kern, QGemvArgs a, ThreadPool* pool, const gemm::SgemmPlan& plan,
                  void* scratch, std::vector<float>& pad, std::vector<float>& deq);
};

namespace quant_detail {
// Per-ISA entry points (quant_gemv_avx2.cc / quant_gemv_avx512.cc); only
// called after the CPU check.
void Int8Avx2(const QGemvArgs& a, int64_t n0, int64_t n1);
void Int4Avx2(const QGemvArgs& a, int64_t n0, int64_t n1);
void Int8Avx512(const QGemvArgs& a, int64_t n0, int64_t n1);
void Int4Avx512(const QGemvArgs& a, int64_t n0, int64_t n1);
// y[i, j] = dot (+ bias) (+ residual): the store every kernel shares.
inline void Store(const QGemvArgs& a, int64_t i, int64_t j, float dot) {
  if (a.bias) dot += a.bias[j];
  if (a.residual) dot += a.residual[i * a.ldr + j];
  a.y[i * a.ldy + j] = dot;
}
}  // namespace quant_detail

}  // namespace oc::llm

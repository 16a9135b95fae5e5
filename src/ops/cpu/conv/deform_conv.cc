// DeformConv (opset 19), 2-D, float32 / float64.
//
// Deformable im2col followed by a grouped product: for one batch item, every
// (input channel, kernel tap) row of the column matrix holds the input sampled
// bilinearly (zero outside the map) at the tap's shifted position plus its
// learned offset, times the optional modulation mask. The column matrix lives
// in the per-run scratch; rows are filled in parallel, then each group's
// product W_g (C_out/group x C_in/group*kH*kW) x columns runs on the GEMM
// library (float32; a plain loop over output channels for float64).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct DcParams {
  int64_t batch = 0, in_c = 0, h = 0, w = 0;
  int64_t out_c = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  int64_t group = 1, offset_group = 1;
  bool has_bias = false, has_mask = false;
};

Expected<DcParams> ResolveDeformConv(const Node& node) {
  const Value& x = *node.input(0);
  const Value& w = *node.input(1);
  if (x.shape.size() != 4 || w.shape.size() != 4)
    return NotSupported(node.Describe(), ": only 2-D deformable convolution (4-D X and W) is supported, got X ",
                        x.ShapeString(), " and W ", w.ShapeString());
  DcParams p;
  p.batch = x.shape[0];
  p.in_c = x.shape[1];
  p.h = x.shape[2];
  p.w = x.shape[3];
  p.out_c = w.shape[0];
  std::vector<int64_t> k = node.GetInts("kernel_shape", {w.shape[2], w.shape[3]});
  std::vector<int64_t> s = node.GetInts("strides", {1, 1});
  std::vector<int64_t> d = node.GetInts("dilations", {1, 1});
  std::vector<int64_t> pads = node.GetInts("pads", {0, 0, 0, 0});
  if (k.size() != 2 || s.size() != 2 || d.size() != 2 || pads.size() != 4)
    return InvalidArgument(node.Describe(), ": kernel_shape, strides and dilations need 2 values and pads 4");
  if (k[0] != w.shape[2] || k[1] != w.shape[3])
    return InvalidArgument(node.Describe(), ": kernel_shape does not match W ", w.ShapeString());
  p.kh = k[0];
  p.kw = k[1];
  p.sh = s[0];
  p.sw = s[1];
  p.dh = d[0];
  p.dw = d[1];
  p.ph = pads[0];
  p.pw = pads[1];
  if (p.sh < 1 || p.sw < 1 || p.dh < 1 || p.dw < 1)
    return InvalidArgument(node.Describe(), ": strides and dilations must be >= 1");
  p.group = node.GetInt("group", 1);
  p.offset_group = node.GetInt("offset_group", 1);
  if (p.group < 1 || p.offset_group < 1)
    return InvalidArgument(node.Describe(), ": group and offset_group must be >= 1");
  if (p.in_c >= 0 && (p.in_c != w.shape[1] * p.group || p.out_c % p.group != 0))
    return InvalidArgument(node.Describe(), ": X has ", p.in_c, " channels and W ", w.ShapeString(),
                           ", inconsistent with group=", p.group);
  if (p.in_c >= 0 && p.in_c % p.offset_group != 0)
    return InvalidArgument(node.Describe(), ": ", p.in_c, " input channels do not split into offset_group=",
                           p.offset_group);
  auto out_len = [](int64_t in, int64_t pad_sum, int64_t kern, int64_t dil, int64_t str) -> int64_t {
    if (in < 0) return -1;
    return (in + pad_sum - ((kern - 1) * dil + 1)) / str + 1;
  };
  p.oh = out_len(p.h, pads[0] + pads[2], p.kh, p.dh, p.sh);
  p.ow = out_len(p.w, pads[1] + pads[3], p.kw, p.dw, p.sw);
  p.has_bias = node.input(3) != nullptr;
  p.has_mask = node.input(4) != nullptr;
  return p;
}

Status InferDeformConv(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  OC_ASSIGN_OR_RETURN(DcParams p, ResolveDeformConv(node));
  const Value& off = *node.input(2);
  int64_t oh = p.oh, ow = p.ow;
  if (off.shape.size() == 4) {
    if (oh < 0) oh = off.shape[2];
    if (ow < 0) ow = off.shape[3];
  }
  SetOutput(node, 0, node.input(0)->dtype, {p.batch, p.out_c, oh, ow});
  return Status::Ok();
}

template <typename T>
class DeformConvKernel final : public Kernel {
 public:
  DeformConvKernel(DcParams p, int max_threads) : p_(p) {
    if constexpr (std::is_same_v<T, float>)
      plan_ = gemm::SgemmPlan(gemm::DefaultUkernel(), p_.out_c / p_.group, p_.oh * p_.ow,
                              p_.in_c / p_.group * p_.kh * p_.kw, max_threads);
  }

  size_t ScratchBytes() const override {
    size_t gemm = 0;
    if constexpr (std::is_same_v<T, float>) gemm = plan_.ScratchBytes();
    return ColsBytes() + gemm;
  }

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* wt = io.in<T>(1);
    const T* offset = io.in<T>(2);
    const T* bias = p_.has_bias ? io.in<T>(3) : nullptr;
    const T* mask = p_.has_mask ? io.in<T>(4) : nullptr;
    T* y = io.out<T>(0);
    T* cols = static_cast<T*>(io.scratch);
    void* gemm_scratch = static_cast<uint8_t*>(io.scratch) + ColsBytes();
    const int64_t taps = p_.kh * p_.kw, positions = p_.oh * p_.ow;
    const int64_t ch_per_og = p_.in_c / p_.offset_group;
    const int64_t cin_g = p_.in_c / p_.group, cout_g = p_.out_c / p_.group;
    const int64_t krows = cin_g * taps;  // reduction length per group
    for (int64_t n = 0; n < p_.batch; ++n) {
      const T* off_n = offset + n * p_.offset_group * taps * 2 * positions;
      const T* mask_n = mask ? mask + n * p_.offset_group * taps * positions : nullptr;
      io.pool->ParallelFor(Rows(), std::max<int64_t>(1, 4096 / std::max<int64_t>(1, positions)), [&](int64_t b,
                                                                                                      int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          const int64_t c = row / taps, tap = row % taps;
          const int64_t i = tap / p_.kw, j = tap % p_.kw;
          const int64_t og = c / ch_per_og;
          const T* xc = x + (n * p_.in_c + c) * p_.h * p_.w;
          const T* oy = off_n + ((og * taps + tap) * 2) * positions;
          const T* ox = oy + positions;
          const T* m = mask_n ? mask_n + (og * taps + tap) * positions : nullptr;
          T* col = cols + row * positions;
          for (int64_t py = 0; py < p_.oh; ++py)
            for (int64_t px = 0; px < p_.ow; ++px) {
              const int64_t pos = py * p_.ow + px;
              T yy = static_cast<T>(py * p_.sh - p_.ph + i * p_.dh) + oy[pos];
              T xx = static_cast<T>(px * p_.sw - p_.pw + j * p_.dw) + ox[pos];
              T v = Sample(xc, yy, xx);
              col[pos] = m ? v * m[pos] : v;
            }
        }
      });
      T* y_n = y + n * p_.out_c * positions;
      if constexpr (std::is_same_v<T, float>) {
        for (int64_t g = 0; g < p_.group; ++g) {
          gemm::SgemmArgs a;
          a.m = cout_g;
          a.n = positions;
          a.k = krows;
          a.a = wt + g * cout_g * krows;
          a.lda = krows;
          a.b = cols + g * krows * positions;
          a.ldb = positions;
          a.c = y_n + g * cout_g * positions;
          a.ldc = positions;
          if (bias) {
            a.epilogue.bias_kind = gemm::Epilogue::Bias::kPerRow;
            a.epilogue.bias = bias + g * cout_g;
          }
          plan_.Run(a, io.pool, gemm_scratch);
        }
        continue;
      }
      io.pool->ParallelFor(p_.out_c, 1, [&](int64_t b, int64_t e) {
        for (int64_t oc = b; oc < e; ++oc) {
          const int64_t g = oc / cout_g;
          T* yo = y_n + oc * positions;
          std::fill(yo, yo + positions, bias ? bias[oc] : T(0));
          const T* wo = wt + oc * krows;
          const T* cg = cols + g * krows * positions;
          for (int64_t k = 0; k < krows; ++k) {
            const T wk = wo[k];
            const T* ck = cg + k * positions;
            for (int64_t q = 0; q < positions; ++q) yo[q] += wk * ck[q];
          }
        }
      });
    }
    return Status::Ok();
  }

 private:
  int64_t Rows() const { return p_.in_c * p_.kh * p_.kw; }
  size_t ColsBytes() const { return (static_cast<size_t>(Rows() * p_.oh * p_.ow) * sizeof(T) + 63) / 64 * 64; }

  // Bilinear sample with zeros outside the map.
  T Sample(const T* xc, T yy, T xx) const {
    if (!(yy > T(-1) && yy < static_cast<T>(p_.h) && xx > T(-1) && xx < static_cast<T>(p_.w))) return T(0);
    const T fy = std::floor(yy), fx = std::floor(xx);
    const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
    const T ty = yy - fy, tx = xx - fx;
    auto at = [&](int64_t r, int64_t c) -> T {
      return (r >= 0 && r < p_.h && c >= 0 && c < p_.w) ? xc[r * p_.w + c] : T(0);
    };
    return (T(1) - ty) * ((T(1) - tx) * at(y0, x0) + tx * at(y0, x0 + 1)) +
           ty * ((T(1) - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1));
  }

  DcParams p_;
  gemm::SgemmPlan plan_;  // float32 only
};

Expected<KernelPtr> MakeDeformConv(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(DcParams p, ResolveDeformConv(n));
  const int64_t taps = p.kh * p.kw;
  const Value& off = *n.input(2);
  const std::vector<int64_t> want_off = {p.batch, p.offset_group * taps * 2, p.oh, p.ow};
  if (off.shape != want_off)
    return InvalidArgument(n.Describe(), ": offset has shape ", off.ShapeString(), ", expected [", want_off[0], ",",
                           want_off[1], ",", want_off[2], ",", want_off[3], "]");
  if (p.has_bias && n.input(3)->NumElements() != p.out_c)
    return InvalidArgument(n.Describe(), ": B has ", n.input(3)->NumElements(), " values, expected ", p.out_c);
  if (p.has_mask && n.input(4)->NumElements() != p.batch * p.offset_group * taps * p.oh * p.ow)
    return InvalidArgument(n.Describe(), ": mask has shape ", n.input(4)->ShapeString(), ", expected [", p.batch, ",",
                           p.offset_group * taps, ",", p.oh, ",", p.ow, "]");
  const DataType t = n.input(0)->dtype;
  for (size_t i = 1; i < 5; ++i)
    if (n.input(i) && n.input(i)->dtype != t)
      return InvalidArgument(n.Describe(), ": input ", i, " has dtype ", DataTypeName(n.input(i)->dtype),
                             ", expected ", DataTypeName(t), " like X");
  const int threads = std::max(1, init.max_threads);
  if (t == DataType::kFloat32) return KernelPtr(new DeformConvKernel<float>(p, threads));
  if (t == DataType::kFloat64) return KernelPtr(new DeformConvKernel<double>(p, threads));
  return NotSupported(n.Describe(), ": dtype ", DataTypeName(t), " is not supported (float32 and float64 only)");
}

}  // namespace

void RegisterDeformConvOps(OpRegistry& r) {
  r.Register({.op_type = "DeformConv", .min_opset = 19, .infer = InferDeformConv, .kernels = CpuKernel(MakeDeformConv)});
}

}  // namespace oc

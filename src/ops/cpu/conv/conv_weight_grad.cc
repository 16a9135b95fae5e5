// ConvWeightGrad (com.opencann): the weight gradient of Y = Conv(X, W),
//   dW[m, c, k] = sum over n, o of dY[n, m, o] * X[n, c, o * stride + k * dilation - pad],
// for the Conv geometry given by the attributes (kernel_shape, strides, pads,
// dilations, group; no auto_pad: the gradient rule resolves the pads). Inputs
// X [N, C, D...] and dY [N, M, O...]; output dW [M, C/group, k...].
//
// Per image and group it is one GEMM: dW_g [M/g, C/g * K] += dY_g [M/g, O] x
// im2col(X_g)^T, with im2col(X_g) [C/g * K, O] built in the kernel's scratch
// (the same row order as Conv's: channel, then the taps). The gradient rule of
// Conv and of ConvTranspose (conv_grad.cc) emit it.
#include <algorithm>
#include <cstring>

#include "ops/cpu/conv/conv_common.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

std::vector<int64_t> WeightShape(const Node& n, const Value& x, const Value& dy) {
  std::vector<int64_t> k = n.GetInts("kernel_shape");
  const int64_t group = n.GetInt("group", 1);
  std::vector<int64_t> w = {dy.shape[1], group > 0 ? x.shape[1] / group : -1};
  w.insert(w.end(), k.begin(), k.end());
  return w;
}

Status InferConvWeightGrad(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& dy = *node.input(1);
  if (x.dtype != DataType::kFloat32 || dy.dtype != DataType::kFloat32)
    return NotSupported(node.Describe(), ": element type ", DataTypeName(x.dtype), " (supported: float32)");
  if (!x.has_shape || !dy.has_shape) return Status::Ok();
  const std::vector<int64_t> k = node.GetInts("kernel_shape");
  if (x.shape.size() < 3 || x.shape.size() != dy.shape.size() || k.size() != x.shape.size() - 2)
    return InvalidArgument(node.Describe(), ": X ", x.ShapeString(), ", dY ", dy.ShapeString(), " and kernel_shape of ",
                           k.size(), " dims do not match");
  if (node.HasAttr("auto_pad")) return InvalidArgument(node.Describe(), ": takes explicit pads, not auto_pad");
  Value* out = node.output(0);
  out->dtype = DataType::kFloat32;
  out->has_shape = true;
  out->shape = WeightShape(node, x, dy);
  out->dim_params.assign(out->shape.size(), "");
  return Status::Ok();
}

class ConvWeightGradKernel final : public Kernel {
 public:
  ConvWeightGradKernel(ConvGeometry g, int max_threads) : g_(g) {
    cg_ = g_.c_in / g_.group;
    mg_ = g_.c_out / g_.group;
    rows_ = cg_ * g_.KernelSize();
    uk_ = &gemm::DefaultUkernel();
    plan_ = gemm::SgemmPlan(*uk_, mg_, rows_, g_.OutSize(), max_threads);
    col_floats_ = (rows_ * g_.OutSize() + 15) / 16 * 16;
  }

  size_t ScratchBytes() const override { return plan_.ScratchBytes() + static_cast<size_t>(col_floats_) * 4; }

  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    const float* dy = io.in<float>(1);
    float* dw = io.out<float>(0);
    std::vector<float> own;
    uint8_t* scratch = static_cast<uint8_t*>(io.scratch);
    if (!scratch) {
      own.resize(ScratchBytes() / 4 + 16);
      scratch = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(own.data()) + 63) & ~uintptr_t{63});
    }
    float* col = reinterpret_cast<float*>(scratch + plan_.ScratchBytes());
    const int64_t in_size = g_.InSize(), out_size = g_.OutSize();
    for (int64_t n = 0; n < g_.batch; ++n)
      for (int64_t gr = 0; gr < g_.group; ++gr) {
        Im2Col(x + (n * g_.c_in + gr * cg_) * in_size, col, io.pool);
        gemm::SgemmArgs a;
        a.m = mg_;
        a.n = rows_;
        a.k = out_size;
        a.a = dy + (n * g_.c_out + gr * mg_) * out_size;
        a.lda = out_size;
        a.b = col;
        a.ldb = out_size;
        a.trans_b = true;
        a.c = dw + gr * mg_ * rows_;
        a.ldc = rows_;
        a.beta = n == 0 ? 0.f : 1.f;
        plan_.Run(a, io.pool, scratch);
      }
    if (g_.batch == 0) std::memset(dw, 0, static_cast<size_t>(g_.c_out * rows_) * sizeof(float));
    return Status::Ok();
  }

 private:
  // col[(c, kd, kh, kw), (od, oh, ow)] of one image group; zero where the tap falls in the padding.
  void Im2Col(const float* x, float* col, ThreadPool* pool) const {
    const ConvGeometry& g = g_;
    const int64_t kernel = g.KernelSize(), out = g.OutSize();
    pool->ParallelFor(rows_, 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r / kernel, t = r % kernel;
        const int64_t kd = t / (g.kernel[1] * g.kernel[2]), kh = t / g.kernel[2] % g.kernel[1], kw = t % g.kernel[2];
        const float* xc = x + c * g.InSize();
        float* dst = col + r * out;
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const int64_t id = od * g.stride[0] + kd * g.dilation[0] - g.pad_begin[0];
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            float* row = dst + (od * g.out[1] + oh) * g.out[2];
            const int64_t ih = oh * g.stride[1] + kh * g.dilation[1] - g.pad_begin[1];
            if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
              std::fill(row, row + g.out[2], 0.f);
              continue;
            }
            const float* src = xc + (id * g.in[1] + ih) * g.in[2];
            const int64_t off = kw * g.dilation[2] - g.pad_begin[2], s = g.stride[2];
            // ow in [lo, hi) reads inside the row.
            const int64_t lo = off >= 0 ? 0 : std::min<int64_t>(g.out[2], (-off + s - 1) / s);
            const int64_t hi = std::max<int64_t>(lo, std::min<int64_t>(g.out[2], (g.in[2] - off + s - 1) / s));
            std::fill(row, row + lo, 0.f);
            if (s == 1) {
              std::memcpy(row + lo, src + lo + off, static_cast<size_t>(hi - lo) * sizeof(float));
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow * s + off];
            }
            std::fill(row + hi, row + g.out[2], 0.f);
          }
        }
      }
    });
  }

  ConvGeometry g_;
  int64_t cg_ = 0, mg_ = 0, rows_ = 0, col_floats_ = 0;
  const gemm::GemmUkernel* uk_ = nullptr;
  gemm::SgemmPlan plan_;
};

Expected<KernelPtr> MakeConvWeightGrad(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  const Value& dy = *n.input(1);
  OC_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConv(n, x.shape, WeightShape(n, x, dy)));
  std::vector<int64_t> expect = g.OutputShape();
  if (expect != dy.shape)
    return InvalidArgument(n.Describe(), ": dY is ", dy.ShapeString(), " but the convolution of X ", x.ShapeString(),
                           " gives ", ShapeToString(expect));
  return KernelPtr(new ConvWeightGradKernel(g, init.max_threads));
}

}  // namespace

void RegisterConvWeightGradOps(OpRegistry& r) {
  r.Register({.domain = kOpenCannDomain, .op_type = "ConvWeightGrad", .infer = InferConvWeightGrad,
              .kernels = CpuKernel(MakeConvWeightGrad)});
}

}  // namespace oc

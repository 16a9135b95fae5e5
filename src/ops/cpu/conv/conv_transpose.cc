// ConvTranspose (opsets 1..), float32, 1..3 spatial dims: per image and group,
// col = W_g^T * X_g (a GEMM with K = C_in/group over the input positions,
// tiled when large), then col2im scatter-adds col into Y, which starts as the
// bias. Constant weights are packed once (transposed) into GEMM A panels.
#include <algorithm>
#include <mutex>

#include "ops/cpu/conv/grads.h"
#include "ops/cpu/conv/conv_common.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int64_t kMaxColFloats = int64_t{2} << 20;

Status InferConvTranspose(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& w = *node.input(1);
  if (x.dtype != w.dtype)
    return InvalidArgument(node.Describe(), ": X is ", DataTypeName(x.dtype), " but W is ",
                           DataTypeName(w.dtype));
  OC_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConvTranspose(node, x.shape, w.shape));
  if (const Value* b = node.input(2); b && b->has_shape) {
    if (b->shape.size() != 1 || (b->shape[0] >= 0 && g.c_out >= 0 && b->shape[0] != g.c_out))
      return InvalidArgument(node.Describe(), ": bias B must be 1-D with ", g.c_out, " values, got ",
                             b->ShapeString());
  }
  SetOutput(node, 0, x.dtype, g.OutputShape());
  return Status::Ok();
}

class ConvTransposeKernel final : public Kernel {
 public:
  Status Init(const KernelInit& init) {
    const Node& n = init.node;
    const Value& x = *n.input(0);
    const Value& w = *n.input(1);
    if (x.dtype != DataType::kFloat32)
      return NotSupported(n.Describe(), ": only float32 is implemented, got ", DataTypeName(x.dtype));
    OC_ASSIGN_OR_RETURN(g_, ResolveConvTranspose(n, x.shape, w.shape));
    cg_ = g_.c_in / g_.group;
    mg_ = g_.c_out / g_.group;
    rows_ = mg_ * g_.KernelSize();
    const int64_t in_size = g_.InSize();
    uk_ = &gemm::DefaultUkernel();
    tile_ = in_size;
    if (rows_ * in_size > kMaxColFloats)
      tile_ = std::min(in_size, std::max<int64_t>(uk_->nr, kMaxColFloats / rows_ / uk_->nr * uk_->nr));
    col_floats_ = (rows_ * tile_ + 15) / 16 * 16;
    plan_ = gemm::SgemmPlan(*uk_, rows_, tile_, cg_, init.max_threads);
    if (w.constant) {
      // Weights a .om stored only as these panels (PrepackedInputs) have no raw
      // data: rebuilt from them when they were packed for another micro-kernel.
      std::vector<float> rebuilt;
      auto src = gemm::RawOrUnpacked(w.constant->as<float>(), init.prepacked, uk_, true, gemm::PackedSide::kA, rows_,
                                     cg_, g_.group, rows_, true, cg_ * rows_, w.NumElements(), rebuilt);
      if (!src.ok())
        return src.status().WithContext(n.Describe() + ": weights '" + w.name + "' (stored only as prepacked panels)");
      packed_w_ = gemm::PackedOperand::Make(*uk_, gemm::PackedSide::kA, *src, rows_, true, rows_, cg_, init.prepacked,
                                            g_.group, cg_ * rows_);
      if (packed_w_.empty()) return Internal(n.Describe(), ": weights could not be packed");
    }
    return Status::Ok();
  }

  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    const float* w = io.in<float>(1);
    const float* bias = io.num_inputs > 2 ? io.in<float>(2) : nullptr;
    float* y = io.out<float>(0);
    if (io.scratch) {
      RunWith(x, w, bias, y, io.pool, static_cast<float*>(io.scratch));
    } else {  // a caller without per-run scratch: the kernel's own, one run at a time
      std::lock_guard<std::mutex> lock(mu_);
      if (own_scratch_.empty()) own_scratch_.assign(ScratchBytes() / sizeof(float) + 16, 0.f);
      float* s = own_scratch_.data();
      s += (64 - reinterpret_cast<uintptr_t>(s) % 64) % 64 / sizeof(float);
      RunWith(x, w, bias, y, io.pool, s);
    }
    return Status::Ok();
  }

  // Scratch: the GEMM's packing buffers, then the column tile.
  size_t ScratchBytes() const override {
    return plan_.ScratchBytes() + static_cast<size_t>(col_floats_) * sizeof(float);
  }

  std::vector<uint8_t> ExportPrepacked() const override { return packed_w_.Export(); }
  // fp32 panels are a permutation of W: a .om may keep only them.
  std::vector<int> PrepackedInputs() const override {
    if (!packed_w_.empty()) return {1};
    return {};
  }

 private:
  void RunWith(const float* x, const float* w, const float* bias, float* y, ThreadPool* pool, float* scratch) const {
    float* col_data = scratch + plan_.ScratchBytes() / sizeof(float);
    const int64_t in_size = g_.InSize(), out_size = g_.OutSize();
    for (int64_t b = 0; b < g_.batch; ++b) {
      for (int64_t c = 0; c < g_.c_out; ++c) {
        float* yc = y + (b * g_.c_out + c) * out_size;
        std::fill(yc, yc + out_size, bias ? bias[c] : 0.f);
      }
      for (int64_t gi = 0; gi < g_.group; ++gi) {
        const float* xg = x + (b * g_.c_in + gi * cg_) * in_size;
        float* yg = y + (b * g_.c_out + gi * mg_) * out_size;
        for (int64_t p0 = 0; p0 < in_size; p0 += tile_) {
          const int64_t np = std::min(tile_, in_size - p0);
          gemm::SgemmArgs args;
          args.m = rows_, args.n = np, args.k = cg_;
          if (!packed_w_.empty()) args.packed_a = packed_w_.group(gi);
          else args.a = w + gi * cg_ * rows_, args.lda = rows_, args.trans_a = true;
          args.b = xg + p0, args.ldb = in_size;
          args.c = col_data, args.ldc = np;
          plan_.Run(args, pool, scratch);
          const float* col = col_data;
          pool->ParallelFor(mg_, 1, [&](int64_t c0, int64_t c1) {
            Col2ImAdd(g_, col, np, p0, np, yg, c0, c1);
          });
        }
      }
    }
  }

  ConvGeometry g_;
  int64_t cg_ = 0, mg_ = 0, rows_ = 0, tile_ = 0;
  const gemm::GemmUkernel* uk_ = nullptr;
  gemm::SgemmPlan plan_;
  gemm::PackedOperand packed_w_;
  int64_t col_floats_ = 0;
  std::vector<float> own_scratch_;
  std::mutex mu_;
};

Expected<KernelPtr> MakeConvTranspose(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  auto k = std::make_unique<ConvTransposeKernel>();
  OC_RETURN_IF_ERROR(k->Init(init));
  return KernelPtr(std::move(k));
}

}  // namespace

void RegisterConvTransposeOps(OpRegistry& r) {
  r.Register({.op_type = "ConvTranspose", .infer = InferConvTranspose, .kernels = CpuKernel(MakeConvTranspose),
              .grad = conv::GradConvTranspose});
}

}  // namespace oc

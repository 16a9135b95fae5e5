// Conv (opsets 1..) and com.opencann::FusedConv (Conv + bias + residual Z +
// activation, contract in activation.h), float32, NCHW with 1..3 spatial dims.
// Three paths, chosen in the factory:
//   depthwise (C/group == 1, <= 2 spatial dims): a direct loop per channel;
//   1x1, stride 1, no pads: Y_g = W_g * X_g, a GEMM straight on the input;
//   general: Y_g = W_g * im2col(X_g), where the GEMM packs its B panels
//            straight from X (PackIm2ColPanels), so the im2col matrix is never
//            materialised: its only workspace is the GEMM's per-thread
//            packing buffer, sized in the factory.
//   Winograd F(4x4,3x3) (conv_winograd.h) for the 3x3 stride-1 shapes where
//            it measured faster (WinogradPreferred; OPENCANN_WINOGRAD=0: never).
// Constant weights are packed once into GEMM A panels (per group) and exported.
#include <algorithm>
#include <cstring>
#include <memory>

#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/conv/conv_common.h"
#include "ops/cpu/conv/grads.h"
#include "ops/cpu/conv/conv_winograd.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct Im2ColSource {
  const ConvGeometry* g;
  const float* x;      // first input channel of the group
  int64_t n_off = 0;   // output position of the GEMM's column 0 (a thread's share)
};

void PackConvB(const void* ctx, const gemm::GemmUkernel& uk, int64_t k0, int64_t kc, int64_t n0, int64_t nc,
               float* dst) {
  const auto* src = static_cast<const Im2ColSource*>(ctx);
  PackIm2ColPanels(*src->g, src->x, uk.nr, k0, kc, n0 + src->n_off, nc, dst);
}

Status InferConv(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& w = *node.input(1);
  if (x.dtype != w.dtype)
    return InvalidArgument(node.Describe(), ": X is ", DataTypeName(x.dtype), " but W is ",
                           DataTypeName(w.dtype));
  OC_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConv(node, x.shape, w.shape));
  if (const Value* b = node.input(2); b && b->has_shape) {
    if (b->shape.size() != 1 || (b->shape[0] >= 0 && g.c_out >= 0 && b->shape[0] != g.c_out))
      return InvalidArgument(node.Describe(), ": bias B must be 1-D with ", g.c_out, " values, got ",
                             b->ShapeString());
  }
  std::vector<int64_t> out = g.OutputShape();
  if (const Value* z = node.input(3); z && z->has_shape) {
    bool ok = z->shape.size() == out.size();
    for (size_t i = 0; ok && i < out.size(); ++i)
      ok = z->shape[i] < 0 || out[i] < 0 || z->shape[i] == out[i];
    if (!ok)
      return InvalidArgument(node.Describe(), ": residual Z has shape ", z->ShapeString(),
                             " but the output has shape ", ShapeToString(out));
  }
  SetOutput(node, 0, x.dtype, out);
  return Status::Ok();
}

class ConvKernel final : public Kernel {
 public:
  enum class Mode { kDepthwise, kDirect, kIm2Col };

  Status Init(const KernelInit& init) {
    const Node& n = init.node;
    const Value& x = *n.input(0);
    const Value& w = *n.input(1);
    if (x.dtype != DataType::kFloat32)
      return NotSupported(n.Describe(), ": only float32 is implemented, got ", DataTypeName(x.dtype));
    OC_ASSIGN_OR_RETURN(g_, ResolveConv(n, x.shape, w.shape));
    // A 1-D conv written over H with W = 1 (TF exports, e.g. magika's 5x1
    // kernel over a 512x1 map) has the bytes of the same conv over W with
    // H = 1, where the im2col packing copies runs of output positions instead
    // of one position per output row (3x faster packing there): swap the axes.
    if (g_.in[2] == 1 && g_.out[2] == 1 && g_.kernel[2] == 1 && g_.stride[2] == 1 && g_.dilation[2] == 1 &&
        g_.pad_begin[2] == 0 && g_.pad_end[2] == 0 && g_.in[1] > 1) {
      for (auto* a : {&g_.in, &g_.out, &g_.kernel, &g_.stride, &g_.dilation, &g_.pad_begin, &g_.pad_end})
        std::swap((*a)[1], (*a)[2]);
    }
    if (n.domain == kOpenCannDomain) {
      OC_ASSIGN_OR_RETURN(act_, ActivationFromNode(n));
    }
    cg_ = g_.c_in / g_.group;
    mg_ = g_.c_out / g_.group;
    kg_ = cg_ * g_.KernelSize();
    const bool one_by_one = g_.KernelSize() == 1 && g_.stride == std::array<int64_t, 3>{1, 1, 1} &&
                            g_.pad_begin == std::array<int64_t, 3>{0, 0, 0} &&
                            g_.pad_end == std::array<int64_t, 3>{0, 0, 0};
    if (cg_ == 1 && g_.group > 1 && g_.in[0] == 1 && g_.kernel[0] == 1 && !one_by_one)
      mode_ = Mode::kDepthwise;
    else if (one_by_one)
      mode_ = Mode::kDirect;
    else
      mode_ = Mode::kIm2Col;
    max_threads_ = std::max(1, init.max_threads);
    // Weights a .om stored only as fp32 A panels (PrepackedInputs) have no raw
    // data: the im2col path borrows the panels when they suit its micro-kernel;
    // every other case rebuilds the raw weights from them first.
    const bool packed_only = w.constant && !w.constant->data();
    if (mode_ == Mode::kDepthwise) {
      if (packed_only)
        return InvalidFile(n.Describe(), ": weights '", w.name,
                           "' are stored only as prepacked panels, which the depthwise path cannot use");
      dw_slot_floats_ = (DepthwiseScratchFloats(g_) + 15) / 16 * 16;
      return Status::Ok();
    }
    std::vector<float> rebuilt;
    const float* wdata = nullptr;
    const gemm::Bf16Ukernel* bk = gemm::Bf16UkernelForNode(n);
    if (w.constant) {
      const bool panels_as_is = !bk && !WinogradPreferred(g_);
      auto r = gemm::RawOrUnpacked(w.constant->as<float>(), init.prepacked, &gemm::DefaultUkernel(), panels_as_is,
                                   gemm::PackedSide::kA, mg_, kg_, g_.group, kg_, false, mg_ * kg_, w.NumElements(),
                                   rebuilt);
      if (!r.ok()) return r.status().WithContext(n.Describe() + ": weights '" + w.name + "' (stored only as prepacked panels)");
      wdata = *r;
    }

    if (bk) {
      // Marked by mark-bf16: bf16 weights panels, activations rounded while packed.
      bf16_plan_ = gemm::Bf16GemmPlan(*bk, mg_, g_.OutSize(), kg_, init.max_threads);
      if (w.constant)
        bf16_w_ = gemm::Bf16PackedOperand::Make(gemm::PackedSide::kA, wdata, kg_, false, mg_, kg_,
                                                init.prepacked, g_.group, mg_ * kg_);
      return Status::Ok();
    }
    if (w.constant && WinogradPreferred(g_)) {
      wino_ = WinogradConv(g_, wdata, init.prepacked, init.max_threads);
      if (wino_.valid()) return Status::Ok();
    }
    if (!w.constant && WinogradPreferred(g_)) {  // weights fed per run (training): transformed in each run
      wino_ = WinogradConv::Dynamic(g_, init.max_threads);
      return Status::Ok();
    }
    uk_ = &gemm::DefaultUkernel();
    plan_ = gemm::SgemmPlan(*uk_, mg_, g_.OutSize(), kg_, init.max_threads);
    if (w.constant) {
      packed_w_ = gemm::PackedOperand::Make(*uk_, gemm::PackedSide::kA, wdata, kg_, false, mg_, kg_,
                                            init.prepacked, g_.group, mg_ * kg_);
      if (packed_w_.empty()) return Internal(n.Describe(), ": weights could not be packed");
    }
    return Status::Ok();
  }

  Status Run(const KernelIO& io) override {
    const float* x = io.in<float>(0);
    const float* w = io.in<float>(1);
    const float* bias = io.num_inputs > 2 ? io.in<float>(2) : nullptr;
    const float* z = io.num_inputs > 3 ? io.in<float>(3) : nullptr;
    float* y = io.out<float>(0);
    if (mode_ == Mode::kDepthwise) {
      if (dw_slot_floats_ && io.scratch) RunDepthwisePadded(x, w, bias, z, y, io.pool, static_cast<float*>(io.scratch));
      else RunDepthwise(x, w, bias, z, y, io.pool);
      return Status::Ok();
    }
    if (wino_.valid()) {
      if (io.scratch) return wino_.Run(x, bias, z, y, act_, io.pool, io.scratch, w), Status::Ok();
      std::vector<float> buf((wino_.ScratchBytes() + 63) / sizeof(float) + 16);
      void* p = buf.data();
      size_t space = buf.size() * sizeof(float);
      wino_.Run(x, bias, z, y, act_, io.pool, std::align(64, wino_.ScratchBytes(), p, space), w);
      return Status::Ok();
    }
    if (!bf16_plan_.valid() && !packed_w_.empty() && io.scratch &&
        std::min(io.pool->num_threads(), max_threads_) > 1) {
      RunPartitioned(x, bias, z, y, io.pool, static_cast<uint8_t*>(io.scratch));
      return Status::Ok();
    }
    const int64_t in_size = g_.InSize(), out_size = g_.OutSize();
    for (int64_t b = 0; b < g_.batch; ++b) {
      for (int64_t gi = 0; gi < g_.group; ++gi) {
        const float* xg = x + (b * g_.c_in + gi * cg_) * in_size;
        const int64_t y_off = (b * g_.c_out + gi * mg_) * out_size;
        Im2ColSource source{&g_, xg};
        gemm::SgemmArgs args;
        args.m = mg_, args.n = out_size, args.k = kg_;
        if (!packed_w_.empty()) args.packed_a = packed_w_.group(gi);
        else args.a = w + gi * mg_ * kg_, args.lda = kg_;
        if (mode_ == Mode::kDirect) args.b = xg, args.ldb = in_size;
        else args.pack_b = PackConvB, args.pack_b_ctx = &source;
        args.c = y + y_off, args.ldc = out_size;
        if (bias) {
          args.epilogue.bias_kind = gemm::Epilogue::Bias::kPerRow;
          args.epilogue.bias = bias + gi * mg_;
        }
        args.epilogue.act = act_;
        args.epilogue.residual = z ? z + y_off : nullptr;
        args.epilogue.ldr = out_size;
        if (bf16_plan_.valid()) {
          const uint16_t* pw = bf16_w_.empty() ? nullptr : bf16_w_.group(gi);
          if (pw) args.packed_a = nullptr, args.a = nullptr;
          if (io.scratch) bf16_plan_.Run(args, pw, nullptr, io.pool, io.scratch);
          else bf16_plan_.Run(args, pw, nullptr, io.pool);
          continue;
        }
        if (io.scratch) plan_.Run(args, io.pool, io.scratch);
        else plan_.Run(args, io.pool);
      }
    }
    return Status::Ok();
  }

  std::vector<uint8_t> ExportPrepacked() const override {
    if (wino_.valid()) return wino_.ExportPrepacked();
    return bf16_plan_.valid() ? bf16_w_.Export() : packed_w_.Export();
  }
  // fp32 im2col panels are a permutation of W: a .om may keep only them.
  std::vector<int> PrepackedInputs() const override {
    if (!wino_.valid() && !bf16_plan_.valid() && !packed_w_.empty()) return {1};
    return {};
  }
  size_t ScratchBytes() const override {
    if (mode_ == Mode::kDepthwise) return static_cast<size_t>(dw_slot_floats_ * max_threads_) * sizeof(float);
    if (bf16_plan_.valid()) return bf16_plan_.ScratchBytes();
    if (wino_.valid()) return wino_.ScratchBytes();
    return plan_.ScratchBytes();
  }

 private:
  // Rows [m0, m1) (a multiple of MR, or the end) x columns [n0, n1) of GEMM p
  // (image p / group, group p % group), single-threaded on `buf`.
  void RunPart(int64_t p, int64_t m0, int64_t m1, int64_t n0, int64_t n1, const float* x, const float* bias,
               const float* z, float* y, void* buf) const {
    const int64_t b = p / g_.group, gi = p % g_.group;
    const int64_t in_size = g_.InSize(), out_size = g_.OutSize();
    const float* xg = x + (b * g_.c_in + gi * cg_) * in_size;
    const int64_t y_off = (b * g_.c_out + gi * mg_ + m0) * out_size + n0;
    Im2ColSource source{&g_, xg, n0};
    gemm::SgemmArgs args;
    args.m = m1 - m0, args.n = n1 - n0, args.k = kg_;
    args.packed_a = packed_w_.group(gi) + m0 / uk_->mr * kg_ * uk_->mr;
    if (mode_ == Mode::kDirect) args.b = xg + n0, args.ldb = in_size;
    else args.pack_b = PackConvB, args.pack_b_ctx = &source;
    args.c = y + y_off, args.ldc = out_size;
    if (bias) {
      args.epilogue.bias_kind = gemm::Epilogue::Bias::kPerRow;
      args.epilogue.bias = bias + gi * mg_ + m0;
    }
    args.epilogue.act = act_;
    args.epilogue.residual = z ? z + y_off : nullptr;
    args.epilogue.ldr = out_size;
    plan_.Run(args, nullptr, buf);
  }

  // The fp32 GEMM paths on several threads, partitioned here rather than in
  // the GEMM: whole GEMMs (images, groups) per thread where they divide
  // evenly - no fork/join per image and no split of small GEMMs - and the
  // rest each split by columns: every thread takes an equal run of whole
  // NR-column panels with all rows, and the panels left over are split by
  // rows. A thread packs B only for its own columns (plus the few left-over
  // panels); splitting M everywhere, as the GEMM's own grid does on the 28x28
  // and 14x14 layers, made every thread pack all of the im2col or input
  // matrix (measured +11-22% CPU per layer).
  void RunPartitioned(const float* x, const float* bias, const float* z, float* y, ThreadPool* pool,
                      uint8_t* scratch) const {
    const int64_t threads = std::min(pool->num_threads(), max_threads_);
    const size_t slot = plan_.ScratchBytes() / static_cast<size_t>(max_threads_);
    const int64_t gemms = g_.batch * g_.group, out_size = g_.OutSize();
    const int64_t whole = gemms / threads * threads;
    if (whole > 0) {
      pool->ParallelFor(threads, 1, [&](int64_t tb, int64_t te) {
        for (int64_t t = tb; t < te; ++t)
          for (int64_t p = whole * t / threads; p < whole * (t + 1) / threads; ++p)
            RunPart(p, 0, mg_, 0, out_size, x, bias, z, y, scratch + t * slot);
      });
    }
    if (whole == gemms) return;
    const int64_t mr = uk_->mr, nr = uk_->nr;
    const int64_t mb = (mg_ + mr - 1) / mr, nb = (out_size + nr - 1) / nr;
    // Enough work per task to pay for waking a thread (~1 MFLOP).
    const double flops = 2.0 * mg_ * out_size * kg_;
    const int64_t tasks = std::min<int64_t>(threads, std::max<int64_t>(1, static_cast<int64_t>(flops / 1e6)));
    const int64_t per = nb / tasks, rest0 = per * tasks * nr;  // columns [rest0, N) are split by rows
    for (int64_t p = whole; p < gemms; ++p) {
      auto task = [&](int64_t t) {
        void* buf = scratch + t * slot;
        if (per > 0) RunPart(p, 0, mg_, t * per * nr, std::min(out_size, (t + 1) * per * nr), x, bias, z, y, buf);
        const int64_t m0 = mb * t / tasks * mr, m1 = std::min(mg_, mb * (t + 1) / tasks * mr);
        if (rest0 < out_size && m0 < m1) RunPart(p, m0, m1, rest0, out_size, x, bias, z, y, buf);
      };
      if (tasks == 1) {
        task(0);
        continue;
      }
      pool->ParallelFor(tasks, 1, [&](int64_t tb, int64_t te) {
        for (int64_t t = tb; t < te; ++t) task(t);
      });
    }
  }

  // One output channel plane per task; the channel multiplier maps output
  // channel c to input channel c / mg_.
  void RunDepthwise(const float* x, const float* w, const float* bias, const float* z, float* y,
                    ThreadPool* pool) const {
    const int64_t planes = g_.batch * g_.c_out;
    const int64_t work = g_.OutSize() * g_.KernelSize();
    pool->ParallelFor(planes, std::max<int64_t>(1, 16384 / (work + 1)), [&](int64_t c0, int64_t c1) {
      DepthwiseConv(g_, mg_, x, w, bias, z, y, act_, c0, c1);
    });
  }

  // Contiguous channel ranges, one per task; the task index names its slot of
  // padded input rows in the scratch.
  void RunDepthwisePadded(const float* x, const float* w, const float* bias, const float* z, float* y,
                          ThreadPool* pool, float* scratch) const {
    const int64_t planes = g_.batch * g_.c_out;
    const int64_t work = planes * g_.OutSize() * g_.KernelSize();
    int64_t tasks = std::min<int64_t>({pool->num_threads(), max_threads_, planes});
    tasks = std::max<int64_t>(1, std::min<int64_t>(tasks, work / 32768));
    auto task = [&](int64_t t) {
      DepthwiseConvPadded(g_, mg_, x, w, bias, z, y, act_, planes * t / tasks, planes * (t + 1) / tasks,
                          scratch + t * dw_slot_floats_);
    };
    if (tasks == 1) return task(0);
    pool->ParallelFor(tasks, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) task(t);
    });
  }

  ConvGeometry g_;
  Mode mode_ = Mode::kIm2Col;
  int max_threads_ = 1;
  int64_t dw_slot_floats_ = 0;  // padded-row scratch per task (0: the direct loops)
  Activation act_;
  int64_t cg_ = 0, mg_ = 0, kg_ = 0;
  const gemm::GemmUkernel* uk_ = nullptr;
  gemm::SgemmPlan plan_;
  gemm::PackedOperand packed_w_;
  gemm::Bf16GemmPlan bf16_plan_;  // valid when the node computes in bf16
  gemm::Bf16PackedOperand bf16_w_;
  WinogradConv wino_;  // valid when the Winograd path runs this node
};

Expected<KernelPtr> MakeConv(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  auto k = std::make_unique<ConvKernel>();
  OC_RETURN_IF_ERROR(k->Init(init));
  return KernelPtr(std::move(k));
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Register({.op_type = "Conv", .infer = InferConv, .kernels = CpuKernel(MakeConv), .grad = conv::GradConv});
  r.Register({.domain = kOpenCannDomain, .op_type = "FusedConv", .min_opset = 1, .max_opset = 1,
              .infer = InferConv, .kernels = CpuKernel(MakeConv)});
}

}  // namespace oc

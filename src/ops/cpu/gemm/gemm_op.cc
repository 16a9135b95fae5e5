// Gemm (opsets 1..) and com.opencann::FusedGemm (Gemm + residual Z + activation), float32:
// Y = alpha * op(A) * op(B) + beta * C, C unidirectionally broadcast to [M, N].
// A C that is a row or column vector (or a scalar) becomes the GEMM epilogue's
// bias, pre-scaled by beta when constant; any other C is broadcast into Y first
// and accumulated with beta = 1. A constant B is packed once and exported.
#include <algorithm>

#include "ops/cpu/gemm/grads.h"
#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/conv/conv_common.h"
#include "ops/cpu/gemm/gemm_activation.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/cpu/gemm/matmul_generic.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct GemmDims {
  int64_t m, n, k;
};

Expected<GemmDims> ResolveGemm(const Node& node) {
  const Value& a = *node.input(0);
  const Value& b = *node.input(1);
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return InvalidArgument(node.Describe(), ": A and B must be 2-D, got A ", a.ShapeString(), " and B ",
                           b.ShapeString());
  const bool ta = node.GetInt("transA", 0) != 0, tb = node.GetInt("transB", 0) != 0;
  GemmDims d{ta ? a.shape[1] : a.shape[0], tb ? b.shape[0] : b.shape[1], ta ? a.shape[0] : a.shape[1]};
  const int64_t kb = tb ? b.shape[1] : b.shape[0];
  if (d.k >= 0 && kb >= 0 && d.k != kb)
    return InvalidArgument(node.Describe(), ": inner dims differ: op(A) is [", d.m, ",", d.k, "] (transA=", ta,
                           ") but op(B) is [", kb, ",", d.n, "] (transB=", tb, ")");
  if (d.k < 0) d.k = kb;
  if (const Value* c = node.input(2); c && c->has_shape) {
    if (c->shape.size() > 2)
      return InvalidArgument(node.Describe(), ": C must have rank <= 2, got ", c->ShapeString());
    const std::vector<int64_t> mn = {d.m, d.n};
    for (size_t i = 0; i < c->shape.size(); ++i) {
      const int64_t cd = c->shape[c->shape.size() - 1 - i], od = mn[1 - i];
      if (cd != 1 && cd >= 0 && od >= 0 && cd != od)
        return InvalidArgument(node.Describe(), ": C ", c->ShapeString(), " cannot be broadcast to [", d.m,
                               ",", d.n, "]");
    }
  }
  return d;
}

Status InferGemm(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  if (node.input(0)->dtype != node.input(1)->dtype)
    return InvalidArgument(node.Describe(), ": A is ", DataTypeName(node.input(0)->dtype), " but B is ",
                           DataTypeName(node.input(1)->dtype));
  OC_ASSIGN_OR_RETURN(GemmDims d, ResolveGemm(node));
  if (const Value* z = node.input(3); z && z->IsStatic() && d.m >= 0 && d.n >= 0 && z->NumElements() != d.m * d.n)
    return InvalidArgument(node.Describe(), ": residual Z ", z->ShapeString(), " has ", z->NumElements(),
                           " values, expected the output's ", d.m * d.n);
  SetOutput(node, 0, node.input(0)->dtype, {d.m, d.n});
  return Status::Ok();
}

class GemmKernel final : public Kernel {
 public:
  Status Init(const KernelInit& init) {
    const Node& n = init.node;
    if (n.input(0)->dtype != DataType::kFloat32)
      return NotSupported(n.Describe(), ": only float32 is implemented, got ",
                          DataTypeName(n.input(0)->dtype));
    OC_ASSIGN_OR_RETURN(d_, ResolveGemm(n));
    if (n.domain == kOpenCannDomain) {
      OC_ASSIGN_OR_RETURN(act_, ActivationFromNode(n));
    }
    ta_ = n.GetInt("transA", 0) != 0;
    tb_ = n.GetInt("transB", 0) != 0;
    alpha_ = n.GetFloat("alpha", 1.f);
    beta_ = n.GetFloat("beta", 1.f);
    lda_ = n.input(0)->shape[1];
    ldb_ = n.input(1)->shape[1];
    // A constant B that a .om stored only as fp32 panels (PrepackedInputs) has
    // no raw data: it is rebuilt from them unless they suit this micro-kernel.
    const Value* b = n.input(1);
    std::vector<float> rebuilt;
    auto raw_b = [&](const gemm::GemmUkernel* uk) -> Expected<const float*> {
      auto r = gemm::RawOrUnpacked(b->constant->as<float>(), init.prepacked, uk, uk != nullptr, gemm::PackedSide::kB,
                                   d_.n, d_.k, 1, ldb_, tb_, 0, b->NumElements(), rebuilt);
      if (!r.ok()) return r.status().WithContext(n.Describe() + ": B '" + b->name + "' (stored only as prepacked panels)");
      return r;
    };
    if (const gemm::Bf16Ukernel* bk = gemm::Bf16UkernelForNode(n)) {
      // Marked by mark-bf16: bf16 B panels, A rounded while packed.
      bf16_plan_ = gemm::Bf16GemmPlan(*bk, d_.m, d_.n, d_.k, init.max_threads);
      if (b->constant) {
        OC_ASSIGN_OR_RETURN(const float* src, raw_b(nullptr));
        bf16_b_ = gemm::Bf16PackedOperand::Make(gemm::PackedSide::kB, src, ldb_, tb_, d_.n, d_.k, init.prepacked);
      }
    } else {
      uk_ = &gemm::DefaultUkernel();
      max_threads_ = std::max(1, init.max_threads);
      plan_ = gemm::SgemmPlan(*uk_, d_.m, d_.n, d_.k, init.max_threads);
      if (b->constant) {
        OC_ASSIGN_OR_RETURN(const float* src, raw_b(uk_));
        packed_b_ = gemm::PackedOperand::Make(*uk_, gemm::PackedSide::kB, src, ldb_, tb_, d_.n, d_.k, init.prepacked);
        if (packed_b_.empty()) return Internal(n.Describe(), ": B could not be packed");
      }
    }
    const Value* c = n.input(2);
    if (!c || beta_ == 0.f) return Status::Ok();
    // C's strides in Y's index space (0 where broadcast).
    const auto& cs = c->shape;
    const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
    c_row_stride_ = cm == 1 ? 0 : cn;
    c_col_stride_ = cn == 1 ? 0 : 1;
    const bool per_col = cm == 1, per_row = cn == 1 && !per_col;
    if (c->constant && (per_col || per_row)) {
      // Scalar or vector C: a pre-scaled bias (a scalar widens to a row).
      const float* cv = c->constant->as<float>();
      const int64_t len = per_col ? d_.n : d_.m;
      bias_.resize(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) bias_[i] = beta_ * cv[(per_col ? c_col_stride_ : c_row_stride_) * i];
      c_mode_ = per_col ? CMode::kColBias : CMode::kRowBias;
    } else if (beta_ == 1.f && per_col && cn == d_.n) {
      c_mode_ = CMode::kColBias;
    } else if (beta_ == 1.f && per_row && cm == d_.m) {
      c_mode_ = CMode::kRowBias;
    } else {
      c_mode_ = CMode::kFill;
    }
    return Status::Ok();
  }

  Status Run(const KernelIO& io) override {
    const float* c = io.num_inputs > 2 ? io.in<float>(2) : nullptr;
    const float* z = io.num_inputs > 3 ? io.in<float>(3) : nullptr;  // FusedGemm residual
    float* y = io.out<float>(0);
    gemm::SgemmArgs g;
    g.m = d_.m, g.n = d_.n, g.k = d_.k;
    g.a = io.in<float>(0), g.lda = lda_, g.trans_a = ta_;
    if (!packed_b_.empty()) g.packed_b = packed_b_.data();
    else g.b = io.in<float>(1), g.ldb = ldb_, g.trans_b = tb_;
    g.c = y, g.ldc = d_.n, g.alpha = alpha_;
    g.epilogue.act = act_;
    if (z) g.epilogue.residual = z, g.epilogue.ldr = d_.n;
    const Activation deferred = gemm::DeferActivation(g);
    if (c && c_mode_ != CMode::kNone) {
      const float* bias = bias_.empty() ? c : bias_.data();
      if (c_mode_ == CMode::kColBias) {
        g.epilogue.bias_kind = gemm::Epilogue::Bias::kPerCol;
        g.epilogue.bias = bias;
      } else if (c_mode_ == CMode::kRowBias) {
        g.epilogue.bias_kind = gemm::Epilogue::Bias::kPerRow;
        g.epilogue.bias = bias;
      } else {
        for (int64_t i = 0; i < d_.m; ++i) {
          const float* ci = c + i * c_row_stride_;
          float* yi = y + i * d_.n;
          for (int64_t j = 0; j < d_.n; ++j) yi[j] = beta_ * ci[j * c_col_stride_];
        }
        g.beta = 1.f;
      }
    }
    if (bf16_plan_.valid()) {
      const uint16_t* pb = bf16_b_.empty() ? nullptr : bf16_b_.data();
      if (io.scratch) bf16_plan_.Run(g, nullptr, pb, io.pool, io.scratch);
      else bf16_plan_.Run(g, nullptr, pb, io.pool);
    } else if (io.scratch) {
      if (deferred.kind != ActivationKind::kNone && PackedABytes() && gemm::OutputBeyondL2(d_.m, d_.n)) {
        // The activation chunk by chunk while C is in L2 (gemm_activation.h).
        float* pa = reinterpret_cast<float*>(static_cast<uint8_t*>(io.scratch) + plan_.ScratchBytes());
        gemm::PackAShared(*uk_, g.a, lda_, d_.m, d_.k, pa, io.pool);
        g.a = nullptr;
        g.packed_a = pa;
        const int64_t threads = std::min(io.pool->num_threads(), max_threads_);
        gemm::RunColumnChunks(plan_, g, gemm::ChunkWidthForRows(*uk_, d_.m), deferred, io.scratch,
                              plan_.ScratchBytes() / static_cast<size_t>(max_threads_), threads, io.pool);
        return Status::Ok();
      }
      if (PackedABytes())
        gemm::PackAOnce(g, *uk_, reinterpret_cast<float*>(static_cast<uint8_t*>(io.scratch) + plan_.ScratchBytes()),
                        io.pool, std::min(io.pool->num_threads(), max_threads_));
      plan_.Run(g, io.pool, io.scratch);
    } else {
      plan_.Run(g, io.pool);
    }
    gemm::ApplyDeferredActivation(deferred, y, d_.n, d_.m, d_.n, io.pool);
    return Status::Ok();
  }

  std::vector<uint8_t> ExportPrepacked() const override {
    return bf16_plan_.valid() ? bf16_b_.Export() : packed_b_.Export();
  }
  // fp32 panels are a permutation of B: a .om may keep only them.
  std::vector<int> PrepackedInputs() const override {
    if (!bf16_plan_.valid() && !packed_b_.empty()) return {1};
    return {};
  }
  size_t ScratchBytes() const override {
    return bf16_plan_.valid() ? bf16_plan_.ScratchBytes() : plan_.ScratchBytes() + PackedABytes();
  }
  // A packed once (gemm_activation.h) when B is a constant: after the GEMM
  // buffers in the scratch.
  size_t PackedABytes() const {
    if (bf16_plan_.valid() || packed_b_.empty() || ta_ || uk_ == nullptr) return 0;
    return gemm::SharedPackedABytes(*uk_, d_.m, d_.k);
  }

 private:
  enum class CMode { kNone, kColBias, kRowBias, kFill };
  GemmDims d_{};
  bool ta_ = false, tb_ = false;
  float alpha_ = 1.f, beta_ = 1.f;
  int64_t lda_ = 0, ldb_ = 0;
  CMode c_mode_ = CMode::kNone;
  int max_threads_ = 1;
  int64_t c_row_stride_ = 0, c_col_stride_ = 0;
  std::vector<float> bias_;
  Activation act_;
  const gemm::GemmUkernel* uk_ = nullptr;
  gemm::SgemmPlan plan_;
  gemm::PackedOperand packed_b_;
  gemm::Bf16GemmPlan bf16_plan_;  // valid when the node computes in bf16
  gemm::Bf16PackedOperand bf16_b_;
};

Expected<KernelPtr> MakeGemm(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  if (init.node.domain.empty() && GenericMatMulType(init.node.input(0)->dtype)) return MakeGenericGemm(init.node);
  auto k = std::make_unique<GemmKernel>();
  OC_RETURN_IF_ERROR(k->Init(init));
  return KernelPtr(std::move(k));
}

}  // namespace

void RegisterGemmOps(OpRegistry& r) {
  r.Register({.op_type = "Gemm", .infer = InferGemm, .kernels = CpuKernel(MakeGemm), .grad = gemm::GradGemm});
  r.Register({.domain = kOpenCannDomain, .op_type = "FusedGemm", .min_opset = 1, .max_opset = 1,
              .infer = InferGemm, .kernels = CpuKernel(MakeGemm)});
}

}  // namespace oc

// MatMul (opsets 1..) and com.opencann::FusedMatMul (MatMul + 1-D bias over the
// last dim + residual Z + activation), float32, numpy semantics: 1-D operands get a unit
// dim that is dropped again, batch dims broadcast. When B has no batch (the
// usual weight case) A's batch folds into M for one large GEMM. A constant B
// is packed once per B batch matrix and exported.
#include <algorithm>

#include "ops/cpu/gemm/grads.h"
#include "ops/cpu/elementwise/activation.h"
#include "ops/cpu/gemm/gemm_activation.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "ops/cpu/gemm/gemm_kernel.h"
#include "ops/cpu/gemm/matmul_generic.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct MatMulDims {
  int64_t m = 1, n = 1, k = 1;
  std::vector<int64_t> batch;          // broadcast batch shape
  std::vector<int64_t> a_batch, b_batch;  // each operand's batch dims, rank-aligned to `batch`
  std::vector<int64_t> out;
};

Expected<MatMulDims> ResolveMatMul(const Node& node) {
  std::vector<int64_t> a = node.input(0)->shape, b = node.input(1)->shape;
  if (a.empty() || b.empty())
    return InvalidArgument(node.Describe(), ": MatMul operands must have rank >= 1, got A ",
                           node.input(0)->ShapeString(), " and B ", node.input(1)->ShapeString());
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  MatMulDims d;
  d.m = a[a.size() - 2];
  d.k = a.back();
  d.n = b.back();
  const int64_t kb = b[b.size() - 2];
  if (d.k >= 0 && kb >= 0 && d.k != kb)
    return InvalidArgument(node.Describe(), ": inner dims differ: A ", node.input(0)->ShapeString(), " has K=",
                           d.k, " but B ", node.input(1)->ShapeString(), " has K=", kb);
  if (d.k < 0) d.k = kb;
  std::vector<int64_t> ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  OC_ASSIGN_OR_RETURN(d.batch, BroadcastShapes(node, ab, bb));
  d.a_batch.assign(d.batch.size() - ab.size(), 1);
  d.a_batch.insert(d.a_batch.end(), ab.begin(), ab.end());
  d.b_batch.assign(d.batch.size() - bb.size(), 1);
  d.b_batch.insert(d.b_batch.end(), bb.begin(), bb.end());
  d.out = d.batch;
  if (!a1) d.out.push_back(d.m);
  if (!b1) d.out.push_back(d.n);
  return d;
}

Status InferMatMul(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  if (node.input(0)->dtype != node.input(1)->dtype)
    return InvalidArgument(node.Describe(), ": A is ", DataTypeName(node.input(0)->dtype), " but B is ",
                           DataTypeName(node.input(1)->dtype));
  OC_ASSIGN_OR_RETURN(MatMulDims d, ResolveMatMul(node));
  if (const Value* bias = node.input(2); bias && bias->has_shape) {
    if (bias->shape.size() != 1 || (bias->shape[0] >= 0 && d.n >= 0 && bias->shape[0] != d.n))
      return InvalidArgument(node.Describe(), ": bias must be 1-D with ", d.n, " values (the last output dim), got ",
                             bias->ShapeString());
  }
  if (const Value* z = node.input(3); z && z->IsStatic() &&
                                       std::all_of(d.out.begin(), d.out.end(), [](int64_t x) { return x >= 0; }) &&
                                       z->NumElements() != ShapeProduct(d.out))
    return InvalidArgument(node.Describe(), ": residual Z ", z->ShapeString(), " has ", z->NumElements(),
                           " values, expected the output's ", ShapeProduct(d.out));
  SetOutput(node, 0, node.input(0)->dtype, d.out);
  return Status::Ok();
}

class MatMulKernel final : public Kernel {
 public:
  Status Init(const KernelInit& init) {
    const Node& n = init.node;
    if (n.input(0)->dtype != DataType::kFloat32)
      return NotSupported(n.Describe(), ": only float32 is implemented, got ",
                          DataTypeName(n.input(0)->dtype));
    OC_ASSIGN_OR_RETURN(d_, ResolveMatMul(n));
    if (n.domain == kOpenCannDomain) {
      OC_ASSIGN_OR_RETURN(act_, ActivationFromNode(n));
    }
    const int64_t b_count = ShapeProduct(d_.b_batch);
    const int64_t batches = ShapeProduct(d_.batch);
    if (b_count == 1) {
      // A's batch and M are contiguous rows: one GEMM of M' = batch * M.
      fold_m_ = batches * d_.m;
      offsets_.push_back({0, 0});
    } else {
      fold_m_ = d_.m;
      // Per output batch index, the A and B matrix indices (broadcast dims repeat).
      const size_t r = d_.batch.size();
      std::vector<int64_t> idx(r, 0);
      const auto as = Strides(d_.a_batch), bs = Strides(d_.b_batch);
      for (int64_t t = 0; t < batches; ++t) {
        int64_t ai = 0, bi = 0;
        for (size_t i = 0; i < r; ++i) {
          if (d_.a_batch[i] != 1) ai += idx[i] * as[i];
          if (d_.b_batch[i] != 1) bi += idx[i] * bs[i];
        }
        offsets_.push_back({ai, bi});
        for (size_t i = r; i-- > 0;) {
          if (++idx[i] < d_.batch[i]) break;
          idx[i] = 0;
        }
      }
    }
    max_threads_ = std::max(1, init.max_threads);
    // A constant B that a .om stored only as fp32 panels (PrepackedInputs) has
    // no raw data: it is rebuilt from them unless they suit this micro-kernel.
    const Value* b = n.input(1);
    std::vector<float> rebuilt;
    auto raw_b = [&](const gemm::GemmUkernel* uk) -> Expected<const float*> {
      auto r = gemm::RawOrUnpacked(b->constant->as<float>(), init.prepacked, uk, uk != nullptr, gemm::PackedSide::kB,
                                   d_.n, d_.k, b_count, d_.n, false, d_.k * d_.n, b->NumElements(), rebuilt);
      if (!r.ok()) return r.status().WithContext(n.Describe() + ": B '" + b->name + "' (stored only as prepacked panels)");
      return r;
    };
    if (const gemm::Bf16Ukernel* bk = gemm::Bf16UkernelForNode(n)) {
      // Marked by mark-bf16: bf16 B panels, A rounded while packed.
      bf16_plan_ = gemm::Bf16GemmPlan(*bk, fold_m_, d_.n, d_.k, max_threads_);
      if (b->constant) {
        OC_ASSIGN_OR_RETURN(const float* src, raw_b(nullptr));
        bf16_b_ = gemm::Bf16PackedOperand::Make(gemm::PackedSide::kB, src, d_.n, false, d_.n, d_.k, init.prepacked,
                                                b_count, d_.k * d_.n);
      }
      return Status::Ok();
    }
    uk_ = &gemm::DefaultUkernel();
    plan_ = gemm::SgemmPlan(*uk_, fold_m_, d_.n, d_.k, max_threads_);
    if (b->constant) {
      OC_ASSIGN_OR_RETURN(const float* src, raw_b(uk_));
      packed_b_ = gemm::PackedOperand::Make(*uk_, gemm::PackedSide::kB, src, d_.n, false, d_.n, d_.k,
                                            init.prepacked, b_count, d_.k * d_.n);
      if (packed_b_.empty()) return Internal(n.Describe(), ": B could not be packed");
    }
    return Status::Ok();
  }

  Status Run(const KernelIO& io) override {
    const float* a = io.in<float>(0);
    const float* b = io.in<float>(1);
    const float* bias = io.num_inputs > 2 ? io.in<float>(2) : nullptr;
    const float* z = io.num_inputs > 3 ? io.in<float>(3) : nullptr;  // FusedMatMul residual
    float* y = io.out<float>(0);
    gemm::SgemmArgs g;
    g.m = fold_m_, g.n = d_.n, g.k = d_.k;
    g.lda = d_.k, g.ldb = d_.n, g.ldc = d_.n;
    g.epilogue.act = act_;
    if (bias) {
      g.epilogue.bias_kind = gemm::Epilogue::Bias::kPerCol;
      g.epilogue.bias = bias;
    }
    if (z) g.epilogue.ldr = d_.n;
    const Activation deferred = gemm::DeferActivation(g);
    const int64_t out_rows = static_cast<int64_t>(offsets_.size()) * fold_m_;
    const uint16_t* bf16_b = nullptr;
    auto one = [&](size_t t, gemm::SgemmArgs& gt) {
      const auto [ai, bi] = offsets_[t];
      gt.a = a + ai * d_.m * d_.k;
      gt.packed_a = nullptr;
      if (!packed_b_.empty()) gt.packed_b = packed_b_.group(bi);
      else if (!bf16_b_.empty()) bf16_b = bf16_b_.group(bi);
      else gt.b = b + bi * d_.k * d_.n;
      gt.c = y + static_cast<int64_t>(t) * d_.m * d_.n;
      if (z) gt.epilogue.residual = z + static_cast<int64_t>(t) * d_.m * d_.n;
    };
    auto run = [&](const gemm::SgemmArgs& gt, ThreadPool* pool, void* scratch) {
      if (bf16_plan_.valid()) {
        if (scratch) bf16_plan_.Run(gt, nullptr, bf16_b, pool, scratch);
        else bf16_plan_.Run(gt, nullptr, bf16_b, pool);
      } else if (scratch) {
        plan_.Run(gt, pool, scratch);
      } else {
        plan_.Run(gt, pool);
      }
    };
    const int64_t batches = static_cast<int64_t>(offsets_.size());
    const int64_t threads = std::min<int64_t>(io.pool->num_threads(), max_threads_);
    // A deferred activation over a C larger than L2 runs chunk by chunk.
    const bool chunk_act =
        deferred.kind != ActivationKind::kNone && PackedABytes() && gemm::OutputBeyondL2(fold_m_, d_.n);
    if (io.scratch && (WideB() || chunk_act)) {
      gemm::SgemmArgs gw = g;
      gw.epilogue.residual = z;
      float* pa = PackedAScratch(io);
      gemm::PackAShared(*uk_, a, d_.k, fold_m_, d_.k, pa, io.pool);
      gw.a = nullptr;
      gw.packed_a = pa;
      gw.packed_b = packed_b_.data();
      gw.c = y;
      int64_t width = gemm::ChunkWidthForRows(*uk_, fold_m_);
      if (WideB()) width = std::min(width, std::max<int64_t>(uk_->nr, kWideChunk / uk_->nr * uk_->nr));
      gemm::RunColumnChunks(plan_, gw, width, deferred, io.scratch, GemmScratchBytes() / static_cast<size_t>(max_threads_),
                            threads, io.pool);
      return Status::Ok();
    }
    if (io.scratch && threads > 1 && batches >= threads) {
      // Batched products (attention heads): whole matrices per thread, one
      // pool wake-up for the node instead of one per matrix. Task t uses GEMM
      // buffer slot t and runs its GEMMs single-threaded.
      const size_t slot_bytes = GemmScratchBytes() / static_cast<size_t>(max_threads_);
      io.pool->ParallelFor(threads, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          gemm::SgemmArgs gt = g;
          const uint16_t* pb16 = nullptr;
          void* slot = static_cast<uint8_t*>(io.scratch) + static_cast<size_t>(t) * slot_bytes;
          for (int64_t i = batches * t / threads; i < batches * (t + 1) / threads; ++i) {
            const auto [ai, bi] = offsets_[static_cast<size_t>(i)];
            gt.a = a + ai * d_.m * d_.k;
            if (!packed_b_.empty()) gt.packed_b = packed_b_.group(bi);
            else if (!bf16_b_.empty()) pb16 = bf16_b_.group(bi);
            else gt.b = b + bi * d_.k * d_.n;
            gt.c = y + i * d_.m * d_.n;
            if (z) gt.epilogue.residual = z + i * d_.m * d_.n;
            if (bf16_plan_.valid()) bf16_plan_.Run(gt, nullptr, pb16, nullptr, slot);
            else plan_.Run(gt, nullptr, slot);
          }
        }
      });
      gemm::ApplyDeferredActivation(deferred, y, d_.n, out_rows, d_.n, io.pool);
      return Status::Ok();
    }
    for (size_t t = 0; t < offsets_.size(); ++t) {
      one(t, g);
      if (io.scratch && PackedABytes()) gemm::PackAOnce(g, *uk_, PackedAScratch(io), io.pool, threads);
      run(g, io.pool, io.scratch);
    }
    gemm::ApplyDeferredActivation(deferred, y, d_.n, out_rows, d_.n, io.pool);
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
  size_t ScratchBytes() const override { return GemmScratchBytes() + PackedABytes(); }

 private:
  size_t GemmScratchBytes() const {
    return bf16_plan_.valid() ? bf16_plan_.ScratchBytes() : plan_.ScratchBytes();
  }

  // A vocabulary-wide B (a language-model head: GPT-2's 128 x 50257 x 768,
  // 150 MB of pre-packed weights streamed from memory on every run) runs as
  // GEMMs over 256-column chunks of C with A packed once, instead of one GEMM
  // over all N (whose 1024-column blocks repack A every time and keep a C block
  // too large for L2 across the K blocks). Measured at 1 thread, CPU time:
  // 128 x 50257 x 768 83.7 -> 74.9 ms, 1024 x 50257 x 768 594 -> 544 ms; the
  // results are identical (each element sees the same K blocks in order).
  static constexpr int64_t kWideN = 8192, kWideChunk = 256;
  bool WideB() const {
    return !bf16_plan_.valid() && !packed_b_.empty() && offsets_.size() == 1 && d_.n >= kWideN && uk_ != nullptr;
  }
  // A packed once (gemm_activation.h) for a single product with a constant B:
  // after the GEMM buffers in the scratch.
  size_t PackedABytes() const {
    if (bf16_plan_.valid() || packed_b_.empty() || offsets_.size() != 1 || uk_ == nullptr) return 0;
    return gemm::SharedPackedABytes(*uk_, fold_m_, d_.k);
  }
  float* PackedAScratch(const KernelIO& io) const {
    return reinterpret_cast<float*>(static_cast<uint8_t*>(io.scratch) + GemmScratchBytes());
  }

  MatMulDims d_;
  int64_t fold_m_ = 0;
  int max_threads_ = 1;
  std::vector<std::pair<int64_t, int64_t>> offsets_;  // (A matrix, B matrix) per output batch
  Activation act_;
  const gemm::GemmUkernel* uk_ = nullptr;
  gemm::SgemmPlan plan_;
  gemm::PackedOperand packed_b_;
  gemm::Bf16GemmPlan bf16_plan_;  // valid when the node computes in bf16
  gemm::Bf16PackedOperand bf16_b_;
};

Expected<KernelPtr> MakeMatMul(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  if (init.node.domain.empty() && GenericMatMulType(init.node.input(0)->dtype)) return MakeGenericMatMul(init.node);
  auto k = std::make_unique<MatMulKernel>();
  OC_RETURN_IF_ERROR(k->Init(init));
  return KernelPtr(std::move(k));
}

}  // namespace

void RegisterMatMulOps(OpRegistry& r) {
  r.Register({.op_type = "MatMul", .infer = InferMatMul, .kernels = CpuKernel(MakeMatMul), .grad = gemm::GradMatMul});
  r.Register({.domain = kOpenCannDomain, .op_type = "FusedMatMul", .min_opset = 1, .max_opset = 1,
              .infer = InferMatMul, .kernels = CpuKernel(MakeMatMul)});
}

}  // namespace oc

// MatMulInteger (int32 output) and QLinearMatMul (requantized int8/uint8
// output) on the integer GEMM. numpy MatMul semantics: 1-D operands get a unit
// dim that is dropped again, batch dims broadcast; when B has no batch, A's
// batch folds into M. A constant B is packed once (per B batch matrix).
// Zero points: A per tensor; B per tensor or per column (1-D of N). Scales of
// QLinearMatMul likewise (a and y per tensor, b per tensor or per column).
#include <algorithm>

#include "ops/cpu/gemm/integer_gemm.h"
#include "ops/cpu/quant/qlinear_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// Half-precision scales / data are read and written natively (no legalizing Casts).
constexpr uint64_t kHalfTypes = DataTypeBit(DataType::kFloat16) | DataTypeBit(DataType::kBFloat16);

using qlinear::IsInt8Type;
using qlinear::ScratchLayout;

struct QMatMulDims {
  int64_t m = 1, n = 1, k = 1;
  std::vector<int64_t> batch, a_batch, b_batch, out;
};

Expected<QMatMulDims> ResolveQMatMul(const Node& node, const Value& av, const Value& bv) {
  std::vector<int64_t> a = av.shape, b = bv.shape;
  if (a.empty() || b.empty())
    return InvalidArgument(node.Describe(), ": operands must have rank >= 1, got A ", av.ShapeString(), " and B ",
                           bv.ShapeString());
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  QMatMulDims d;
  d.m = a[a.size() - 2];
  d.k = a.back();
  d.n = b.back();
  const int64_t kb = b[b.size() - 2];
  if (d.k >= 0 && kb >= 0 && d.k != kb)
    return InvalidArgument(node.Describe(), ": inner dims differ: A ", av.ShapeString(), " has K=", d.k, " but B ",
                           bv.ShapeString(), " has K=", kb);
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

// Input positions of the two ops.
using Slots = qlinear::QuantSlots;
constexpr Slots kMatMulInteger{0, 1, 2, 3};
constexpr Slots kQLinearMatMul{0, 3, 2, 5, 1, 4, 6, 7};

bool IsQLinear(const Node& n) { return n.op_type == "QLinearMatMul"; }

Status InferQMatMul(Node& n) {
  const bool q = IsQLinear(n);
  const Slots s = q ? kQLinearMatMul : kMatMulInteger;
  OC_RETURN_IF_ERROR(RequireInput(n, s.a));
  OC_RETURN_IF_ERROR(RequireInput(n, s.b));
  OC_ASSIGN_OR_RETURN(QMatMulDims d, ResolveQMatMul(n, *n.input(s.a), *n.input(s.b)));
  DataType out = DataType::kInt32;
  if (q) out = n.input(s.y_zp) ? n.input(s.y_zp)->dtype : n.input(s.a)->dtype;
  SetOutput(n, 0, out, d.out);
  return Status::Ok();
}

class QMatMulKernel final : public Kernel {
 public:
  Status Init(const KernelInit& init) {
    const Node& n = init.node;
    q_ = IsQLinear(n);
    s_ = q_ ? kQLinearMatMul : kMatMulInteger;
    const Value& a = *n.input(s_.a);
    const Value& b = *n.input(s_.b);
    a_type_ = a.dtype;
    b_type_ = b.dtype;
    OC_RETURN_IF_ERROR(qlinear::CheckQuantOperands(n, s_));
    OC_ASSIGN_OR_RETURN(d_, ResolveQMatMul(n, a, b));
    OC_ASSIGN_OR_RETURN(qlinear::QuantParams qp, qlinear::CheckQuantParams(n, s_, q_, d_.n));
    b_zp_count_ = qp.b_zp_count;
    if (q_) {
      b_scale_count_ = qp.b_scale_count;
      scale_type_ = qp.scale_type;
      y_type_ = qp.y_type;
    }
    const int64_t b_count = ShapeProduct(d_.b_batch), batches = ShapeProduct(d_.batch);
    if (b_count == 1) {
      fold_m_ = batches * d_.m;
      offsets_.push_back({0, 0});
    } else {
      fold_m_ = d_.m;
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
    const igemm::Ukernel& uk = igemm::UkernelFor(fold_m_, d_.n, d_.k);
    if (b.constant)
      packed_b_ = igemm::PackConstB(uk, {b.constant->data(), d_.n, b_type_ == DataType::kInt8}, d_.k, d_.n, b_count,
                                    d_.k * d_.n);
    plan_ = igemm::Plan(uk, fold_m_, d_.n, d_.k, true, !b.constant, std::max(1, init.max_threads));
    zb_off_ = layout_.Add(static_cast<size_t>(d_.n) * sizeof(int32_t));
    mult_off_ = layout_.Add(static_cast<size_t>(d_.n) * sizeof(double));
    plan_off_ = layout_.Add(plan_.ScratchBytes());
    return Status::Ok();
  }

  size_t ScratchBytes() const override { return layout_.total(); }

  Status Run(const KernelIO& io) override {
    auto in = [&](size_t i) { return i < io.num_inputs ? io.inputs[i] : nullptr; };
    const uint8_t* a = static_cast<const uint8_t*>(in(s_.a));
    const uint8_t* b = static_cast<const uint8_t*>(in(s_.b));
    igemm::Args g;
    g.m = fold_m_, g.n = d_.n, g.k = d_.k;
    g.a.raw = {nullptr, d_.k, a_type_ == DataType::kInt8};
    g.a.is_signed = a_type_ == DataType::kInt8;
    g.b.raw = {nullptr, d_.n, b_type_ == DataType::kInt8};
    g.b.is_signed = b_type_ == DataType::kInt8;
    if (const void* z = in(s_.a_zp)) g.a.zp.scalar = qlinear::LoadQ(a_type_, z, 0);
    int32_t* zb = ScratchLayout::At<int32_t>(io.scratch, zb_off_);
    if (const void* z = in(s_.b_zp)) {
      if (b_zp_count_ > 1) {
        for (int64_t j = 0; j < d_.n; ++j) zb[j] = qlinear::LoadQ(b_type_, z, j);
        g.b.zp.values = zb;
      } else {
        g.b.zp.scalar = qlinear::LoadQ(b_type_, z, 0);
      }
    }
    qlinear::RequantCtx rq;
    if (q_) {
      double* mult = ScratchLayout::At<double>(io.scratch, mult_off_);
      const float sa = qlinear::LoadScale(scale_type_, in(s_.a_scale), 0);
      const float sy = qlinear::LoadScale(scale_type_, in(s_.y_scale), 0);
      for (int64_t j = 0; j < b_scale_count_; ++j)
        mult[j] = qlinear::Multiplier(scale_type_, sa, qlinear::LoadScale(scale_type_, in(s_.b_scale), j), sy);
      rq.mult = mult;
      rq.mult_col_stride = b_scale_count_ > 1 ? 1 : 0;
      rq.zero_point = in(s_.y_zp) ? qlinear::LoadQ(y_type_, in(s_.y_zp), 0) : 0;
      rq.out_signed = y_type_ == DataType::kInt8;
      rq.ldy = d_.n;
      g.epilogue = qlinear::RequantTile;
      g.ctx = &rq;
    }
    g.ldc = d_.n;
    void* plan_scratch = ScratchLayout::At<uint8_t>(io.scratch, plan_off_);
    const size_t out_elem = q_ ? 1 : sizeof(int32_t);
    for (size_t t = 0; t < offsets_.size(); ++t) {
      const auto [ai, bi] = offsets_[t];
      g.a.raw.data = a + ai * d_.m * d_.k;
      if (!packed_b_.panels.empty()) {
        g.b.packed = packed_b_.group(bi);
        g.b.sums = packed_b_.group_sum(bi);
      } else {
        g.b.raw.data = b + bi * d_.k * d_.n;
      }
      uint8_t* y = static_cast<uint8_t*>(io.outputs[0]) + static_cast<int64_t>(t) * d_.m * d_.n * out_elem;
      rq.y = y;
      g.c = reinterpret_cast<int32_t*>(y);
      plan_.Run(g, io.pool, plan_scratch);
    }
    return Status::Ok();
  }

 private:
  bool q_ = false;
  Slots s_{};
  DataType a_type_{}, b_type_{}, scale_type_ = DataType::kFloat32, y_type_ = DataType::kInt32;
  QMatMulDims d_;
  int64_t fold_m_ = 0, b_zp_count_ = 1, b_scale_count_ = 1;
  std::vector<std::pair<int64_t, int64_t>> offsets_;  // (A matrix, B matrix) per output batch
  igemm::PackedOperand packed_b_;
  igemm::Plan plan_;
  ScratchLayout layout_;
  size_t zb_off_ = 0, mult_off_ = 0, plan_off_ = 0;
};

Expected<KernelPtr> MakeQMatMul(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  auto k = std::make_unique<QMatMulKernel>();
  OC_RETURN_IF_ERROR(k->Init(init));
  return KernelPtr(std::move(k));
}

}  // namespace

void RegisterQLinearMatMulOps(OpRegistry& r) {
  r.Register({.op_type = "MatMulInteger", .min_opset = 10, .infer = InferQMatMul, .kernels = CpuKernel(MakeQMatMul)});
  r.Register({.op_type = "QLinearMatMul", .min_opset = 10, .infer = InferQMatMul, .kernels = CpuKernel(MakeQMatMul),
              .native_types = kHalfTypes});
}

}  // namespace oc

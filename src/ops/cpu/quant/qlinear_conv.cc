// ConvInteger (int32 output) and QLinearConv (requantized int8/uint8 output,
// optional int32 bias) on the integer GEMM: per image and group,
//   Y_g [M/group x P] = W_g [M/group x K] * im2col(X_g) [K x P]
// with K = C/group * kernel volume and P the output positions. Padding reads as
// the input zero point, so it contributes (x_zp - x_zp) = 0 like the
// reference's zero-padded (X - x_zp). Pointwise convolutions (1x1, stride 1,
// no padding) use X as the GEMM operand directly. Constant weights are packed
// once per group. When there are at least as many (image, group) products as
// threads and each is small (depthwise and grouped convs), whole products run
// one per thread; otherwise products run in turn, each split across threads.
// Depthwise layers (one input and output channel per group, 1-D/2-D) skip the
// GEMM for whole-plane sweeps over phase-split padded planes (qlinear_depthwise.h).
// Zero points and scales: X and Y per tensor, W per tensor or per output channel.
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ops/cpu/conv/conv_common.h"
#include "ops/cpu/gemm/integer_gemm.h"
#include "ops/cpu/quant/qlinear_common.h"
#include "ops/cpu/quant/qlinear_depthwise.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// Half-precision scales / data are read and written natively (no legalizing Casts).
constexpr uint64_t kHalfTypes = DataTypeBit(DataType::kFloat16) | DataTypeBit(DataType::kBFloat16);

using qlinear::IsInt8Type;
using qlinear::ScratchLayout;

struct Slots {
  size_t x, w, x_zp, w_zp;
  size_t x_scale = 0, w_scale = 0, y_scale = 0, y_zp = 0, bias = 0;  // QLinearConv only
};
constexpr Slots kConvInteger{0, 1, 2, 3};
constexpr Slots kQLinearConv{0, 3, 2, 5, 1, 4, 6, 7, 8};

bool IsQLinear(const Node& n) { return n.op_type == "QLinearConv"; }

Status InferQConv(Node& n) {
  const bool q = IsQLinear(n);
  const Slots s = q ? kQLinearConv : kConvInteger;
  OC_RETURN_IF_ERROR(RequireInput(n, s.x));
  OC_RETURN_IF_ERROR(RequireInput(n, s.w));
  const Value& x = *n.input(s.x);
  const Value& w = *n.input(s.w);
  if (x.shape.size() < 3 || x.shape.size() > 5 || w.shape.size() != x.shape.size())
    return InvalidArgument(n.Describe(), ": X ", x.ShapeString(), " and W ", w.ShapeString(),
                           " must have the same rank, 3 to 5");
  OC_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConv(n, x.shape, w.shape));
  DataType out = DataType::kInt32;
  if (q) out = n.input(s.y_zp) ? n.input(s.y_zp)->dtype : x.dtype;
  SetOutput(n, 0, out, g.OutputShape());
  return Status::Ok();
}

// Writes im2col rows [r0, r1) of one image group (x at its first channel) as a
// row-major K x P uint8 matrix; taps outside the input read `pad`.
void Im2Col(const ConvGeometry& g, const uint8_t* x, uint8_t pad, int64_t r0, int64_t r1, uint8_t* col) {
  const int64_t kvol = g.KernelSize(), P = g.OutSize();
  const int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2];
  const int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  // Locals, not g's fields: the byte stores below may alias anything, which
  // would make the compiler reload the fields in the inner loops.
  const int64_t sd = g.stride[0], sh = g.stride[1], sw = g.stride[2];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / kvol, t = r % kvol;
    const int64_t kd = t / (g.kernel[1] * g.kernel[2]), kh = t / g.kernel[2] % g.kernel[1], kw = t % g.kernel[2];
    const uint8_t* xc = x + c * ID * IH * IW;
    uint8_t* dst = col + r * P;
    // Output columns whose input column is inside [0, IW).
    const int64_t off_w = kw * g.dilation[2] - g.pad_begin[2];
    int64_t ow_lo = 0, ow_hi = OW;
    while (ow_lo < OW && ow_lo * sw + off_w < 0) ++ow_lo;
    while (ow_hi > ow_lo && (ow_hi - 1) * sw + off_w >= IW) --ow_hi;
    for (int64_t od = 0; od < OD; ++od) {
      const int64_t id = od * sd - g.pad_begin[0] + kd * g.dilation[0];
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t ih = oh * sh - g.pad_begin[1] + kh * g.dilation[1];
        uint8_t* d = dst + (od * OH + oh) * OW;
        if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
          std::memset(d, pad, static_cast<size_t>(OW));
          continue;
        }
        const uint8_t* xr = xc + (id * IH + ih) * IW + off_w;
        std::memset(d, pad, static_cast<size_t>(ow_lo));
        if (sw == 1) {
          if (ow_hi > ow_lo) std::memcpy(d + ow_lo, xr + ow_lo, static_cast<size_t>(ow_hi - ow_lo));
        } else {
          int64_t ow = ow_lo;
#if defined(__SSE2__)
          if (sw == 2) {
            // Every other byte, 16 at a time: mask the even bytes and pack.
            const __m128i lo8 = _mm_set1_epi16(0x00FF);
            for (; ow + 17 <= ow_hi; ow += 16) {  // reads up to x[2*ow + 31]: stay in the row
              const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xr + 2 * ow));
              const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xr + 2 * ow + 16));
              _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ow),
                               _mm_packus_epi16(_mm_and_si128(v0, lo8), _mm_and_si128(v1, lo8)));
            }
          }
#endif
          for (; ow < ow_hi; ++ow) d[ow] = xr[ow * sw];
        }
        if (OW > ow_hi) std::memset(d + ow_hi, pad, static_cast<size_t>(OW - std::max(ow_hi, ow_lo)));
      }
    }
  }
}

class QConvKernel final : public Kernel {
 public:
  Status Init(const KernelInit& init) {
    const Node& n = init.node;
    q_ = IsQLinear(n);
    s_ = q_ ? kQLinearConv : kConvInteger;
    const Value& x = *n.input(s_.x);
    const Value& w = *n.input(s_.w);
    x_type_ = x.dtype;
    w_type_ = w.dtype;
    const qlinear::QuantSlots qs{s_.x, s_.w, s_.x_zp, s_.w_zp, s_.x_scale, s_.w_scale, s_.y_scale, s_.y_zp, "x", "w"};
    OC_RETURN_IF_ERROR(qlinear::CheckQuantOperands(n, qs));
    OC_ASSIGN_OR_RETURN(g_, ResolveConv(n, x.shape, w.shape));
    mg_ = g_.c_out / g_.group;
    cg_ = g_.c_in / g_.group;
    k_ = cg_ * g_.KernelSize();
    p_ = g_.OutSize();
    OC_ASSIGN_OR_RETURN(qlinear::QuantParams qp, qlinear::CheckQuantParams(n, qs, q_, g_.c_out));
    w_zp_count_ = qp.b_zp_count;
    if (q_) {
      w_scale_count_ = qp.b_scale_count;
      scale_type_ = qp.scale_type;
      y_type_ = qp.y_type;
      if (const Value* b = n.input(s_.bias)) {
        if (b->dtype != DataType::kInt32 || b->shape.size() != 1 || b->shape[0] != g_.c_out)
          return InvalidArgument(n.Describe(), ": bias must be int32 of shape [", g_.c_out, "], got ",
                                 DataTypeName(b->dtype), " ", b->ShapeString());
      }
    }
    pointwise_ = g_.KernelSize() == 1;
    for (int i = 0; i < 3; ++i)
      pointwise_ = pointwise_ && g_.stride[i] == 1 && g_.pad_begin[i] == 0 && g_.pad_end[i] == 0;
    const int threads = std::max(1, init.max_threads);
    const int64_t products = g_.batch * g_.group;
    depthwise_ = mg_ == 1 && cg_ == 1 && g_.nd <= 2 && g_.KernelSize() <= kDepthwiseMaxTaps;
    wzp_off_ = layout_.Add(static_cast<size_t>(g_.c_out) * sizeof(int32_t));
    mult_off_ = layout_.Add(static_cast<size_t>(g_.c_out) * sizeof(double));
    if (depthwise_) {
      // Per thread: the wide int32 sums of one plane and its phase-split copy;
      // planes are split across threads.
      slots_ = threads;
      phases_ = qlinear::PhasesOf(g_);
      xp_off_ = (static_cast<size_t>(g_.out[1] * phases_.pws) * sizeof(int32_t) + 63) / 64 * 64;
      slot_bytes_ = xp_off_ + (static_cast<size_t>(phases_.Bytes(g_)) + 63) / 64 * 64;
      slots_off_ = layout_.Add(slot_bytes_ * static_cast<size_t>(slots_));
      return Status::Ok();
    }
    parallel_products_ = threads > 1 && products >= threads && mg_ * p_ * k_ < (int64_t{1} << 22);
    const igemm::Ukernel& uk = igemm::UkernelFor(mg_, p_, k_);
    if (w.constant)
      packed_w_ = igemm::PackConstA(uk, {w.constant->data(), k_, w_type_ == DataType::kInt8}, mg_, k_, g_.group,
                                    mg_ * k_);
    plan_ = igemm::Plan(uk, mg_, p_, k_, !w.constant, true, parallel_products_ ? 1 : threads);
    slots_ = parallel_products_ ? threads : 1;
    col_bytes_ = pointwise_ ? 0 : (static_cast<size_t>(k_ * p_) + 63) / 64 * 64;
    slot_bytes_ = col_bytes_ + plan_.ScratchBytes();
    slots_off_ = layout_.Add(slot_bytes_ * static_cast<size_t>(slots_));
    return Status::Ok();
  }

  size_t ScratchBytes() const override { return layout_.total(); }

  Status Run(const KernelIO& io) override {
    auto in = [&](size_t i) { return i < io.num_inputs ? io.inputs[i] : nullptr; };
    Params p;
    p.x = static_cast<const uint8_t*>(in(s_.x));
    p.w = static_cast<const uint8_t*>(in(s_.w));
    p.x_zp = in(s_.x_zp) ? qlinear::LoadQ(x_type_, in(s_.x_zp), 0) : 0;
    int32_t* wzp = ScratchLayout::At<int32_t>(io.scratch, wzp_off_);
    p.w_zp_scalar = 0;
    if (const void* z = in(s_.w_zp)) {
      if (w_zp_count_ > 1) {
        for (int64_t m = 0; m < g_.c_out; ++m) wzp[m] = qlinear::LoadQ(w_type_, z, m);
        p.w_zp = wzp;
      } else {
        p.w_zp_scalar = qlinear::LoadQ(w_type_, z, 0);
      }
    }
    if (q_) {
      double* mult = ScratchLayout::At<double>(io.scratch, mult_off_);
      const float sx = qlinear::LoadScale(scale_type_, in(s_.x_scale), 0);
      const float sy = qlinear::LoadScale(scale_type_, in(s_.y_scale), 0);
      for (int64_t m = 0; m < w_scale_count_; ++m)
        mult[m] = qlinear::Multiplier(scale_type_, sx, qlinear::LoadScale(scale_type_, in(s_.w_scale), m), sy);
      p.mult = mult;
      p.y_zp = in(s_.y_zp) ? qlinear::LoadQ(y_type_, in(s_.y_zp), 0) : 0;
      p.bias = static_cast<const int32_t*>(in(s_.bias));
    }
    p.y = io.outputs[0];
    const int64_t products = g_.batch * g_.group;
    uint8_t* slots = ScratchLayout::At<uint8_t>(io.scratch, slots_off_);
    if (depthwise_ || parallel_products_) {
      io.pool->ParallelFor(slots_, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          uint8_t* slot = slots + static_cast<size_t>(t) * slot_bytes_;
          for (int64_t i = products * t / slots_; i < products * (t + 1) / slots_; ++i) {
            if (depthwise_) DepthwiseProduct(p, i, reinterpret_cast<int32_t*>(slot));
            else Product(p, i, nullptr, slot);
          }
        }
      });
    } else {
      for (int64_t i = 0; i < products; ++i) Product(p, i, io.pool, slots);
    }
    return Status::Ok();
  }

 private:
  struct Params {
    const uint8_t* x = nullptr;
    const uint8_t* w = nullptr;
    int32_t x_zp = 0, w_zp_scalar = 0, y_zp = 0;
    const int32_t* w_zp = nullptr;  // per output channel, or null
    const double* mult = nullptr;
    const int32_t* bias = nullptr;
    void* y = nullptr;
  };

  // One (image, channel) plane of a depthwise convolution, by direct loops.
  void DepthwiseProduct(const Params& p, int64_t index, int32_t* acc) const {
    const int64_t img = index / g_.group, c = index % g_.group;
    const int64_t taps = g_.KernelSize();
    const int32_t zw = p.w_zp ? p.w_zp[c] : p.w_zp_scalar;
    int32_t wz[kDepthwiseMaxTaps];
    for (int64_t t = 0; t < taps; ++t) wz[t] = qlinear::LoadQ(w_type_, p.w, c * taps + t) - zw;
    const uint8_t* x = p.x + (img * g_.c_in + c) * g_.InSize();
#if defined(__x86_64__) || defined(_M_X64)
    static const bool avx512 = SelectedIsa() == Isa::kAvx512;
#endif
    const int64_t y_off = (img * g_.c_out + c) * p_;
    uint8_t* xph = reinterpret_cast<uint8_t*>(acc) + xp_off_;
    qlinear::BuildPhasePlanes(g_, phases_, x, static_cast<uint8_t>(p.x_zp), xph);
    if (x_type_ == DataType::kInt8) {
      const int8_t* xs = reinterpret_cast<const int8_t*>(xph);
#if defined(__x86_64__) || defined(_M_X64)
      if (avx512) qlinear::DepthwisePhasedS8_avx512(g_, phases_, xs, p.x_zp, wz, acc);
      else
#endif
        qlinear::DepthwisePhased(g_, phases_, xs, p.x_zp, wz, acc);
    } else {
#if defined(__x86_64__) || defined(_M_X64)
      if (avx512) qlinear::DepthwisePhasedU8_avx512(g_, phases_, xph, p.x_zp, wz, acc);
      else
#endif
        qlinear::DepthwisePhased(g_, phases_, xph, p.x_zp, wz, acc);
    }
    const int64_t OH = g_.out[1], OW = g_.out[2], PWs = phases_.pws;
    if (!q_) {
      for (int64_t oh = 0; oh < OH; ++oh)
        std::memcpy(static_cast<int32_t*>(p.y) + y_off + oh * OW, acc + oh * PWs,
                    static_cast<size_t>(OW) * sizeof(int32_t));
      return;
    }
    qlinear::RequantCtx rq;
    rq.mult = p.mult + (w_scale_count_ > 1 ? c : 0);
    rq.bias = p.bias ? p.bias + c : nullptr;
    rq.zero_point = p.y_zp;
    rq.out_signed = y_type_ == DataType::kInt8;
    rq.ldy = OW;
    for (int64_t oh = 0; oh < OH; ++oh) {  // row 0 of the context each time: one bias, one multiplier
      rq.y = static_cast<uint8_t*>(p.y) + y_off + oh * OW;
      qlinear::RequantTile(&rq, 0, 0, 1, OW, acc + oh * PWs, PWs);
    }
  }

  // One (image, group) GEMM; pool null runs it on this thread.
  void Product(const Params& p, int64_t index, ThreadPool* pool, uint8_t* slot) const {
    const int64_t img = index / g_.group, grp = index % g_.group;
    const uint8_t* x = p.x + (img * g_.c_in + grp * cg_) * g_.InSize();
    igemm::Args a;
    a.m = mg_, a.n = p_, a.k = k_;
    a.a.is_signed = w_type_ == DataType::kInt8;
    if (!packed_w_.panels.empty()) {
      a.a.packed = packed_w_.group(grp);
      a.a.sums = packed_w_.group_sum(grp);
    } else {
      a.a.raw = {p.w + grp * mg_ * k_, k_, a.a.is_signed};
    }
    if (p.w_zp) a.a.zp.values = p.w_zp + grp * mg_;
    else a.a.zp.scalar = p.w_zp_scalar;
    a.b.is_signed = x_type_ == DataType::kInt8;
    a.b.zp.scalar = p.x_zp;
    if (pointwise_) {
      a.b.raw = {x, p_, a.b.is_signed};
    } else {
      uint8_t* col = slot;
      const uint8_t pad = static_cast<uint8_t>(p.x_zp);
      if (pool) {
        pool->ParallelFor(k_, std::max<int64_t>(1, 32768 / std::max<int64_t>(p_, 1)),
                          [&](int64_t r0, int64_t r1) { Im2Col(g_, x, pad, r0, r1, col); });
      } else {
        Im2Col(g_, x, pad, 0, k_, col);
      }
      a.b.raw = {col, p_, a.b.is_signed};
    }
    const int64_t y_off = (img * g_.c_out + grp * mg_) * p_;
    qlinear::RequantCtx rq;
    if (q_) {
      rq.mult = p.mult + (w_scale_count_ > 1 ? grp * mg_ : 0);
      rq.mult_row_stride = w_scale_count_ > 1 ? 1 : 0;
      rq.bias = p.bias ? p.bias + grp * mg_ : nullptr;
      rq.zero_point = p.y_zp;
      rq.out_signed = y_type_ == DataType::kInt8;
      rq.y = static_cast<uint8_t*>(p.y) + y_off;
      rq.ldy = p_;
      a.epilogue = qlinear::RequantTile;
      a.ctx = &rq;
    } else {
      a.c = static_cast<int32_t*>(p.y) + y_off;
      a.ldc = p_;
    }
    plan_.Run(a, pool, slot + col_bytes_);
  }

  bool q_ = false;
  Slots s_{};
  DataType x_type_{}, w_type_{}, scale_type_ = DataType::kFloat32, y_type_ = DataType::kInt32;
  ConvGeometry g_;
  int64_t mg_ = 0, cg_ = 0, k_ = 0, p_ = 0;
  int64_t w_zp_count_ = 1, w_scale_count_ = 1;
  bool pointwise_ = false, parallel_products_ = false, depthwise_ = false;
  qlinear::DepthwisePhases phases_;  // depthwise
  size_t xp_off_ = 0;                // depthwise: the phase planes, bytes into the slot
  igemm::PackedOperand packed_w_;
  igemm::Plan plan_;
  ScratchLayout layout_;
  int64_t slots_ = 1;
  size_t wzp_off_ = 0, mult_off_ = 0, slots_off_ = 0, col_bytes_ = 0, slot_bytes_ = 0;
};

Expected<KernelPtr> MakeQConv(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  auto k = std::make_unique<QConvKernel>();
  OC_RETURN_IF_ERROR(k->Init(init));
  return KernelPtr(std::move(k));
}

}  // namespace

void RegisterQLinearConvOps(OpRegistry& r) {
  r.Register({.op_type = "ConvInteger", .min_opset = 10, .infer = InferQConv, .kernels = CpuKernel(MakeQConv)});
  r.Register({.op_type = "QLinearConv", .min_opset = 10, .infer = InferQConv, .kernels = CpuKernel(MakeQConv),
              .native_types = kHalfTypes});
}

}  // namespace oc

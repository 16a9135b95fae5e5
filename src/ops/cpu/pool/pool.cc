// Pooling: MaxPool (with the optional Indices output), AveragePool, LpPool and
// their Global* forms, for 1-D, 2-D and 3-D spatial shapes, float32/float64.
//
// Windows are precomputed per spatial axis in the factory: for every output
// index the first input coordinate and the range of kernel taps that land inside
// the input, so Run() is a branch-free loop nest over (N*C planes) x outputs x
// taps. 1-D and 2-D are run as 3-D with leading unit axes.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/cpu/pool/grads.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

constexpr int kMaxSpatial = 3;

enum class PoolKind { kMax, kAverage, kLp };

struct PoolGeometry {
  int rank = 0;  // spatial rank
  std::vector<int64_t> in, out, kernel, stride, dilation, pad_begin, pad_end;
};

Expected<PoolGeometry> ComputeGeometry(const Node& node, const std::vector<int64_t>& x_shape) {
  PoolGeometry g;
  if (x_shape.size() < 3)
    return InvalidArgument(node.Describe(), ": input X must have rank >= 3 (N, C, spatial...), got rank ",
                           x_shape.size());
  g.rank = static_cast<int>(x_shape.size()) - 2;
  size_t r = static_cast<size_t>(g.rank);
  g.in.assign(x_shape.begin() + 2, x_shape.end());
  g.kernel = node.GetInts("kernel_shape");
  if (g.kernel.size() != r)
    return InvalidArgument(node.Describe(), ": attribute kernel_shape must have ", r,
                           " values for a ", r, "-D input, got ", g.kernel.size());
  g.stride = node.GetInts("strides", std::vector<int64_t>(r, 1));
  g.dilation = node.GetInts("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * r, 0));
  if (g.stride.size() != r || g.dilation.size() != r || pads.size() != 2 * r)
    return InvalidArgument(node.Describe(), ": strides/dilations need ", r, " values and pads ", 2 * r);
  for (size_t i = 0; i < r; ++i) {
    if (g.kernel[i] < 1 || g.stride[i] < 1 || g.dilation[i] < 1)
      return InvalidArgument(node.Describe(), ": kernel_shape, strides and dilations must be >= 1");
    if (pads[i] < 0 || pads[i + r] < 0)
      return InvalidArgument(node.Describe(), ": pads must be >= 0");
  }
  g.pad_begin.assign(pads.begin(), pads.begin() + r);
  g.pad_end.assign(pads.begin() + r, pads.end());
  std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  bool ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  g.out.resize(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t in = g.in[i];
    int64_t extent = (g.kernel[i] - 1) * g.dilation[i] + 1;
    int64_t s = g.stride[i];
    if (in < 0) { g.out[i] = -1; continue; }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      int64_t small = total / 2;
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      g.pad_end[i] = total - g.pad_begin[i];
      g.out[i] = out;
    } else if (auto_pad == "VALID") {
      g.pad_begin[i] = g.pad_end[i] = 0;
      if (in < extent)
        return InvalidArgument(node.Describe(), ": spatial dim ", i, " (", in,
                               ") is smaller than the dilated kernel (", extent, ")");
      g.out[i] = (in - extent) / s + 1;
    } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
      int64_t span = in + g.pad_begin[i] + g.pad_end[i] - extent;
      if (span < 0)
        return InvalidArgument(node.Describe(), ": spatial dim ", i, " (", in, " plus pads) is smaller than the ",
                               "dilated kernel (", extent, ")");
      int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // A window that would start inside the end padding is dropped (as in
      // onnxruntime and PyTorch).
      if (ceil_mode && (out - 1) * s >= in + g.pad_begin[i]) --out;
      g.out[i] = out;
    } else {
      return InvalidArgument(node.Describe(), ": unknown auto_pad '", auto_pad, "'");
    }
  }
  return g;
}

bool IsGlobal(const Node& node) { return node.op_type.rfind("Global", 0) == 0; }

PoolKind KindOf(const std::string& op) {
  if (op.find("Max") != std::string::npos) return PoolKind::kMax;
  if (op.find("Lp") != std::string::npos) return PoolKind::kLp;
  return PoolKind::kAverage;
}

Status InferPool(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  if (x.shape.size() < 3)
    return InvalidArgument(node.Describe(), ": input X must have rank >= 3 (N, C, spatial...), got ",
                           x.ShapeString());
  std::vector<int64_t> out_shape = {x.shape[0], x.shape[1]};
  if (IsGlobal(node)) {
    out_shape.resize(x.shape.size(), 1);
  } else {
    OC_ASSIGN_OR_RETURN(PoolGeometry g, ComputeGeometry(node, x.shape));
    out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  }
  SetOutput(node, 0, x.dtype, out_shape);
  if (node.op_type == "MaxPool") SetOutput(node, 1, DataType::kInt64, out_shape);
  // Batch and channel keep their symbolic names.
  for (size_t o = 0; o < node.outputs.size(); ++o)
    if (Value* y = node.output(o); y && x.dim_params.size() >= 2)
      for (int i = 0; i < 2; ++i) y->dim_params[i] = x.dim_params[i];
  return Status::Ok();
}


// Per spatial axis: where each output's window starts and which taps are inside.
struct AxisWindows {
  int64_t in = 1, dilation = 1;
  std::vector<int64_t> start;        // input coordinate of tap 0 (may be negative)
  std::vector<int32_t> k_lo, k_hi;   // taps [k_lo, k_hi) fall inside the input
  std::vector<int32_t> padded_count; // taps inside input + pads (count_include_pad divisor)
  // Row path: tap k reads input o * stride + tap_offset[k] for outputs o in
  // [tap_lo[k], tap_hi[k]), exactly those where it lands inside the input.
  int64_t stride = 1;
  std::vector<int64_t> tap_offset, tap_lo, tap_hi;
};

AxisWindows MakeAxis(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  AxisWindows a;
  a.in = in;
  a.dilation = d;
  a.start.resize(out);
  a.k_lo.resize(out);
  a.k_hi.resize(out);
  a.padded_count.resize(out);
  a.stride = s;
  for (int64_t t = 0; t < k; ++t) {
    int64_t off = t * d - pb, lo = out, hi = 0;
    for (int64_t o = 0; o < out; ++o)
      if (o * s + off >= 0 && o * s + off < in) { lo = std::min(lo, o); hi = o + 1; }
    a.tap_offset.push_back(off);
    a.tap_lo.push_back(std::min(lo, hi));
    a.tap_hi.push_back(hi);
  }
  for (int64_t o = 0; o < out; ++o) {
    int64_t st = o * s - pb;
    int64_t lo = 0, hi = k, padded = 0;
    while (lo < k && st + lo * d < 0) ++lo;
    while (hi > lo && st + (hi - 1) * d >= in) --hi;
    for (int64_t t = 0; t < k; ++t) padded += (st + t * d < in + pe) ? 1 : 0;
    a.start[o] = st;
    a.k_lo[o] = static_cast<int32_t>(lo);
    a.k_hi[o] = static_cast<int32_t>(std::max(lo, hi));
    a.padded_count[o] = static_cast<int32_t>(padded);
  }
  return a;
}

struct PoolPlan {
  int64_t planes = 0;           // N * C
  int64_t in_size = 0, out_size = 0;
  AxisWindows axis[kMaxSpatial];  // outermost first; unused leading axes are unit
  int64_t index_mul[kMaxSpatial] = {0, 0, 0};  // Indices output: multiplier per axis
  bool count_include_pad = false;
  double p = 2.0;               // LpPool
};

template <typename T, PoolKind K>
class PoolKernel final : public Kernel {
 public:
  explicit PoolKernel(PoolPlan plan) : plan_(std::move(plan)) { max2x2_ = K == PoolKind::kMax && IsPlain2x2(); }

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    int64_t* indices = (K == PoolKind::kMax && io.num_outputs > 1) ? io.out<int64_t>(1) : nullptr;
    int64_t work = plan_.out_size * 8 + 1;
    int64_t grain = std::max<int64_t>(1, 16384 / work);
    io.pool->ParallelFor(plan_.planes, grain, [&](int64_t b, int64_t e) {
      for (int64_t pl = b; pl < e; ++pl) {
        // Rows of one or two outputs (global pooling) gain nothing from the row path.
        if (indices && max2x2_)
          RunPlaneMax2x2(x + pl * plan_.in_size, y + pl * plan_.out_size, indices + pl * plan_.out_size,
                         pl * plan_.in_size);
        else if (indices || plan_.axis[kMaxSpatial - 1].start.size() <= 2)
          RunPlane(x + pl * plan_.in_size, y + pl * plan_.out_size,
                   indices ? indices + pl * plan_.out_size : nullptr, pl * plan_.in_size);
        else
          RunPlaneRows(x + pl * plan_.in_size, y + pl * plan_.out_size);
      }
    });
    return Status::Ok();
  }

 private:
  // Without Indices: each output row accumulates in place, one kernel tap of
  // the innermost axis at a time across the whole row, so the inner loop is a
  // branch-free (strided) sweep the compiler can vectorise.
  void RunPlaneRows(const T* x, T* y) const {
    const AxisWindows& a0 = plan_.axis[0];
    const AxisWindows& a1 = plan_.axis[1];
    const AxisWindows& a2 = plan_.axis[2];
    const int64_t in1 = a1.in, in2 = a2.in, s2 = a2.stride;
    const int64_t n0 = static_cast<int64_t>(a0.start.size()), n1 = static_cast<int64_t>(a1.start.size());
    const int64_t n2 = static_cast<int64_t>(a2.start.size());
    const int64_t k2 = static_cast<int64_t>(a2.tap_offset.size());
    [[maybe_unused]] const T p = static_cast<T>(plan_.p);
    for (int64_t o0 = 0; o0 < n0; ++o0) {
      for (int64_t o1 = 0; o1 < n1; ++o1) {
        T* yr = y + (o0 * n1 + o1) * n2;
        std::fill(yr, yr + n2, K == PoolKind::kMax ? std::numeric_limits<T>::lowest() : T(0));
        for (int32_t k0 = a0.k_lo[o0]; k0 < a0.k_hi[o0]; ++k0) {
          int64_t i0 = a0.start[o0] + k0 * a0.dilation;
          for (int32_t k1 = a1.k_lo[o1]; k1 < a1.k_hi[o1]; ++k1) {
            int64_t i1 = a1.start[o1] + k1 * a1.dilation;
            const T* row = x + (i0 * in1 + i1) * in2;
            for (int64_t t = 0; t < k2; ++t) {
              const T* src = row + a2.tap_offset[t];
              const int64_t lo = a2.tap_lo[t], hi = a2.tap_hi[t];
              if constexpr (K == PoolKind::kMax) {
                if (s2 == 1)
                  for (int64_t o = lo; o < hi; ++o) yr[o] = std::max(yr[o], src[o]);
                else
                  for (int64_t o = lo; o < hi; ++o) yr[o] = std::max(yr[o], src[o * s2]);
              } else if constexpr (K == PoolKind::kAverage) {
                if (s2 == 1)
                  for (int64_t o = lo; o < hi; ++o) yr[o] += src[o];
                else
                  for (int64_t o = lo; o < hi; ++o) yr[o] += src[o * s2];
              } else {
                for (int64_t o = lo; o < hi; ++o) {
                  T v = src[o * s2];
                  yr[o] += p == T(2) ? v * v : std::pow(std::fabs(v), p);
                }
              }
            }
          }
        }
        if constexpr (K == PoolKind::kAverage) {
          int64_t outer = plan_.count_include_pad ? int64_t{a0.padded_count[o0]} * a1.padded_count[o1]
                                                  : int64_t{a0.k_hi[o0] - a0.k_lo[o0]} * (a1.k_hi[o1] - a1.k_lo[o1]);
          for (int64_t o = 0; o < n2; ++o) {
            int64_t inner = plan_.count_include_pad ? a2.padded_count[o] : a2.k_hi[o] - a2.k_lo[o];
            int64_t count = outer * inner;
            yr[o] = count > 0 ? yr[o] / static_cast<T>(count) : T(0);
          }
        } else if constexpr (K == PoolKind::kLp) {
          const T inv_p = static_cast<T>(1.0 / plan_.p);
          for (int64_t o = 0; o < n2; ++o) yr[o] = p == T(2) ? std::sqrt(yr[o]) : std::pow(yr[o], inv_p);
        }
      }
    }
  }

  // A 2-D 2x2 window with stride 2, no padding or dilation and row-major
  // indices: the max pool of CNNs, whose Indices the gradient reads.
  bool IsPlain2x2() const {
    if (plan_.axis[0].start.size() != 1 || plan_.axis[0].k_hi[0] != 1) return false;
    for (int ax = 1; ax < kMaxSpatial; ++ax) {
      const AxisWindows& a = plan_.axis[ax];
      if (a.dilation != 1) return false;
      for (size_t o = 0; o < a.start.size(); ++o)
        if (a.start[o] != static_cast<int64_t>(2 * o) || a.k_lo[o] != 0 || a.k_hi[o] != 2) return false;
    }
    return plan_.index_mul[2] == 1 && plan_.index_mul[1] == plan_.axis[2].in;
  }
  // The first maximum in scan order wins, as in RunPlane.
  void RunPlaneMax2x2(const T* x, T* y, int64_t* ind, int64_t index_base) const {
    const int64_t in2 = plan_.axis[2].in;
    const size_t n1 = plan_.axis[1].start.size(), n2 = plan_.axis[2].start.size();
    for (size_t o1 = 0; o1 < n1; ++o1) {
      const int64_t r = static_cast<int64_t>(2 * o1) * in2;
      const T* r0 = x + r;
      const T* r1 = r0 + in2;
      for (size_t o2 = 0; o2 < n2; ++o2) {
        const int64_t c = static_cast<int64_t>(2 * o2);
        T best = r0[c];
        int64_t at = r + c;
        if (r0[c + 1] > best) best = r0[c + 1], at = r + c + 1;
        if (r1[c] > best) best = r1[c], at = r + in2 + c;
        if (r1[c + 1] > best) best = r1[c + 1], at = r + in2 + c + 1;
        *y++ = best;
        *ind++ = index_base + at;
      }
    }
  }

  void RunPlane(const T* x, T* y, int64_t* ind, int64_t index_base) const {
    const AxisWindows& a0 = plan_.axis[0];
    const AxisWindows& a1 = plan_.axis[1];
    const AxisWindows& a2 = plan_.axis[2];
    const int64_t in1 = a1.in, in2 = a2.in;
    const int64_t d0 = a0.dilation, d1 = a1.dilation, d2 = a2.dilation;
    [[maybe_unused]] const T inv_p = static_cast<T>(1.0 / plan_.p);
    [[maybe_unused]] const T p = static_cast<T>(plan_.p);
    const size_t n0 = a0.start.size(), n1 = a1.start.size(), n2 = a2.start.size();
    for (size_t o0 = 0; o0 < n0; ++o0) {
      for (size_t o1 = 0; o1 < n1; ++o1) {
        for (size_t o2 = 0; o2 < n2; ++o2) {
          T acc = K == PoolKind::kMax ? std::numeric_limits<T>::lowest() : T(0);
          int64_t best = -1;
          for (int32_t k0 = a0.k_lo[o0]; k0 < a0.k_hi[o0]; ++k0) {
            int64_t i0 = a0.start[o0] + k0 * d0;
            for (int32_t k1 = a1.k_lo[o1]; k1 < a1.k_hi[o1]; ++k1) {
              int64_t i1 = a1.start[o1] + k1 * d1;
              const T* row = x + (i0 * in1 + i1) * in2;
              for (int32_t k2 = a2.k_lo[o2]; k2 < a2.k_hi[o2]; ++k2) {
                int64_t i2 = a2.start[o2] + k2 * d2;
                T v = row[i2];
                if constexpr (K == PoolKind::kMax) {
                  if (v > acc || best < 0) {
                    acc = v;
                    best = i0 * plan_.index_mul[0] + i1 * plan_.index_mul[1] + i2 * plan_.index_mul[2];
                  }
                } else if constexpr (K == PoolKind::kAverage) {
                  acc += v;
                } else {
                  acc += p == T(2) ? v * v : std::pow(std::fabs(v), p);
                }
              }
            }
          }
          if constexpr (K == PoolKind::kAverage) {
            int64_t count = plan_.count_include_pad
                                ? int64_t{a0.padded_count[o0]} * a1.padded_count[o1] * a2.padded_count[o2]
                                : int64_t{a0.k_hi[o0] - a0.k_lo[o0]} * (a1.k_hi[o1] - a1.k_lo[o1]) *
                                      (a2.k_hi[o2] - a2.k_lo[o2]);
            acc = count > 0 ? acc / static_cast<T>(count) : T(0);
          } else if constexpr (K == PoolKind::kLp) {
            acc = p == T(2) ? std::sqrt(acc) : std::pow(acc, inv_p);
          }
          *y++ = acc;
          if (ind) *ind++ = best < 0 ? -1 : index_base + best;
        }
      }
    }
  }

  PoolPlan plan_;
  bool max2x2_ = false;
};

template <typename T>
KernelPtr MakePoolTyped(PoolKind kind, PoolPlan plan) {
  switch (kind) {
    case PoolKind::kMax: return KernelPtr(new PoolKernel<T, PoolKind::kMax>(std::move(plan)));
    case PoolKind::kAverage: return KernelPtr(new PoolKernel<T, PoolKind::kAverage>(std::move(plan)));
    case PoolKind::kLp: return KernelPtr(new PoolKernel<T, PoolKind::kLp>(std::move(plan)));
  }
  return nullptr;
}

Expected<KernelPtr> MakePool(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  PoolKind kind = KindOf(n.op_type);
  bool int8_max = kind == PoolKind::kMax && (x.dtype == DataType::kInt8 || x.dtype == DataType::kUInt8);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64 && !int8_max)
    return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported (float32 and float64",
                        kind == PoolKind::kMax ? ", int8, uint8)" : ")");
  if (x.shape.size() < 3)
    return InvalidArgument(n.Describe(), ": input X must have rank >= 3, got ", x.ShapeString());
  int rank = static_cast<int>(x.shape.size()) - 2;
  if (rank > kMaxSpatial)
    return NotSupported(n.Describe(), ": ", rank, "-D pooling is not supported (1-D, 2-D and 3-D only)");
  PoolGeometry g;
  if (IsGlobal(n)) {
    g.rank = rank;
    g.in.assign(x.shape.begin() + 2, x.shape.end());
    g.out.assign(rank, 1);
    g.kernel = g.in;
    g.stride = g.dilation = std::vector<int64_t>(rank, 1);
    g.pad_begin = g.pad_end = std::vector<int64_t>(rank, 0);
  } else {
    OC_ASSIGN_OR_RETURN(g, ComputeGeometry(n, x.shape));
  }
  PoolPlan plan;
  plan.planes = x.shape[0] * x.shape[1];
  plan.in_size = ShapeProduct(g.in);
  plan.out_size = ShapeProduct(g.out);
  int lead = kMaxSpatial - rank;
  for (int i = 0; i < lead; ++i) plan.axis[i] = MakeAxis(1, 1, 1, 1, 1, 0, 0);
  for (int i = 0; i < rank; ++i)
    plan.axis[lead + i] = MakeAxis(g.in[i], g.out[i], g.kernel[i], g.stride[i], g.dilation[i],
                                   g.pad_begin[i], g.pad_end[i]);
  plan.count_include_pad = n.GetInt("count_include_pad", 0) != 0;
  if (kind == PoolKind::kLp) {
    const Attribute* pa = n.FindAttr("p");
    plan.p = !pa ? 2.0 : pa->kind == Attribute::Kind::kFloat ? pa->f : static_cast<double>(pa->i);
    if (!(plan.p > 0))
      return InvalidArgument(n.Describe(), ": attribute p must be positive, got ", plan.p);
  }
  if (kind == PoolKind::kMax && n.output(1)) {
    // Indices are flat over the whole input: row-major, or with the spatial
    // axes in column-major order for storage_order=1.
    int64_t storage_order = n.GetInt("storage_order", 0);
    if (storage_order != 0 && storage_order != 1)
      return InvalidArgument(n.Describe(), ": storage_order must be 0 or 1, got ", storage_order);
    std::vector<int64_t> mul(rank);
    int64_t m = 1;
    if (storage_order == 0)
      for (int i = rank - 1; i >= 0; --i) { mul[i] = m; m *= g.in[i]; }
    else
      for (int i = 0; i < rank; ++i) { mul[i] = m; m *= g.in[i]; }
    for (int i = 0; i < rank; ++i) plan.index_mul[lead + i] = mul[i];
  }
  if (x.dtype == DataType::kInt8) return KernelPtr(new PoolKernel<int8_t, PoolKind::kMax>(std::move(plan)));
  if (x.dtype == DataType::kUInt8) return KernelPtr(new PoolKernel<uint8_t, PoolKind::kMax>(std::move(plan)));
  if (x.dtype == DataType::kFloat64) return MakePoolTyped<double>(kind, std::move(plan));
  return MakePoolTyped<float>(kind, std::move(plan));
}

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  const std::pair<const char*, GradFn> ops[] = {
      {"MaxPool", pool::GradMaxPool},       {"AveragePool", pool::GradAveragePool},
      {"LpPool", nullptr},                  {"GlobalAveragePool", pool::GradGlobalAveragePool},
      {"GlobalMaxPool", pool::GradGlobalMaxPool}, {"GlobalLpPool", nullptr}};
  for (const auto& [op, grad] : ops)
    r.Register({.op_type = op, .infer = InferPool, .kernels = CpuKernel(MakePool), .grad = grad});
}

}  // namespace oc

// Small ops that travel with attention blocks:
//   SwiGLU (opset 28): Y = A * sigmoid(alpha * A) * B, A and B of one shape.
//   TensorScatter (opset 24): KV-cache write. present = past_cache with, for every
//     index before `axis` (whose first entry is the batch b), the update's rows
//     along `axis` written at write_indices[b] + s (modulo the cache length in
//     "circular" mode). Any fixed-size element type: rows are copied as bytes.
//   CausalConvWithState (opset 27): depthwise causal Conv1D over
//     concat(past_state or zeros, input) along time, optional bias and SiLU;
//     present_state is the last kernel-1 steps of that concatenation.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/cpu/elementwise/elementwise_math.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// ---- SwiGLU ----

template <typename T>
class SwiGluKernel final : public Kernel {
 public:
  SwiGluKernel(int64_t n, float alpha) : n_(n), alpha_(alpha) {}
  Status Run(const KernelIO& io) override {
    const T* a = io.in<T>(0);
    const T* b = io.in<T>(1);
    T* y = io.out<T>(0);
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t i0, int64_t i1) {
      if constexpr (std::is_same_v<T, float>) {
        constexpr int64_t kChunk = 256;
        float g[kChunk];
        const auto& mk = ew::MathKernels();
        for (int64_t i = i0; i < i1; i += kChunk) {
          const int64_t len = std::min(kChunk, i1 - i);
          for (int64_t j = 0; j < len; ++j) g[j] = alpha_ * a[i + j];
          mk.sigmoid(g, g, len);
          for (int64_t j = 0; j < len; ++j) y[i + j] = a[i + j] * g[j] * b[i + j];
        }
      } else {
        for (int64_t i = i0; i < i1; ++i) y[i] = a[i] / (T(1) + std::exp(-T(alpha_) * a[i])) * b[i];
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
  float alpha_;
};

Status InferSwiGlu(Node& node) {
  if (node.inputs.size() != 2) return InvalidArgument(node.Describe(), ": expects 2 inputs (A, B)");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& a = *node.input(0);
  const Value& b = *node.input(1);
  if (a.dtype != b.dtype) return InvalidArgument(node.Describe(), ": A and B must have the same type");
  if (a.shape.size() != b.shape.size())
    return InvalidArgument(node.Describe(), ": A ", a.ShapeString(), " and B ", b.ShapeString(),
                           " must have the same shape (no broadcasting)");
  for (size_t i = 0; i < a.shape.size(); ++i)
    if (a.shape[i] >= 0 && b.shape[i] >= 0 && a.shape[i] != b.shape[i])
      return InvalidArgument(node.Describe(), ": A ", a.ShapeString(), " and B ", b.ShapeString(),
                             " must have the same shape (no broadcasting)");
  SetOutputLike(node, 0, a);
  return Status::Ok();
}

Expected<KernelPtr> MakeSwiGlu(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (n.input(0)->shape != n.input(1)->shape)
    return InvalidArgument(n.Describe(), ": A and B must have the same shape");
  const int64_t count = n.input(0)->NumElements();
  const float alpha = n.GetFloat("alpha", 1.f);
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: return KernelPtr(new SwiGluKernel<float>(count, alpha));
    case DataType::kFloat64: return KernelPtr(new SwiGluKernel<double>(count, alpha));
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
}

// ---- TensorScatter ----

class TensorScatterKernel final : public Kernel {
 public:
  TensorScatterKernel(std::string node, size_t total_bytes, int64_t batch, int64_t prefix, int64_t max_len,
                      int64_t upd_len, size_t row_bytes, bool circular)
      : node_(std::move(node)), total_bytes_(total_bytes), batch_(batch), prefix_(prefix), max_len_(max_len),
        upd_len_(upd_len), row_bytes_(row_bytes), circular_(circular) {}

  Status Run(const KernelIO& io) override {
    const uint8_t* past = io.in<uint8_t>(0);
    const uint8_t* upd = io.in<uint8_t>(1);
    const int64_t* wi = io.num_inputs > 2 && io.inputs[2] ? io.in<int64_t>(2) : nullptr;
    uint8_t* out = io.out<uint8_t>(0);
    for (int64_t b = 0; b < batch_; ++b) {
      const int64_t start = wi ? wi[b] : 0;
      if (!circular_ && (start < 0 || start + upd_len_ > max_len_))
        return OutOfRange(node_, ": write_indices[", b, "] = ", start, " with ", upd_len_,
                          " update steps does not fit the cache length ", max_len_);
    }
    if (out != past) std::memcpy(out, past, total_bytes_);
    const int64_t per_batch = prefix_ / std::max<int64_t>(batch_, 1);
    for (int64_t p = 0; p < prefix_; ++p) {
      const int64_t b = per_batch ? p / per_batch : 0;
      const int64_t start = wi ? wi[b] : 0;
      for (int64_t s = 0; s < upd_len_; ++s) {
        int64_t dst = start + s;
        if (circular_) dst = (dst % max_len_ + max_len_) % max_len_;
        std::memcpy(out + (p * max_len_ + dst) * row_bytes_, upd + (p * upd_len_ + s) * row_bytes_, row_bytes_);
      }
    }
    return Status::Ok();
  }

 private:
  std::string node_;
  size_t total_bytes_;
  int64_t batch_, prefix_, max_len_, upd_len_;
  size_t row_bytes_;
  bool circular_;
};

Status InferTensorScatter(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  if (node.input(0)->dtype != node.input(1)->dtype)
    return InvalidArgument(node.Describe(), ": past_cache and update must have the same type");
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

Expected<KernelPtr> MakeTensorScatter(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& cs = n.input(0)->shape;
  const auto& us = n.input(1)->shape;
  const int64_t rank = static_cast<int64_t>(cs.size());
  if (rank < 2 || us.size() != cs.size())
    return InvalidArgument(n.Describe(), ": past_cache ", n.input(0)->ShapeString(), " and update ",
                           n.input(1)->ShapeString(), " must have the same rank >= 2");
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", -2), rank));
  if (axis == 0) return InvalidArgument(n.Describe(), ": axis must not be the batch axis 0");
  for (int64_t i = 0; i < rank; ++i) {
    if (i != axis && cs[i] != us[i])
      return InvalidArgument(n.Describe(), ": update ", n.input(1)->ShapeString(), " must match past_cache ",
                             n.input(0)->ShapeString(), " except along axis ", axis);
    if (i == axis && us[i] > cs[i])
      return InvalidArgument(n.Describe(), ": update ", n.input(1)->ShapeString(),
                             " is longer than past_cache along axis ", axis);
  }
  if (n.input(2) && n.input(2)->shape != std::vector<int64_t>{cs[0]})
    return InvalidArgument(n.Describe(), ": write_indices must have shape [", cs[0], "], got ",
                           n.input(2)->ShapeString());
  const std::string mode = n.GetString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return InvalidArgument(n.Describe(), ": mode must be 'linear' or 'circular', got '", mode, "'");
  const size_t elem = DataTypeSize(n.input(0)->dtype);
  if (elem == 0) return ew::UnsupportedDtype(n, n.input(0)->dtype);
  const size_t row_bytes = static_cast<size_t>(ShapeProduct(cs, axis + 1, cs.size())) * elem;
  return KernelPtr(new TensorScatterKernel(n.Describe(), static_cast<size_t>(n.input(0)->ByteSize()), cs[0],
                                           ShapeProduct(cs, 0, axis), cs[axis], us[axis], row_bytes,
                                           mode == "circular"));
}

// ---- CausalConvWithState ----

template <typename T>
class CausalConvKernel final : public Kernel {
 public:
  CausalConvKernel(int64_t batch, int64_t channels, int64_t len, int64_t k, bool silu)
      : batch_(batch), channels_(channels), len_(len), k_(k), silu_(silu) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* w = io.in<T>(1);
    const T* bias = io.num_inputs > 2 && io.inputs[2] ? io.in<T>(2) : nullptr;
    const T* past = io.num_inputs > 3 && io.inputs[3] ? io.in<T>(3) : nullptr;
    T* y = io.out<T>(0);
    T* state = io.num_outputs > 1 ? io.out<T>(1) : nullptr;
    const int64_t ks = k_ - 1;
    io.pool->ParallelFor(batch_ * channels_, std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(len_ * k_, 1)),
                         [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % channels_;
        const T* xr = x + r * len_;
        const T* pr = past ? past + r * ks : nullptr;
        const T* wr = w + c * k_;
        // Element t of concat(past or zeros, x).
        auto at = [&](int64_t t) -> T { return t < ks ? (pr ? pr[t] : T(0)) : xr[t - ks]; };
        T* yr = y + r * len_;
        for (int64_t t = 0; t < len_; ++t) {
          T acc = bias ? bias[c] : T(0);
          if (t >= ks) {
            const T* xs = xr + t - ks;
            for (int64_t j = 0; j < k_; ++j) acc += wr[j] * xs[j];
          } else {
            for (int64_t j = 0; j < k_; ++j) acc += wr[j] * at(t + j);
          }
          yr[t] = silu_ ? acc / (T(1) + std::exp(-acc)) : acc;
        }
        if (state) {
          T* sr = state + r * ks;
          for (int64_t j = 0; j < ks; ++j) sr[j] = at(len_ + j);
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t batch_, channels_, len_, k_;
  bool silu_;
};

Status InferCausalConv(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& w = *node.input(1);
  if (x.shape.size() != 3 || w.shape.size() != 3)
    return InvalidArgument(node.Describe(), ": input must be [batch, channels, length] and weight [channels, 1, k], got ",
                           x.ShapeString(), " and ", w.ShapeString());
  SetOutputLike(node, 0, x);
  SetOutput(node, 1, x.dtype, {x.shape[0], x.shape[1], w.shape[2] < 0 ? -1 : w.shape[2] - 1});
  return Status::Ok();
}

Expected<KernelPtr> MakeCausalConv(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& xs = n.input(0)->shape;
  const auto& ws = n.input(1)->shape;
  if (ws[0] != xs[1] || ws[1] != 1 || ws[2] < 1)
    return InvalidArgument(n.Describe(), ": weight must be [", xs[1], ", 1, k >= 1], got ", n.input(1)->ShapeString());
  if (n.input(2) && n.input(2)->shape != std::vector<int64_t>{xs[1]})
    return InvalidArgument(n.Describe(), ": bias must be [", xs[1], "], got ", n.input(2)->ShapeString());
  if (n.input(3) && n.input(3)->shape != std::vector<int64_t>{xs[0], xs[1], ws[2] - 1})
    return InvalidArgument(n.Describe(), ": past_state must be [", xs[0], ",", xs[1], ",", ws[2] - 1, "], got ",
                           n.input(3)->ShapeString());
  const std::string act = n.GetString("activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    return InvalidArgument(n.Describe(), ": activation must be none, silu or swish, got '", act, "'");
  const DataType t = n.input(0)->dtype;
  for (size_t i = 1; i < 4; ++i)
    if (n.input(i) && n.input(i)->dtype != t)
      return InvalidArgument(n.Describe(), ": input ", i, " must have the input's type ", DataTypeName(t));
  const bool silu = act != "none";
  switch (t) {
    case DataType::kFloat32: return KernelPtr(new CausalConvKernel<float>(xs[0], xs[1], xs[2], ws[2], silu));
    case DataType::kFloat64: return KernelPtr(new CausalConvKernel<double>(xs[0], xs[1], xs[2], ws[2], silu));
    default: return ew::UnsupportedDtype(n, t);
  }
}

}  // namespace

void RegisterAttentionMiscOps(OpRegistry& r) {
  r.Register({.op_type = "SwiGLU", .min_opset = 28, .infer = InferSwiGlu, .kernels = CpuKernel(MakeSwiGlu)});
  // Copies bytes: every element type as it is, no Casts around it.
  r.Register({.op_type = "TensorScatter", .min_opset = 24, .infer = InferTensorScatter, .kernels = CpuKernel(MakeTensorScatter),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "CausalConvWithState", .min_opset = 27, .infer = InferCausalConv, .kernels = CpuKernel(MakeCausalConv)});
}

}  // namespace oc

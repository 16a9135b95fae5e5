// BatchNormalization in inference mode: y = (x - mean) / sqrt(var + eps) * scale + B,
// folded per channel into y = a * x + b. float32 / float64.
//
// Opset 7/8 `spatial=0` (per-activation statistics, parameters shaped [C, D1..])
// is supported when the parameters hold C * D1 * ... values. Training mode of
// opset 14+ (training_mode=1) normalises with the batch statistics (biased
// variance over N and the spatial axes) and outputs the updated running mean and
// variance (input * momentum + batch * (1 - momentum)). The saved_mean/saved_var
// outputs of the training form of opsets < 14 are not supported.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/cpu/norm/grads.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferBatchNorm(Node& node) {
  for (size_t i = 0; i < 5; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& x = *node.input(0);
  if (x.shape.size() < 2)
    return InvalidArgument(node.Describe(), ": input X must have rank >= 2 (N, C, ...), got ", x.ShapeString());
  SetOutputLike(node, 0, x);
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.output(i)) SetOutputLike(node, i, *node.input(i < 3 ? i + 2 : 3));
  return Status::Ok();
}

template <typename T>
class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(int64_t n, int64_t c, int64_t inner, bool per_element, T eps, size_t stat_bytes)
      : n_(n), c_(c), inner_(inner), per_element_(per_element), eps_(eps), stat_bytes_(stat_bytes) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* scale = io.in<T>(1);
    const T* bias = io.in<T>(2);
    const T* mean = io.in<T>(3);
    const T* var = io.in<T>(4);
    T* y = io.out<T>(0);
    int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(inner_, 1));
    io.pool->ParallelFor(n_ * c_, grain, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        int64_t ch = plane % c_;
        const T* xp = x + plane * inner_;
        T* yp = y + plane * inner_;
        if (!per_element_) {
          T a = scale[ch] / std::sqrt(var[ch] + eps_);
          T off = bias[ch] - mean[ch] * a;
          for (int64_t i = 0; i < inner_; ++i) yp[i] = xp[i] * a + off;
        } else {
          int64_t p0 = ch * inner_;
          for (int64_t i = 0; i < inner_; ++i) {
            T a = scale[p0 + i] / std::sqrt(var[p0 + i] + eps_);
            yp[i] = (xp[i] - mean[p0 + i]) * a + bias[p0 + i];
          }
        }
      }
    });
    // Running statistics are unchanged in inference.
    for (size_t o = 1; o < 3 && o < io.num_outputs; ++o)
      if (io.outputs[o]) std::memcpy(io.outputs[o], io.inputs[o + 2], stat_bytes_);
    return Status::Ok();
  }

 private:
  int64_t n_, c_, inner_;
  bool per_element_;
  T eps_;
  size_t stat_bytes_;
};

// training_mode=1: statistics of the batch, per channel, in double.
template <typename T>
class BatchNormTrainKernel final : public Kernel {
 public:
  BatchNormTrainKernel(int64_t n, int64_t c, int64_t inner, double eps, double momentum)
      : n_(n), c_(c), inner_(inner), eps_(eps), momentum_(momentum) {}

  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    const T* scale = io.in<T>(1);
    const T* bias = io.in<T>(2);
    const T* mean_in = io.in<T>(3);
    const T* var_in = io.in<T>(4);
    T* y = io.out<T>(0);
    T* mean_out = io.num_outputs > 1 ? io.out<T>(1) : nullptr;
    T* var_out = io.num_outputs > 2 ? io.out<T>(2) : nullptr;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n_ * inner_));
    io.pool->ParallelFor(c_, grain, [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch) {
        double sum = 0;
        for (int64_t i = 0; i < n_; ++i) {
          const T* xp = x + (i * c_ + ch) * inner_;
          for (int64_t k = 0; k < inner_; ++k) sum += static_cast<double>(xp[k]);
        }
        const double count = static_cast<double>(std::max<int64_t>(1, n_ * inner_));
        const double mean = sum / count;
        double sq = 0;
        for (int64_t i = 0; i < n_; ++i) {
          const T* xp = x + (i * c_ + ch) * inner_;
          for (int64_t k = 0; k < inner_; ++k) {
            double d = static_cast<double>(xp[k]) - mean;
            sq += d * d;
          }
        }
        const double var = sq / count;
        const double a = static_cast<double>(scale[ch]) / std::sqrt(var + eps_);
        const double off = static_cast<double>(bias[ch]) - mean * a;
        for (int64_t i = 0; i < n_; ++i) {
          const T* xp = x + (i * c_ + ch) * inner_;
          T* yp = y + (i * c_ + ch) * inner_;
          for (int64_t k = 0; k < inner_; ++k) yp[k] = static_cast<T>(static_cast<double>(xp[k]) * a + off);
        }
        if (mean_out)
          mean_out[ch] = static_cast<T>(static_cast<double>(mean_in[ch]) * momentum_ + mean * (1 - momentum_));
        if (var_out)
          var_out[ch] = static_cast<T>(static_cast<double>(var_in[ch]) * momentum_ + var * (1 - momentum_));
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_, c_, inner_;
  double eps_, momentum_;
};

Expected<KernelPtr> MakeBatchNorm(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64)
    return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype),
                        " is not supported (float32 and float64 only)");
  const bool training = n.opset >= 14 && n.GetInt("training_mode", 0) != 0;
  if (n.opset < 7 && n.GetInt("is_test", 0) == 0 && (n.output(1) || n.output(2)))
    return NotSupported(n.Describe(), ": training (is_test=0 with statistics outputs) is not supported");
  for (size_t o = 3; o < n.outputs.size(); ++o)
    if (n.output(o))
      return NotSupported(n.Describe(), ": output ", o,
                          " (saved mean/variance) is only produced in training, which is not supported");
  for (size_t i = 1; i < 5; ++i)
    if (n.input(i)->dtype != x.dtype)
      return InvalidArgument(n.Describe(), ": input ", i, " has dtype ", DataTypeName(n.input(i)->dtype),
                             ", expected ", DataTypeName(x.dtype), " like X");
  int64_t batch = x.shape[0], c = x.shape[1];
  int64_t inner = ShapeProduct(x.shape, 2, x.shape.size());
  int64_t count = n.input(1)->NumElements();
  bool per_element = false;
  if (count != c) {
    if (n.GetInt("spatial", 1) == 0 && count == c * inner) per_element = true;
    else
      return InvalidArgument(n.Describe(), ": scale has ", count, " values, expected C = ", c);
  }
  for (size_t i = 2; i < 5; ++i)
    if (n.input(i)->NumElements() != count)
      return InvalidArgument(n.Describe(), ": input ", i, " has ", n.input(i)->NumElements(),
                             " values, expected ", count, " like scale");
  double eps = n.GetFloat("epsilon", 1e-5f);
  if (training) {
    if (per_element)
      return NotSupported(n.Describe(), ": training_mode=1 with per-element (spatial=0) statistics");
    // The momentum attribute is a float: keep its float value, as the reference does.
    double momentum = n.GetFloat("momentum", 0.9f);
    if (x.dtype == DataType::kFloat64)
      return KernelPtr(new BatchNormTrainKernel<double>(batch, c, inner, eps, momentum));
    return KernelPtr(new BatchNormTrainKernel<float>(batch, c, inner, eps, momentum));
  }
  size_t stat_bytes = static_cast<size_t>(n.input(3)->ByteSize());
  if (x.dtype == DataType::kFloat64)
    return KernelPtr(new BatchNormKernel<double>(batch, c, inner, per_element, eps, stat_bytes));
  return KernelPtr(new BatchNormKernel<float>(batch, c, inner, per_element, static_cast<float>(eps), stat_bytes));
}

}  // namespace

void RegisterBatchNormOps(OpRegistry& r) {
  r.Register({.op_type = "BatchNormalization", .infer = InferBatchNorm, .kernels = CpuKernel(MakeBatchNorm),
              .grad = norm::GradBatchNorm});
}

}  // namespace oc

// Identity and Dropout (a copy with an all-true mask unless training with a
// ratio above 0: then a seeded MT19937 mask, see below).
// Also the reference for how an op group is written: an infer function, a kernel
// class with everything precomputed in its factory, and one OpDef per op.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <string>

#include "ops/cpu/tensor/grads.h"
#include "ops/cpu/common/cast_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferIdentity(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  if (node.op_type == "Dropout" && node.output(1)) {
    SetOutputLike(node, 1, *node.input(0));
    node.output(1)->dtype = DataType::kBool;
  }
  return Status::Ok();
}

class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(size_t bytes) : bytes_(bytes) {}
  Status Run(const KernelIO& io) override {
    if (io.outputs[0] != io.inputs[0]) std::memcpy(io.outputs[0], io.inputs[0], bytes_);
    return Status::Ok();
  }

 private:
  size_t bytes_;
};

Expected<KernelPtr> MakeCopy(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  return KernelPtr(new CopyKernel(static_cast<size_t>(init.node.input(0)->ByteSize())));
}

// ---- Dropout -------------------------------------------------------------------
//
// Inference (no training_mode, or false, or ratio 0) is a copy with an all-true
// mask. Training with ratio r > 0 keeps element i when u_i >= r and scales it by
// 1 / (1 - r), where u_0, u_1, ... are uniform doubles in [0, 1) drawn in
// row-major order from an MT19937 generator seeded with the `seed` attribute,
// each double made of two 32-bit draws (a >> 5, b >> 6) / 2^53. That is the
// generator and the draw numpy's legacy RandomState uses, so a seeded Dropout
// reproduces the masks of the ONNX reference. Every run reseeds: the mask is a
// function of (seed, shape). Without a seed, each run takes a fresh seed.

double ScalarAsDouble(const void* p, DataType t) {
  switch (t) {
    case DataType::kFloat32: return *static_cast<const float*>(p);
    case DataType::kFloat64: return *static_cast<const double*>(p);
    case DataType::kFloat16: return ew::HalfToFloat(*static_cast<const uint16_t*>(p));
    case DataType::kBFloat16: return ew::BFloat16ToFloat(*static_cast<const uint16_t*>(p));
    default: return 0.5;
  }
}

struct DropoutSpec {
  std::string node;
  DataType dtype = DataType::kFloat32;
  int64_t count = 0;
  size_t bytes = 0;
  bool has_mask = false;
  // ratio: from input 1 at run time (ratio_dtype set) or this constant value.
  DataType ratio_dtype = DataType::kUndefined;
  double ratio = 0.5;
  // training: false, true, or read from input 2 at run time.
  enum class Training { kNo, kYes, kRuntime } training = Training::kNo;
  bool seeded = false;
  uint32_t seed = 0;
};

class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(DropoutSpec s) : s_(std::move(s)) {}

  Status Run(const KernelIO& io) override {
    bool training = s_.training == DropoutSpec::Training::kYes ||
                    (s_.training == DropoutSpec::Training::kRuntime && io.inputs[2] &&
                     *static_cast<const uint8_t*>(io.inputs[2]) != 0);
    double ratio = s_.ratio_dtype != DataType::kUndefined ? ScalarAsDouble(io.inputs[1], s_.ratio_dtype) : s_.ratio;
    bool* mask = s_.has_mask && io.num_outputs > 1 ? static_cast<bool*>(io.outputs[1]) : nullptr;
    if (!training || ratio == 0) {
      if (io.outputs[0] != io.inputs[0]) std::memcpy(io.outputs[0], io.inputs[0], s_.bytes);
      if (mask) std::fill(mask, mask + s_.count, true);
      return Status::Ok();
    }
    if (!(ratio > 0 && ratio <= 1))
      return InvalidArgument(s_.node, ": ratio must be in [0, 1], got ", ratio);
    if (s_.dtype == DataType::kFloat32) return Drop<float>(io, ratio, mask);
    if (s_.dtype == DataType::kFloat64) return Drop<double>(io, ratio, mask);
    return NotSupported(s_.node, ": training-mode Dropout of ", DataTypeName(s_.dtype),
                        " is not supported (float32 and float64 only)");
  }

 private:
  template <typename T>
  Status Drop(const KernelIO& io, double ratio, bool* mask) {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    const uint32_t seed = s_.seeded ? s_.seed : static_cast<uint32_t>(next_seed_.fetch_add(0x9E3779B9u));
    std::mt19937 gen(seed);
    // The scale in the element type, as the reference computes 1 / (1 - r).
    const T scale = ratio < 1 ? T(1) / (T(1) - static_cast<T>(ratio)) : T(0);
    for (int64_t i = 0; i < s_.count; ++i) {
      const uint32_t a = gen() >> 5, b = gen() >> 6;
      const double u = (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
      const bool keep = u >= ratio;
      y[i] = keep ? x[i] * scale : T(0);
      if (mask) mask[i] = keep;
    }
    return Status::Ok();
  }

  DropoutSpec s_;
  std::atomic<uint32_t> next_seed_{std::random_device{}()};
};

Expected<KernelPtr> MakeDropout(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  const Node& n = init.node;
  DropoutSpec s;
  s.node = n.Describe();
  s.dtype = n.input(0)->dtype;
  s.count = n.input(0)->NumElements();
  s.bytes = static_cast<size_t>(n.input(0)->ByteSize());
  s.has_mask = n.output(1) != nullptr;
  if (n.opset >= 12) {
    if (const Value* ratio = n.input(1)) {
      if (auto c = ConstFloats(ratio); c && c->size() == 1) s.ratio = (*c)[0];
      else if (ratio->constant && ratio->constant->size() == DataTypeSize(ratio->dtype))
        s.ratio = ScalarAsDouble(ratio->constant->data(), ratio->dtype);
      else s.ratio_dtype = ratio->dtype;
    }
    if (const Value* training = n.input(2)) {
      if (!training->constant) s.training = DropoutSpec::Training::kRuntime;
      else if (training->constant->size() && training->constant->data()[0]) s.training = DropoutSpec::Training::kYes;
    }
    if (const Attribute* seed = n.FindAttr("seed")) {
      s.seeded = true;
      s.seed = static_cast<uint32_t>(seed->kind == Attribute::Kind::kFloat ? static_cast<int64_t>(seed->f) : seed->i);
    }
  }
  if (s.training != DropoutSpec::Training::kNo && s.dtype != DataType::kFloat32 && s.dtype != DataType::kFloat64 &&
      s.ratio_dtype == DataType::kUndefined && s.ratio != 0)
    return NotSupported(s.node, ": training-mode Dropout of ", DataTypeName(s.dtype),
                        " is not supported (float32 and float64 only)");
  return KernelPtr(new DropoutKernel(std::move(s)));
}

}  // namespace

void RegisterMiscOps(OpRegistry& r) {
  r.Register({.op_type = "Identity", .infer = InferIdentity, .kernels = CpuKernel(MakeCopy),
              .native_types = kAllDataTypes, .grad = tensor::GradReshapeLike});
  r.Register({.op_type = "Dropout", .infer = InferIdentity, .kernels = CpuKernel(MakeDropout), .grad = tensor::GradDropout});
}

}  // namespace oc

// Random generators: Bernoulli (y[i] = 1 with probability x[i], else 0),
// RandomUniform / RandomNormal (shape from an attribute) and their *Like forms
// (shape, and by default dtype, of the input).
//
// Random numbers are counter-based (no generator state to share between
// threads or concurrent runs): element i of run k draws
// SplitMix64(key + k * 2^32 + i)'s top 53 bits as a uniform u in [0, 1), and
// y = u < p. With the `seed` attribute the key is derived from it, so a freshly
// loaded model replays the same sequence of runs on every machine; without it
// the key comes from std::random_device when the kernel is created. Normal
// draws use Box-Muller on two such uniforms. The Bernoulli draws
// cannot equal numpy's (the ONNX node tests' expected outputs come from
// numpy.random.binomial), so those tests are excluded, not matched.
#include <atomic>
#include <cmath>
#include <numbers>
#include <cstring>
#include <random>

#include "ops/cpu/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double UniformAt(uint64_t key, uint64_t run, uint64_t i) {
  return static_cast<double>(SplitMix64(key + (run << 32) + i) >> 11) * 0x1.0p-53;
}

Expected<DataType> BernoulliOutputType(const Node& n) {
  const DataType in = n.input(0) ? n.input(0)->dtype : DataType::kUndefined;
  if (!n.HasAttr("dtype")) return in;
  const int64_t code = n.GetInt("dtype", 0);
  if (!IsKnownDataType(static_cast<int32_t>(code)))
    return InvalidArgument(n.Describe(), ": dtype ", code, " is not a known element type");
  return static_cast<DataType>(code);
}

Status InferBernoulli(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_ASSIGN_OR_RETURN(DataType t, BernoulliOutputType(node));
  SetOutputLike(node, 0, *node.input(0));
  node.output(0)->dtype = t;
  return Status::Ok();
}

uint64_t KeyOf(const Node& n) {
  if (n.HasAttr("seed")) {
    const float seed = n.GetFloat("seed", 0.f);
    uint32_t bits;
    std::memcpy(&bits, &seed, sizeof bits);
    return SplitMix64(bits);
  }
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

template <typename TI, typename TO>
void DrawTyped(const void* xv, void* yv, int64_t n, uint64_t key, uint64_t run) {
  const TI* x = static_cast<const TI*>(xv);
  TO* y = static_cast<TO*>(yv);
  for (int64_t i = 0; i < n; ++i)
    y[i] = UniformAt(key, run, static_cast<uint64_t>(i)) < static_cast<double>(x[i]) ? TO(1) : TO(0);
}

using DrawFn = void (*)(const void*, void*, int64_t, uint64_t, uint64_t);

class BernoulliKernel final : public Kernel {
 public:
  BernoulliKernel(DrawFn fn, int64_t n, uint64_t key) : fn_(fn), n_(n), key_(key) {}
  Status Run(const KernelIO& io) override {
    const uint64_t run = runs_.fetch_add(1, std::memory_order_relaxed);
    fn_(io.inputs[0], io.outputs[0], n_, key_, run);
    return Status::Ok();
  }

 private:
  DrawFn fn_;
  int64_t n_;
  uint64_t key_;
  std::atomic<uint64_t> runs_{0};
};

template <typename TI>
DrawFn DrawFor(DataType out) {
  DrawFn fn = nullptr;
  if (out == DataType::kBool) return DrawTyped<TI, bool>;
  DispatchArithmetic(out, [&](auto tag) { fn = DrawTyped<TI, decltype(tag)>; });
  return fn;
}

Expected<KernelPtr> MakeBernoulli(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(DataType out, BernoulliOutputType(n));
  DrawFn fn = nullptr;
  switch (n.input(0)->dtype) {
    case DataType::kFloat32: fn = DrawFor<float>(out); break;
    case DataType::kFloat64: fn = DrawFor<double>(out); break;
    default:
      return NotSupported(n.Describe(), ": element type ", DataTypeName(n.input(0)->dtype),
                          " (supported: float32, float64)");
  }
  if (!fn) return NotSupported(n.Describe(), ": output dtype ", DataTypeName(out), " is not supported");
  return KernelPtr(new BernoulliKernel(fn, n.input(0)->NumElements(), KeyOf(n)));
}

// ---- RandomUniform / RandomNormal (and *Like) ------------------------------------------------

bool IsLike(const Node& n) { return n.op_type == "RandomUniformLike" || n.op_type == "RandomNormalLike"; }

Expected<DataType> GeneratorType(const Node& n) {
  DataType def = DataType::kFloat32;
  if (IsLike(n) && n.input(0)) def = n.input(0)->dtype;
  const int64_t code = n.GetInt("dtype", static_cast<int64_t>(def));
  const DataType t = static_cast<DataType>(code);
  if (t != DataType::kFloat32 && t != DataType::kFloat64)
    return NotSupported(n.Describe(), ": dtype ", DataTypeName(t), " (supported: float32, float64)");
  return t;
}

Status InferGenerator(Node& node) {
  OC_ASSIGN_OR_RETURN(DataType t, GeneratorType(node));
  if (IsLike(node)) {
    OC_RETURN_IF_ERROR(RequireInput(node, 0));
    SetOutputLike(node, 0, *node.input(0));
    node.output(0)->dtype = t;
    return Status::Ok();
  }
  if (!node.HasAttr("shape")) return InvalidArgument(node.Describe(), ": required attribute 'shape' is missing");
  std::vector<int64_t> shape = node.GetInts("shape");
  for (int64_t d : shape)
    if (d < 0) return InvalidArgument(node.Describe(), ": shape has a negative dim ", d);
  SetOutput(node, 0, t, shape);
  return Status::Ok();
}

template <typename T>
class GeneratorKernel final : public Kernel {
 public:
  GeneratorKernel(bool normal, double a, double b, int64_t n, uint64_t key)
      : normal_(normal), a_(a), b_(b), n_(n), key_(key) {}
  Status Run(const KernelIO& io) override {
    const uint64_t run = runs_.fetch_add(1, std::memory_order_relaxed);
    T* y = io.out<T>(0);
    for (int64_t i = 0; i < n_; ++i) {
      const uint64_t k = static_cast<uint64_t>(i);
      if (normal_) {
        // Box-Muller; 1 - u keeps the log argument in (0, 1].
        const double u1 = 1.0 - UniformAt(key_, run, 2 * k), u2 = UniformAt(key_, run, 2 * k + 1);
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
        y[i] = static_cast<T>(a_ + b_ * z);  // a = mean, b = scale
      } else {
        y[i] = static_cast<T>(a_ + (b_ - a_) * UniformAt(key_, run, k));  // a = low, b = high
      }
    }
    return Status::Ok();
  }

 private:
  bool normal_;
  double a_, b_;
  int64_t n_;
  uint64_t key_;
  std::atomic<uint64_t> runs_{0};
};

Expected<KernelPtr> MakeGenerator(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(DataType t, GeneratorType(n));
  const bool normal = n.op_type == "RandomNormal" || n.op_type == "RandomNormalLike";
  const double a = normal ? n.GetFloat("mean", 0.f) : n.GetFloat("low", 0.f);
  const double b = normal ? n.GetFloat("scale", 1.f) : n.GetFloat("high", 1.f);
  const int64_t count = n.output(0)->NumElements();
  if (t == DataType::kFloat64) return KernelPtr(new GeneratorKernel<double>(normal, a, b, count, KeyOf(n)));
  return KernelPtr(new GeneratorKernel<float>(normal, a, b, count, KeyOf(n)));
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Register({.op_type = "Bernoulli", .min_opset = 15, .infer = InferBernoulli, .cpu = MakeBernoulli,
              .foldable = false});
  for (const char* op : {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"})
    r.Register({.op_type = op, .min_opset = 1, .infer = InferGenerator, .cpu = MakeGenerator, .foldable = false});
}

}  // namespace oc

// Random generators: Bernoulli (y[i] = 1 with probability x[i], else 0),
// RandomUniform / RandomNormal (shape from an attribute) and their *Like forms
// (shape, and by default dtype, of the input), Multinomial (class indices drawn
// from rows of unnormalised log-probabilities).
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
#include <algorithm>
#include <atomic>
#include <limits>
#include <cmath>
#include <numbers>
#include <cstring>
#include <random>
#include <string>

#include "ops/cpu/common/tensor_util.h"
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

// ---- Multinomial -------------------------------------------------------------------------------
//
// Row r of the [batch, classes] input holds unnormalised log-probabilities;
// sample s of that row is the class j whose share of the cumulative sum of
// exp(x - max) first exceeds u * total, u the uniform for element
// r * sample_size + s of the run (the same counter-based draws as above). The
// cumulative sums live in the per-run scratch, in double.

Expected<DataType> MultinomialType(const Node& n) {
  const DataType t = static_cast<DataType>(n.GetInt("dtype", static_cast<int64_t>(DataType::kInt32)));
  if (t != DataType::kInt32 && t != DataType::kInt64)
    return InvalidArgument(n.Describe(), ": dtype must be int32 or int64, got ", DataTypeName(t));
  return t;
}

Status InferMultinomial(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  if (x.shape.size() != 2)
    return InvalidArgument(node.Describe(), ": input must be [batch_size, class_size], got ", x.ShapeString());
  OC_ASSIGN_OR_RETURN(DataType t, MultinomialType(node));
  const int64_t samples = node.GetInt("sample_size", 1);
  if (samples < 1) return InvalidArgument(node.Describe(), ": sample_size must be >= 1, got ", samples);
  SetOutput(node, 0, t, {x.shape[0], samples});
  return Status::Ok();
}

template <typename TI, typename TO>
class MultinomialKernel final : public Kernel {
 public:
  MultinomialKernel(std::string name, int64_t batch, int64_t classes, int64_t samples, uint64_t key)
      : name_(std::move(name)), batch_(batch), classes_(classes), samples_(samples), key_(key) {}

  size_t ScratchBytes() const override { return static_cast<size_t>(classes_) * sizeof(double); }

  Status Run(const KernelIO& io) override {
    const uint64_t run = runs_.fetch_add(1, std::memory_order_relaxed);
    const TI* x = io.in<TI>(0);
    TO* y = io.out<TO>(0);
    double* cum = static_cast<double*>(io.scratch);
    for (int64_t r = 0; r < batch_; ++r) {
      const TI* row = x + r * classes_;
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < classes_; ++j) {
        const double v = static_cast<double>(row[j]);
        if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
          return InvalidArgument(name_, ": row ", r, " has a NaN or +inf log-probability at class ", j);
        top = std::max(top, v);
      }
      if (classes_ == 0 || top == -std::numeric_limits<double>::infinity())
        return InvalidArgument(name_, ": row ", r, " has no class with a non-zero probability");
      double total = 0;
      for (int64_t j = 0; j < classes_; ++j) cum[j] = total += std::exp(static_cast<double>(row[j]) - top);
      for (int64_t s = 0; s < samples_; ++s) {
        const double u = UniformAt(key_, run, static_cast<uint64_t>(r * samples_ + s)) * total;
        // First class whose cumulative sum exceeds u; u < total, so one does
        // (the min() only guards rounding).
        const int64_t j = std::upper_bound(cum, cum + classes_, u) - cum;
        y[r * samples_ + s] = static_cast<TO>(std::min(j, classes_ - 1));
      }
    }
    return Status::Ok();
  }

 private:
  std::string name_;
  int64_t batch_, classes_, samples_;
  uint64_t key_;
  std::atomic<uint64_t> runs_{0};
};

Expected<KernelPtr> MakeMultinomial(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(DataType t, MultinomialType(n));
  const Value& x = *n.input(0);
  const int64_t batch = x.shape[0], classes = x.shape[1], samples = n.GetInt("sample_size", 1);
  const uint64_t key = KeyOf(n);
  const std::string name = n.Describe();
  auto make = [&]<typename TI>() -> Expected<KernelPtr> {
    if (t == DataType::kInt64) return KernelPtr(new MultinomialKernel<TI, int64_t>(name, batch, classes, samples, key));
    return KernelPtr(new MultinomialKernel<TI, int32_t>(name, batch, classes, samples, key));
  };
  if (x.dtype == DataType::kFloat32) return make.operator()<float>();
  if (x.dtype == DataType::kFloat64) return make.operator()<double>();
  return NotSupported(n.Describe(), ": input type ", DataTypeName(x.dtype), " (supported: float32, float64)");
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Register({.op_type = "Bernoulli", .min_opset = 15, .infer = InferBernoulli, .kernels = CpuKernel(MakeBernoulli),
              .foldable = false});
  for (const char* op : {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"})
    r.Register({.op_type = op, .min_opset = 1, .infer = InferGenerator, .kernels = CpuKernel(MakeGenerator), .foldable = false});
  r.Register({.op_type = "Multinomial", .min_opset = 7, .infer = InferMultinomial, .kernels = CpuKernel(MakeMultinomial),
              .foldable = false});
}

}  // namespace oc

// Signal-processing generators: HannWindow, HammingWindow, BlackmanWindow and
// MelWeightMatrix. Their scalar inputs set the output shape, so inference needs
// them constant; values are computed in double and stored in output_datatype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <optional>
#include <string>

#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Expected<DataType> OutputType(const Node& n, int64_t def) {
  const int64_t code = n.GetInt("output_datatype", def);
  if (!IsKnownDataType(static_cast<int32_t>(code)))
    return InvalidArgument(n.Describe(), ": output_datatype ", code, " is not a known element type");
  const DataType t = static_cast<DataType>(code);
  if (!DispatchArithmetic(t, [](auto) {}))
    return NotSupported(n.Describe(), ": output_datatype ", DataTypeName(t),
                        " (supported: float32, float64 and the integer types)");
  return t;
}

// The scalar of a constant int input, or nullopt.
std::optional<int64_t> ConstScalar(const Value* v) {
  auto c = ConstInts(v);
  if (!c || c->size() != 1) return std::nullopt;
  return (*c)[0];
}

// Reads element 0 of a run-time scalar of any arithmetic dtype as double.
double ReadScalar(const void* p, DataType t) {
  double v = 0.0;
  DispatchArithmetic(t, [&](auto tag) { v = static_cast<double>(*static_cast<const decltype(tag)*>(p)); });
  return v;
}

template <typename T>
void StoreAll(const double* src, void* dst, int64_t n) {
  T* d = static_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(src[i]);
}

using StoreFn = void (*)(const double*, void*, int64_t);

StoreFn StoreFor(DataType t) {
  StoreFn f = nullptr;
  DispatchArithmetic(t, [&](auto tag) { f = StoreAll<decltype(tag)>; });
  return f;
}

// ---- windows --------------------------------------------------------------------------------

enum class Window { kHann, kHamming, kBlackman };

Window WindowOf(const std::string& op) {
  if (op == "HannWindow") return Window::kHann;
  if (op == "HammingWindow") return Window::kHamming;
  return Window::kBlackman;
}

// w[n] for n in [0, size); `periodic` divides by size, otherwise by size - 1.
double WindowValue(Window w, int64_t n, int64_t size, bool periodic) {
  const double denom = static_cast<double>(periodic ? size : size - 1);
  const double x = 2.0 * std::numbers::pi * static_cast<double>(n) / denom;
  switch (w) {
    case Window::kHann: return 0.5 - 0.5 * std::cos(x);
    case Window::kHamming: return 25.0 / 46.0 - (21.0 / 46.0) * std::cos(x);
    case Window::kBlackman: return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2.0 * x);
  }
  return 0.0;
}

Status InferWindow(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_ASSIGN_OR_RETURN(DataType t, OutputType(node, static_cast<int64_t>(DataType::kFloat32)));
  auto size = ConstScalar(node.input(0));
  if (size && *size < 0) return InvalidArgument(node.Describe(), ": size must be >= 0, got ", *size);
  SetOutput(node, 0, t, {size ? *size : -1});
  return Status::Ok();
}

// The window is fixed once the output shape is: computed at creation, copied at run.
class ConstantOutputKernel final : public Kernel {
 public:
  explicit ConstantOutputKernel(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  Status Run(const KernelIO& io) override {
    if (!bytes_.empty()) std::memcpy(io.outputs[0], bytes_.data(), bytes_.size());
    return Status::Ok();
  }

 private:
  std::vector<uint8_t> bytes_;
};

Expected<KernelPtr> MakeWindow(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 0, "size"));
  OC_ASSIGN_OR_RETURN(DataType t, OutputType(n, static_cast<int64_t>(DataType::kFloat32)));
  const int64_t size = n.output(0)->shape.at(0);
  const bool periodic = n.GetInt("periodic", 1) != 0;
  const Window w = WindowOf(n.op_type);
  std::vector<double> v(static_cast<size_t>(size));
  // A symmetric window of one sample would divide by zero; it is [1] by convention.
  for (int64_t i = 0; i < size; ++i) v[i] = (!periodic && size == 1) ? 1.0 : WindowValue(w, i, size, periodic);
  std::vector<uint8_t> bytes(static_cast<size_t>(size) * DataTypeSize(t));
  StoreFor(t)(v.data(), bytes.data(), size);
  return KernelPtr(new ConstantOutputKernel(std::move(bytes)));
}

// ---- MelWeightMatrix ------------------------------------------------------------------------

// Triangular filters over the linear-frequency bins of a one-sided DFT, with
// band edges equally spaced on the mel scale (2595 * log10(1 + f / 700)). Edge
// bins are floor((dft_length + 1) * f / sample_rate), as in the ONNX reference.
Status InferMel(Node& node) {
  for (size_t i = 0; i < 5; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  OC_ASSIGN_OR_RETURN(DataType t, OutputType(node, static_cast<int64_t>(DataType::kFloat32)));
  auto bins = ConstScalar(node.input(0));
  auto dft = ConstScalar(node.input(1));
  SetOutput(node, 0, t, {dft ? *dft / 2 + 1 : -1, bins ? *bins : -1});
  return Status::Ok();
}

class MelKernel final : public Kernel {
 public:
  MelKernel(std::string who, DataType in_types[5], DataType out, int64_t rows, int64_t cols)
      : who_(std::move(who)), out_(out), rows_(rows), cols_(cols) {
    for (int i = 0; i < 5; ++i) in_types_[i] = in_types[i];
  }
  size_t ScratchBytes() const override { return static_cast<size_t>(rows_ * cols_ + cols_ + 2) * sizeof(double); }
  Status Run(const KernelIO& io) override {
    const auto num_mel = static_cast<int64_t>(ReadScalar(io.inputs[0], in_types_[0]));
    const auto dft_length = static_cast<int64_t>(ReadScalar(io.inputs[1], in_types_[1]));
    const double rate = ReadScalar(io.inputs[2], in_types_[2]);
    const double lo = ReadScalar(io.inputs[3], in_types_[3]);
    const double hi = ReadScalar(io.inputs[4], in_types_[4]);
    if (num_mel != cols_ || dft_length / 2 + 1 != rows_)
      return InvalidArgument(who_, ": num_mel_bins / dft_length changed since compilation");
    if (rate <= 0) return InvalidArgument(who_, ": sample_rate must be > 0, got ", rate);
    double* w = static_cast<double*>(io.scratch);
    int64_t* edge = reinterpret_cast<int64_t*>(w + rows_ * cols_);
    std::fill(w, w + rows_ * cols_, 0.0);
    const double ln10 = std::log(10.0);
    const double mel_lo = 2595.0 * std::log1p(lo / 700.0) / ln10;
    const double mel_hi = 2595.0 * std::log1p(hi / 700.0) / ln10;
    const double step = (mel_hi - mel_lo) / static_cast<double>(num_mel + 2);
    for (int64_t i = 0; i < num_mel + 2; ++i) {
      const double hz = 700.0 * std::expm1((static_cast<double>(i) * step + mel_lo) / 2595.0 * ln10);
      edge[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / rate));
    }
    for (int64_t m = 0; m < num_mel; ++m) {
      const int64_t left = edge[m], center = edge[m + 1], right = edge[m + 2];
      auto at = [&](int64_t j) -> double* {
        return j >= 0 && j < rows_ ? &w[j * cols_ + m] : nullptr;
      };
      if (center == left) {
        if (double* p = at(center)) *p = 1.0;
      } else {
        for (int64_t j = left; j <= center; ++j)
          if (double* p = at(j)) *p = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
      for (int64_t j = center; j < right; ++j)
        if (double* p = at(j)) *p = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
    StoreFor(out_)(w, io.outputs[0], rows_ * cols_);
    return Status::Ok();
  }

 private:
  std::string who_;
  DataType in_types_[5];
  DataType out_;
  int64_t rows_, cols_;
};

Expected<KernelPtr> MakeMel(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(DataType t, OutputType(n, static_cast<int64_t>(DataType::kFloat32)));
  DataType types[5];
  for (size_t i = 0; i < 5; ++i) {
    types[i] = n.input(i)->dtype;
    if (n.input(i)->NumElements() != 1 || !DispatchArithmetic(types[i], [](auto) {}))
      return InvalidArgument(n.Describe(), ": input ", i, " must be a numeric scalar, got ",
                             DataTypeName(types[i]), " ", n.input(i)->ShapeString());
  }
  const auto& s = n.output(0)->shape;
  return KernelPtr(new MelKernel(n.Describe(), types, t, s.at(0), s.at(1)));
}

}  // namespace

void RegisterWindowOps(OpRegistry& r) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    r.Register({.op_type = op, .min_opset = 17, .infer = InferWindow, .kernels = CpuKernel(MakeWindow)});
  r.Register({.op_type = "MelWeightMatrix", .min_opset = 17, .infer = InferMel, .kernels = CpuKernel(MakeMel)});
}

}  // namespace oc

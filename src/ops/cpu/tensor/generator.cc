// Ops that create tensors: ConstantOfShape, Range, EyeLike, OneHot.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/cpu/common/cast_util.h"
#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// A constant scalar (one element) of any arithmetic dtype, as double.
std::optional<double> ConstScalar(const Value* v) {
  if (!v || !v->constant || v->constant->size() != DataTypeSize(v->dtype)) return std::nullopt;
  std::optional<double> out;
  DispatchArithmetic(v->dtype, [&](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, v->constant->data(), sizeof(x));
    out = static_cast<double>(x);
  });
  return out;
}

// ---- ConstantOfShape ------------------------------------------------------------------

struct FillValue {
  DataType dtype = DataType::kFloat32;
  uint64_t bits = 0;  // the element's bytes, little-endian, zero-padded
};

Expected<FillValue> ReadFillValue(const Node& node) {
  FillValue f;
  const Attribute* a = node.FindAttr("value");
  if (!a) return f;  // float32 zero
  if (a->kind != Attribute::Kind::kTensor || ShapeProduct(a->tensor_shape) != 1)
    return InvalidArgument(node.Describe(), ": attribute 'value' must be a one-element tensor");
  const size_t es = DataTypeSize(a->tensor_dtype);
  if (es == 0 || es > 8 || a->tensor.size() < es)
    return NotSupported(node.Describe(), ": attribute 'value' has unsupported dtype ", DataTypeName(a->tensor_dtype));
  f.dtype = a->tensor_dtype;
  std::memcpy(&f.bits, a->tensor.data(), es);
  return f;
}

Status InferConstantOfShape(Node& node) {
  Value* s = node.input(0);
  if (!s) return InvalidArgument(node.Describe(), ": required input 0 (shape) is missing");
  OC_RETURN_IF_ERROR(RequireIndexInput(node, 0, "shape"));
  OC_ASSIGN_OR_RETURN(FillValue f, ReadFillValue(node));
  if (auto dims = ConstInts(s)) {
    for (int64_t d : *dims)
      if (d < 0) return InvalidArgument(node.Describe(), ": shape ", DimsString(*dims), " has a negative dim");
    SetOutput(node, 0, f.dtype, *dims);
  } else if (s->IsStatic() && s->shape.size() == 1) {
    SetOutput(node, 0, f.dtype, std::vector<int64_t>(s->shape[0], -1));
  } else {
    Value* y = node.output(0);
    y->dtype = f.dtype;
    y->has_shape = false;
  }
  return Status::Ok();
}

class FillKernel final : public Kernel {
 public:
  FillKernel(int64_t n, FillValue f) : n_(n), f_(f) {}
  Status Run(const KernelIO& io) override {
    FillElements(io.outputs[0], n_, &f_.bits, DataTypeSize(f_.dtype));
    return Status::Ok();
  }

 private:
  int64_t n_;
  FillValue f_;
};

Expected<KernelPtr> MakeConstantOfShape(const KernelInit& init) {
  const Node& n = init.node;
  const Value* y = n.output(0);
  if (!y || !y->IsStatic()) return NotSupported(n.Describe(), ": the output shape must be known at compile time");
  OC_ASSIGN_OR_RETURN(FillValue f, ReadFillValue(n));
  return KernelPtr(new FillKernel(y->NumElements(), f));
}

// ---- Range -------------------------------------------------------------------------------

double LowPrecisionToFloat(DataType t, const void* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return t == DataType::kFloat16 ? ew::HalfToFloat(bits) : ew::BFloat16ToFloat(bits);
}

Status InferRange(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const DataType t = node.input(0)->dtype;
  for (size_t i = 1; i < 3; ++i)
    if (node.input(i)->dtype != t)
      return InvalidArgument(node.Describe(), ": input ", i, " has dtype ", DataTypeName(node.input(i)->dtype),
                             ", expected ", DataTypeName(t), " like start");
  int64_t count = -1;
  const Value *vs = node.input(0), *vl = node.input(1), *vd = node.input(2);
  const size_t es = DataTypeSize(t);
  if (vs->constant && vl->constant && vd->constant && vs->constant->size() == es && vl->constant->size() == es &&
      vd->constant->size() == es) {
    bool zero = false;
    // In the input type, as ONNX defines it: float rounding can change the count.
    DispatchArithmetic(t, [&](auto tag) {
      using E = decltype(tag);
      E s, l, d;
      std::memcpy(&s, vs->constant->data(), sizeof(E));
      std::memcpy(&l, vl->constant->data(), sizeof(E));
      std::memcpy(&d, vd->constant->data(), sizeof(E));
      if (d == E(0)) { zero = true; return; }
      if constexpr (std::is_floating_point_v<E>) {
        count = static_cast<int64_t>(std::max<E>(E(0), std::ceil((l - s) / d)));
      } else {
        const int64_t span = static_cast<int64_t>(l) - static_cast<int64_t>(s), dd = static_cast<int64_t>(d);
        count = dd > 0 ? (span > 0 ? (span + dd - 1) / dd : 0) : (span < 0 ? (-span - dd - 1) / (-dd) : 0);
      }
    });
    if (t == DataType::kFloat16 || t == DataType::kBFloat16) {
      // Computed wider, as the ONNX reference does: in double, or in float
      // when stash_type says FLOAT.
      const double s = LowPrecisionToFloat(t, vs->constant->data());
      const double l = LowPrecisionToFloat(t, vl->constant->data());
      const double d = LowPrecisionToFloat(t, vd->constant->data());
      if (d == 0) {
        zero = true;
      } else if (node.GetInt("stash_type", 11) == 1) {
        const float fs = static_cast<float>(s), fl = static_cast<float>(l), fd = static_cast<float>(d);
        count = static_cast<int64_t>(std::max(0.f, std::ceil((fl - fs) / fd)));
      } else {
        count = static_cast<int64_t>(std::max(0.0, std::ceil((l - s) / d)));
      }
    }
    if (zero) return InvalidArgument(node.Describe(), ": delta is 0");
  }
  SetOutput(node, 0, t, {count});
  return Status::Ok();
}

using RangeFn = void (*)(const void* start, const void* delta, void* out, int64_t n);

// float16/bfloat16 Range: start + i * delta in the wider type C, then rounded.
template <DataType kType, typename C>
void RangeLowPrecision(const void* s, const void* d, void* out, int64_t n) {
  const C start = static_cast<C>(LowPrecisionToFloat(kType, s));
  const C delta = static_cast<C>(LowPrecisionToFloat(kType, d));
  uint16_t* o = static_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(start + static_cast<C>(i) * delta);
    o[i] = kType == DataType::kFloat16 ? ew::FloatToHalf(v) : ew::FloatToBFloat16(v);
  }
}

template <typename T>
void RangeTyped(const void* s, const void* d, void* out, int64_t n) {
  const T start = *static_cast<const T*>(s), delta = *static_cast<const T*>(d);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
}

class RangeKernel final : public Kernel {
 public:
  RangeKernel(RangeFn fn, int64_t n) : fn_(fn), n_(n) {}
  Status Run(const KernelIO& io) override {
    fn_(io.inputs[0], io.inputs[2], io.outputs[0], n_);
    return Status::Ok();
  }

 private:
  RangeFn fn_;
  int64_t n_;
};

Expected<KernelPtr> MakeRange(const KernelInit& init) {
  const Node& n = init.node;
  const Value* y = n.output(0);
  if (!y || !y->IsStatic()) return NotSupported(n.Describe(), ": the output length must be known at compile time");
  RangeFn fn = nullptr;
  DispatchArithmetic(y->dtype, [&](auto tag) { fn = RangeTyped<decltype(tag)>; });
  const bool stash_float = n.GetInt("stash_type", 11) == 1;
  if (y->dtype == DataType::kFloat16)
    fn = stash_float ? RangeLowPrecision<DataType::kFloat16, float> : RangeLowPrecision<DataType::kFloat16, double>;
  if (y->dtype == DataType::kBFloat16)
    fn = stash_float ? RangeLowPrecision<DataType::kBFloat16, float> : RangeLowPrecision<DataType::kBFloat16, double>;
  if (!fn) return NotSupported(n.Describe(), ": dtype ", DataTypeName(y->dtype), " is not supported");
  return KernelPtr(new RangeKernel(fn, y->NumElements()));
}

// ---- EyeLike ------------------------------------------------------------------------------

// The bytes of the value 1 in dtype t (0 when t has no such value here).
uint64_t OneBits(DataType t) {
  uint64_t bits = 0;
  if (t == DataType::kFloat16) return 0x3C00;
  if (t == DataType::kBFloat16) return 0x3F80;
  if (t == DataType::kBool) return 1;
  DispatchArithmetic(t, [&](auto tag) {
    decltype(tag) one = 1;
    std::memcpy(&bits, &one, sizeof(one));
  });
  return bits;
}

DataType EyeLikeType(const Node& node) {
  const int64_t code = node.GetInt("dtype", 0);
  return code ? static_cast<DataType>(code) : node.input(0)->dtype;
}

Status InferEyeLike(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  if (node.input(0)->shape.size() != 2)
    return InvalidArgument(node.Describe(), ": input ", node.input(0)->ShapeString(), " must be 2-D");
  const DataType t = EyeLikeType(node);
  if (!IsKnownDataType(static_cast<int32_t>(t)))
    return InvalidArgument(node.Describe(), ": dtype ", static_cast<int>(t), " is not a known type");
  SetOutput(node, 0, t, node.input(0)->shape);
  return Status::Ok();
}

class EyeKernel final : public Kernel {
 public:
  EyeKernel(int64_t rows, int64_t cols, int64_t k, size_t esize, uint64_t one)
      : rows_(rows), cols_(cols), k_(k), esize_(esize), one_(one) {}
  Status Run(const KernelIO& io) override {
    auto* o = static_cast<uint8_t*>(io.outputs[0]);
    std::memset(o, 0, static_cast<size_t>(rows_ * cols_) * esize_);
    for (int64_t i = 0; i < rows_; ++i) {
      const int64_t j = i + k_;
      if (j >= 0 && j < cols_) std::memcpy(o + (i * cols_ + j) * esize_, &one_, esize_);
    }
    return Status::Ok();
  }

 private:
  int64_t rows_, cols_, k_;
  size_t esize_;
  uint64_t one_;
};

Expected<KernelPtr> MakeEyeLike(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& y = *n.output(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, y.dtype));
  if (y.shape.size() != 2) return InvalidArgument(n.Describe(), ": output ", y.ShapeString(), " must be 2-D");
  return KernelPtr(new EyeKernel(y.shape[0], y.shape[1], n.GetInt("k", 0), DataTypeSize(y.dtype), OneBits(y.dtype)));
}

// ---- OneHot --------------------------------------------------------------------------------

Status InferOneHot(Node& node) {
  for (size_t i = 0; i < 3; ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& idx = *node.input(0);
  const Value& values = *node.input(2);
  const int64_t r = static_cast<int64_t>(idx.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", -1), r + 1));
  int64_t depth = -1;
  if (auto d = ConstScalar(node.input(1))) {
    depth = static_cast<int64_t>(*d);
    if (depth < 1) return InvalidArgument(node.Describe(), ": depth must be >= 1, got ", *d);
  }
  if (values.IsStatic() && values.NumElements() != 2)
    return InvalidArgument(node.Describe(), ": values ", values.ShapeString(), " must hold [off_value, on_value]");
  std::vector<int64_t> out = idx.shape;
  out.insert(out.begin() + axis, depth);
  SetOutput(node, 0, values.dtype, std::move(out));
  return Status::Ok();
}

using LoadFn = int64_t (*)(const void* p, int64_t i);
template <typename T>
int64_t LoadAsInt(const void* p, int64_t i) {
  return static_cast<int64_t>(static_cast<const T*>(p)[i]);
}

class OneHotKernel final : public Kernel {
 public:
  OneHotKernel(LoadFn load, int64_t outer, int64_t depth, int64_t inner, size_t esize)
      : load_(load), outer_(outer), depth_(depth), inner_(inner), esize_(esize) {}
  Status Run(const KernelIO& io) override {
    const auto* values = static_cast<const uint8_t*>(io.inputs[2]);
    auto* out = static_cast<uint8_t*>(io.outputs[0]);
    FillElements(out, outer_ * depth_ * inner_, values, esize_);
    for (int64_t o = 0; o < outer_; ++o)
      for (int64_t i = 0; i < inner_; ++i) {
        int64_t v = load_(io.inputs[0], o * inner_ + i);
        if (v < 0) v += depth_;
        // Out-of-range indices leave the whole row at off_value.
        if (v < 0 || v >= depth_) continue;
        std::memcpy(out + ((o * depth_ + v) * inner_ + i) * esize_, values + esize_, esize_);
      }
    return Status::Ok();
  }

 private:
  LoadFn load_;
  int64_t outer_, depth_, inner_;
  size_t esize_;
};

Expected<KernelPtr> MakeOneHot(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& idx = *n.input(0);
  const Value& y = *n.output(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, y.dtype));
  if (n.input(2)->NumElements() != 2)
    return InvalidArgument(n.Describe(), ": values ", n.input(2)->ShapeString(), " must hold [off_value, on_value]");
  const int64_t r = static_cast<int64_t>(idx.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", -1), r + 1));
  LoadFn load = nullptr;
  DispatchArithmetic(idx.dtype, [&](auto tag) { load = LoadAsInt<decltype(tag)>; });
  if (!load) return NotSupported(n.Describe(), ": indices dtype ", DataTypeName(idx.dtype), " is not supported");
  return KernelPtr(new OneHotKernel(load, ShapeProduct(idx.shape, 0, axis), y.shape[axis],
                                    ShapeProduct(idx.shape, axis, r), DataTypeSize(y.dtype)));
}

}  // namespace

void RegisterGeneratorOps(OpRegistry& r) {
  r.Register({.op_type = "ConstantOfShape", .infer = InferConstantOfShape, .kernels = CpuKernel(MakeConstantOfShape),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "Range", .infer = InferRange, .kernels = CpuKernel(MakeRange),
              .native_types = DataTypeBit(DataType::kFloat16) | DataTypeBit(DataType::kBFloat16)});
  r.Register({.op_type = "EyeLike", .infer = InferEyeLike, .kernels = CpuKernel(MakeEyeLike),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "OneHot", .infer = InferOneHot, .kernels = CpuKernel(MakeOneHot)});
}

}  // namespace oc

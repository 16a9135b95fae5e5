// Gather, GatherElements, GatherND and their inverses ScatterElements (and the
// deprecated Scatter), ScatterND. Indices may be int32 or int64 and negative;
// an index out of range is a run-time Status error naming the node, checked
// before anything is written.
#include <algorithm>

#include "ops/cpu/tensor/grads.h"
#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

void SetUnknownRank(Node& node, size_t i, DataType dtype) {
  Value* v = node.output(i);
  if (!v) return;
  v->dtype = dtype;
  v->has_shape = false;
  v->shape.clear();
  v->dim_params.clear();
}

Status IndexError(const std::string& who, int64_t value, int64_t position, int64_t dim, const char* what) {
  return OutOfRange(who, ": index ", value, " at position ", position, " is out of range [", -dim, ", ", dim - 1,
                    "] for ", what);
}

// ---- Gather ---------------------------------------------------------------------

Status InferGather(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "indices"));
  const Value& data = *node.input(0);
  const Value& idx = *node.input(1);
  const int64_t r = static_cast<int64_t>(data.shape.size());
  if (r == 0) return InvalidArgument(node.Describe(), ": data must have rank >= 1, got a scalar");
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), r));
  if (!idx.has_shape) {
    SetUnknownRank(node, 0, data.dtype);
    return Status::Ok();
  }
  std::vector<int64_t> out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  SetOutput(node, 0, data.dtype, std::move(out));
  return Status::Ok();
}

class GatherKernel final : public Kernel {
 public:
  GatherKernel(std::string who, int64_t outer, int64_t n, int64_t k, int64_t inner, size_t esize, bool idx64)
      : who_(std::move(who)), outer_(outer), n_(n), k_(k), inner_(inner), esize_(esize), idx64_(idx64) {}

  Status Run(const KernelIO& io) override {
    const void* idx = io.inputs[1];
    for (int64_t i = 0; i < k_; ++i) {
      int64_t v = LoadIndex(idx, idx64_, i);
      if (v < -n_ || v >= n_) return IndexError(who_, v, i, n_, "the gathered axis");
    }
    if (outer_ * k_ * inner_ == 0) return Status::Ok();
    const size_t row = static_cast<size_t>(inner_) * esize_;
    const auto* src = static_cast<const uint8_t*>(io.inputs[0]);
    auto* dst = static_cast<uint8_t*>(io.outputs[0]);
    const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(row));
    io.pool->ParallelFor(outer_ * k_, grain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / k_;
        int64_t v = LoadIndex(idx, idx64_, t % k_);
        if (v < 0) v += n_;
        std::memcpy(dst + static_cast<size_t>(t) * row, src + static_cast<size_t>(o * n_ + v) * row, row);
      }
    });
    return Status::Ok();
  }

 private:
  std::string who_;
  int64_t outer_, n_, k_, inner_;
  size_t esize_;
  bool idx64_;
};

Expected<KernelPtr> MakeGather(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& data = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, data.dtype));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 1, "indices"));
  const int64_t r = static_cast<int64_t>(data.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", 0), r));
  return KernelPtr(new GatherKernel(n.Describe(), ShapeProduct(data.shape, 0, axis), data.shape[axis],
                                    n.input(1)->NumElements(), ShapeProduct(data.shape, axis + 1, r),
                                    DataTypeSize(data.dtype), n.input(1)->dtype == DataType::kInt64));
}

// ---- Reductions shared by the scatters -----------------------------------------------

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Expected<Reduction> ReadReduction(const Node& node) {
  std::string s = node.GetString("reduction", "none");
  if (s == "none") return Reduction::kNone;
  if (s == "add") return Reduction::kAdd;
  if (s == "mul") return Reduction::kMul;
  if (s == "max") return Reduction::kMax;
  if (s == "min") return Reduction::kMin;
  return InvalidArgument(node.Describe(), ": reduction '", s, "' is not one of none, add, mul, max, min");
}

// dst[i] (op)= src[i] for i < n, typed by dtype. Built in the factory.
using ReduceFn = void (*)(void* dst, const void* src, int64_t n);

template <typename T, Reduction R>
void ReduceInto(void* dst, const void* src, int64_t n) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (R == Reduction::kAdd) d[i] = static_cast<T>(d[i] + s[i]);
    else if constexpr (R == Reduction::kMul) d[i] = static_cast<T>(d[i] * s[i]);
    else if constexpr (R == Reduction::kMax) d[i] = std::max(d[i], s[i]);
    else if constexpr (R == Reduction::kMin) d[i] = std::min(d[i], s[i]);
    else d[i] = s[i];
  }
}

Expected<ReduceFn> SelectReduce(const Node& node, DataType t, Reduction red) {
  ReduceFn fn = nullptr;
  if (red == Reduction::kNone) {
    DispatchBySize(DataTypeSize(t), [&](auto tag) { fn = ReduceInto<decltype(tag), Reduction::kNone>; });
  } else {
    DispatchArithmetic(t, [&](auto tag) {
      using T = decltype(tag);
      switch (red) {
        case Reduction::kAdd: fn = ReduceInto<T, Reduction::kAdd>; break;
        case Reduction::kMul: fn = ReduceInto<T, Reduction::kMul>; break;
        case Reduction::kMax: fn = ReduceInto<T, Reduction::kMax>; break;
        case Reduction::kMin: fn = ReduceInto<T, Reduction::kMin>; break;
        default: break;
      }
    });
  }
  if (!fn)
    return NotSupported(node.Describe(), ": reduction '", node.GetString("reduction", "none"),
                        "' is not supported for ", DataTypeName(t));
  return fn;
}

Status InferLikeData(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

// ---- GatherElements / ScatterElements -----------------------------------------------

Status InferGatherElements(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "indices"));
  const Value& data = *node.input(0);
  const Value& idx = *node.input(1);
  const int64_t r = static_cast<int64_t>(data.shape.size());
  OC_RETURN_IF_ERROR(NormalizeAxis(node, node.GetInt("axis", 0), r).status());
  if (idx.has_shape && static_cast<int64_t>(idx.shape.size()) != r)
    return InvalidArgument(node.Describe(), ": indices ", idx.ShapeString(), " must have the rank of data ",
                           data.ShapeString());
  SetOutputLike(node, 0, idx);
  node.output(0)->dtype = data.dtype;
  return Status::Ok();
}

// Element-wise index walk shared by GatherElements and ScatterElements: for each
// position p of `indices` (shape idx_dims), the data position is p with the axis
// coordinate replaced by the index value.
struct ElementsWalk {
  std::string who;
  int rank = 0;
  int axis = 0;
  int64_t idx_dims[kMaxPlanRank] = {};
  int64_t data_strides[kMaxPlanRank] = {};
  int64_t axis_dim = 0;
  int64_t count = 0;
  bool idx64 = false;

  static Expected<ElementsWalk> Make(const Node& n, const Value& data, const Value& idx) {
    ElementsWalk w;
    w.who = n.Describe();
    const int64_t r = static_cast<int64_t>(data.shape.size());
    if (r > kMaxPlanRank) return NotSupported(w.who, ": rank ", r, " exceeds ", kMaxPlanRank);
    if (static_cast<int64_t>(idx.shape.size()) != r)
      return InvalidArgument(w.who, ": indices ", idx.ShapeString(), " must have the rank of data ", data.ShapeString());
    OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", 0), r));
    auto strides = Strides(data.shape);
    for (int64_t d = 0; d < r; ++d) {
      if (d != axis && idx.shape[d] > data.shape[d])
        return InvalidArgument(w.who, ": indices ", idx.ShapeString(), " exceed data ", data.ShapeString(), " on dim ", d);
      w.idx_dims[d] = idx.shape[d];
      w.data_strides[d] = strides[d];
    }
    w.rank = static_cast<int>(r);
    w.axis = static_cast<int>(axis);
    w.axis_dim = data.shape[axis];
    w.count = idx.NumElements();
    w.idx64 = idx.dtype == DataType::kInt64;
    return w;
  }

  Status Check(const void* idx) const {
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = LoadIndex(idx, idx64, i);
      if (v < -axis_dim || v >= axis_dim) return IndexError(who, v, i, axis_dim, "the indexed axis");
    }
    return Status::Ok();
  }

  // fn(i, data_offset) for i in [b, e) positions of indices.
  template <typename F>
  void ForEach(const void* idx, int64_t b, int64_t e, F&& fn) const {
    if (b >= e) return;
    int64_t pos[kMaxPlanRank];
    int64_t base = 0, rem = b;
    for (int d = rank - 1; d >= 0; --d) {
      pos[d] = rem % idx_dims[d];
      rem /= idx_dims[d];
      if (d != axis) base += pos[d] * data_strides[d];
    }
    for (int64_t i = b; i < e; ++i) {
      int64_t v = LoadIndex(idx, idx64, i);
      if (v < 0) v += axis_dim;
      fn(i, base + v * data_strides[axis]);
      for (int d = rank - 1; d >= 0; --d) {
        if (d != axis) base += data_strides[d];
        if (++pos[d] < idx_dims[d]) break;
        if (d != axis) base -= data_strides[d] * idx_dims[d];
        pos[d] = 0;
      }
    }
  }
};

class GatherElementsKernel final : public Kernel {
 public:
  GatherElementsKernel(ElementsWalk w, size_t esize) : w_(std::move(w)), esize_(esize) {}
  Status Run(const KernelIO& io) override {
    OC_RETURN_IF_ERROR(w_.Check(io.inputs[1]));
    DispatchBySize(esize_, [&](auto tag) {
      using T = decltype(tag);
      const T* src = io.in<T>(0);
      T* dst = io.out<T>(0);
      io.pool->ParallelFor(w_.count, 4096, [&](int64_t b, int64_t e) {
        w_.ForEach(io.inputs[1], b, e, [&](int64_t i, int64_t off) { dst[i] = src[off]; });
      });
    });
    return Status::Ok();
  }

 private:
  ElementsWalk w_;
  size_t esize_;
};

Expected<KernelPtr> MakeGatherElements(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(RequireMovableType(n, n.input(0)->dtype));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 1, "indices"));
  OC_ASSIGN_OR_RETURN(ElementsWalk w, ElementsWalk::Make(n, *n.input(0), *n.input(1)));
  return KernelPtr(new GatherElementsKernel(std::move(w), DataTypeSize(n.input(0)->dtype)));
}

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(ElementsWalk w, size_t esize, size_t bytes, ReduceFn reduce)
      : w_(std::move(w)), esize_(esize), bytes_(bytes), reduce_(reduce) {}
  Status Run(const KernelIO& io) override {
    OC_RETURN_IF_ERROR(w_.Check(io.inputs[1]));
    ParallelCopy(io.outputs[0], io.inputs[0], bytes_, io.pool);
    // Serial: duplicate indices must combine in order.
    auto* dst = static_cast<uint8_t*>(io.outputs[0]);
    const auto* upd = static_cast<const uint8_t*>(io.inputs[2]);
    w_.ForEach(io.inputs[1], 0, w_.count, [&](int64_t i, int64_t off) {
      reduce_(dst + off * esize_, upd + i * esize_, 1);
    });
    return Status::Ok();
  }

 private:
  ElementsWalk w_;
  size_t esize_, bytes_;
  ReduceFn reduce_;
};

Expected<KernelPtr> MakeScatterElements(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& data = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, data.dtype));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 1, "indices"));
  const Value* upd = n.input(2);
  if (!upd || upd->shape != n.input(1)->shape || upd->dtype != data.dtype)
    return InvalidArgument(n.Describe(), ": updates must have the shape of indices ", n.input(1)->ShapeString(),
                           " and the dtype of data (", DataTypeName(data.dtype), ")");
  OC_ASSIGN_OR_RETURN(ElementsWalk w, ElementsWalk::Make(n, data, *n.input(1)));
  OC_ASSIGN_OR_RETURN(Reduction red, ReadReduction(n));
  OC_ASSIGN_OR_RETURN(ReduceFn fn, SelectReduce(n, data.dtype, red));
  return KernelPtr(new ScatterElementsKernel(std::move(w), DataTypeSize(data.dtype),
                                             static_cast<size_t>(data.ByteSize()), fn));
}

// ---- GatherND / ScatterND --------------------------------------------------------------

Status InferGatherND(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "indices"));
  const Value& data = *node.input(0);
  const Value& idx = *node.input(1);
  const int64_t b = node.GetInt("batch_dims", 0);
  const int64_t r = static_cast<int64_t>(data.shape.size());
  if (!idx.has_shape || idx.shape.empty() || idx.shape.back() < 0) {
    SetUnknownRank(node, 0, data.dtype);
    return Status::Ok();
  }
  const int64_t q = static_cast<int64_t>(idx.shape.size());
  const int64_t k = idx.shape.back();
  if (b < 0 || b >= std::min(r, q) || b + k > r)
    return InvalidArgument(node.Describe(), ": batch_dims ", b, " and index depth ", k, " do not fit data ",
                           data.ShapeString(), " and indices ", idx.ShapeString());
  std::vector<int64_t> out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + k, data.shape.end());
  SetOutput(node, 0, data.dtype, std::move(out));
  return Status::Ok();
}

// Index tuples of depth k into data dims [b, b + k), per batch.
struct NDWalk {
  std::string who;
  int64_t batches = 1, tuples = 0, k = 0, slice = 1, batch_stride = 0;
  int64_t dims[kMaxPlanRank] = {}, strides[kMaxPlanRank] = {};
  bool idx64 = false;

  static Expected<NDWalk> Make(const Node& n, const Value& data, const Value& idx, int64_t b) {
    NDWalk w;
    w.who = n.Describe();
    const int64_t r = static_cast<int64_t>(data.shape.size());
    const int64_t q = static_cast<int64_t>(idx.shape.size());
    if (q < 1) return InvalidArgument(w.who, ": indices must have rank >= 1");
    w.k = idx.shape.back();
    if (b < 0 || b >= std::min(r, q) || b + w.k > r || w.k > kMaxPlanRank)
      return InvalidArgument(w.who, ": batch_dims ", b, " and index depth ", w.k, " do not fit data ",
                             data.ShapeString(), " and indices ", idx.ShapeString());
    for (int64_t d = 0; d < b; ++d)
      if (data.shape[d] != idx.shape[d])
        return InvalidArgument(w.who, ": batch dim ", d, " differs between data ", data.ShapeString(),
                               " and indices ", idx.ShapeString());
    auto st = Strides(data.shape);
    w.batches = ShapeProduct(data.shape, 0, b);
    w.batch_stride = ShapeProduct(data.shape, b, r);
    w.tuples = ShapeProduct(idx.shape, b, q - 1);
    w.slice = ShapeProduct(data.shape, b + w.k, r);
    for (int64_t t = 0; t < w.k; ++t) { w.dims[t] = data.shape[b + t]; w.strides[t] = st[b + t]; }
    w.idx64 = idx.dtype == DataType::kInt64;
    return w;
  }

  // Element offsets into data of each tuple, validated.
  Status Check(const void* idx) const {
    for (int64_t j = 0; j < batches * tuples; ++j)
      for (int64_t t = 0; t < k; ++t) {
        int64_t v = LoadIndex(idx, idx64, j * k + t);
        if (v < -dims[t] || v >= dims[t]) return IndexError(who, v, j * k + t, dims[t], "its data dim");
      }
    return Status::Ok();
  }
  int64_t Offset(const void* idx, int64_t j) const {
    int64_t off = (j / std::max<int64_t>(tuples, 1)) * batch_stride;
    for (int64_t t = 0; t < k; ++t) {
      int64_t v = LoadIndex(idx, idx64, j * k + t);
      off += (v < 0 ? v + dims[t] : v) * strides[t];
    }
    return off;
  }
};

class GatherNDKernel final : public Kernel {
 public:
  GatherNDKernel(NDWalk w, size_t esize) : w_(std::move(w)), esize_(esize) {}
  Status Run(const KernelIO& io) override {
    OC_RETURN_IF_ERROR(w_.Check(io.inputs[1]));
    const size_t row = static_cast<size_t>(w_.slice) * esize_;
    if (row == 0) return Status::Ok();
    const auto* src = static_cast<const uint8_t*>(io.inputs[0]);
    auto* dst = static_cast<uint8_t*>(io.outputs[0]);
    io.pool->ParallelFor(w_.batches * w_.tuples, std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(row)),
                         [&](int64_t b, int64_t e) {
                           for (int64_t j = b; j < e; ++j)
                             std::memcpy(dst + j * row, src + w_.Offset(io.inputs[1], j) * esize_, row);
                         });
    return Status::Ok();
  }

 private:
  NDWalk w_;
  size_t esize_;
};

Expected<KernelPtr> MakeGatherND(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(RequireMovableType(n, n.input(0)->dtype));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 1, "indices"));
  OC_ASSIGN_OR_RETURN(NDWalk w, NDWalk::Make(n, *n.input(0), *n.input(1), n.GetInt("batch_dims", 0)));
  return KernelPtr(new GatherNDKernel(std::move(w), DataTypeSize(n.input(0)->dtype)));
}

class ScatterNDKernel final : public Kernel {
 public:
  ScatterNDKernel(NDWalk w, size_t esize, size_t bytes, ReduceFn reduce)
      : w_(std::move(w)), esize_(esize), bytes_(bytes), reduce_(reduce) {}
  Status Run(const KernelIO& io) override {
    OC_RETURN_IF_ERROR(w_.Check(io.inputs[1]));
    ParallelCopy(io.outputs[0], io.inputs[0], bytes_, io.pool);
    auto* dst = static_cast<uint8_t*>(io.outputs[0]);
    const auto* upd = static_cast<const uint8_t*>(io.inputs[2]);
    const size_t row = static_cast<size_t>(w_.slice) * esize_;
    for (int64_t j = 0; j < w_.tuples; ++j)
      reduce_(dst + w_.Offset(io.inputs[1], j) * esize_, upd + j * row, w_.slice);
    return Status::Ok();
  }

 private:
  NDWalk w_;
  size_t esize_, bytes_;
  ReduceFn reduce_;
};

Expected<KernelPtr> MakeScatterND(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& data = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, data.dtype));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 1, "indices"));
  const Value& idx = *n.input(1);
  const Value* upd = n.input(2);
  if (idx.shape.empty()) return InvalidArgument(n.Describe(), ": indices must have rank >= 1");
  const int64_t k = idx.shape.back();
  if (k < 1 || k > static_cast<int64_t>(data.shape.size()))
    return InvalidArgument(n.Describe(), ": index depth ", k, " does not fit data ", data.ShapeString());
  std::vector<int64_t> want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  if (!upd || upd->shape != want || upd->dtype != data.dtype)
    return InvalidArgument(n.Describe(), ": updates must be ", DataTypeName(data.dtype), " ", DimsString(want),
                           ", got ", upd ? DataTypeName(upd->dtype) + " " + upd->ShapeString() : "none");
  OC_ASSIGN_OR_RETURN(NDWalk w, NDWalk::Make(n, data, idx, 0));
  OC_ASSIGN_OR_RETURN(Reduction red, ReadReduction(n));
  OC_ASSIGN_OR_RETURN(ReduceFn fn, SelectReduce(n, data.dtype, red));
  return KernelPtr(new ScatterNDKernel(std::move(w), DataTypeSize(data.dtype), static_cast<size_t>(data.ByteSize()), fn));
}

}  // namespace

void RegisterGatherOps(OpRegistry& r) {
  r.Register({.op_type = "Gather", .infer = InferGather, .kernels = CpuKernel(MakeGather),
              .native_types = kAllDataTypes, .grad = tensor::GradGather});
  r.Register({.op_type = "GatherElements", .infer = InferGatherElements, .kernels = CpuKernel(MakeGatherElements),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "GatherND", .infer = InferGatherND, .kernels = CpuKernel(MakeGatherND),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "ScatterElements", .infer = InferLikeData, .kernels = CpuKernel(MakeScatterElements)});
  r.Register({.op_type = "Scatter", .min_opset = 9, .max_opset = 10, .infer = InferLikeData,
              .kernels = CpuKernel(MakeScatterElements)});
  r.Register({.op_type = "ScatterND", .infer = InferLikeData, .kernels = CpuKernel(MakeScatterND)});
}

}  // namespace oc

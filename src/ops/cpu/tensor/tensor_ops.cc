// Expand and Tile (StridedCopy views with zero strides), Trilu, CumSum / CumProd and TopK.
#include <algorithm>

#include "ops/cpu/tensor/grads.h"
#include "ops/cpu/common/tensor_util.h"
#include "ops/cpu/common/wrap_arith.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

class PlanKernel final : public Kernel {
 public:
  explicit PlanKernel(StridedCopy plan) : plan_(std::move(plan)) {}
  Status Run(const KernelIO& io) override {
    plan_.Run(io.inputs[0], io.outputs[0], io.pool);
    return Status::Ok();
  }

 private:
  StridedCopy plan_;
};

// ---- Expand ----------------------------------------------------------------------

Status InferExpand(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "shape"));
  const Value& x = *node.input(0);
  const Value& s = *node.input(1);
  std::vector<int64_t> target;
  if (auto c = ConstInts(&s)) {
    target = *c;
    for (int64_t d : target)
      if (d < 0) return InvalidArgument(node.Describe(), ": shape ", DimsString(target), " has a negative dim");
  } else if (s.IsStatic() && s.shape.size() == 1) {
    target.assign(s.shape[0], -1);
  } else {
    Value* y = node.output(0);
    y->dtype = x.dtype;
    y->has_shape = false;
    return Status::Ok();
  }
  auto out = BroadcastShapes(node, x.shape, target);
  if (!out.ok())
    return InvalidArgument(node.Describe(), ": input ", x.ShapeString(), " cannot be expanded to ",
                           DimsString(target));
  SetOutput(node, 0, x.dtype, std::move(out).value());
  return Status::Ok();
}

Expected<KernelPtr> MakeExpand(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  const Value& y = *n.output(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  if (y.shape.size() < x.shape.size())
    return InvalidArgument(n.Describe(), ": output ", y.ShapeString(), " has lower rank than input ", x.ShapeString());
  const size_t lead = y.shape.size() - x.shape.size();
  const auto xs = Strides(x.shape);
  std::vector<int64_t> strides(y.shape.size(), 0);
  for (size_t d = 0; d < x.shape.size(); ++d) {
    const int64_t od = y.shape[lead + d];
    if (x.shape[d] == od) strides[lead + d] = xs[d];
    else if (x.shape[d] != 1)
      return InvalidArgument(n.Describe(), ": input ", x.ShapeString(), " cannot be expanded to ", y.ShapeString());
  }
  OC_ASSIGN_OR_RETURN(StridedCopy plan, StridedCopy::Make(n, y.shape, strides, 0, DataTypeSize(x.dtype)));
  return KernelPtr(new PlanKernel(std::move(plan)));
}

// ---- Tile ------------------------------------------------------------------------------

Status InferTile(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "repeats"));
  const Value& x = *node.input(0);
  std::vector<int64_t> out(x.shape.size(), -1);
  if (auto reps = ConstInts(node.input(1))) {
    if (reps->size() != x.shape.size())
      return InvalidArgument(node.Describe(), ": repeats ", DimsString(*reps), " has ", reps->size(),
                             " entries, expected the input rank ", x.shape.size());
    for (size_t d = 0; d < out.size(); ++d) {
      if ((*reps)[d] < 0) return InvalidArgument(node.Describe(), ": repeats ", DimsString(*reps), " is negative");
      out[d] = x.shape[d] < 0 ? -1 : x.shape[d] * (*reps)[d];
    }
  }
  SetOutput(node, 0, x.dtype, std::move(out));
  return Status::Ok();
}

// Output dim d is viewed as [repeat, x.shape[d]]: the repeat index has stride 0.
Expected<KernelPtr> MakeTile(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  const Value& y = *n.output(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  if (y.shape.size() != x.shape.size())
    return InvalidArgument(n.Describe(), ": output ", y.ShapeString(), " and input ", x.ShapeString(), " differ in rank");
  const auto xs = Strides(x.shape);
  std::vector<int64_t> dims, strides;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (x.shape[d] == 0 || y.shape[d] == 0) { dims.push_back(0); strides.push_back(0); continue; }
    if (y.shape[d] % x.shape[d] != 0)
      return InvalidArgument(n.Describe(), ": output ", y.ShapeString(), " is not a tiling of input ", x.ShapeString());
    dims.insert(dims.end(), {y.shape[d] / x.shape[d], x.shape[d]});
    strides.insert(strides.end(), {0, xs[d]});
  }
  OC_ASSIGN_OR_RETURN(StridedCopy plan, StridedCopy::Make(n, dims, strides, 0, DataTypeSize(x.dtype)));
  return KernelPtr(new PlanKernel(std::move(plan)));
}

// ---- Trilu -----------------------------------------------------------------------------

Status InferSame(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

Status InferTrilu(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  if (node.input(0)->shape.size() < 2)
    return InvalidArgument(node.Describe(), ": input ", node.input(0)->ShapeString(), " must have rank >= 2");
  if (node.input(1)) OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "k"));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

class TriluKernel final : public Kernel {
 public:
  TriluKernel(int64_t rows, int64_t n, int64_t m, size_t esize, bool upper, bool k64)
      : rows_(rows), n_(n), m_(m), esize_(esize), upper_(upper), k64_(k64) {}
  Status Run(const KernelIO& io) override {
    const int64_t k = io.num_inputs > 1 && io.inputs[1] ? LoadIndex(io.inputs[1], k64_, 0) : 0;
    const auto* src = static_cast<const uint8_t*>(io.inputs[0]);
    auto* dst = static_cast<uint8_t*>(io.outputs[0]);
    const size_t row = static_cast<size_t>(m_) * esize_;
    io.pool->ParallelFor(rows_, std::max<int64_t>(1, kCopyGrainBytes / std::max<int64_t>(1, row)),
                         [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t i = r % n_;
        // Kept columns: upper j >= i + k, lower j <= i + k.
        int64_t lo = upper_ ? std::clamp<int64_t>(i + k, 0, m_) : 0;
        int64_t hi = upper_ ? m_ : std::clamp<int64_t>(i + k + 1, 0, m_);
        uint8_t* o = dst + r * row;
        const uint8_t* s = src + r * row;
        std::memset(o, 0, lo * esize_);
        std::memmove(o + lo * esize_, s + lo * esize_, (hi - lo) * esize_);
        std::memset(o + hi * esize_, 0, (m_ - hi) * esize_);
      }
    });
    return Status::Ok();
  }

 private:
  int64_t rows_, n_, m_;
  size_t esize_;
  bool upper_, k64_;
};

Expected<KernelPtr> MakeTrilu(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  const size_t r = x.shape.size();
  if (r < 2) return InvalidArgument(n.Describe(), ": input ", x.ShapeString(), " must have rank >= 2");
  bool k64 = n.input(1) && n.input(1)->dtype == DataType::kInt64;
  return KernelPtr(new TriluKernel(ShapeProduct(x.shape, 0, r - 1), x.shape[r - 2], x.shape[r - 1],
                                   DataTypeSize(x.dtype), n.GetInt("upper", 1) != 0, k64));
}

// ---- CumSum, CumProd ---------------------------------------------------------------------

using CumFn = void (*)(const void* x, void* y, int64_t outer, int64_t len, int64_t inner, bool exclusive,
                       bool reverse, ThreadPool* pool);

// Running sums (kProduct false) or products along the middle of [outer, len, inner].
template <typename T, bool kProduct>
void CumScanTyped(const void* xv, void* yv, int64_t outer, int64_t len, int64_t inner, bool exclusive,
                  bool reverse, ThreadPool* pool) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  pool->ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len * inner)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* xs = x + o * len * inner;
      T* ys = y + o * len * inner;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t a = reverse ? len - 1 - s : s;   // position written now
        const int64_t prev = reverse ? a + 1 : a - 1;  // position written before it
        T* yr = ys + a * inner;
        if (s == 0) {
          for (int64_t i = 0; i < inner; ++i) yr[i] = exclusive ? T(kProduct ? 1 : 0) : xs[a * inner + i];
        } else {
          const T* yp = ys + prev * inner;
          const T* xr = xs + (exclusive ? prev : a) * inner;
          // Integers wrap, as onnxruntime's do.
          for (int64_t i = 0; i < inner; ++i) yr[i] = kProduct ? WrapMul(yp[i], xr[i]) : WrapAdd(yp[i], xr[i]);
        }
      }
    }
  });
}

class CumKernel final : public Kernel {
 public:
  CumKernel(std::string who, std::vector<int64_t> shape, CumFn fn, bool axis64, bool exclusive, bool reverse)
      : who_(std::move(who)), shape_(std::move(shape)), fn_(fn), axis64_(axis64), exclusive_(exclusive),
        reverse_(reverse) {}
  Status Run(const KernelIO& io) override {
    const int64_t r = static_cast<int64_t>(shape_.size());
    int64_t axis = LoadIndex(io.inputs[1], axis64_, 0);
    if (axis < -r || axis >= r) return OutOfRange(who_, ": axis ", axis, " is out of range for rank ", r);
    if (axis < 0) axis += r;
    fn_(io.inputs[0], io.outputs[0], ShapeProduct(shape_, 0, axis), shape_[axis], ShapeProduct(shape_, axis + 1, r),
        exclusive_, reverse_, io.pool);
    return Status::Ok();
  }

 private:
  std::string who_;
  std::vector<int64_t> shape_;
  CumFn fn_;
  bool axis64_, exclusive_, reverse_;
};

template <bool kProduct>
Expected<KernelPtr> MakeCumScan(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_RETURN_IF_ERROR(RequireIndexInput(n, 1, "axis"));
  const Value& x = *n.input(0);
  if (x.shape.empty()) return InvalidArgument(n.Describe(), ": input must have rank >= 1");
  if (n.input(1)->NumElements() != 1)
    return InvalidArgument(n.Describe(), ": axis must be a scalar, got shape ", n.input(1)->ShapeString());
  CumFn fn = nullptr;
  DispatchArithmetic(x.dtype, [&](auto tag) { fn = CumScanTyped<decltype(tag), kProduct>; });
  if (!fn) return NotSupported(n.Describe(), ": element type ", DataTypeName(x.dtype), " is not supported");
  return KernelPtr(new CumKernel(n.Describe(), x.shape, fn, n.input(1)->dtype == DataType::kInt64,
                                 n.GetInt("exclusive", 0) != 0, n.GetInt("reverse", 0) != 0));
}

// ---- TopK --------------------------------------------------------------------------------

Status InferTopK(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", -1), r));
  if (r == 0) return InvalidArgument(node.Describe(), ": input must have rank >= 1");
  int64_t k = -1;
  if (node.input(1)) {
    OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "K"));
    if (auto c = ConstInts(node.input(1))) {
      if (c->size() != 1) return InvalidArgument(node.Describe(), ": K must have one element, got ", c->size());
      k = (*c)[0];
    }
  } else if (node.HasAttr("k")) {
    k = node.GetInt("k", -1);
  } else {
    return InvalidArgument(node.Describe(), ": K (input 1) is missing");
  }
  if (k < -1 || (k >= 0 && x.shape[axis] >= 0 && k > x.shape[axis]))
    return InvalidArgument(node.Describe(), ": K = ", k, " must be in [0, ", x.shape[axis], "] for input ",
                           x.ShapeString(), " on axis ", axis);
  std::vector<int64_t> out = x.shape;
  out[axis] = k;
  SetOutput(node, 0, x.dtype, out);
  SetOutput(node, 1, DataType::kInt64, out);
  return Status::Ok();
}

Status CanonicalizeTopK(Node& node, Graph& graph) {
  if (!node.HasAttr("k") || node.input(1)) return Status::Ok();
  SetInputAt(node, 1, AddInt64Constant(graph, node, "k", {node.GetInt("k", 0)}));
  node.attrs.erase("k");
  node.opset = std::max(node.opset, 10);
  return Status::Ok();
}

using TopKFn = void (*)(const void* x, void* values, int64_t* indices, int64_t outer, int64_t n, int64_t inner,
                        int64_t k, bool largest, ThreadPool* pool);

// A bounded heap of the best k positions per slice, kept directly in the (strided)
// indices output so that Run needs no scratch memory. Ties prefer the lower index.
template <typename T>
void TopKTyped(const void* xv, void* vv, int64_t* idx, int64_t outer, int64_t n, int64_t inner, int64_t k,
               bool largest, ThreadPool* pool) {
  const T* x = static_cast<const T*>(xv);
  T* vals = static_cast<T*>(vv);
  if (k == 0) return;
  pool->ParallelFor(outer * inner, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n)), [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      const int64_t o = s / inner, i = s % inner;
      const T* xs = x + o * n * inner + i;
      int64_t* h = idx + o * k * inner + i;
      auto at = [&](int64_t p) -> int64_t& { return h[p * inner]; };
      auto better = [&](int64_t a, int64_t c) {
        const T va = xs[a * inner], vc = xs[c * inner];
        if (va != vc) return largest ? va > vc : va < vc;
        return a < c;
      };
      auto sift_down = [&](int64_t p, int64_t size) {
        for (;;) {
          int64_t l = 2 * p + 1, c = l;
          if (l >= size) break;
          if (l + 1 < size && better(at(l), at(l + 1))) c = l + 1;
          if (!better(at(p), at(c))) break;
          std::swap(at(p), at(c));
          p = c;
        }
      };
      int64_t size = 0;
      for (int64_t t = 0; t < n; ++t) {
        if (size < k) {
          int64_t p = size++;
          at(p) = t;
          while (p > 0) {
            int64_t q = (p - 1) / 2;
            if (!better(at(q), at(p))) break;
            std::swap(at(p), at(q));
            p = q;
          }
        } else if (better(t, at(0))) {
          at(0) = t;
          sift_down(0, size);
        }
      }
      for (int64_t end = k - 1; end > 0; --end) {
        std::swap(at(0), at(end));
        sift_down(0, end);
      }
      T* vs = vals + o * k * inner + i;
      for (int64_t p = 0; p < k; ++p) vs[p * inner] = xs[at(p) * inner];
    }
  });
}

class TopKKernel final : public Kernel {
 public:
  TopKKernel(TopKFn fn, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest)
      : fn_(fn), outer_(outer), n_(n), inner_(inner), k_(k), largest_(largest) {}
  Status Run(const KernelIO& io) override {
    fn_(io.inputs[0], io.outputs[0], static_cast<int64_t*>(io.outputs[1]), outer_, n_, inner_, k_, largest_, io.pool);
    return Status::Ok();
  }

 private:
  TopKFn fn_;
  int64_t outer_, n_, inner_, k_;
  bool largest_;
};

Expected<KernelPtr> MakeTopK(const KernelInit& init) {
  const Node& n = init.node;
  const Value& x = *n.input(0);
  const Value* y = n.output(0);
  const Value* yi = n.output(1);
  if (!x.IsStatic() || !y || !y->IsStatic() || !yi || !yi->IsStatic())
    return NotSupported(n.Describe(), ": needs static shapes and both outputs; the output size follows K, "
                        "which must be constant at compile time");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", -1), r));
  TopKFn fn = nullptr;
  DispatchArithmetic(x.dtype, [&](auto tag) { fn = TopKTyped<decltype(tag)>; });
  if (!fn) return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported");
  const int64_t k = y->shape[axis];
  if (k > x.shape[axis]) return InvalidArgument(n.Describe(), ": K = ", k, " exceeds axis size ", x.shape[axis]);
  return KernelPtr(new TopKKernel(fn, ShapeProduct(x.shape, 0, axis), x.shape[axis], ShapeProduct(x.shape, axis + 1, r),
                                  k, n.GetInt("largest", 1) != 0));
}

}  // namespace

void RegisterTensorOps(OpRegistry& r) {
  r.Register({.op_type = "Expand", .infer = InferExpand, .kernels = CpuKernel(MakeExpand),
              .native_types = kAllDataTypes, .grad = tensor::GradExpand});
  r.Register({.op_type = "Tile", .min_opset = 6, .infer = InferTile, .kernels = CpuKernel(MakeTile),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "Trilu", .infer = InferTrilu, .kernels = CpuKernel(MakeTrilu),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "CumSum", .infer = InferSame, .kernels = CpuKernel(MakeCumScan<false>)});
  r.Register({.op_type = "CumProd", .min_opset = 26, .infer = InferSame, .kernels = CpuKernel(MakeCumScan<true>)});
  r.Register({.op_type = "TopK", .infer = InferTopK, .kernels = CpuKernel(MakeTopK), .canonicalize = CanonicalizeTopK});
}

}  // namespace oc

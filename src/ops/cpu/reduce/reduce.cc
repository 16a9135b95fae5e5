// Reduce* (Sum Mean Max Min Prod L1 L2 LogSum LogSumExp SumSquare) and
// ArgMax / ArgMin. Old forms keep `axes` in an attribute (ReduceSum before
// opset 13, the others before 18); the canonicalize hook turns it into the
// constant int64 input 1 of the newer form, and the kernels accept either.
//
// The factory collapses the input into alternating kept / reduced dim blocks
// and picks one of three loops: reduced block innermost ([outer, R], rows with
// independent lanes), a single reduced block in the middle ([outer, R, inner],
// column tiles), or a generic walk for other patterns.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/cpu/reduce/grads.h"
#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/cpu/common/wrap_arith.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// ---- Accumulation policies --------------------------------------------------------
// step(acc, x, shift), combine(a, b) for lane merging, finish(acc, count, shift).

// Integer sums and products wrap (WrapAdd / WrapMul: no signed overflow).

template <typename T>
struct SumP {
  static T init() { return T(0); }
  static T step(T a, T x, T) { return WrapAdd(a, x); }
  static T combine(T a, T b) { return WrapAdd(a, b); }
  static T finish(T a, int64_t, T) { return a; }
};
template <typename T>
struct MeanP : SumP<T> {
  static T finish(T a, int64_t n, T) { return n ? static_cast<T>(a / static_cast<T>(n)) : a; }
};
template <typename T>
struct MaxP {
  static T init() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  static T step(T a, T x, T) { return x > a ? x : a; }
  static T combine(T a, T b) { return b > a ? b : a; }
  static T finish(T a, int64_t, T) { return a; }
};
template <typename T>
struct MinP {
  static T init() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static T step(T a, T x, T) { return x < a ? x : a; }
  static T combine(T a, T b) { return b < a ? b : a; }
  static T finish(T a, int64_t, T) { return a; }
};
template <typename T>
struct ProdP {
  static T init() { return T(1); }
  static T step(T a, T x, T) { return WrapMul(a, x); }
  static T combine(T a, T b) { return WrapMul(a, b); }
  static T finish(T a, int64_t, T) { return a; }
};
template <typename T>
struct L1P : SumP<T> {
  static T step(T a, T x, T) {
    if constexpr (std::is_unsigned_v<T>) return WrapAdd(a, x);
    else if constexpr (std::is_integral_v<T>)
      return WrapAdd(a, x < T(0) ? static_cast<T>(WrapU<T>(0) - WrapU<T>(x)) : x);  // |INT_MIN| wraps too
    else return WrapAdd(a, x < T(0) ? static_cast<T>(T(0) - x) : x);
  }
};
template <typename T>
struct SumSquareP : SumP<T> {
  static T step(T a, T x, T) { return WrapAdd(a, WrapMul(x, x)); }
};
template <typename T>
struct L2P : SumSquareP<T> {
  static T finish(T a, int64_t, T) { return std::sqrt(a); }
};
template <typename T>
struct LogSumP : SumP<T> {
  static T finish(T a, int64_t, T) { return std::log(a); }
};
// Second pass of LogSumExp: `shift` is the max found by the first pass.
template <typename T>
struct LogSumExpP : SumP<T> {
  static T step(T a, T x, T shift) { return a + std::exp(x - shift); }
  static T finish(T a, int64_t, T shift) { return std::isinf(shift) ? shift : std::log(a) + shift; }
};

// ---- Reduction plan --------------------------------------------------------------------

struct ReducePlan {
  enum class Kind { kRows, kColumns, kGeneric } kind = Kind::kRows;
  int64_t outer = 1, r = 1, inner = 1;  // kRows / kColumns
  int64_t out_count = 0, in_count = 0;
  // kGeneric: kept dims (sizes, input strides) and reduced dims (sizes, input strides).
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
};

ReducePlan MakePlan(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  ReducePlan p;
  p.in_count = ShapeProduct(shape);
  // Collapse into blocks of equal kind, dropping size-1 dims.
  std::vector<int64_t> sizes;
  std::vector<bool> kinds;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!sizes.empty() && kinds.back() == reduced[i]) {
      sizes.back() *= shape[i];
    } else {
      sizes.push_back(shape[i]);
      kinds.push_back(reduced[i]);
    }
  }
  int64_t red_total = 1;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (kinds[i]) red_total *= sizes[i];
  p.out_count = red_total ? p.in_count / red_total : ShapeProduct([&] {
    std::vector<int64_t> k;
    for (size_t i = 0; i < shape.size(); ++i)
      if (!reduced[i]) k.push_back(shape[i]);
    return k;
  }());
  int nred = static_cast<int>(std::count(kinds.begin(), kinds.end(), true));
  if (nred == 0) {
    p.kind = ReducePlan::Kind::kRows;
    p.outer = p.out_count;
    p.r = 1;
    return p;
  }
  if (nred == 1) {
    size_t ri = std::find(kinds.begin(), kinds.end(), true) - kinds.begin();
    p.outer = ri > 0 ? sizes[ri - 1] : 1;
    p.r = sizes[ri];
    p.inner = ri + 1 < sizes.size() ? sizes[ri + 1] : 1;
    p.kind = p.inner == 1 ? ReducePlan::Kind::kRows : ReducePlan::Kind::kColumns;
    return p;
  }
  p.kind = ReducePlan::Kind::kGeneric;
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  for (size_t i = 0; i < sizes.size(); ++i) {
    (kinds[i] ? p.red_dims : p.kept_dims).push_back(sizes[i]);
    (kinds[i] ? p.red_strides : p.kept_strides).push_back(strides[i]);
  }
  p.r = red_total;
  return p;
}

constexpr int64_t kTile = 64;

// Accumulates a contiguous run with independent lanes (vectorisable without
// reassociating), then merges the lanes.
template <typename T, typename P>
T AccumulateRun(const T* x, int64_t n, T shift) {
  constexpr int kL = 16;
  T acc[kL];
  for (int l = 0; l < kL; ++l) acc[l] = P::init();
  int64_t i = 0;
  for (; i + kL <= n; i += kL)
    for (int l = 0; l < kL; ++l) acc[l] = P::step(acc[l], x[i + l], shift);
  T a = acc[0];
  for (int l = 1; l < kL; ++l) a = P::combine(a, acc[l]);
  for (; i < n; ++i) a = P::step(a, x[i], shift);
  return a;
}

template <typename T, typename P>
void ReduceRows(const ReducePlan& p, const T* x, T* y, const T* shift, ThreadPool& pool) {
  const int64_t r = p.r;
  if (p.outer == 1 && r >= 2 * ew::kGrain) {
    // One long row (reduce-all): split it into parts reduced in parallel.
    constexpr int64_t kMaxParts = 64;
    const int64_t parts = std::min<int64_t>(kMaxParts, r / ew::kGrain);
    T partial[kMaxParts];
    const T s = shift ? shift[0] : T(0);
    pool.ParallelFor(parts, 1, [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q) {
        const int64_t lo = r * q / parts, hi = r * (q + 1) / parts;
        partial[q] = AccumulateRun<T, P>(x + lo, hi - lo, s);
      }
    });
    T a = partial[0];
    for (int64_t q = 1; q < parts; ++q) a = P::combine(a, partial[q]);
    y[0] = P::finish(a, r, s);
    return;
  }
  int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(r, 1));
  pool.ParallelFor(p.outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T s = shift ? shift[o] : T(0);
      y[o] = P::finish(AccumulateRun<T, P>(x + o * r, r, s), r, s);
    }
  });
}

template <typename T, typename P>
void ReduceColumns(const ReducePlan& p, const T* x, T* y, const T* shift, ThreadPool& pool) {
  const int64_t r = p.r, inner = p.inner;
  const int64_t tiles = (inner + kTile - 1) / kTile;
  int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(r * std::min(inner, kTile), 1));
  pool.ParallelFor(p.outer * tiles, grain, [&](int64_t b, int64_t e) {
    T acc[kTile], sh[kTile];
    for (int64_t u = b; u < e; ++u) {
      const int64_t o = u / tiles, j0 = (u % tiles) * kTile, w = std::min(kTile, inner - j0);
      const T* xb = x + o * r * inner + j0;
      T* yb = y + o * inner + j0;
      for (int64_t j = 0; j < w; ++j) {
        acc[j] = P::init();
        sh[j] = shift ? shift[o * inner + j0 + j] : T(0);
      }
      for (int64_t k = 0; k < r; ++k) {
        const T* xr = xb + k * inner;
        for (int64_t j = 0; j < w; ++j) acc[j] = P::step(acc[j], xr[j], sh[j]);
      }
      for (int64_t j = 0; j < w; ++j) yb[j] = P::finish(acc[j], r, sh[j]);
    }
  });
}

template <typename T, typename P>
void ReduceGeneric(const ReducePlan& p, const T* x, T* y, const T* shift, ThreadPool& pool) {
  const int nk = static_cast<int>(p.kept_dims.size()), nr = static_cast<int>(p.red_dims.size());
  int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(p.r, 1));
  pool.ParallelFor(p.out_count, grain, [&](int64_t b, int64_t e) {
    int64_t ridx[16];
    for (int64_t o = b; o < e; ++o) {
      int64_t base = 0, rem = o;
      for (int d = nk - 1; d >= 0; --d) {
        base += (rem % p.kept_dims[d]) * p.kept_strides[d];
        rem /= p.kept_dims[d];
      }
      const T s = shift ? shift[o] : T(0);
      T a = P::init();
      for (int d = 0; d < nr; ++d) ridx[d] = 0;
      int64_t off = base;
      for (int64_t k = 0; k < p.r; ++k) {
        a = P::step(a, x[off], s);
        for (int d = nr - 1; d >= 0; --d) {
          off += p.red_strides[d];
          if (++ridx[d] < p.red_dims[d]) break;
          off -= p.red_dims[d] * p.red_strides[d];
          ridx[d] = 0;
        }
      }
      y[o] = P::finish(a, p.r, s);
    }
  });
}

template <typename T, typename P>
void RunReduce(const ReducePlan& p, const T* x, T* y, const T* shift, ThreadPool& pool) {
  switch (p.kind) {
    case ReducePlan::Kind::kRows: ReduceRows<T, P>(p, x, y, shift, pool); break;
    case ReducePlan::Kind::kColumns: ReduceColumns<T, P>(p, x, y, shift, pool); break;
    case ReducePlan::Kind::kGeneric: ReduceGeneric<T, P>(p, x, y, shift, pool); break;
  }
}

template <typename T, template <typename> class P>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(ReducePlan plan) : plan_(std::move(plan)) {}
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    T* y = io.out<T>(0);
    if (plan_.out_count == 0) return Status::Ok();
    if constexpr (std::is_same_v<P<T>, LogSumExpP<T>>) {
      RunReduce<T, MaxP<T>>(plan_, x, y, nullptr, *io.pool);
      RunReduce<T, LogSumExpP<T>>(plan_, x, y, y, *io.pool);
    } else {
      RunReduce<T, P<T>>(plan_, x, y, nullptr, *io.pool);
    }
    return Status::Ok();
  }

 private:
  ReducePlan plan_;
};

// ---- Axes, inference, factories ------------------------------------------------------

// The axes to reduce; nullopt-equivalent (ok=false) when given by a non-constant input.
struct AxesInfo {
  bool known = true;
  std::vector<int64_t> axes;  // normalised, sorted, unique; empty = see noop
};

Expected<AxesInfo> GetAxes(const Node& n, int64_t rank) {
  AxesInfo info;
  std::vector<int64_t> raw;
  if (n.HasAttr("axes")) {
    raw = n.GetInts("axes");
  } else if (const Value* a = n.input(1)) {
    auto c = ConstInts(a);
    if (!c) {
      info.known = false;
      return info;
    }
    raw = *c;
  }
  std::vector<bool> seen(rank, false);
  for (int64_t ax : raw) {
    OC_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(n, ax, rank));
    if (rank == 0) return InvalidArgument(n.Describe(), ": axis ", ax, " given for a scalar input");
    if (seen[a]) return InvalidArgument(n.Describe(), ": axis ", ax, " is repeated in axes");
    seen[a] = true;
    info.axes.push_back(a);
  }
  std::sort(info.axes.begin(), info.axes.end());
  return info;
}

// Which dims are reduced (empty vector = identity because of noop_with_empty_axes).
std::vector<bool> ReducedMask(const Node& n, const AxesInfo& info, int64_t rank, bool* noop) {
  *noop = false;
  std::vector<bool> mask(rank, false);
  if (info.axes.empty()) {
    if (n.GetInt("noop_with_empty_axes", 0)) {
      *noop = true;
      return mask;
    }
    mask.assign(rank, true);
    return mask;
  }
  for (int64_t a : info.axes) mask[a] = true;
  return mask;
}

Status InferReduce(Node& node) {
  if (node.inputs.empty() || node.inputs.size() > 2)
    return InvalidArgument(node.Describe(), ": expects 1 or 2 inputs (data, [axes])");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  bool keep = node.GetInt("keepdims", 1) != 0;
  OC_ASSIGN_OR_RETURN(AxesInfo info, GetAxes(node, rank));
  if (!info.known) {
    if (keep) {
      SetOutput(node, 0, x.dtype, std::vector<int64_t>(rank, -1));
    } else if (Value* o = node.output(0)) {
      o->dtype = x.dtype;
      o->has_shape = false;
      o->shape.clear();
      o->dim_params.clear();
    }
    return Status::Ok();
  }
  bool noop;
  auto mask = ReducedMask(node, info, rank, &noop);
  if (noop) {
    SetOutputLike(node, 0, x);
    return Status::Ok();
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!mask[i]) out.push_back(x.shape[i]);
    else if (keep) out.push_back(1);
  }
  SetOutput(node, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status CanonicalizeReduce(Node& node, Graph& graph) {
  const Attribute* a = node.FindAttr("axes");
  if (!a) return Status::Ok();
  std::vector<int64_t> axes = a->ints;
  node.attrs.erase("axes");
  Value* c = graph.AddConstant(graph.UniqueName(node.name + "_axes"), DataType::kInt64,
                               {static_cast<int64_t>(axes.size())},
                               TensorData::Copy(axes.data(), axes.size() * sizeof(int64_t)));
  node.inputs.resize(2, nullptr);
  node.inputs[1] = c;
  return Status::Ok();
}

enum TypeSet { kFloatOnly, kArith, kOrdered };

template <template <typename> class P, TypeSet kTypes>
Expected<KernelPtr> MakeReduce(const KernelInit& init) {
  const Node& n = init.node;
  if (!n.input(0) || !n.output(0)) return InvalidArgument(n.Describe(), ": missing data input or output");
  if (!n.input(0)->IsStatic() || !n.output(0)->IsStatic())
    return NotSupported(n.Describe(), ": needs static shapes, got ", n.input(0)->ShapeString());
  const auto& shape = n.input(0)->shape;
  int64_t rank = static_cast<int64_t>(shape.size());
  OC_ASSIGN_OR_RETURN(AxesInfo info, GetAxes(n, rank));
  if (!info.known) return NotSupported(n.Describe(), ": axes must be a constant input");
  bool noop;
  auto mask = ReducedMask(n, info, rank, &noop);
  ReducePlan plan = MakePlan(shape, mask);  // noop: nothing reduced, finish still applies
  const DataType dt = n.input(0)->dtype;
  switch (dt) {
    case DataType::kFloat32: return KernelPtr(new ReduceKernel<float, P>(std::move(plan)));
    case DataType::kFloat64: return KernelPtr(new ReduceKernel<double, P>(std::move(plan)));
    case DataType::kInt32:
      if constexpr (kTypes != kFloatOnly) return KernelPtr(new ReduceKernel<int32_t, P>(std::move(plan)));
      break;
    case DataType::kInt64:
      if constexpr (kTypes != kFloatOnly) return KernelPtr(new ReduceKernel<int64_t, P>(std::move(plan)));
      break;
    case DataType::kInt8:
      if constexpr (kTypes == kOrdered) return KernelPtr(new ReduceKernel<int8_t, P>(std::move(plan)));
      break;
    case DataType::kUInt8:
      if constexpr (kTypes == kOrdered) return KernelPtr(new ReduceKernel<uint8_t, P>(std::move(plan)));
      break;
    case DataType::kUInt32:
      if constexpr (kTypes != kFloatOnly) return KernelPtr(new ReduceKernel<uint32_t, P>(std::move(plan)));
      break;
    case DataType::kUInt64:
      if constexpr (kTypes != kFloatOnly) return KernelPtr(new ReduceKernel<uint64_t, P>(std::move(plan)));
      break;
    case DataType::kBool:  // ReduceMax / ReduceMin (opset 20): any / all
      if constexpr (kTypes == kOrdered) return KernelPtr(new ReduceKernel<bool, P>(std::move(plan)));
      break;
    default: break;
  }
  return ew::UnsupportedDtype(n, dt);
}

// ---- ArgMax / ArgMin ---------------------------------------------------------------------

template <typename T, bool kMax, bool kLast>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(int64_t outer, int64_t n, int64_t inner) : outer_(outer), n_(n), inner_(inner) {}
  static bool Better(T x, T best) {
    if constexpr (kMax) return kLast ? x >= best : x > best;
    else return kLast ? x <= best : x < best;
  }
  Status Run(const KernelIO& io) override {
    const T* x = io.in<T>(0);
    int64_t* y = io.out<int64_t>(0);
    int64_t grain = std::max<int64_t>(1, ew::kGrain / std::max<int64_t>(n_, 1));
    io.pool->ParallelFor(outer_, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* xb = x + o * n_ * inner_;
        int64_t* yb = y + o * inner_;
        if (inner_ == 1) {
          T best = xb[0];
          int64_t bi = 0;
          for (int64_t k = 1; k < n_; ++k)
            if (Better(xb[k], best)) { best = xb[k]; bi = k; }
          yb[0] = bi;
          continue;
        }
        for (int64_t j = 0; j < inner_; ++j) yb[j] = 0;
        for (int64_t k = 1; k < n_; ++k) {
          const T* xr = xb + k * inner_;
          for (int64_t j = 0; j < inner_; ++j)
            if (Better(xr[j], xb[yb[j] * inner_ + j])) yb[j] = k;
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t outer_, n_, inner_;
};

Status InferArg(Node& node) {
  if (node.inputs.size() != 1) return InvalidArgument(node.Describe(), ": expects 1 input");
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return InvalidArgument(node.Describe(), ": input must have rank >= 1");
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), rank));
  std::vector<int64_t> out;
  bool keep = node.GetInt("keepdims", 1) != 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != axis) out.push_back(x.shape[i]);
    else if (keep) out.push_back(1);
  }
  SetOutput(node, 0, DataType::kInt64, std::move(out));
  return Status::Ok();
}

template <bool kMax>
Expected<KernelPtr> MakeArg(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const auto& s = n.input(0)->shape;
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", 0), static_cast<int64_t>(s.size())));
  int64_t outer = ShapeProduct(s, 0, axis), len = s[axis], inner = ShapeProduct(s, axis + 1, s.size());
  if (len == 0 && outer * inner > 0)
    return InvalidArgument(n.Describe(), ": cannot take ", n.op_type, " over an empty axis");
  bool last = n.GetInt("select_last_index", 0) != 0;
#define OC_ARG_CASE(DT, T)                                                                        \
  case DT:                                                                                        \
    if (last) return KernelPtr(new ArgKernel<T, kMax, true>(outer, len, inner));                  \
    return KernelPtr(new ArgKernel<T, kMax, false>(outer, len, inner));
  switch (n.input(0)->dtype) {
    OC_ARG_CASE(DataType::kFloat32, float)
    OC_ARG_CASE(DataType::kFloat64, double)
    OC_ARG_CASE(DataType::kInt32, int32_t)
    OC_ARG_CASE(DataType::kInt64, int64_t)
    OC_ARG_CASE(DataType::kInt8, int8_t)
    OC_ARG_CASE(DataType::kUInt8, uint8_t)
    OC_ARG_CASE(DataType::kInt16, int16_t)
    OC_ARG_CASE(DataType::kUInt16, uint16_t)
    OC_ARG_CASE(DataType::kUInt32, uint32_t)
    OC_ARG_CASE(DataType::kUInt64, uint64_t)
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
#undef OC_ARG_CASE
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  auto reg = [&](const char* op, KernelFactory f, GradFn grad = nullptr) {
    r.Register({.op_type = op, .min_opset = 1, .infer = InferReduce, .kernels = CpuKernel(f), .canonicalize = CanonicalizeReduce,
                .grad = grad});
  };
  reg("ReduceSum", MakeReduce<SumP, kArith>, reduce::GradReduceSum);
  reg("ReduceMean", MakeReduce<MeanP, kArith>, reduce::GradReduceMean);
  reg("ReduceMax", MakeReduce<MaxP, kOrdered>, reduce::GradReduceMaxMin);
  reg("ReduceMin", MakeReduce<MinP, kOrdered>, reduce::GradReduceMaxMin);
  reg("ReduceProd", MakeReduce<ProdP, kArith>);
  reg("ReduceL1", MakeReduce<L1P, kArith>);
  reg("ReduceL2", MakeReduce<L2P, kArith>, reduce::GradReduceL2);  // integers: sqrt truncated, as the reference casts
  reg("ReduceLogSum", MakeReduce<LogSumP, kFloatOnly>);
  reg("ReduceLogSumExp", MakeReduce<LogSumExpP, kFloatOnly>, reduce::GradReduceLogSumExp);
  reg("ReduceSumSquare", MakeReduce<SumSquareP, kArith>, reduce::GradReduceSumSquare);
  r.Register({.op_type = "ArgMax", .min_opset = 1, .infer = InferArg, .kernels = CpuKernel(MakeArg<true>)});
  r.Register({.op_type = "ArgMin", .min_opset = 1, .infer = InferArg, .kernels = CpuKernel(MakeArg<false>)});
}

}  // namespace oc

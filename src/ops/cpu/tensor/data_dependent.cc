// Ops whose output shape depends on input data: NonZero, Compress, Unique,
// NonMaxSuppression.
//
// Their infer functions give the exact output shape when the data that decides
// it is constant (so constant inputs fold at compile time, and the run-time
// interpreter, which shows a node its concrete inputs as constants, gets
// static shapes), and an unknown (-1) dim otherwise. The kernels are then made
// for that one shape: Run() recomputes from the data and checks that it still
// gives the shape the kernel was made for.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/cpu/common/cast_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

bool IsFloatType(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 ||
         t == DataType::kBFloat16;
}

// Element i is nonzero: any bit set, except the sign bit of a float (-0.0 is zero).
bool NonZeroAt(const uint8_t* p, size_t i, size_t elem, bool is_float) {
  switch (elem) {
    case 1: return p[i] != 0;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      return (is_float ? v & 0x7FFFu : v) != 0;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return (is_float ? v & 0x7FFFFFFFu : v) != 0;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      return (is_float ? v & 0x7FFFFFFFFFFFFFFFull : v) != 0;
    }
  }
}

Status RequireByteSizedType(const Node& node, const Value& v) {
  size_t e = DataTypeSize(v.dtype);
  if (e != 1 && e != 2 && e != 4 && e != 8)
    return NotSupported(node.Describe(), ": element type ", DataTypeName(v.dtype), " is not supported");
  return Status::Ok();
}

int64_t CountNonZero(const Value& v) {
  const size_t elem = DataTypeSize(v.dtype);
  const bool is_float = IsFloatType(v.dtype);
  int64_t n = 0;
  const int64_t count = v.NumElements();
  for (int64_t i = 0; i < count; ++i) n += NonZeroAt(v.constant->data(), static_cast<size_t>(i), elem, is_float);
  return n;
}

// ---- NonZero ---------------------------------------------------------------------

Status InferNonZero(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  OC_RETURN_IF_ERROR(RequireByteSizedType(node, x));
  // numpy treats a scalar as one element of rank 1.
  const int64_t rank = std::max<int64_t>(static_cast<int64_t>(x.shape.size()), 1);
  int64_t nnz = -1;
  if (x.constant && x.IsStatic()) nnz = CountNonZero(x);
  SetOutput(node, 0, DataType::kInt64, {rank, nnz});
  return Status::Ok();
}

class NonZeroKernel final : public Kernel {
 public:
  NonZeroKernel(std::string what, std::vector<int64_t> shape, DataType dtype, int64_t nnz)
      : what_(std::move(what)), shape_(std::move(shape)), elem_(DataTypeSize(dtype)),
        is_float_(IsFloatType(dtype)), nnz_(nnz) {
    if (shape_.empty()) shape_ = {1};
  }
  Status Run(const KernelIO& io) override {
    const auto* x = static_cast<const uint8_t*>(io.inputs[0]);
    int64_t* out = io.out<int64_t>(0);
    const int64_t count = ShapeProduct(shape_);
    const size_t rank = shape_.size();
    int64_t k = 0;
    for (int64_t i = 0; i < count; ++i) {
      if (!NonZeroAt(x, static_cast<size_t>(i), elem_, is_float_)) continue;
      if (k == nnz_) return Mismatch();
      int64_t rest = i;
      for (size_t d = rank; d-- > 0;) {
        out[static_cast<int64_t>(d) * nnz_ + k] = rest % shape_[d];
        rest /= shape_[d];
      }
      ++k;
    }
    return k == nnz_ ? Status::Ok() : Mismatch();
  }

 private:
  Status Mismatch() const {
    return FailedPrecondition(what_, ": the input has a different number of nonzero elements than the ", nnz_,
                              " its output shape was computed for");
  }
  std::string what_;
  std::vector<int64_t> shape_;
  size_t elem_;
  bool is_float_;
  int64_t nnz_;
};

Expected<KernelPtr> MakeNonZero(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  const Value* out = init.node.output(0);
  if (!out || !out->IsStatic())
    return FailedPrecondition(init.node.Describe(), ": output shape is not known (it depends on the input data)");
  return KernelPtr(new NonZeroKernel(init.node.Describe(), init.node.input(0)->shape, init.node.input(0)->dtype,
                                     out->shape[1]));
}

// ---- Compress --------------------------------------------------------------------

// Selected positions: condition[i] true for i < min(len(condition), extent).
int64_t CountSelected(const uint8_t* cond, int64_t cond_len, int64_t extent) {
  int64_t n = 0;
  for (int64_t i = 0; i < std::min(cond_len, extent); ++i) n += cond[i] != 0;
  return n;
}

struct CompressGeometry {
  bool flat = true;
  int64_t outer = 1, extent = 0, inner = 1;
};

Expected<CompressGeometry> CompressShape(const Node& node) {
  const Value& x = *node.input(0);
  CompressGeometry g;
  if (!node.HasAttr("axis")) {
    g.extent = x.NumElements();
    return g;
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), rank));
  g.flat = false;
  g.outer = ShapeProduct(x.shape, 0, static_cast<size_t>(axis));
  g.extent = x.shape[static_cast<size_t>(axis)];
  g.inner = ShapeProduct(x.shape, static_cast<size_t>(axis) + 1, x.shape.size());
  return g;
}

Status InferCompress(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& x = *node.input(0);
  const Value& c = *node.input(1);
  if (c.dtype != DataType::kBool)
    return InvalidArgument(node.Describe(), ": condition must be bool, got ", DataTypeName(c.dtype));
  if (c.shape.size() != 1)
    return InvalidArgument(node.Describe(), ": condition must be 1-D, got shape ", c.ShapeString());
  const bool known = c.constant && c.IsStatic();
  if (!node.HasAttr("axis")) {
    int64_t n = -1;
    if (known && x.IsStatic()) n = CountSelected(c.constant->data(), c.shape[0], x.NumElements());
    SetOutput(node, 0, x.dtype, {n});
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), rank));
  std::vector<int64_t> shape = x.shape;
  const int64_t extent = shape[static_cast<size_t>(axis)];
  shape[static_cast<size_t>(axis)] =
      known && extent >= 0 ? CountSelected(c.constant->data(), c.shape[0], extent) : -1;
  SetOutput(node, 0, x.dtype, shape);
  return Status::Ok();
}

class CompressKernel final : public Kernel {
 public:
  CompressKernel(std::string what, CompressGeometry g, int64_t cond_len, size_t elem, int64_t selected)
      : what_(std::move(what)), g_(g), cond_len_(cond_len), elem_(elem), selected_(selected) {}
  Status Run(const KernelIO& io) override {
    const auto* x = static_cast<const uint8_t*>(io.inputs[0]);
    const auto* c = static_cast<const uint8_t*>(io.inputs[1]);
    auto* y = static_cast<uint8_t*>(io.outputs[0]);
    if (CountSelected(c, cond_len_, g_.extent) != selected_)
      return FailedPrecondition(what_, ": the condition selects a different count than the ", selected_,
                                " its output shape was computed for");
    const size_t row = static_cast<size_t>(g_.inner) * elem_;
    for (int64_t o = 0; o < g_.outer; ++o) {
      for (int64_t i = 0; i < std::min(cond_len_, g_.extent); ++i) {
        if (!c[i]) continue;
        std::memcpy(y, x + (static_cast<size_t>(o * g_.extent + i)) * row, row);
        y += row;
      }
    }
    return Status::Ok();
  }

 private:
  std::string what_;
  CompressGeometry g_;
  int64_t cond_len_;
  size_t elem_;
  int64_t selected_;
};

Expected<KernelPtr> MakeCompress(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  const Node& n = init.node;
  const Value* out = n.output(0);
  if (!out || !out->IsStatic())
    return FailedPrecondition(n.Describe(), ": output shape is not known (it depends on the condition's data)");
  OC_ASSIGN_OR_RETURN(CompressGeometry g, CompressShape(n));
  const int64_t selected = g.flat ? out->shape[0] : out->shape[static_cast<size_t>(
      NormalizeAxis(n, n.GetInt("axis", 0), static_cast<int64_t>(n.input(0)->shape.size())).value())];
  return KernelPtr(new CompressKernel(n.Describe(), g, n.input(1)->shape[0], DataTypeSize(n.input(0)->dtype),
                                      selected));
}

// ---- Unique ----------------------------------------------------------------------
//
// Slices along `axis` (elements when there is none) are sorted by value,
// lexicographically over the remaining dims in row-major order, ties by index so
// the order is deterministic and the first element of each group is its first
// occurrence; sorted=0 then lists the groups by first occurrence. All buffers
// live in the per-run scratch (Run does not allocate).

struct UniqueGeometry {
  int64_t outer = 1, n = 0, inner = 1;  // slice k = x[o, k, i] for all o, i
  int64_t SliceLen() const { return outer * inner; }
};

UniqueGeometry UniqueShape(const Node& node, const std::vector<int64_t>& shape, int64_t* axis_out) {
  UniqueGeometry g;
  *axis_out = -1;
  if (!node.HasAttr("axis")) {
    g.n = ShapeProduct(shape);
    return g;
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = node.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  *axis_out = axis;
  g.outer = ShapeProduct(shape, 0, static_cast<size_t>(axis));
  g.n = shape[static_cast<size_t>(axis)];
  g.inner = ShapeProduct(shape, static_cast<size_t>(axis) + 1, shape.size());
  return g;
}

// Scratch layout: order, group, first, count, rank-of-group (int64 x n each),
// then the gathered slices (n * slice_len elements).
size_t UniqueScratch(const UniqueGeometry& g, size_t elem) {
  return static_cast<size_t>(g.n) * (5 * sizeof(int64_t) + static_cast<size_t>(g.SliceLen()) * elem) + 64;
}

// 16-bit floats are stored as bits and compared by value.
struct Half { uint16_t bits; };
struct BHalf { uint16_t bits; };

template <typename T>
bool Less(const T& a, const T& b) {
  return a < b;
}
template <>
bool Less<Half>(const Half& a, const Half& b) {
  return ew::HalfToFloat(a.bits) < ew::HalfToFloat(b.bits);
}
template <>
bool Less<BHalf>(const BHalf& a, const BHalf& b) {
  return ew::BFloat16ToFloat(a.bits) < ew::BFloat16ToFloat(b.bits);
}

// Groups the slices of `x`; returns the number of unique slices. `first` and
// `count` are in output order; `group[k]` is the output index of slice k.
template <typename T>
int64_t GroupSlices(const T* x, const UniqueGeometry& g, bool sorted, int64_t* order, int64_t* group,
                    int64_t* first, int64_t* count, int64_t* rank_of, T* slices) {
  const int64_t len = g.SliceLen();
  for (int64_t k = 0; k < g.n; ++k)
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) slices[k * len + o * g.inner + i] = x[(o * g.n + k) * g.inner + i];
  auto cmp = [&](int64_t a, int64_t b) {  // -1, 0, 1
    const T* pa = slices + a * len;
    const T* pb = slices + b * len;
    for (int64_t e = 0; e < len; ++e) {
      if (Less(pa[e], pb[e])) return -1;
      if (Less(pb[e], pa[e])) return 1;
    }
    return 0;
  };
  for (int64_t k = 0; k < g.n; ++k) order[k] = k;
  std::sort(order, order + g.n, [&](int64_t a, int64_t b) {
    int c = cmp(a, b);
    return c != 0 ? c < 0 : a < b;
  });
  int64_t u = 0;
  for (int64_t j = 0; j < g.n; ++j) {
    const int64_t k = order[j];
    if (j == 0 || cmp(order[j - 1], k) != 0) {
      first[u] = k;
      count[u] = 0;
      ++u;
    }
    group[k] = u - 1;
    ++count[u - 1];
  }
  if (!sorted) {
    // Output order = order of first occurrence: sort group ids by their first index.
    for (int64_t q = 0; q < u; ++q) order[q] = q;
    std::sort(order, order + u, [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (int64_t q = 0; q < u; ++q) rank_of[order[q]] = q;
    for (int64_t q = 0; q < u; ++q) {
      // Permute first/count in place through the scratch `order` copy.
      order[q] = first[q];
    }
    for (int64_t q = 0; q < u; ++q) first[rank_of[q]] = order[q];
    for (int64_t q = 0; q < u; ++q) order[q] = count[q];
    for (int64_t q = 0; q < u; ++q) count[rank_of[q]] = order[q];
    for (int64_t k = 0; k < g.n; ++k) group[k] = rank_of[group[k]];
  }
  return u;
}

struct UniqueBuffers {
  int64_t *order, *group, *first, *count, *rank_of;
  void* slices;
};

UniqueBuffers Carve(void* scratch, const UniqueGeometry& g) {
  auto* p = static_cast<int64_t*>(scratch);
  const int64_t n = std::max<int64_t>(g.n, 1);
  return {p, p + n, p + 2 * n, p + 3 * n, p + 4 * n, p + 5 * n};
}

template <typename F>
auto DispatchByType(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat32: return f(float{});
    case DataType::kFloat64: return f(double{});
    case DataType::kInt8: return f(int8_t{});
    case DataType::kInt16: return f(int16_t{});
    case DataType::kInt32: return f(int32_t{});
    case DataType::kInt64: return f(int64_t{});
    case DataType::kUInt8: return f(uint8_t{});
    case DataType::kUInt16: return f(uint16_t{});
    case DataType::kUInt32: return f(uint32_t{});
    case DataType::kUInt64: return f(uint64_t{});
    case DataType::kBool: return f(uint8_t{});
    case DataType::kFloat16: return f(Half{});
    case DataType::kBFloat16: return f(BHalf{});
    default: return f(float{});
  }
}

bool UniqueTypeSupported(DataType t) {
  switch (t) {
    case DataType::kFloat32: case DataType::kFloat64: case DataType::kInt8: case DataType::kInt16:
    case DataType::kInt32: case DataType::kInt64: case DataType::kUInt8: case DataType::kUInt16:
    case DataType::kUInt32: case DataType::kUInt64: case DataType::kBool: case DataType::kFloat16:
    case DataType::kBFloat16:
      return true;
    default:
      return false;
  }
}

Status InferUnique(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  if (!UniqueTypeSupported(x.dtype))
    return NotSupported(node.Describe(), ": element type ", DataTypeName(x.dtype), " is not supported");
  int64_t axis = -1;
  if (node.HasAttr("axis")) {
    OC_ASSIGN_OR_RETURN(axis, NormalizeAxis(node, node.GetInt("axis", 0), static_cast<int64_t>(x.shape.size())));
  }
  int64_t u = -1;
  int64_t n = -1;
  if (x.IsStatic()) {
    int64_t ax = -1;
    UniqueGeometry g = UniqueShape(node, x.shape, &ax);
    n = g.n;
    if (x.constant) {
      std::vector<uint8_t> scratch(UniqueScratch(g, DataTypeSize(x.dtype)));
      UniqueBuffers b = Carve(scratch.data(), g);
      const bool sorted = node.GetInt("sorted", 1) != 0;
      u = DispatchByType(x.dtype, [&](auto zero) {
        using T = decltype(zero);
        return GroupSlices<T>(x.constant->as<T>(), g, sorted, b.order, b.group, b.first, b.count, b.rank_of,
                              static_cast<T*>(b.slices));
      });
    }
  } else if (axis >= 0) {
    n = x.shape[static_cast<size_t>(axis)];
  }
  std::vector<int64_t> y_shape;
  if (axis < 0) {
    y_shape = {u};
  } else {
    y_shape = x.shape;
    y_shape[static_cast<size_t>(axis)] = u;
  }
  SetOutput(node, 0, x.dtype, y_shape);
  if (node.output(1)) SetOutput(node, 1, DataType::kInt64, {u});
  if (node.output(2)) SetOutput(node, 2, DataType::kInt64, {n});
  if (node.output(3)) SetOutput(node, 3, DataType::kInt64, {u});
  return Status::Ok();
}

class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(std::string what, UniqueGeometry g, DataType dtype, bool sorted, int64_t u)
      : what_(std::move(what)), g_(g), dtype_(dtype), sorted_(sorted), u_(u) {}
  size_t ScratchBytes() const override { return UniqueScratch(g_, DataTypeSize(dtype_)); }
  Status Run(const KernelIO& io) override {
    UniqueBuffers b = Carve(io.scratch, g_);
    return DispatchByType(dtype_, [&](auto zero) -> Status {
      using T = decltype(zero);
      const T* x = static_cast<const T*>(io.inputs[0]);
      const T* slices = static_cast<const T*>(b.slices);
      int64_t u = GroupSlices<T>(x, g_, sorted_, b.order, b.group, b.first, b.count, b.rank_of,
                                 static_cast<T*>(b.slices));
      if (u != u_)
        return FailedPrecondition(what_, ": the input has ", u, " unique values, its output shape was made for ", u_);
      if (T* y = static_cast<T*>(io.outputs[0])) {
        // y[o, q, i] = slice first[q] at (o, i).
        const int64_t len = g_.SliceLen();
        for (int64_t o = 0; o < g_.outer; ++o)
          for (int64_t q = 0; q < u; ++q)
            for (int64_t i = 0; i < g_.inner; ++i)
              y[(o * u + q) * g_.inner + i] = slices[b.first[q] * len + o * g_.inner + i];
      }
      if (io.num_outputs > 1 && io.outputs[1]) std::memcpy(io.outputs[1], b.first, static_cast<size_t>(u) * 8);
      if (io.num_outputs > 2 && io.outputs[2]) std::memcpy(io.outputs[2], b.group, static_cast<size_t>(g_.n) * 8);
      if (io.num_outputs > 3 && io.outputs[3]) std::memcpy(io.outputs[3], b.count, static_cast<size_t>(u) * 8);
      return Status::Ok();
    });
  }

 private:
  std::string what_;
  UniqueGeometry g_;
  DataType dtype_;
  bool sorted_;
  int64_t u_;
};

Expected<KernelPtr> MakeUnique(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  const Node& n = init.node;
  const Value* y = n.output(0);
  if (!y || !y->IsStatic())
    return FailedPrecondition(n.Describe(), ": output shape is not known (it depends on the input data)");
  int64_t axis = -1;
  UniqueGeometry g = UniqueShape(n, n.input(0)->shape, &axis);
  const int64_t u = axis < 0 ? y->shape[0] : y->shape[static_cast<size_t>(axis)];
  return KernelPtr(new UniqueKernel(n.Describe(), g, n.input(0)->dtype, n.GetInt("sorted", 1) != 0, u));
}

// ---- NonMaxSuppression -----------------------------------------------------------
//
// Per (batch, class): boxes scoring above score_threshold (when given) are taken
// in order of decreasing score (ties: lower box index first); a box is kept
// unless its IoU with an already kept box of that class exceeds iou_threshold,
// until max_output_boxes_per_class are kept. Rows [batch, class, box] in
// batch, class, selection order. Candidates and kept boxes live in the scratch.

struct NmsParams {
  int64_t max_out = 0;
  float iou = 0.f;
  bool has_score = false;
  float score = 0.f;
  bool center = false;
};

struct NmsCandidate {
  float score;
  int64_t index;
};

// Suppression test of box a against box b (the kept one), on canonical
// corners and areas: only boxes that intersect with positive areas can
// suppress; then IoU > threshold.
inline bool Suppress(float ax0, float ay0, float ax1, float ay1, float aa, float bx0, float by0, float bx1, float by1,
                     float ba, float iou_threshold) {
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  const float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0) return false;
  const float uni = aa + ba - inter;
  if (aa <= 0 || ba <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

// Finding the kept boxes a candidate might overlap. Testing each candidate
// against every kept box is quadratic: torchvision's batched NMS (SSD, Faster
// R-CNN exports) runs one class over all classes' boxes, shifted apart, and
// keeps most of them (SSDlite: 27000 candidates, 18000 kept, 2.5e8 tests).
// Kept boxes go into a grid of x cells at least as wide as the widest
// candidate box W: a box can only intersect kept boxes whose x0 lies in
// (x0 - W, x1), i.e. in at most three cells. Boxes with no positive extent or
// area (NaN included) neither suppress nor are suppressed, and are only
// counted; boxes with an infinite coordinate are checked against, and kept
// in, a plain list.
struct NmsWorkspace {
  NmsCandidate* cand = nullptr;  // n
  float* box = nullptr;          // 5 arrays of n: x0, y0, x1, y1, area (canonical)
  int32_t* next = nullptr;       // n: kept box -> next kept box in its cell (-1: end)
  int32_t* head = nullptr;       // n + 1 cells: first kept box (-1: none)
  int32_t* kept = nullptr;       // n: kept boxes (box indices) in the grid, by slot
  int32_t* wide = nullptr;       // n: kept boxes with an infinite coordinate
  int64_t n = 0;
};

size_t NmsWorkspaceBytes(int64_t n) {
  return static_cast<size_t>(n) * (sizeof(NmsCandidate) + 5 * sizeof(float) + 4 * sizeof(int32_t)) + 64;
}

NmsWorkspace NmsWorkspaceAt(void* p, int64_t n) {
  NmsWorkspace w;
  w.cand = static_cast<NmsCandidate*>(p);
  w.box = reinterpret_cast<float*>(w.cand + n);
  w.next = reinterpret_cast<int32_t*>(w.box + 5 * n);
  w.head = w.next + n;
  w.kept = w.head + n + 1;
  w.wide = w.kept + n;
  w.n = n;
  return w;
}

// Corners: [y1, x1, y2, x2] in either order, or [x_center, y_center, width,
// height] with center_point_box.
void CanonicalBoxes(const float* bb, int64_t n, bool center, float* out) {
  float *x0 = out, *y0 = out + n, *x1 = out + 2 * n, *y1 = out + 3 * n, *area = out + 4 * n;
  for (int64_t i = 0; i < n; ++i) {
    const float* a = bb + i * 4;
    if (center) {
      x0[i] = a[0] - a[2] / 2, x1[i] = a[0] + a[2] / 2, y0[i] = a[1] - a[3] / 2, y1[i] = a[1] + a[3] / 2;
    } else {
      y0[i] = std::min(a[0], a[2]), y1[i] = std::max(a[0], a[2]);
      x0[i] = std::min(a[1], a[3]), x1[i] = std::max(a[1], a[3]);
    }
    area[i] = (x1[i] - x0[i]) * (y1[i] - y0[i]);
  }
}

// One class's selection over the sorted candidates cand[0, m): calls keep(i)
// for each kept box index, in order, at most max_out times.
template <typename Keep>
void SelectClass(const NmsWorkspace& w, int64_t m, const NmsParams& p, Keep keep) {
  const int64_t n = w.n;
  const float *x0 = w.box, *y0 = w.box + n, *x1 = w.box + 2 * n, *y1 = w.box + 3 * n, *area = w.box + 4 * n;
  auto takes_part = [&](int64_t i) { return x1[i] > x0[i] && y1[i] > y0[i] && area[i] > 0; };
  auto finite = [&](int64_t i) {
    return std::isfinite(x0[i]) && std::isfinite(x1[i]) && std::isfinite(y0[i]) && std::isfinite(y1[i]) &&
           std::isfinite(area[i]);
  };
  // Grid geometry from the candidates that can overlap anything.
  float lo = std::numeric_limits<float>::infinity(), hi = -lo, widest = 0;
  for (int64_t j = 0; j < m; ++j) {
    const int64_t i = w.cand[j].index;
    if (!takes_part(i) || !finite(i)) continue;
    lo = std::min(lo, x0[i]), hi = std::max(hi, x0[i]), widest = std::max(widest, x1[i] - x0[i]);
  }
  int64_t cells = 1;
  double cell_w = 1;
  if (hi > lo) {
    cell_w = std::max<double>(widest, (static_cast<double>(hi) - lo) / static_cast<double>(std::max<int64_t>(m, 1)));
    cells = std::min<int64_t>(static_cast<int64_t>((static_cast<double>(hi) - lo) / cell_w) + 1, n + 1);
  }
  auto cell_of = [&](double x) {
    const double c = std::floor((x - lo) / cell_w);
    return static_cast<int64_t>(std::clamp(c, 0.0, static_cast<double>(cells - 1)));
  };
  std::fill(w.head, w.head + cells, -1);
  int64_t grid = 0, wide = 0, k = 0;
  auto suppressed_by = [&](int64_t i, int64_t q) {
    return Suppress(x0[i], y0[i], x1[i], y1[i], area[i], x0[q], y0[q], x1[q], y1[q], area[q], p.iou);
  };
  for (int64_t j = 0; j < m && k < p.max_out; ++j) {
    const int64_t i = w.cand[j].index;
    bool hit = false;
    if (takes_part(i)) {
      for (int64_t t = 0; t < wide && !hit; ++t) hit = suppressed_by(i, w.wide[t]);
      if (finite(i)) {
        const int64_t c1 = cell_of(x1[i]);
        // One cell more on the left: widths were rounded to float.
        for (int64_t c = std::max<int64_t>(cell_of(static_cast<double>(x0[i]) - widest) - 1, 0); c <= c1 && !hit; ++c)
          for (int32_t s = w.head[c]; s >= 0 && !hit; s = w.next[s]) hit = suppressed_by(i, w.kept[s]);
      } else {
        for (int64_t s = 0; s < grid && !hit; ++s) hit = suppressed_by(i, w.kept[s]);
      }
      if (hit) continue;
      if (finite(i)) {
        const int64_t c = cell_of(x0[i]);
        w.kept[grid] = static_cast<int32_t>(i);
        w.next[grid] = w.head[c];
        w.head[c] = static_cast<int32_t>(grid++);
      } else {
        w.wide[wide++] = static_cast<int32_t>(i);
      }
    }
    keep(i);
    ++k;
  }
}

// Runs NMS; writes the first `capacity` rows to `out` when it is not null;
// returns the row count.
int64_t RunNms(const float* boxes, const float* scores, int64_t batches, int64_t classes, int64_t n,
               const NmsParams& p, NmsWorkspace& w, int64_t* out, int64_t capacity) {
  int64_t rows = 0;
  for (int64_t b = 0; b < batches; ++b) {
    CanonicalBoxes(boxes + b * n * 4, n, p.center, w.box);
    for (int64_t c = 0; c < classes; ++c) {
      const float* sc = scores + (b * classes + c) * n;
      int64_t m = 0;
      // A NaN score is never selected (it has no place in the score order;
      // with a threshold the comparison drops it anyway).
      for (int64_t i = 0; i < n; ++i)
        if (p.has_score ? sc[i] > p.score : !std::isnan(sc[i])) w.cand[m++] = {sc[i], i};
      std::sort(w.cand, w.cand + m, [](const NmsCandidate& x, const NmsCandidate& y) {
        return x.score != y.score ? x.score > y.score : x.index < y.index;
      });
      SelectClass(w, m, p, [&](int64_t i) {
        if (out && rows < capacity) {
          out[rows * 3] = b;
          out[rows * 3 + 1] = c;
          out[rows * 3 + 2] = i;
        }
        ++rows;
      });
    }
  }
  return rows;
}

// What the kernel keeps of the node: the attribute and which of the optional
// scalar inputs (2..4) are given (an empty tensor counts as not given).
struct NmsConfig {
  bool center = false;
  bool present[5] = {};
};

NmsConfig NmsConfigOf(const Node& node) {
  NmsConfig c;
  c.center = node.GetInt("center_point_box", 0) != 0;
  for (size_t i = 2; i < 5; ++i) c.present[i] = node.input(i) && node.input(i)->NumElements() > 0;
  return c;
}

// The scalar inputs, from constants at infer time or buffers at run time.
NmsParams NmsParamsFrom(const NmsConfig& c, const void* max_out, const void* iou, const void* score) {
  NmsParams p;
  p.center = c.center;
  if (max_out && c.present[2]) p.max_out = std::max<int64_t>(*static_cast<const int64_t*>(max_out), 0);
  if (iou && c.present[3]) p.iou = *static_cast<const float*>(iou);
  if (score && c.present[4]) {
    p.has_score = true;
    p.score = *static_cast<const float*>(score);
  }
  return p;
}

Status CheckNmsInputs(const Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& boxes = *node.input(0);
  const Value& scores = *node.input(1);
  if (boxes.dtype != DataType::kFloat32 || scores.dtype != DataType::kFloat32)
    return NotSupported(node.Describe(), ": boxes and scores must be float32");
  if (boxes.shape.size() != 3 || scores.shape.size() != 3)
    return InvalidArgument(node.Describe(), ": boxes must be [batch, boxes, 4] and scores [batch, classes, boxes], got ",
                           boxes.ShapeString(), " and ", scores.ShapeString());
  if (boxes.shape[2] >= 0 && boxes.shape[2] != 4)
    return InvalidArgument(node.Describe(), ": boxes must have 4 coordinates, got ", boxes.ShapeString());
  if (boxes.IsStatic() && scores.IsStatic() &&
      (boxes.shape[0] != scores.shape[0] || boxes.shape[1] != scores.shape[2]))
    return InvalidArgument(node.Describe(), ": boxes ", boxes.ShapeString(), " and scores ", scores.ShapeString(),
                           " disagree on batch or box count");
  if (boxes.shape[1] >= std::numeric_limits<int32_t>::max())
    return NotSupported(node.Describe(), ": ", boxes.shape[1], " boxes (at most 2^31 - 2)");
  const DataType want[] = {DataType::kInt64, DataType::kFloat32, DataType::kFloat32};
  for (size_t i = 2; i < 5; ++i) {
    const Value* v = node.input(i);
    if (v && v->dtype != want[i - 2])
      return InvalidArgument(node.Describe(), ": input ", i, " must be ", DataTypeName(want[i - 2]), ", got ",
                             DataTypeName(v->dtype));
    if (v && v->IsStatic() && v->NumElements() > 1)
      return InvalidArgument(node.Describe(), ": input ", i, " must be a scalar, got ", v->ShapeString());
  }
  return Status::Ok();
}

Status InferNms(Node& node) {
  OC_RETURN_IF_ERROR(CheckNmsInputs(node));
  bool known = true;
  for (size_t i = 0; i < 5; ++i) {
    const Value* v = node.input(i);
    if (v && !(v->constant && v->IsStatic())) known = false;
  }
  int64_t rows = -1;
  if (known) {
    const Value& boxes = *node.input(0);
    const Value& scores = *node.input(1);
    auto data = [&](size_t i) -> const void* { return node.input(i) ? node.input(i)->constant->data() : nullptr; };
    NmsParams p = NmsParamsFrom(NmsConfigOf(node), data(2), data(3), data(4));
    std::vector<uint8_t> space(NmsWorkspaceBytes(boxes.shape[1]));
    NmsWorkspace w = NmsWorkspaceAt(space.data(), boxes.shape[1]);
    rows = RunNms(boxes.constant->as<float>(), scores.constant->as<float>(), boxes.shape[0], scores.shape[1],
                  boxes.shape[1], p, w, nullptr, 0);
  }
  SetOutput(node, 0, DataType::kInt64, {rows, 3});
  return Status::Ok();
}

class NmsKernel final : public Kernel {
 public:
  NmsKernel(const Node& node, int64_t rows)
      : config_(NmsConfigOf(node)), what_(node.Describe()), batches_(node.input(0)->shape[0]), classes_(node.input(1)->shape[1]),
        n_(node.input(0)->shape[1]), rows_(rows) {}
  size_t ScratchBytes() const override { return NmsWorkspaceBytes(n_); }
  Status Run(const KernelIO& io) override {
    auto in = [&](size_t i) -> const void* { return i < io.num_inputs ? io.inputs[i] : nullptr; };
    NmsParams p = NmsParamsFrom(config_, in(2), in(3), in(4));
    NmsWorkspace w = NmsWorkspaceAt(io.scratch, n_);
    // The output holds the rows the shape was made for: no more are written,
    // and a different count is an error.
    const int64_t rows = RunNms(io.in<float>(0), io.in<float>(1), batches_, classes_, n_, p, w, io.out<int64_t>(0), rows_);
    if (rows != rows_)
      return FailedPrecondition(what_, ": ", rows, " boxes are selected, the output shape was made for ", rows_);
    return Status::Ok();
  }

 private:
  NmsConfig config_;
  std::string what_;
  int64_t batches_, classes_, n_, rows_;
};

Expected<KernelPtr> MakeNms(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  OC_RETURN_IF_ERROR(CheckNmsInputs(init.node));
  const Value* out = init.node.output(0);
  if (!out || !out->IsStatic())
    return FailedPrecondition(init.node.Describe(), ": output shape is not known (it depends on the input data)");
  return KernelPtr(new NmsKernel(init.node, out->shape[0]));
}

}  // namespace

void RegisterDataDependentOps(OpRegistry& r) {
  r.Register({.op_type = "NonZero", .min_opset = 9, .infer = InferNonZero, .kernels = CpuKernel(MakeNonZero)});
  r.Register({.op_type = "Compress", .min_opset = 9, .infer = InferCompress, .kernels = CpuKernel(MakeCompress)});
  r.Register({.op_type = "Unique", .min_opset = 11, .infer = InferUnique, .kernels = CpuKernel(MakeUnique)});
  r.Register({.op_type = "NonMaxSuppression", .min_opset = 10, .infer = InferNms, .kernels = CpuKernel(MakeNms)});
}

}  // namespace oc

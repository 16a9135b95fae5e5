// Ops that change only the shape (Reshape, Flatten, Squeeze, Unsqueeze: a copy
// of the bytes, skipped when the planner aliases output and input) and ops that
// describe a shape (Shape, Size). Shape and Size put their result into the
// output's `constant` whenever the dims they report are known, so that shape
// arithmetic chains (Shape -> Gather -> Concat -> Reshape) fold at compile time.
#include <algorithm>
#include <set>

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

// ---- Reshape -----------------------------------------------------------------

Status InferReshape(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& data = *node.input(0);
  const bool allowzero = node.GetInt("allowzero", 0) != 0;
  bool present = false;
  auto shape = IntsFromInputOrAttr(node, 1, "shape", &present);
  if (!present) return InvalidArgument(node.Describe(), ": the target shape (input 1) is missing");
  if (node.input(1)) OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "shape"));
  if (!shape) {
    const Value* s = node.input(1);
    if (s->has_shape && s->shape.size() == 1 && s->shape[0] >= 0)
      SetOutput(node, 0, data.dtype, std::vector<int64_t>(s->shape[0], -1));
    else
      SetUnknownRank(node, 0, data.dtype);
    return Status::Ok();
  }
  std::vector<int64_t> out = *shape;
  int infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0)
        return InvalidArgument(node.Describe(), ": target shape ", DimsString(*shape),
                               " has more than one -1");
      infer_at = static_cast<int>(i);
    } else if (out[i] == 0) {
      has_zero = true;
      if (allowzero) continue;
      if (data.has_shape && i >= data.shape.size())
        return InvalidArgument(node.Describe(), ": target shape ", DimsString(*shape), " has 0 at dim ", i,
                               " but the input ", data.ShapeString(), " has rank ", data.shape.size());
      out[i] = data.has_shape ? data.shape[i] : -1;
    } else if (out[i] < -1) {
      return InvalidArgument(node.Describe(), ": target shape ", DimsString(*shape), " has invalid dim ",
                             out[i]);
    }
  }
  if (allowzero && has_zero && infer_at >= 0)
    return InvalidArgument(node.Describe(), ": with allowzero=1 the target shape ", DimsString(*shape),
                           " cannot contain both 0 and -1");
  bool others_known = true;
  int64_t others = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int>(i) == infer_at) continue;
    if (out[i] < 0) others_known = false;
    else others *= out[i];
  }
  const int64_t total = data.NumElements();
  if (infer_at >= 0) {
    if (total >= 0 && others_known) {
      if (others == 0 || total % others != 0)
        return InvalidArgument(node.Describe(), ": cannot reshape input ", data.ShapeString(), " (", total,
                               " elements) to ", DimsString(*shape));
      out[infer_at] = total / others;
    }
  } else if (total >= 0 && others_known && total != others) {
    return InvalidArgument(node.Describe(), ": cannot reshape input ", data.ShapeString(), " (", total,
                           " elements) to ", DimsString(out), " (", others, " elements)");
  }
  SetOutput(node, 0, data.dtype, std::move(out));
  return Status::Ok();
}

Status CanonicalizeReshape(Node& node, Graph& graph) {
  const Attribute* a = node.FindAttr("shape");
  if (!a || node.input(1)) return Status::Ok();
  Value* c = AddInt64Constant(graph, node, "shape", a->ints);
  SetInputAt(node, 1, c);
  node.attrs.erase("shape");
  node.attrs.erase("consumed_inputs");
  node.opset = std::max(node.opset, 5);
  return Status::Ok();
}

// ---- Flatten -------------------------------------------------------------------

Status InferFlatten(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t axis = node.GetInt("axis", 1);
  if (axis < -r || axis > r)
    return InvalidArgument(node.Describe(), ": axis ", axis, " is out of range [", -r, ", ", r, "] for input ",
                           x.ShapeString());
  if (axis < 0) axis += r;
  auto prod = [&](int64_t b, int64_t e) {
    int64_t p = 1;
    for (int64_t i = b; i < e; ++i) {
      if (x.shape[i] < 0) return int64_t{-1};
      p *= x.shape[i];
    }
    return p;
  };
  SetOutput(node, 0, x.dtype, {prod(0, axis), prod(axis, r)});
  return Status::Ok();
}

// ---- Squeeze / Unsqueeze ---------------------------------------------------------

Status InferSqueeze(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  bool present = false;
  auto axes = IntsFromInputOrAttr(node, 1, "axes", &present);
  if (node.input(1)) OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "axes"));
  if (present && !axes) {
    SetUnknownRank(node, 0, x.dtype);
    return Status::Ok();
  }
  std::vector<bool> drop(r, false);
  if (!present) {
    for (int64_t i = 0; i < r; ++i) {
      if (x.shape[i] < 0) {  // might be 1: the output rank is unknowable
        SetUnknownRank(node, 0, x.dtype);
        return Status::Ok();
      }
      drop[i] = x.shape[i] == 1;
    }
  } else {
    for (int64_t a : *axes) {
      OC_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(node, a, r));
      if (ax >= r) return InvalidArgument(node.Describe(), ": cannot squeeze axis ", a, " of a scalar");
      if (x.shape[ax] >= 0 && x.shape[ax] != 1)
        return InvalidArgument(node.Describe(), ": cannot squeeze axis ", a, " of input ", x.ShapeString(),
                               ": expected size 1, got ", x.shape[ax]);
      drop[ax] = true;
    }
  }
  std::vector<int64_t> out;
  std::vector<std::string> params;
  for (int64_t i = 0; i < r; ++i) {
    if (drop[i]) continue;
    out.push_back(x.shape[i]);
    params.push_back(i < static_cast<int64_t>(x.dim_params.size()) ? x.dim_params[i] : "");
  }
  SetOutput(node, 0, x.dtype, std::move(out));
  node.output(0)->dim_params = std::move(params);
  return Status::Ok();
}

Status InferUnsqueeze(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  bool present = false;
  auto axes = IntsFromInputOrAttr(node, 1, "axes", &present);
  if (!present) return InvalidArgument(node.Describe(), ": axes (input 1) is missing");
  if (node.input(1)) OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "axes"));
  if (!axes) {
    const Value* a = node.input(1);
    if (a->IsStatic() && a->shape.size() <= 1)
      SetOutput(node, 0, x.dtype, std::vector<int64_t>(r + a->NumElements(), -1));
    else
      SetUnknownRank(node, 0, x.dtype);
    return Status::Ok();
  }
  const int64_t out_rank = r + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : *axes) {
    OC_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(node, a, out_rank));
    if (inserted[ax])
      return InvalidArgument(node.Describe(), ": axes ", DimsString(*axes), " repeat axis ", ax);
    inserted[ax] = true;
  }
  std::vector<int64_t> out(out_rank);
  std::vector<std::string> params(out_rank);
  for (int64_t i = 0, j = 0; i < out_rank; ++i) {
    if (inserted[i]) { out[i] = 1; continue; }
    out[i] = x.shape[j];
    if (j < static_cast<int64_t>(x.dim_params.size())) params[i] = x.dim_params[j];
    ++j;
  }
  SetOutput(node, 0, x.dtype, std::move(out));
  node.output(0)->dim_params = std::move(params);
  return Status::Ok();
}

// Squeeze/Unsqueeze before opset 13 carry `axes` as an attribute.
Status CanonicalizeAxesAttr(Node& node, Graph& graph) {
  const Attribute* a = node.FindAttr("axes");
  if (!a) return Status::Ok();
  if (!node.input(1)) SetInputAt(node, 1, AddInt64Constant(graph, node, "axes", a->ints));
  node.attrs.erase("axes");
  node.opset = std::max(node.opset, 13);
  return Status::Ok();
}

// The copy shared by every shape-only op.
class ViewKernel final : public Kernel {
 public:
  explicit ViewKernel(size_t bytes) : bytes_(bytes) {}
  Status Run(const KernelIO& io) override {
    ParallelCopy(io.outputs[0], io.inputs[0], bytes_, io.pool);
    return Status::Ok();
  }

 private:
  size_t bytes_;
};

Expected<KernelPtr> MakeView(const KernelInit& init) {
  const Node& n = init.node;
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  if (!x || !y || !x->IsStatic() || !y->IsStatic())
    return NotSupported(n.Describe(), ": needs static shapes, got input ", x ? x->ShapeString() : "none",
                        " and output ", y ? y->ShapeString() : "none");
  if (x->NumElements() != y->NumElements())
    return InvalidArgument(n.Describe(), ": input ", x->ShapeString(), " and output ", y->ShapeString(),
                           " differ in element count");
  // Packed 4/2-bit tensors keep their flat element order, so a view copies bytes.
  if (!IsSubByteType(x->dtype)) OC_RETURN_IF_ERROR(RequireMovableType(n, x->dtype));
  return KernelPtr(new ViewKernel(static_cast<size_t>(x->ByteSize())));
}

// ---- Shape / Size ------------------------------------------------------------------

// The [start, end) range of dims reported by Shape (start/end since opset 15).
std::pair<int64_t, int64_t> ShapeRange(const Node& node, int64_t r) {
  auto clamp = [r](int64_t v) {
    if (v < 0) v += r;
    return std::clamp<int64_t>(v, 0, r);
  };
  int64_t start = clamp(node.GetInt("start", 0));
  int64_t end = clamp(node.GetInt("end", r));
  return {start, std::max(start, end)};
}

Status InferShape(Node& node) {
  Value* x = node.input(0);
  if (!x) return InvalidArgument(node.Describe(), ": required input 0 is missing");
  if (!x->has_shape) {
    SetOutput(node, 0, DataType::kInt64, {-1});
    node.output(0)->constant.reset();
    return Status::Ok();
  }
  auto [start, end] = ShapeRange(node, static_cast<int64_t>(x->shape.size()));
  std::vector<int64_t> dims(x->shape.begin() + start, x->shape.begin() + end);
  SetOutput(node, 0, DataType::kInt64, {static_cast<int64_t>(dims.size())});
  // Reset too: a constant left from an earlier sweep would be stale.
  if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }))
    node.output(0)->constant = TensorData::Copy(dims.data(), dims.size() * sizeof(int64_t));
  else
    node.output(0)->constant.reset();
  return Status::Ok();
}

Status InferSize(Node& node) {
  Value* x = node.input(0);
  if (!x) return InvalidArgument(node.Describe(), ": required input 0 is missing");
  SetOutput(node, 0, DataType::kInt64, {});
  if (x->IsStatic()) {
    int64_t n = x->NumElements();
    node.output(0)->constant = TensorData::Copy(&n, sizeof(n));
  } else {
    node.output(0)->constant.reset();
  }
  return Status::Ok();
}

// Writes int64 values fixed at load time (the input's static shape).
class ConstIntsKernel final : public Kernel {
 public:
  explicit ConstIntsKernel(std::vector<int64_t> v) : values_(std::move(v)) {}
  Status Run(const KernelIO& io) override {
    if (!values_.empty()) std::memcpy(io.outputs[0], values_.data(), values_.size() * sizeof(int64_t));
    return Status::Ok();
  }

 private:
  std::vector<int64_t> values_;
};

Expected<KernelPtr> MakeShape(const KernelInit& init) {
  const Node& n = init.node;
  const Value* x = n.input(0);
  if (!x || !x->IsStatic()) return NotSupported(n.Describe(), ": needs a static input shape");
  auto [start, end] = ShapeRange(n, static_cast<int64_t>(x->shape.size()));
  return KernelPtr(new ConstIntsKernel(std::vector<int64_t>(x->shape.begin() + start, x->shape.begin() + end)));
}

Expected<KernelPtr> MakeSize(const KernelInit& init) {
  const Node& n = init.node;
  const Value* x = n.input(0);
  if (!x || !x->IsStatic()) return NotSupported(n.Describe(), ": needs a static input shape");
  return KernelPtr(new ConstIntsKernel({x->NumElements()}));
}

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  r.Register({.op_type = "Reshape", .infer = InferReshape, .kernels = CpuKernel(MakeView), .canonicalize = CanonicalizeReshape,
              .native_types = kAllDataTypes, .grad = tensor::GradReshapeLike});
  r.Register({.op_type = "Flatten", .infer = InferFlatten, .kernels = CpuKernel(MakeView),
              .native_types = kAllDataTypes, .grad = tensor::GradReshapeLike});
  r.Register({.op_type = "Squeeze", .infer = InferSqueeze, .kernels = CpuKernel(MakeView), .canonicalize = CanonicalizeAxesAttr,
              .native_types = kAllDataTypes, .grad = tensor::GradReshapeLike});
  r.Register({.op_type = "Unsqueeze", .infer = InferUnsqueeze, .kernels = CpuKernel(MakeView),
              .canonicalize = CanonicalizeAxesAttr, .native_types = kAllDataTypes, .grad = tensor::GradReshapeLike});
  r.Register({.op_type = "Shape", .infer = InferShape, .kernels = CpuKernel(MakeShape),
              .native_types = kAllDataTypes});
  r.Register({.op_type = "Size", .infer = InferSize, .kernels = CpuKernel(MakeSize),
              .native_types = kAllDataTypes});
}

}  // namespace oc

// Slice (starts/ends/axes/steps; before opset 10 they were attributes and are
// rewritten into inputs). Out-of-range bounds are clamped as ONNX specifies and
// negative steps walk backwards; the kernel is one StridedCopy.
#include <algorithm>

#include "ops/cpu/tensor/grads.h"
#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

struct SliceArgs {
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  bool all_known = false;  // starts/ends (and axes/steps when given) are constant
  bool axes_known = false;
};

Expected<SliceArgs> ReadSliceArgs(const Node& node) {
  SliceArgs a;
  bool has_starts = false, has_ends = false, has_axes = false, has_steps = false;
  a.starts = IntsFromInputOrAttr(node, 1, "starts", &has_starts);
  a.ends = IntsFromInputOrAttr(node, 2, "ends", &has_ends);
  a.axes = IntsFromInputOrAttr(node, 3, "axes", &has_axes);
  a.steps = IntsFromInputOrAttr(node, 4, "steps", &has_steps);
  if (!has_starts || !has_ends) return InvalidArgument(node.Describe(), ": starts and ends are required");
  const char* names[] = {"starts", "ends", "axes", "steps"};
  for (size_t i = 1; i <= 4; ++i)
    if (node.input(i)) OC_RETURN_IF_ERROR(RequireIndexInput(node, i, names[i - 1]));
  a.axes_known = !has_axes || a.axes.has_value();
  a.all_known = a.starts && a.ends && a.axes_known && (!has_steps || a.steps);
  if (a.all_known) {
    const size_t n = a.starts->size();
    if (a.ends->size() != n || (a.axes && a.axes->size() != n) || (a.steps && a.steps->size() != n))
      return InvalidArgument(node.Describe(), ": starts ", DimsString(*a.starts), ", ends ", DimsString(*a.ends),
                             a.axes ? ", axes " + DimsString(*a.axes) : "",
                             a.steps ? ", steps " + DimsString(*a.steps) : "", " must have equal lengths");
  }
  return a;
}

// Per output dim: first input index and step (count is the output dim).
struct SliceDim {
  int64_t start = 0, step = 1, count = -1;
};

// Resolves the slice against `shape` (dims may be -1: their count stays -1).
Expected<std::vector<SliceDim>> ResolveSlice(const Node& node, const std::vector<int64_t>& shape,
                                             const SliceArgs& a) {
  const int64_t r = static_cast<int64_t>(shape.size());
  std::vector<SliceDim> dims(r);
  for (int64_t d = 0; d < r; ++d) dims[d].count = shape[d];
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < a.starts->size(); ++i) {
    int64_t axis = a.axes ? (*a.axes)[i] : static_cast<int64_t>(i);
    if (axis < -r || axis >= r)
      return InvalidArgument(node.Describe(), ": axis ", axis, " is out of range for input rank ", r);
    if (axis < 0) axis += r;
    if (seen[axis]) return InvalidArgument(node.Describe(), ": axis ", axis, " is sliced twice");
    seen[axis] = true;
    const int64_t step = a.steps ? (*a.steps)[i] : 1;
    if (step == 0) return InvalidArgument(node.Describe(), ": step for axis ", axis, " is 0");
    const int64_t dim = shape[axis];
    SliceDim& sd = dims[axis];
    sd.step = step;
    if (dim < 0) { sd.count = -1; continue; }
    if (dim == 0) { sd.start = 0; sd.count = 0; continue; }
    int64_t s = (*a.starts)[i], e = (*a.ends)[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      sd.count = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      sd.count = s > e ? (s - e - step - 1) / (-step) : 0;
    }
    sd.start = s;
  }
  return dims;
}

Status InferSlice(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  OC_ASSIGN_OR_RETURN(SliceArgs a, ReadSliceArgs(node));
  std::vector<int64_t> out(x.shape.size(), -1);
  if (a.all_known) {
    OC_ASSIGN_OR_RETURN(auto dims, ResolveSlice(node, x.shape, a));
    for (size_t d = 0; d < dims.size(); ++d) out[d] = dims[d].count;
  } else if (a.axes_known && a.axes) {
    // Only the sliced axes are unknown.
    out = x.shape;
    const int64_t r = static_cast<int64_t>(out.size());
    for (int64_t ax : *a.axes) {
      if (ax < -r || ax >= r)
        return InvalidArgument(node.Describe(), ": axis ", ax, " is out of range for input rank ", r);
      out[ax < 0 ? ax + r : ax] = -1;
    }
  }
  SetOutput(node, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status CanonicalizeSlice(Node& node, Graph& graph) {
  if (!node.HasAttr("starts") && !node.HasAttr("ends")) return Status::Ok();
  if (!node.HasAttr("starts") || !node.HasAttr("ends"))
    return InvalidArgument(node.Describe(), ": attributes starts and ends must both be given");
  SetInputAt(node, 1, AddInt64Constant(graph, node, "starts", node.GetInts("starts")));
  SetInputAt(node, 2, AddInt64Constant(graph, node, "ends", node.GetInts("ends")));
  if (node.HasAttr("axes")) SetInputAt(node, 3, AddInt64Constant(graph, node, "axes", node.GetInts("axes")));
  node.attrs.erase("starts");
  node.attrs.erase("ends");
  node.attrs.erase("axes");
  node.opset = std::max(node.opset, 10);
  return Status::Ok();
}

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(StridedCopy plan) : plan_(std::move(plan)) {}
  Status Run(const KernelIO& io) override {
    plan_.Run(io.inputs[0], io.outputs[0], io.pool);
    return Status::Ok();
  }

 private:
  StridedCopy plan_;
};

Expected<KernelPtr> MakeSlice(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  OC_ASSIGN_OR_RETURN(SliceArgs a, ReadSliceArgs(n));
  if (!a.all_known)
    return NotSupported(n.Describe(), ": starts/ends/axes/steps must be constant (known when the model is compiled)");
  OC_ASSIGN_OR_RETURN(auto dims, ResolveSlice(n, x.shape, a));
  const std::vector<int64_t> in_strides = Strides(x.shape);
  std::vector<int64_t> counts(dims.size()), strides(dims.size());
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    counts[d] = dims[d].count;
    strides[d] = in_strides[d] * dims[d].step;
    offset += dims[d].count > 0 ? dims[d].start * in_strides[d] : 0;
  }
  if (counts != n.output(0)->shape)
    return InvalidArgument(n.Describe(), ": output shape ", n.output(0)->ShapeString(), " does not match the slice ",
                           DimsString(counts));
  OC_ASSIGN_OR_RETURN(StridedCopy plan, StridedCopy::Make(n, counts, strides, offset, DataTypeSize(x.dtype)));
  return KernelPtr(new SliceKernel(std::move(plan)));
}

}  // namespace

void RegisterSliceOps(OpRegistry& r) {
  r.Register({.op_type = "Slice", .infer = InferSlice, .kernels = CpuKernel(MakeSlice), .canonicalize = CanonicalizeSlice,
              .native_types = kAllDataTypes, .grad = tensor::GradSlice});
}

}  // namespace oc

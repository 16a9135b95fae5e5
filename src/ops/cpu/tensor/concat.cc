// Concat and Split: both view the tensor as [outer, axis * inner] rows and move
// one contiguous block per (row, part), so every dtype is a memcpy.
#include <algorithm>

#include "ops/cpu/tensor/grads.h"
#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

// ---- Concat ------------------------------------------------------------------

int64_t ConcatAxisAttr(const Node& node) { return node.GetInt("axis", node.opset < 4 ? 1 : INT64_MIN); }

Status InferConcat(Node& node) {
  if (node.inputs.empty()) return InvalidArgument(node.Describe(), ": needs at least one input");
  for (size_t i = 0; i < node.inputs.size(); ++i) OC_RETURN_IF_ERROR(RequireInput(node, i));
  const Value& first = *node.input(0);
  const int64_t r = static_cast<int64_t>(first.shape.size());
  int64_t a = ConcatAxisAttr(node);
  if (a == INT64_MIN) return InvalidArgument(node.Describe(), ": attribute 'axis' is required");
  if (r == 0) return InvalidArgument(node.Describe(), ": cannot concatenate scalars");
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, a, r));
  std::vector<int64_t> out = first.shape;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const Value& v = *node.input(i);
    if (v.dtype != first.dtype)
      return InvalidArgument(node.Describe(), ": input ", i, " ('", v.name, "') has dtype ", DataTypeName(v.dtype),
                             ", expected ", DataTypeName(first.dtype), " like input 0");
    if (static_cast<int64_t>(v.shape.size()) != r)
      return InvalidArgument(node.Describe(), ": input ", i, " ('", v.name, "') has shape ", v.ShapeString(),
                             ", expected rank ", r, " like input 0 ", first.ShapeString());
    for (int64_t d = 0; d < r; ++d) {
      if (d == axis) {
        out[d] = (out[d] < 0 || v.shape[d] < 0) ? -1 : out[d] + v.shape[d];
      } else if (out[d] < 0) {
        out[d] = v.shape[d];
      } else if (v.shape[d] >= 0 && v.shape[d] != out[d]) {
        return InvalidArgument(node.Describe(), ": input ", i, " ('", v.name, "') has shape ", v.ShapeString(),
                               ", expected dim ", d, " = ", out[d], " (concatenating on axis ", axis, ")");
      }
    }
  }
  SetOutput(node, 0, first.dtype, std::move(out));
  return Status::Ok();
}

// Rows of `row_bytes`, each split into parts of part_bytes[i] at part_offset[i].
struct RowParts {
  int64_t outer = 0;
  size_t row_bytes = 0;
  std::vector<size_t> part_bytes;
  std::vector<size_t> part_offset;
};

RowParts MakeRowParts(const std::vector<int64_t>& whole, int64_t axis, const std::vector<int64_t>& part_dims,
                      size_t esize) {
  RowParts p;
  p.outer = ShapeProduct(whole, 0, axis);
  const size_t inner = static_cast<size_t>(ShapeProduct(whole, axis + 1, whole.size())) * esize;
  for (int64_t d : part_dims) {
    p.part_offset.push_back(p.row_bytes);
    p.part_bytes.push_back(static_cast<size_t>(d) * inner);
    p.row_bytes += p.part_bytes.back();
  }
  return p;
}

// gather == true: Concat (parts -> whole); false: Split (whole -> parts).
template <bool kConcat>
void MoveRowParts(const RowParts& p, const void* const* parts_in, void* const* parts_out, const void* whole_in,
                  void* whole_out, ThreadPool* pool) {
  const int64_t nparts = static_cast<int64_t>(p.part_bytes.size());
  const int64_t tasks = p.outer * nparts;
  const int64_t avg = std::max<int64_t>(1, static_cast<int64_t>(p.row_bytes) / std::max<int64_t>(1, nparts));
  pool->ParallelFor(tasks, std::max<int64_t>(1, kCopyGrainBytes / avg), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nparts, i = t % nparts;
      const size_t n = p.part_bytes[i];
      if (n == 0) continue;
      const size_t whole_at = static_cast<size_t>(o) * p.row_bytes + p.part_offset[i];
      const size_t part_at = static_cast<size_t>(o) * n;
      if constexpr (kConcat)
        std::memcpy(static_cast<uint8_t*>(whole_out) + whole_at, static_cast<const uint8_t*>(parts_in[i]) + part_at, n);
      else if (parts_out[i])
        std::memcpy(static_cast<uint8_t*>(parts_out[i]) + part_at, static_cast<const uint8_t*>(whole_in) + whole_at, n);
    }
  });
}

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(RowParts p) : p_(std::move(p)) {}
  Status Run(const KernelIO& io) override {
    MoveRowParts<true>(p_, io.inputs, nullptr, nullptr, io.outputs[0], io.pool);
    return Status::Ok();
  }

 private:
  RowParts p_;
};

Expected<KernelPtr> MakeConcat(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& y = *n.output(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, y.dtype));
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, ConcatAxisAttr(n), static_cast<int64_t>(y.shape.size())));
  std::vector<int64_t> parts;
  for (Value* v : n.inputs) parts.push_back(v->shape[axis]);
  return KernelPtr(new ConcatKernel(MakeRowParts(y.shape, axis, parts, DataTypeSize(y.dtype))));
}

// ---- Split -------------------------------------------------------------------------

Status InferSplit(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  const int64_t r = static_cast<int64_t>(x.shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), r));
  if (r == 0) return InvalidArgument(node.Describe(), ": cannot split a scalar");
  const int64_t nout = static_cast<int64_t>(node.outputs.size());
  const int64_t dim = x.shape[axis];
  bool present = false;
  auto split = IntsFromInputOrAttr(node, 1, "split", &present);
  if (node.input(1)) OC_RETURN_IF_ERROR(RequireIndexInput(node, 1, "split"));
  std::vector<int64_t> sizes(nout, -1);
  if (present && split) {
    if (static_cast<int64_t>(split->size()) != nout)
      return InvalidArgument(node.Describe(), ": split ", DimsString(*split), " has ", split->size(),
                             " entries, expected one per output (", nout, ")");
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0) return InvalidArgument(node.Describe(), ": split ", DimsString(*split), " has a negative size");
      sum += s;
    }
    if (dim >= 0 && sum != dim)
      return InvalidArgument(node.Describe(), ": split ", DimsString(*split), " sums to ", sum,
                             ", expected the size of axis ", axis, " of input ", x.ShapeString(), " (", dim, ")");
    sizes = *split;
  } else if (!present && dim >= 0) {
    const int64_t n = node.GetInt("num_outputs", nout);
    if (n != nout)
      return InvalidArgument(node.Describe(), ": num_outputs is ", n, " but the node has ", nout, " outputs");
    if (n <= 0) return InvalidArgument(node.Describe(), ": needs at least one output");
    if (!node.HasAttr("num_outputs") && dim % n != 0)
      return InvalidArgument(node.Describe(), ": axis ", axis, " of input ", x.ShapeString(),
                             " cannot be split evenly into ", n, " outputs");
    // Since opset 18 the last chunk may be smaller: chunks are ceil(dim / n).
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes[i] = std::clamp<int64_t>(dim - i * chunk, 0, chunk);
  }
  for (int64_t i = 0; i < nout; ++i) {
    std::vector<int64_t> s = x.shape;
    s[axis] = sizes[i];
    SetOutput(node, i, x.dtype, std::move(s));
  }
  return Status::Ok();
}

Status CanonicalizeSplit(Node& node, Graph& graph) {
  const Attribute* a = node.FindAttr("split");
  if (!a) return Status::Ok();
  if (!node.input(1)) SetInputAt(node, 1, AddInt64Constant(graph, node, "split", a->ints));
  node.attrs.erase("split");
  node.opset = std::max(node.opset, 13);
  return Status::Ok();
}

class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(RowParts p) : p_(std::move(p)) {}
  Status Run(const KernelIO& io) override {
    MoveRowParts<false>(p_, nullptr, io.outputs, io.inputs[0], nullptr, io.pool);
    return Status::Ok();
  }

 private:
  RowParts p_;
};

Expected<KernelPtr> MakeSplit(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(n, n.GetInt("axis", 0), static_cast<int64_t>(x.shape.size())));
  std::vector<int64_t> parts;
  int64_t sum = 0;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const Value* v = n.output(i);
    if (!v) return NotSupported(n.Describe(), ": output ", i, " is omitted; its size is unknown");
    parts.push_back(v->shape[axis]);
    sum += parts.back();
  }
  if (sum != x.shape[axis])
    return InvalidArgument(n.Describe(), ": output sizes on axis ", axis, " sum to ", sum, ", expected ",
                           x.shape[axis]);
  return KernelPtr(new SplitKernel(MakeRowParts(x.shape, axis, parts, DataTypeSize(x.dtype))));
}

}  // namespace

void RegisterConcatOps(OpRegistry& r) {
  r.Register({.op_type = "Concat", .infer = InferConcat, .kernels = CpuKernel(MakeConcat),
              .native_types = kAllDataTypes, .grad = tensor::GradConcat});
  r.Register({.op_type = "Split", .infer = InferSplit, .kernels = CpuKernel(MakeSplit), .canonicalize = CanonicalizeSplit,
              .native_types = kAllDataTypes, .grad = tensor::GradSplit});
}

}  // namespace oc

// Pad (constant / reflect / edge / wrap) for any fixed-size dtype.
//
// Canonical form is the opset-11+ one: Pad(data, pads, [constant_value], [axes]).
// Opsets 1-10 carried `paddings`/`pads` and `value` as attributes; canonicalize
// turns them into constant inputs. Negative pads crop.
//
// The kernel maps every output coordinate of every axis to its source
// coordinate (or -1 for the constant) in the factory; Run() then copies rows,
// with a memcpy for the in-range middle of each row.
#include <algorithm>
#include <cstring>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

Expected<PadMode> ParseMode(const Node& n) {
  std::string m = n.GetString("mode", "constant");
  if (m == "constant") return PadMode::kConstant;
  if (m == "reflect") return PadMode::kReflect;
  if (m == "edge") return PadMode::kEdge;
  if (m == "wrap") {
    if (n.opset < 19) return InvalidArgument(n.Describe(), ": mode 'wrap' needs opset 19, node has ", n.opset);
    return PadMode::kWrap;
  }
  return InvalidArgument(n.Describe(), ": unknown mode '", m, "' (constant, reflect, edge, wrap)");
}

// Writes `v` as one element of dtype `dt` into `out`.
Status StoreScalar(const Node& n, DataType dt, double v, uint8_t* out) {
  auto put = [&](auto x) { std::memcpy(out, &x, sizeof(x)); };
  switch (dt) {
    case DataType::kFloat32: put(static_cast<float>(v)); break;
    case DataType::kFloat64: put(v); break;
    case DataType::kInt8: put(static_cast<int8_t>(v)); break;
    case DataType::kUInt8: put(static_cast<uint8_t>(v)); break;
    case DataType::kInt16: put(static_cast<int16_t>(v)); break;
    case DataType::kUInt16: put(static_cast<uint16_t>(v)); break;
    case DataType::kInt32: put(static_cast<int32_t>(v)); break;
    case DataType::kUInt32: put(static_cast<uint32_t>(v)); break;
    case DataType::kInt64: put(static_cast<int64_t>(v)); break;
    case DataType::kUInt64: put(static_cast<uint64_t>(v)); break;
    case DataType::kBool: put(static_cast<uint8_t>(v != 0)); break;
    default:
      if (v != 0)
        return NotSupported(n.Describe(), ": a non-zero pad value for dtype ", DataTypeName(dt),
                            " is not supported");
  }
  return Status::Ok();
}

Status CanonicalizePad(Node& node, Graph& graph) {
  if (node.opset >= 11) return Status::Ok();
  const char* pads_name = node.HasAttr("pads") ? "pads" : "paddings";
  if (!node.HasAttr(pads_name))
    return InvalidArgument(node.Describe(), ": attribute pads is required before opset 11");
  std::vector<int64_t> pads = node.GetInts(pads_name);
  float value = node.GetFloat("value", 0.f);
  Value* x = node.input(0);
  if (!x) return InvalidArgument(node.Describe(), ": input 0 (data) is missing");
  TensorData pd = TensorData::Copy(pads.data(), pads.size() * sizeof(int64_t));
  Value* pv = graph.AddConstant(graph.UniqueName(node.name + "_pads"), DataType::kInt64,
                                {static_cast<int64_t>(pads.size())}, std::move(pd));
  node.inputs.resize(1);
  node.inputs.push_back(pv);
  if (value != 0.f) {
    if (x->dtype == DataType::kUndefined)
      return NotSupported(node.Describe(), ": pad value needs the data dtype, which is unknown");
    TensorData vd = TensorData::Allocate(std::max<size_t>(DataTypeSize(x->dtype), 1));
    OC_RETURN_IF_ERROR(StoreScalar(node, x->dtype, value, vd.mutable_data()));
    node.inputs.push_back(graph.AddConstant(graph.UniqueName(node.name + "_value"), x->dtype, {}, std::move(vd)));
  }
  node.attrs.erase("pads");
  node.attrs.erase("paddings");
  node.attrs.erase("value");
  return Status::Ok();
}

// Full begin/end pads for every axis, from the pads and axes inputs.
Expected<std::vector<int64_t>> ResolvePads(const Node& n, int64_t rank) {
  auto pads = ConstInts(n.input(1));
  if (!pads)
    return NotSupported(n.Describe(), ": input 1 (pads) must be constant: the output shape depends on it");
  std::vector<int64_t> axes;
  if (n.input(3)) {
    auto a = ConstInts(n.input(3));
    if (!a) return NotSupported(n.Describe(), ": input 3 (axes) must be constant");
    for (int64_t ax : *a) {
      OC_ASSIGN_OR_RETURN(int64_t norm, NormalizeAxis(n, ax, rank));
      axes.push_back(norm);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads->size() != 2 * axes.size())
    return InvalidArgument(n.Describe(), ": pads has ", pads->size(), " values, expected ", 2 * axes.size(),
                           " (2 per padded axis)");
  std::vector<int64_t> full(2 * rank, 0);
  size_t k = axes.size();
  for (size_t i = 0; i < k; ++i) {
    full[axes[i]] = (*pads)[i];
    full[axes[i] + rank] = (*pads)[i + k];
  }
  return full;
}

Status InferPad(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  if (!node.input(1)) return InvalidArgument(node.Describe(), ": input 1 (pads) is missing");
  const Value& x = *node.input(0);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ResolvePads(node, rank));
  std::vector<int64_t> out(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (x.shape[i] < 0) { out[i] = -1; continue; }
    out[i] = x.shape[i] + pads[i] + pads[i + rank];
    if (out[i] < 0)
      return InvalidArgument(node.Describe(), ": axis ", i, " of size ", x.shape[i], " with pads ", pads[i], ", ",
                             pads[i + rank], " gives a negative size");
  }
  SetOutput(node, 0, x.dtype, out);
  for (int64_t i = 0; i < rank; ++i)
    if (pads[i] == 0 && pads[i + rank] == 0 && i < static_cast<int64_t>(x.dim_params.size()))
      node.output(0)->dim_params[i] = x.dim_params[i];
  return Status::Ok();
}

struct PadPlan {
  int64_t rows = 0;        // output rows (product of all but the last axis)
  int64_t out_cols = 0, in_cols = 0;
  std::vector<int64_t> row_src;  // source row offset (elements) or -1 (all constant)
  std::vector<int64_t> col_src;  // source column or -1
  int64_t copy_begin = 0, copy_len = 0, copy_src = 0;  // contiguous middle of a row
};

template <typename E>
class PadKernel final : public Kernel {
 public:
  explicit PadKernel(PadPlan plan) : p_(std::move(plan)) {}

  Status Run(const KernelIO& io) override {
    const E* x = io.in<E>(0);
    E* y = io.out<E>(0);
    E value{};
    if (io.num_inputs > 2 && io.inputs[2]) std::memcpy(&value, io.inputs[2], sizeof(E));
    int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(p_.out_cols, 1));
    io.pool->ParallelFor(p_.rows, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        E* yr = y + r * p_.out_cols;
        int64_t src = p_.row_src[r];
        if (src < 0) {
          std::fill(yr, yr + p_.out_cols, value);
          continue;
        }
        const E* xr = x + src;
        for (int64_t c = 0; c < p_.copy_begin; ++c) yr[c] = p_.col_src[c] < 0 ? value : xr[p_.col_src[c]];
        if (p_.copy_len) std::memcpy(yr + p_.copy_begin, xr + p_.copy_src, p_.copy_len * sizeof(E));
        for (int64_t c = p_.copy_begin + p_.copy_len; c < p_.out_cols; ++c)
          yr[c] = p_.col_src[c] < 0 ? value : xr[p_.col_src[c]];
      }
    });
    return Status::Ok();
  }

 private:
  PadPlan p_;
};

int64_t SourceIndex(PadMode mode, int64_t i, int64_t in) {
  if (i >= 0 && i < in) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : in - 1;
    case PadMode::kWrap: return ((i % in) + in) % in;
    case PadMode::kReflect:
      // Pads wider than the axis reflect again, as numpy (the ONNX reference) does.
      if (in == 1) return 0;
      while (i < 0 || i >= in) i = i < 0 ? -i : 2 * (in - 1) - i;
      return i;
  }
  return -1;
}

Expected<KernelPtr> MakePad(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  const Value& y = *n.output(0);
  size_t esize = DataTypeSize(x.dtype);
  if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
    return NotSupported(n.Describe(), ": dtype ", DataTypeName(x.dtype), " is not supported");
  if (n.input(2) && n.input(2)->dtype != x.dtype)
    return InvalidArgument(n.Describe(), ": constant_value has dtype ", DataTypeName(n.input(2)->dtype),
                           ", expected ", DataTypeName(x.dtype), " like data");
  OC_ASSIGN_OR_RETURN(PadMode mode, ParseMode(n));
  int64_t rank = static_cast<int64_t>(x.shape.size());
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ResolvePads(n, rank));
  std::vector<int64_t> in = x.shape, out = y.shape;
  if (rank == 0) { in = out = {1}; pads = {0, 0}; rank = 1; }
  // Per-axis source maps.
  std::vector<std::vector<int64_t>> maps(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (in[d] == 0 && out[d] > 0 && mode != PadMode::kConstant)
      return InvalidArgument(n.Describe(), ": cannot ", n.GetString("mode", ""), "-pad axis ", d, " of size 0");
    maps[d].resize(out[d]);
    for (int64_t o = 0; o < out[d]; ++o) maps[d][o] = SourceIndex(mode, o - pads[d], in[d]);
  }
  PadPlan p;
  p.out_cols = out[rank - 1];
  p.in_cols = in[rank - 1];
  p.rows = ShapeProduct(out, 0, rank - 1);
  p.col_src = maps[rank - 1];
  // Longest run where col_src[c] == c - pad_begin (a plain copy).
  int64_t pb = pads[rank - 1];
  int64_t first = std::max<int64_t>(0, pb), last = std::min<int64_t>(p.out_cols, p.in_cols + pb);
  if (last > first) { p.copy_begin = first; p.copy_len = last - first; p.copy_src = first - pb; }
  else { p.copy_begin = p.out_cols; p.copy_len = 0; }
  std::vector<int64_t> in_strides = Strides(in);
  p.row_src.resize(p.rows);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t r = 0; r < p.rows; ++r) {
    int64_t off = 0;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      int64_t s = maps[d][idx[d]];
      if (s < 0) { off = -1; break; }
      off += s * in_strides[d];
    }
    p.row_src[r] = off;
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  switch (esize) {
    case 1: return KernelPtr(new PadKernel<uint8_t>(std::move(p)));
    case 2: return KernelPtr(new PadKernel<uint16_t>(std::move(p)));
    case 4: return KernelPtr(new PadKernel<uint32_t>(std::move(p)));
    default: return KernelPtr(new PadKernel<uint64_t>(std::move(p)));
  }
}

}  // namespace

void RegisterPadOps(OpRegistry& r) {
  r.Register({.op_type = "Pad", .infer = InferPad, .kernels = CpuKernel(MakePad), .canonicalize = CanonicalizePad});
}

}  // namespace oc

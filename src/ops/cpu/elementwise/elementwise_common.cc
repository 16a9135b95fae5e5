#include "ops/cpu/elementwise/elementwise_common.h"

#include "ops/infer_util.h"

namespace oc::ew {

Expected<BroadcastPlan> MakeBroadcastPlan(const Node& node,
                                          const std::vector<std::vector<int64_t>>& in_shapes,
                                          const std::vector<int64_t>& out_shape) {
  BroadcastPlan p;
  p.num_inputs = static_cast<int>(in_shapes.size());
  if (p.num_inputs > BroadcastPlan::kMaxInputs)
    return Internal(node.Describe(), ": broadcast plan with more than 3 inputs");
  const size_t rank = out_shape.size();
  // Full-rank per-input strides, 0 where the input is broadcast.
  std::vector<std::array<int64_t, BroadcastPlan::kMaxInputs>> full(rank);
  for (int k = 0; k < p.num_inputs; ++k) {
    const auto& s = in_shapes[k];
    if (s.size() > rank)
      return InvalidArgument(node.Describe(), ": input ", k, " has rank ", s.size(),
                             " above the output rank ", rank);
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      size_t j = i + s.size();  // index into s, offset by rank
      int64_t d = j >= rank ? s[j - rank] : 1;
      if (d != out_shape[i] && d != 1)
        return InvalidArgument(node.Describe(), ": input ", k, " dim ", d,
                               " does not broadcast to output dim ", out_shape[i], " (axis ", i, ")");
      full[i][k] = (d == 1) ? 0 : stride;
      stride *= d;
    }
  }
  p.total = ShapeProduct(out_shape);
  // Drop size-1 dims, then merge an outer dim into the next one when every
  // input walks them as one.
  std::vector<int64_t> dims;
  std::vector<std::array<int64_t, BroadcastPlan::kMaxInputs>> strides;
  for (size_t i = 0; i < rank; ++i) {
    if (out_shape[i] == 1) continue;
    if (!dims.empty()) {
      bool merge = true;
      for (int k = 0; k < p.num_inputs; ++k)
        if (strides.back()[k] != full[i][k] * out_shape[i]) merge = false;
      if (merge) {
        dims.back() *= out_shape[i];
        strides.back() = full[i];
        continue;
      }
    }
    dims.push_back(out_shape[i]);
    strides.push_back(full[i]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    strides.push_back({});
  }
  p.dims = std::move(dims);
  p.strides = std::move(strides);
  p.inner = p.dims.back();
  for (int k = 0; k < p.num_inputs; ++k) {
    int64_t s = p.strides.back()[k];
    // A stride other than 0/1 on the inner dim cannot happen for dense inputs.
    if (s != 0 && s != 1) return Internal(node.Describe(), ": broadcast inner stride ", s);
    p.inner_stride[k] = static_cast<int>(s);
  }
  return p;
}

Expected<std::vector<int64_t>> BroadcastAll(const Node& node) {
  std::vector<int64_t> out;
  bool first = true;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    Value* v = node.inputs[i];
    if (!v) continue;
    OC_RETURN_IF_ERROR(RequireInput(node, i));
    if (first) {
      out = v->shape;
      first = false;
      continue;
    }
    OC_ASSIGN_OR_RETURN(out, BroadcastShapes(node, out, v->shape));
  }
  if (first) return InvalidArgument(node.Describe(), ": needs at least one input");
  return out;
}

Status RequireSameDtype(const Node& node, size_t first, size_t last) {
  const Value* ref = nullptr;
  for (size_t i = first; i < node.inputs.size() && i <= last; ++i) {
    const Value* v = node.inputs[i];
    if (!v) continue;
    if (!ref) { ref = v; continue; }
    if (v->dtype != ref->dtype)
      return InvalidArgument(node.Describe(), ": input ", i, " ('", v->name, "') is ",
                             DataTypeName(v->dtype), " but input ", first, " is ",
                             DataTypeName(ref->dtype), "; they must match");
  }
  return Status::Ok();
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 ||
         t == DataType::kBFloat16;
}
bool IsSignedIntType(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt16 || t == DataType::kInt32 || t == DataType::kInt64;
}
bool IsUnsignedIntType(DataType t) {
  return t == DataType::kUInt8 || t == DataType::kUInt16 || t == DataType::kUInt32 || t == DataType::kUInt64;
}

Status UnsupportedDtype(const Node& node, DataType t) {
  return NotSupported(node.Describe(), ": data type ", DataTypeName(t), " is not supported by ",
                      node.op_type, " on CPU");
}

}  // namespace oc::ew

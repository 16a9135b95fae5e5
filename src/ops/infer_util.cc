#include "ops/infer_util.h"

#include <cstring>

namespace oc {

void SetOutput(Node& node, size_t i, DataType dtype, std::vector<int64_t> shape) {
  Value* v = node.output(i);
  if (!v) return;
  v->dtype = dtype;
  v->has_shape = true;
  v->dim_params.assign(shape.size(), "");
  v->shape = std::move(shape);
}

void SetOutputLike(Node& node, size_t i, const Value& like) {
  Value* v = node.output(i);
  if (!v) return;
  v->dtype = like.dtype;
  v->has_shape = like.has_shape;
  v->shape = like.shape;
  v->dim_params = like.dim_params;
  if (v->dim_params.size() != v->shape.size()) v->dim_params.assign(v->shape.size(), "");
}

static std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) r += ',';
    if (s[i] < 0) r += '?';
    else r += std::to_string(s[i]);
  }
  r += ']';
  return r;
}

Expected<std::vector<int64_t>> BroadcastShapes(const Node& node, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db) out[i] = da;
    else if (da == 1) out[i] = db;
    else if (db == 1) out[i] = da;
    else if (da < 0) out[i] = db;
    else if (db < 0) out[i] = da;
    else
      return InvalidArgument(node.Describe(), ": shapes ", ShapeStr(a), " and ", ShapeStr(b),
                             " cannot be broadcast (dim ", i, ": ", da, " vs ", db, ")");
  }
  return out;
}

Status RequireInput(const Node& node, size_t i) {
  Value* v = node.input(i);
  if (!v) return InvalidArgument(node.Describe(), ": required input ", i, " is missing");
  if (!v->has_shape)
    return NotSupported(node.Describe(), ": input ", i, " ('", v->name, "') has unknown rank");
  return Status::Ok();
}

Status RequireStaticShapes(const Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    Value* v = node.inputs[i];
    if (v && !v->IsStatic())
      return NotSupported(node.Describe(), ": input ", i, " ('", v->name, "') has dynamic shape ",
                          v->ShapeString());
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Value* v = node.outputs[i];
    if (v && !v->IsStatic())
      return NotSupported(node.Describe(), ": output ", i, " ('", v->name, "') has dynamic shape ",
                          v->ShapeString());
  }
  return Status::Ok();
}

std::optional<std::vector<int64_t>> ConstInts(const Value* v) {
  if (!v || !v->constant) return std::nullopt;
  size_t n = v->constant->size();
  std::vector<int64_t> out;
  if (v->dtype == DataType::kInt64) {
    out.resize(n / 8);
    if (n) std::memcpy(out.data(), v->constant->data(), out.size() * 8);
  } else if (v->dtype == DataType::kInt32) {
    out.resize(n / 4);
    for (size_t i = 0; i < out.size(); ++i) {
      int32_t x;
      std::memcpy(&x, v->constant->data() + 4 * i, 4);
      out[i] = x;
    }
  } else {
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<float>> ConstFloats(const Value* v) {
  if (!v || !v->constant) return std::nullopt;
  size_t n = v->constant->size();
  std::vector<float> out;
  if (v->dtype == DataType::kFloat32) {
    out.resize(n / 4);
    if (n) std::memcpy(out.data(), v->constant->data(), out.size() * 4);
  } else if (v->dtype == DataType::kFloat64) {
    out.resize(n / 8);
    for (size_t i = 0; i < out.size(); ++i) {
      double x;
      std::memcpy(&x, v->constant->data() + 8 * i, 8);
      out[i] = static_cast<float>(x);
    }
  } else {
    return std::nullopt;
  }
  return out;
}

Expected<int64_t> NormalizeAxis(const Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return InvalidArgument(node.Describe(), ": axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

int64_t ShapeProduct(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

}  // namespace oc

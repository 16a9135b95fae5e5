#include "ops/grad.h"

#include <cstring>

#include "ops/cpu/common/cast_util.h"

namespace oc {

Attribute GradBuilder::Int(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

Attribute GradBuilder::Float(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}

Attribute GradBuilder::Ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

Attribute GradBuilder::String(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}

std::vector<Value*> GradBuilder::OpN(const std::string& op_type, std::vector<Value*> inputs, size_t n,
                                     std::map<std::string, Attribute> attrs) {
  std::vector<Value*> outs;
  for (size_t i = 0; i < n; ++i) outs.push_back(graph_.AddValue(graph_.UniqueName(prefix_ + op_type)));
  Node* node = graph_.AddNode(op_type, graph_.UniqueName(prefix_ + op_type), std::move(inputs), outs);
  node->opset = kOpset;
  node->attrs = std::move(attrs);
  return outs;
}

Value* GradBuilder::Op(const std::string& op_type, std::vector<Value*> inputs, std::map<std::string, Attribute> attrs) {
  return OpN(op_type, std::move(inputs), 1, std::move(attrs))[0];
}

Value* GradBuilder::Scalar(double v, DataType dtype) {
  TensorData data = TensorData::Allocate(DataTypeSize(dtype));
  uint8_t* p = data.mutable_data();
  switch (dtype) {
    case DataType::kFloat64: std::memcpy(p, &v, sizeof v); break;
    case DataType::kFloat16: {
      const uint16_t h = ew::FloatToHalf(static_cast<float>(v));
      std::memcpy(p, &h, sizeof h);
      break;
    }
    case DataType::kBFloat16: {
      const uint16_t h = ew::FloatToBFloat16(static_cast<float>(v));
      std::memcpy(p, &h, sizeof h);
      break;
    }
    default: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, sizeof f);
      break;
    }
  }
  return graph_.AddConstant(graph_.UniqueName(prefix_ + "scalar"), dtype, {}, std::move(data));
}

Value* GradBuilder::Int64s(const std::vector<int64_t>& v) {
  TensorData data = TensorData::Copy(v.data(), v.size() * sizeof(int64_t));
  return graph_.AddConstant(graph_.UniqueName(prefix_ + "ints"), DataType::kInt64,
                            {static_cast<int64_t>(v.size())}, std::move(data));
}

Value* GradBuilder::ZerosLike(const Value& like) {
  const int64_t n = like.NumElements();
  TensorData data = TensorData::Allocate(static_cast<size_t>(n) * DataTypeSize(like.dtype));
  return graph_.AddConstant(graph_.UniqueName(prefix_ + "zeros"), like.dtype, like.shape, std::move(data));
}

std::vector<int64_t> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Value* GradBuilder::ReshapeTo(Value* v, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from == to) return v;
  return Op("Reshape", {v, Int64s(to)});
}

Value* GradBuilder::SumTo(Value* g, const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from == to) return g;
  const size_t lead = from.size() - std::min(from.size(), to.size());
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (to[i - lead] == 1 && from[i] != 1)) axes.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> kept = from;
  Value* summed = g;
  if (!axes.empty()) {
    summed = Op("ReduceSum", {g, Int64s(axes)}, {{"keepdims", Int(1)}});
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
  }
  return ReshapeTo(summed, kept, to);
}

}  // namespace oc

// Element-wise math, shape and data-movement primitives, and the side-effect
// bookkeeping (Load / UpdateState / Depend) that inference drops.
#include <cmath>
#include <cstring>

#include "parser/mindir/mindir_ops.h"

namespace oc::mindir::ops {
namespace {

// The dtype a scalar operand takes: its tensor partner's, else the result's.
DataType PartnerType(Lowering& l) {
  for (size_t i = 0; i < 2; ++i)
    if (l.Arg(i).kind == MsValue::Kind::kTensor && l.Arg(i).dtype != DataType::kUndefined) return l.Arg(i).dtype;
  return l.Result().dtype;
}

Expected<MsValue> Binary(Lowering& l, const char* onnx_op) {
  if (l.Arg(0).kind != MsValue::Kind::kTensor && l.Arg(1).kind != MsValue::Kind::kTensor)
    return l.Unsupported("both operands are scalars; a scalar-only expression is not supported");
  const DataType dt = PartnerType(l);
  OC_ASSIGN_OR_RETURN(Value* a, l.TensorOrScalar(0, dt));
  OC_ASSIGN_OR_RETURN(Value* b, l.TensorOrScalar(1, dt));
  return l.Out(l.Emit1(onnx_op, {a, b}));
}

}  // namespace

Expected<MsValue> PassFirst(Lowering& l) { return l.Arg(0); }

Expected<MsValue> Monad(Lowering& l) {
  MsValue m;
  m.kind = MsValue::Kind::kMonad;
  return m;
}

Expected<MsValue> Add(Lowering& l) { return Binary(l, "Add"); }
Expected<MsValue> Sub(Lowering& l) { return Binary(l, "Sub"); }
Expected<MsValue> Mul(Lowering& l) { return Binary(l, "Mul"); }
Expected<MsValue> Div(Lowering& l) { return Binary(l, "Div"); }
Expected<MsValue> Maximum(Lowering& l) { return Binary(l, "Max"); }
Expected<MsValue> Minimum(Lowering& l) { return Binary(l, "Min"); }
Expected<MsValue> Pow(Lowering& l) { return Binary(l, "Pow"); }

// One-input primitives, by name.
Expected<MsValue> Unary(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue xm, l.TensorArg(0));
  Value* x = xm.tensor;
  const std::string op = l.op();
  static const std::map<std::string, const char*> kDirect = {
      {"ReLU", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Exp", "Exp"}, {"Log", "Log"},
      {"Neg", "Neg"}, {"Abs", "Abs"}, {"Erf", "Erf"}, {"Sqrt", "Sqrt"}, {"Reciprocal", "Reciprocal"},
      {"HSwish", "HardSwish"}, {"Identity", "Identity"}, {"Floor", "Floor"}, {"Ceil", "Ceil"},
      {"Sin", "Sin"}, {"Cos", "Cos"}, {"Softsign", "Softsign"}, {"Sign", "Sign"}};
  if (auto it = kDirect.find(op); it != kDirect.end()) return l.Out(l.Emit1(it->second, {x}));
  const DataType dt = xm.dtype != DataType::kUndefined ? xm.dtype : l.Result().dtype;
  if (op == "ReLU6") return l.Out(l.Emit1("Clip", {x, l.ConstScalar(0, dt), l.ConstScalar(6, dt)}));
  if (op == "Rsqrt") return l.Out(l.Emit1("Reciprocal", {l.Emit1("Sqrt", {x})}));
  if (op == "Square") return l.Out(l.Emit1("Mul", {x, x}));
  if (op == "SiLU") return l.Out(l.Emit1("Mul", {x, l.Emit1("Sigmoid", {x})}));
  // MindSpore's GeLU primitive is the tanh approximation (nn.GELU's default);
  // nn.GELU(approximate=False) exports Erf arithmetic instead.
  if (op == "GeLU") return l.Out(l.Emit1("Gelu", {x}, {{"approximate", StringAttr("tanh")}}));
  // FastGeLU: x * sigmoid(1.702 x).
  if (op == "FastGeLU")
    return l.Out(l.Emit1("Mul", {x, l.Emit1("Sigmoid", {l.Emit1("Mul", {x, l.ConstScalar(1.702, dt)})})}));
  // HSigmoid: relu6(x + 3) / 6.
  if (op == "HSigmoid")
    return l.Out(l.Emit1("HardSigmoid", {x}, {{"alpha", FloatAttr(1.f / 6)}, {"beta", FloatAttr(0.5f)}}));
  return l.Unsupported("no lowering for this one-input primitive");
}

// Elu(input_x, alpha)
Expected<MsValue> Elu(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(double alpha, l.FloatArg(1));
  return l.Out(l.Emit1("Elu", {x.tensor}, {{"alpha", FloatAttr(static_cast<float>(alpha))}}));
}

// Round(input, decimals): to the nearest integer, halves to even.
Expected<MsValue> Round(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(int64_t decimals, l.IntArg(1));
  if (decimals != 0) return l.Unsupported(StrCat("decimals=", decimals, " is not supported (only 0)"));
  return l.Out(l.Emit1("Round", {x.tensor}));
}

// Reshape(input, shape): shape is a tuple of ints (-1 once at most) or an int64 tensor.
Expected<MsValue> Reshape(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  if (l.Arg(1).kind == MsValue::Kind::kTensor) return l.Out(l.Emit1("Reshape", {x.tensor, l.Arg(1).tensor}));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> shape, l.IntsArg(1));
  for (int64_t d : shape)
    if (d < -1) return l.Error(StrCat("shape holds ", d, "; dims must be >= 0, or -1 for the inferred one"));
  // MindSpore's 0 is a zero-size dim, ONNX's 0 copies the input's: allowzero keeps MindSpore's meaning.
  return l.Out(l.Emit1("Reshape", {x.tensor, l.ConstInts(shape)}, {{"allowzero", IntAttr(1)}}));
}

// Flatten(input_x): keeps axis 0, flattens the rest.
Expected<MsValue> Flatten(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  return l.Out(l.Emit1("Flatten", {x.tensor}, {{"axis", IntAttr(1)}}));
}

// Transpose(input, dims)
Expected<MsValue> Transpose(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> perm, l.IntsArg(1));
  return l.Out(l.Emit1("Transpose", {x.tensor}, {{"perm", IntsAttr(perm)}}));
}

// ExpandDims(input_x, axis)
Expected<MsValue> ExpandDims(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(int64_t axis, l.IntArg(1));
  return l.Out(l.Emit1("Unsqueeze", {x.tensor, l.ConstInts({axis})}));
}

// Squeeze(input, axis): an empty axis tuple drops every size-1 dim.
Expected<MsValue> Squeeze(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, l.IntsArg(1));
  if (axes.empty()) return l.Out(l.Emit1("Squeeze", {x.tensor}));
  return l.Out(l.Emit1("Squeeze", {x.tensor, l.ConstInts(axes)}));
}

// ReduceMean / ReduceSum / ReduceMax / ReduceMin (x, axis, keep_dims[, skip_mode]):
// an empty axis reduces over everything (unless ReduceSum's skip_mode keeps x).
Expected<MsValue> Reduce(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, l.IntsArg(1));
  OC_ASSIGN_OR_RETURN(bool keep, l.BoolArg(2));
  const std::string op = l.op();
  if (l.NumArgs() > 3) {
    OC_ASSIGN_OR_RETURN(bool skip, l.BoolArg(3));
    if (skip && axes.empty()) return l.Out(l.Emit1("Identity", {x.tensor}));
  }
  std::vector<Value*> in = {x.tensor};
  if (!axes.empty()) in.push_back(l.ConstInts(axes));
  return l.Out(l.Emit1(op, in, {{"keepdims", IntAttr(keep)}}));
}

// Cast(input_x, dtype): dtype is MindSpore's TypeId.
Expected<MsValue> Cast(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(int64_t type_id, l.IntArg(1));
  OC_ASSIGN_OR_RETURN(DataType to, ConvertTypeId(type_id, StrCat("Cast node '", l.node_name(), "' dtype")));
  return l.Out(l.Emit1("Cast", {x.tensor}, {{"to", IntAttr(static_cast<int64_t>(to))}}));
}

// Concat(tensors, axis): tensors is a tuple.
Expected<MsValue> Concat(Lowering& l) {
  const MsValue& t = l.Arg(0);
  if (t.kind != MsValue::Kind::kTuple || t.items.empty())
    return l.Error(StrCat("argument 0 is ", t.Describe(), ", expected a non-empty tuple of tensors"));
  std::vector<Value*> in;
  for (const MsValue& item : t.items) {
    if (item.kind != MsValue::Kind::kTensor) return l.Error(StrCat("tuple item ", item.Describe(), " is not a tensor"));
    in.push_back(item.tensor);
  }
  OC_ASSIGN_OR_RETURN(int64_t axis, l.IntArg(1));
  return l.Out(l.Emit1("Concat", in, {{"axis", IntAttr(axis)}}));
}

// Gather(input_params, input_indices, axis, batch_dims)
Expected<MsValue> Gather(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(MsValue idx, l.TensorArg(1));
  OC_ASSIGN_OR_RETURN(int64_t axis, l.IntArg(2));
  OC_ASSIGN_OR_RETURN(int64_t batch_dims, l.IntArg(3));
  if (batch_dims != 0) return l.Unsupported(StrCat("batch_dims ", batch_dims, " is not supported (only 0)"));
  return l.Out(l.Emit1("Gather", {x.tensor, idx.tensor}, {{"axis", IntAttr(axis)}}));
}

}  // namespace oc::mindir::ops

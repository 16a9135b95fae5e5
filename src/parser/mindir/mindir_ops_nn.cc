// Convolution, pooling, normalisation, matrix products and softmax.
#include <algorithm>
#include <cctype>

#include "parser/mindir/mindir_ops.h"

namespace oc::mindir::ops {
namespace {

// MindSpore writes pad modes as strings ("same", "VALID") or, as a
// PRIMITIVE_FUNCTION argument, as its PadMode enum (0 pad, 1 same, 2 valid).
Expected<std::string> PadMode(Lowering& l, size_t i) {
  const MsValue& v = l.Arg(i);
  std::string mode;
  if (v.kind == MsValue::Kind::kString) {
    mode = v.s;
    std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return std::tolower(c); });
  } else if (v.kind == MsValue::Kind::kInt) {
    static const char* kModes[] = {"pad", "same", "valid"};
    if (v.i < 0 || v.i > 2) return l.Error(StrCat("pad_mode ", v.i, " is not 0 (pad), 1 (same) or 2 (valid)"));
    mode = kModes[v.i];
  } else {
    return l.Error(StrCat("pad_mode is ", v.Describe(), ", expected a string or an int"));
  }
  if (mode != "pad" && mode != "same" && mode != "valid")
    return l.Error(StrCat("pad_mode '", mode, "' is not 'pad', 'same' or 'valid'"));
  return mode;
}

// NCHW is the only layout lowered; data_format is a string or (as an
// argument) MindSpore's Format enum, where 0 is NCHW.
Status RequireNchw(Lowering& l, size_t i) {
  const MsValue& v = l.Arg(i);
  if (v.kind == MsValue::Kind::kNone) return Status::Ok();
  if ((v.kind == MsValue::Kind::kString && (v.s == "NCHW" || v.s == "NCDHW")) ||
      (v.kind == MsValue::Kind::kInt && v.i == 0))
    return Status::Ok();
  return l.Unsupported(StrCat("data_format ", v.Describe(), " is not supported; only NCHW is"));
}

// A 2-D window/stride/dilation given as one int, two, or four (N, C, H, W).
Expected<std::vector<int64_t>> Spatial2(Lowering& l, size_t i, const char* what) {
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> v, l.IntsArg(i));
  if (v.size() == 1) v = {v[0], v[0]};
  else if (v.size() == 4) v = {v[2], v[3]};
  if (v.size() != 2) return l.Error(StrCat(what, " has ", v.size(), " values, expected 1, 2 or 4"));
  for (int64_t x : v)
    if (x <= 0) return l.Error(StrCat(what, " values must be positive, got ", x));
  return v;
}

int NormAxis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

Value* SwapLastTwo(Lowering& l, Value* v, int rank) {
  std::vector<int64_t> perm(rank);
  for (int k = 0; k < rank; ++k) perm[k] = k;
  std::swap(perm[rank - 1], perm[rank - 2]);
  return l.Emit1("Transpose", {v}, {{"perm", IntsAttr(perm)}});
}

Expected<MsValue> Pool(Lowering& l, const char* onnx_op) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, Spatial2(l, 1, "kernel_size"));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Spatial2(l, 2, "strides"));
  OC_ASSIGN_OR_RETURN(std::string mode, PadMode(l, 3));
  OC_RETURN_IF_ERROR(RequireNchw(l, 4));
  if (mode == "pad") return l.Unsupported("pad_mode 'pad' is not supported for pooling; use 'same' or 'valid'");
  std::map<std::string, Attribute> attrs = {{"kernel_shape", IntsAttr(kernel)}, {"strides", IntsAttr(strides)}};
  // MindSpore's SAME puts the odd padding row/column after, and its average
  // leaves the padding out of the count: ONNX's SAME_UPPER with
  // count_include_pad = 0 (the default).
  attrs["auto_pad"] = StringAttr(mode == "same" ? "SAME_UPPER" : "VALID");
  return l.Out(l.Emit1(onnx_op, {x.tensor}, std::move(attrs)));
}

Expected<MsValue> MatMulLike(Lowering& l, bool prefer_gemm) {
  OC_ASSIGN_OR_RETURN(MsValue a, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(MsValue b, l.TensorArg(1));
  OC_ASSIGN_OR_RETURN(bool ta, l.BoolArg(2));
  OC_ASSIGN_OR_RETURN(bool tb, l.BoolArg(3));
  if (prefer_gemm && a.rank == 2 && b.rank == 2)
    return l.Out(l.Emit1("Gemm", {a.tensor, b.tensor}, {{"transA", IntAttr(ta)}, {"transB", IntAttr(tb)}}));
  if ((ta && a.rank < 2) || (tb && b.rank < 2))
    return l.Unsupported("a transposed operand of unknown rank (or rank < 2) is not supported");
  Value* av = ta ? SwapLastTwo(l, a.tensor, a.rank) : a.tensor;
  Value* bv = tb ? SwapLastTwo(l, b.tensor, b.rank) : b.tensor;
  return l.Out(l.Emit1("MatMul", {av, bv}));
}

}  // namespace

// Conv2D(x, w; out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group, data_format, pad_list)
Expected<MsValue> Conv2D(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(MsValue w, l.TensorArg(1));
  OC_ASSIGN_OR_RETURN(std::string mode, PadMode(l, 5));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> stride, Spatial2(l, 7, "stride"));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, Spatial2(l, 8, "dilation"));
  OC_ASSIGN_OR_RETURN(int64_t group, l.IntArg(9));
  OC_RETURN_IF_ERROR(RequireNchw(l, 10));
  if (group <= 0) return l.Error(StrCat("group must be positive, got ", group));
  std::map<std::string, Attribute> attrs = {
      {"strides", IntsAttr(stride)}, {"dilations", IntsAttr(dilation)}, {"group", IntAttr(group)}};
  if (mode == "same") {
    attrs["auto_pad"] = StringAttr("SAME_UPPER");
  } else if (mode == "pad") {
    // pad is (top, bottom, left, right) or one value for all four; ONNX wants (top, left, bottom, right).
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> pad, l.IntsArg(6));
    if (pad.size() == 1) pad = {pad[0], pad[0], pad[0], pad[0]};
    if (pad.size() != 4) return l.Error(StrCat("pad has ", pad.size(), " values, expected 1 or 4"));
    for (int64_t p : pad)
      if (p < 0) return l.Error(StrCat("pad values must be >= 0, got ", p));
    attrs["pads"] = IntsAttr({pad[0], pad[2], pad[1], pad[3]});
  }
  return l.Out(l.Emit1("Conv", {x.tensor, w.tensor}, std::move(attrs)));
}

// MaxPool(x; kernel_size, strides, pad_mode, data_format)
Expected<MsValue> MaxPool(Lowering& l) { return Pool(l, "MaxPool"); }
// AvgPool(x, kernel_size, strides, pad_mode, data_format)
Expected<MsValue> AvgPool(Lowering& l) { return Pool(l, "AveragePool"); }

// BatchNorm(x, scale, bias, mean, variance, is_training, epsilon, momentum, data_format)
// -> (y, batch_mean, batch_variance, reserve_1, reserve_2); inference only.
Expected<MsValue> BatchNorm(Lowering& l) {
  std::vector<Value*> in;
  for (size_t i = 0; i < 5; ++i) {
    OC_ASSIGN_OR_RETURN(MsValue t, l.TensorArg(i));
    in.push_back(t.tensor);
  }
  OC_ASSIGN_OR_RETURN(bool training, l.BoolArg(5));
  OC_ASSIGN_OR_RETURN(double eps, l.FloatArg(6));
  OC_RETURN_IF_ERROR(RequireNchw(l, 8));
  if (training)
    return l.Unsupported("is_training=True (batch statistics) is not supported; export with net.set_train(False)");
  MsValue out;
  out.kind = MsValue::Kind::kTuple;
  out.items.push_back(l.Out(l.Emit1("BatchNormalization", in, {{"epsilon", FloatAttr(static_cast<float>(eps))}})));
  for (size_t i = 3; i < 5; ++i) out.items.push_back(l.Arg(i));
  for (size_t i = 3; i < 5; ++i) out.items.push_back(l.Arg(i));
  return out;
}

// LayerNorm(x, gamma, beta, begin_norm_axis, begin_params_axis, epsilon) -> (y, mean, rstd)
Expected<MsValue> LayerNorm(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(MsValue gamma, l.TensorArg(1));
  OC_ASSIGN_OR_RETURN(MsValue beta, l.TensorArg(2));
  OC_ASSIGN_OR_RETURN(int64_t norm_axis, l.IntArg(3));
  OC_ASSIGN_OR_RETURN(int64_t params_axis, l.IntArg(4));
  OC_ASSIGN_OR_RETURN(double eps, l.FloatArg(5));
  if (norm_axis != params_axis) {
    if (x.rank < 0 || NormAxis(norm_axis, x.rank) != NormAxis(params_axis, x.rank))
      return l.Unsupported(StrCat("begin_norm_axis ", norm_axis, " differs from begin_params_axis ", params_axis,
                                  "; only gamma/beta over the normalised axes are supported"));
  }
  auto outs = l.Emit("LayerNormalization", {x.tensor, gamma.tensor, beta.tensor}, 3,
                     {{"axis", IntAttr(norm_axis)}, {"epsilon", FloatAttr(static_cast<float>(eps))}});
  MsValue out;
  out.kind = MsValue::Kind::kTuple;
  for (size_t k = 0; k < 3; ++k) out.items.push_back(l.Out(outs[k], k));
  return out;
}

// MatMul(x, w, transpose_a, transpose_b); BatchMatMul has the same arguments.
Expected<MsValue> MatMul(Lowering& l) { return MatMulLike(l, std::string(l.op()) == "MatMul"); }

// BiasAdd(x, bias, data_format): bias along the channel axis (1 in NCHW, last in NHWC).
Expected<MsValue> BiasAdd(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(MsValue b, l.TensorArg(1));
  const MsValue& fmt = l.Arg(2);
  const bool channels_last = (fmt.kind == MsValue::Kind::kString && fmt.s == "NHWC") ||
                             (fmt.kind == MsValue::Kind::kInt && fmt.i == 1);
  Value* bias = b.tensor;
  if (!channels_last && x.rank != 2) {
    if (x.rank < 2) return l.Unsupported("a channels-first bias on an input of unknown rank is not supported");
    std::vector<int64_t> shape(static_cast<size_t>(x.rank - 1), 1);
    shape[0] = -1;
    bias = l.Emit1("Reshape", {bias, l.ConstInts(shape)});
  }
  return l.Out(l.Emit1("Add", {x.tensor, bias}));
}

// Dense(x, weight, bias): x @ weight^T + bias.
Expected<MsValue> Dense(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(MsValue w, l.TensorArg(1));
  const MsValue& b = l.Arg(2);
  if (x.rank == 2 && w.rank == 2) {
    std::vector<Value*> in = {x.tensor, w.tensor};
    if (b.kind == MsValue::Kind::kTensor) in.push_back(b.tensor);
    return l.Out(l.Emit1("Gemm", in, {{"transB", IntAttr(1)}}));
  }
  if (w.rank != 2) return l.Unsupported("a weight of rank other than 2 is not supported");
  Value* y = l.Emit1("MatMul", {x.tensor, SwapLastTwo(l, w.tensor, 2)});
  if (b.kind == MsValue::Kind::kTensor) y = l.Emit1("Add", {y, b.tensor});
  return l.Out(y);
}

// Softmax(x, axis): axis is one int (a one-element tuple in the file).
Expected<MsValue> Softmax(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> axis, l.IntsArg(1));
  if (axis.size() != 1) return l.Unsupported(StrCat("softmax over ", axis.size(), " axes is not supported"));
  return l.Out(l.Emit1("Softmax", {x.tensor}, {{"axis", IntAttr(axis[0])}}));
}

Expected<MsValue> LogSoftmax(Lowering& l) {
  OC_ASSIGN_OR_RETURN(MsValue x, l.TensorArg(0));
  OC_ASSIGN_OR_RETURN(int64_t axis, l.IntArg(1));
  return l.Out(l.Emit1("LogSoftmax", {x.tensor}, {{"axis", IntAttr(axis)}}));
}

}  // namespace oc::mindir::ops

// Sequence ops (SequenceEmpty/Construct/Insert/At/Erase/Length, SplitToSequence,
// ConcatFromSequence, SequenceMap). Sequences are not dense tensors, so these
// ops have no Kernel: the Interpreter evaluates them (executor/interpreter_ops.h)
// and a model using them runs there. Their infer functions give the static
// pipeline the value kinds and element types.
#include <cstring>
#include <string>

#include "executor/interpreter_ops.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {

HostTensor SliceAxis(const HostTensor& t, int64_t axis, int64_t begin, int64_t count) {
  const size_t es = DataTypeSize(t.dtype);
  const int64_t outer = ShapeProduct(t.shape, 0, static_cast<size_t>(axis));
  const int64_t inner = ShapeProduct(t.shape, static_cast<size_t>(axis) + 1, t.shape.size());
  const int64_t dim = t.shape[axis];
  std::vector<int64_t> shape = t.shape;
  shape[axis] = count;
  HostTensor out = HostTensor::Allocate(t.dtype, shape);
  const size_t row = static_cast<size_t>(count * inner) * es;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.data.mutable_data() + o * row, t.data.data() + (o * dim + begin) * inner * es, row);
  return out;
}

Expected<HostTensor> ConcatTensors(std::span<const HostTensor> parts, int64_t axis, bool new_axis, DataType dtype,
                                   const std::string& what) {
  if (parts.empty()) return InvalidArgument(what, ": nothing to concatenate");
  std::vector<int64_t> base = parts[0].shape;
  if (new_axis) {
    if (axis < 0 || axis > static_cast<int64_t>(base.size()))
      return InvalidArgument(what, ": axis ", axis, " out of range for rank ", base.size() + 1);
    base.insert(base.begin() + axis, 1);
  } else if (axis < 0 || axis >= static_cast<int64_t>(base.size())) {
    return InvalidArgument(what, ": axis ", axis, " out of range for rank ", base.size());
  }
  int64_t total = 0;
  for (const HostTensor& p : parts) {
    std::vector<int64_t> s = p.shape;
    if (new_axis) s.insert(s.begin() + std::min<int64_t>(axis, static_cast<int64_t>(s.size())), 1);
    bool ok = p.dtype == dtype && s.size() == base.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == axis || s[d] == base[d];
    if (!ok)
      return InvalidArgument(what, ": element of ", DataTypeName(p.dtype), " shape ", p.shape.size(),
                             "-D does not match the others for concatenation on axis ", axis);
    total += s[axis];
  }
  std::vector<int64_t> shape = base;
  shape[axis] = total;
  HostTensor out = HostTensor::Allocate(dtype, shape);
  const size_t es = DataTypeSize(dtype);
  const int64_t outer = ShapeProduct(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = ShapeProduct(shape, static_cast<size_t>(axis) + 1, shape.size());
  int64_t offset = 0;
  for (const HostTensor& p : parts) {
    const int64_t len = new_axis ? 1 : p.shape[axis];
    const size_t row = static_cast<size_t>(len * inner) * es;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.data.mutable_data() + ((o * total + offset) * inner) * es, p.data.data() + o * row, row);
    offset += len;
  }
  return out;
}

Expected<int64_t> ScalarInt(const HostTensor& t, const std::string& what) {
  if (t.NumElements() != 1) return InvalidArgument(what, " must have one element, has ", t.NumElements());
  if (t.dtype == DataType::kInt64) return t.data.as<int64_t>()[0];
  if (t.dtype == DataType::kInt32) return static_cast<int64_t>(t.data.as<int32_t>()[0]);
  return InvalidArgument(what, " must be int32 or int64, got ", DataTypeName(t.dtype));
}

namespace {

void SetSequence(Node& node, size_t i, DataType elem) {
  Value* v = node.output(i);
  if (!v) return;
  v->kind = ValueKind::kSequence;
  v->dtype = elem;
  v->has_shape = false;
  v->shape.clear();
  v->dim_params.clear();
}

Status InferSequenceEmpty(Node& node) {
  SetSequence(node, 0, static_cast<DataType>(node.GetInt("dtype", static_cast<int64_t>(DataType::kFloat32))));
  return Status::Ok();
}
Status InferFromInput0Elem(Node& node) {
  OC_RETURN_IF_ERROR(node.input(0) ? Status::Ok() : InvalidArgument(node.Describe(), ": input 0 is required"));
  SetSequence(node, 0, node.input(0)->dtype);
  return Status::Ok();
}
Status InferSequenceAt(Node& node) {
  if (!node.input(0)) return InvalidArgument(node.Describe(), ": input 0 is required");
  Value* v = node.output(0);
  if (v) {
    v->kind = ValueKind::kTensor;
    v->dtype = node.input(0)->dtype;
    v->has_shape = false;
    v->shape.clear();
    v->dim_params.clear();
  }
  return Status::Ok();
}
Status InferSequenceLength(Node& node) {
  SetOutput(node, 0, DataType::kInt64, {});
  return Status::Ok();
}
Status InferConcatFromSequence(Node& node) {
  if (!node.input(0)) return InvalidArgument(node.Describe(), ": input 0 is required");
  Value* v = node.output(0);
  if (v) {
    v->kind = ValueKind::kTensor;
    v->dtype = node.input(0)->dtype;
    v->has_shape = false;
  }
  return Status::Ok();
}
Status InferSequenceMap(Node& node) {
  const Attribute* a = node.FindAttr("body");
  if (!a || a->kind != Attribute::Kind::kGraph || !a->graph)
    return InvalidArgument(node.Describe(), ": attribute 'body' is required");
  if (a->graph->outputs.size() != node.outputs.size())
    return InvalidArgument(node.Describe(), ": body has ", a->graph->outputs.size(), " outputs, node has ",
                           node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) SetSequence(node, i, a->graph->outputs[i]->dtype);
  return Status::Ok();
}

Expected<const RtValue*> SeqIn(const NativeCall& call, size_t i) {
  const RtValue* v = call.in(i);
  if (!v || v->kind != ValueKind::kSequence)
    return InvalidArgument(call.node.Describe(), ": input ", i, " must be a sequence, got ",
                           v ? v->Describe() : std::string("nothing"));
  return v;
}

// Position input (or `def` when absent), normalised into [0, size + extra).
Expected<int64_t> Position(const NativeCall& call, size_t i, int64_t def, int64_t size, int64_t extra) {
  if (!call.in(i)) return def;
  OC_ASSIGN_OR_RETURN(const HostTensor* t, call.TensorIn(i));
  OC_ASSIGN_OR_RETURN(int64_t p, ScalarInt(*t, "position"));
  const int64_t hi = size + extra;
  if (p < -size || p >= hi)
    return OutOfRange(call.node.Describe(), ": position ", p, " is out of range for a sequence of ", size);
  return p < 0 ? p + size : p;
}

Status SequenceEmptyOp(NativeCall& call) {
  auto dt = static_cast<DataType>(call.node.GetInt("dtype", static_cast<int64_t>(DataType::kFloat32)));
  call.outputs[0] = RtValue::FromSequence(dt, {});
  return Status::Ok();
}

Status SequenceConstructOp(NativeCall& call) {
  std::vector<HostTensor> items;
  DataType dt = DataType::kUndefined;
  for (size_t i = 0; i < call.num_explicit_inputs(); ++i) {
    OC_ASSIGN_OR_RETURN(const HostTensor* t, call.TensorIn(i));
    if (dt != DataType::kUndefined && t->dtype != dt)
      return InvalidArgument(call.node.Describe(), ": input ", i, " is ", DataTypeName(t->dtype), ", input 0 is ",
                             DataTypeName(dt));
    dt = t->dtype;
    items.push_back(*t);
  }
  call.outputs[0] = RtValue::FromSequence(dt, std::move(items));
  return Status::Ok();
}

Status SequenceInsertOp(NativeCall& call) {
  OC_ASSIGN_OR_RETURN(const RtValue* seq, SeqIn(call, 0));
  OC_ASSIGN_OR_RETURN(const HostTensor* t, call.TensorIn(1));
  if (seq->elem_dtype != DataType::kUndefined && t->dtype != seq->elem_dtype)
    return InvalidArgument(call.node.Describe(), ": inserting ", DataTypeName(t->dtype), " into a sequence of ",
                           DataTypeName(seq->elem_dtype));
  const int64_t n = static_cast<int64_t>(seq->sequence.size());
  OC_ASSIGN_OR_RETURN(int64_t pos, Position(call, 2, n, n, 1));
  RtValue out = *seq;
  out.elem_dtype = t->dtype;
  out.sequence.insert(out.sequence.begin() + pos, *t);
  call.outputs[0] = std::move(out);
  return Status::Ok();
}

Status SequenceAtOp(NativeCall& call) {
  OC_ASSIGN_OR_RETURN(const RtValue* seq, SeqIn(call, 0));
  const int64_t n = static_cast<int64_t>(seq->sequence.size());
  if (!call.in(1)) return InvalidArgument(call.node.Describe(), ": position is required");
  OC_ASSIGN_OR_RETURN(int64_t pos, Position(call, 1, 0, n, 0));
  call.outputs[0] = RtValue::FromTensor(seq->sequence[pos]);
  return Status::Ok();
}

Status SequenceEraseOp(NativeCall& call) {
  OC_ASSIGN_OR_RETURN(const RtValue* seq, SeqIn(call, 0));
  const int64_t n = static_cast<int64_t>(seq->sequence.size());
  if (n == 0) return OutOfRange(call.node.Describe(), ": cannot erase from an empty sequence");
  OC_ASSIGN_OR_RETURN(int64_t pos, Position(call, 1, n - 1, n, 0));
  RtValue out = *seq;
  out.sequence.erase(out.sequence.begin() + pos);
  call.outputs[0] = std::move(out);
  return Status::Ok();
}

Status SequenceLengthOp(NativeCall& call) {
  OC_ASSIGN_OR_RETURN(const RtValue* seq, SeqIn(call, 0));
  HostTensor t = HostTensor::Allocate(DataType::kInt64, {});
  *reinterpret_cast<int64_t*>(t.data.mutable_data()) = static_cast<int64_t>(seq->sequence.size());
  call.outputs[0] = RtValue::FromTensor(std::move(t));
  return Status::Ok();
}

Status SplitToSequenceOp(NativeCall& call) {
  const Node& node = call.node;
  OC_ASSIGN_OR_RETURN(const HostTensor* x, call.TensorIn(0));
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), rank));
  const int64_t dim = x->shape[axis];
  std::vector<int64_t> lengths;
  bool squeeze = false;
  if (!call.in(1)) {
    lengths.assign(static_cast<size_t>(dim), 1);
    squeeze = node.GetInt("keepdims", 1) == 0;
  } else {
    OC_ASSIGN_OR_RETURN(const HostTensor* s, call.TensorIn(1));
    if (s->dtype != DataType::kInt64 && s->dtype != DataType::kInt32)
      return InvalidArgument(node.Describe(), ": split must be int32 or int64, got ", DataTypeName(s->dtype));
    if (s->shape.size() > 1 || (s->shape.empty() && s->NumElements() != 1))
      return InvalidArgument(node.Describe(), ": split must be a scalar or 1-D");
    std::vector<int64_t> split;
    for (int64_t i = 0; i < s->NumElements(); ++i)
      split.push_back(s->dtype == DataType::kInt64 ? s->data.as<int64_t>()[i] : s->data.as<int32_t>()[i]);
    if (s->shape.empty()) {
      if (split[0] <= 0) return InvalidArgument(node.Describe(), ": split must be positive, got ", split[0]);
      for (int64_t b = 0; b < dim; b += split[0]) lengths.push_back(std::min(split[0], dim - b));
    } else {
      int64_t sum = 0;
      for (int64_t l : split) {
        if (l < 0) return InvalidArgument(node.Describe(), ": negative split length ", l);
        sum += l;
      }
      if (sum != dim)
        return InvalidArgument(node.Describe(), ": split lengths sum to ", sum, ", axis ", axis, " has ", dim);
      lengths = split;
    }
  }
  std::vector<HostTensor> items;
  int64_t begin = 0;
  for (int64_t l : lengths) {
    HostTensor part = SliceAxis(*x, axis, begin, l);
    if (squeeze) part.shape.erase(part.shape.begin() + axis);
    items.push_back(std::move(part));
    begin += l;
  }
  call.outputs[0] = RtValue::FromSequence(x->dtype, std::move(items));
  return Status::Ok();
}

Status ConcatFromSequenceOp(NativeCall& call) {
  const Node& node = call.node;
  OC_ASSIGN_OR_RETURN(const RtValue* seq, SeqIn(call, 0));
  if (seq->sequence.empty()) return InvalidArgument(node.Describe(), ": the sequence is empty");
  if (!node.HasAttr("axis")) return InvalidArgument(node.Describe(), ": attribute 'axis' is required");
  const bool new_axis = node.GetInt("new_axis", 0) != 0;
  const int64_t rank = static_cast<int64_t>(seq->sequence[0].shape.size()) + (new_axis ? 1 : 0);
  OC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, node.GetInt("axis", 0), rank));
  OC_ASSIGN_OR_RETURN(HostTensor t, ConcatTensors(seq->sequence, axis, new_axis, seq->sequence[0].dtype,
                                                  node.Describe()));
  call.outputs[0] = RtValue::FromTensor(std::move(t));
  return Status::Ok();
}

Status SequenceMapOp(NativeCall& call) {
  const Node& node = call.node;
  OC_ASSIGN_OR_RETURN(const RtValue* seq, SeqIn(call, 0));
  OC_ASSIGN_OR_RETURN(const Interpreter* body, call.Body("body"));
  const size_t len = seq->sequence.size();
  for (size_t i = 1; i < call.num_explicit_inputs(); ++i) {
    const RtValue* v = call.in(i);
    if (v && v->kind == ValueKind::kSequence && v->sequence.size() != len)
      return InvalidArgument(node.Describe(), ": input ", i, " has ", v->sequence.size(), " elements, input 0 has ",
                             len);
  }
  std::vector<RtValue> captures = call.CapturesOf("body");
  const Graph& bg = body->graph();
  std::vector<std::vector<HostTensor>> results(bg.outputs.size());
  for (size_t t = 0; t < len; ++t) {
    std::vector<RtValue> args;
    for (size_t i = 0; i < call.num_explicit_inputs(); ++i) {
      const RtValue* v = call.in(i);
      if (!v) return InvalidArgument(node.Describe(), ": input ", i, " is missing");
      args.push_back(v->kind == ValueKind::kSequence ? RtValue::FromTensor(v->sequence[t]) : *v);
    }
    auto outs = body->Run(args, call.pool, captures);
    if (!outs.ok()) return outs.status().WithContext(StrCat("in the body, element ", t));
    for (size_t j = 0; j < outs->size(); ++j) {
      if (!(*outs)[j].is_tensor()) return InvalidArgument("body output ", j, " is not a tensor");
      results[j].push_back(std::move((*outs)[j].tensor));
    }
  }
  for (size_t j = 0; j < results.size() && j < call.outputs.size(); ++j)
    call.outputs[j] = RtValue::FromSequence(bg.outputs[j]->dtype, std::move(results[j]));
  return Status::Ok();
}

}  // namespace

NativeOpFn FindSequenceOp(const std::string& op_type) {
  if (op_type == "SequenceEmpty") return SequenceEmptyOp;
  if (op_type == "SequenceConstruct") return SequenceConstructOp;
  if (op_type == "SequenceInsert") return SequenceInsertOp;
  if (op_type == "SequenceAt") return SequenceAtOp;
  if (op_type == "SequenceErase") return SequenceEraseOp;
  if (op_type == "SequenceLength") return SequenceLengthOp;
  if (op_type == "SplitToSequence") return SplitToSequenceOp;
  if (op_type == "ConcatFromSequence") return ConcatFromSequenceOp;
  if (op_type == "SequenceMap") return SequenceMapOp;
  return nullptr;
}

void RegisterSequenceOps(OpRegistry& r) {
  // No `cpu` factory: these run in the Interpreter only.
  r.Register({.op_type = "SequenceEmpty", .min_opset = 11, .infer = InferSequenceEmpty,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "SequenceConstruct", .min_opset = 11, .infer = InferFromInput0Elem,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "SequenceInsert", .min_opset = 11, .infer = InferFromInput0Elem,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "SequenceAt", .min_opset = 11, .infer = InferSequenceAt,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "SequenceErase", .min_opset = 11, .infer = InferFromInput0Elem,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "SequenceLength", .min_opset = 11, .infer = InferSequenceLength,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "SplitToSequence", .min_opset = 11, .infer = InferFromInput0Elem,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "ConcatFromSequence", .min_opset = 11, .infer = InferConcatFromSequence,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "SequenceMap", .min_opset = 17, .infer = InferSequenceMap,
              .foldable = false, .native_types = kAllDataTypes});
}

}  // namespace oc

// Optional, OptionalHasElement, OptionalGetElement. Like the sequence ops they
// have no Kernel: the Interpreter evaluates them.
//
// Optional's `type` attribute is a TypeProto in ONNX; the parser stores it as
// ints {ValueKind of the element (kTensor or kSequence), element dtype}.
#include <string>

#include "executor/interpreter_ops.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

ValueKind OptionalOf(ValueKind k) {
  return k == ValueKind::kSequence || k == ValueKind::kOptionalSequence ? ValueKind::kOptionalSequence
                                                                        : ValueKind::kOptionalTensor;
}

Status InferOptional(Node& node) {
  Value* v = node.output(0);
  if (!v) return Status::Ok();
  if (const Value* in = node.input(0)) {
    v->kind = OptionalOf(in->kind);
    v->dtype = in->dtype;
    v->has_shape = in->has_shape && in->kind == ValueKind::kTensor;
    v->shape = v->has_shape ? in->shape : std::vector<int64_t>{};
  } else {
    std::vector<int64_t> type = node.GetInts("type");
    if (type.size() != 2)
      return InvalidArgument(node.Describe(), ": attribute 'type' is required when there is no input");
    v->kind = OptionalOf(static_cast<ValueKind>(type[0]));
    v->dtype = static_cast<DataType>(type[1]);
    v->has_shape = false;
    v->shape.clear();
  }
  v->dim_params.assign(v->shape.size(), "");
  return Status::Ok();
}

Status InferHasElement(Node& node) {
  SetOutput(node, 0, DataType::kBool, {});
  return Status::Ok();
}

Status InferGetElement(Node& node) {
  const Value* in = node.input(0);
  Value* v = node.output(0);
  if (!in) return InvalidArgument(node.Describe(), ": input 0 is required");
  if (!v) return Status::Ok();
  v->kind = in->kind == ValueKind::kOptionalSequence || in->kind == ValueKind::kSequence ? ValueKind::kSequence
                                                                                        : ValueKind::kTensor;
  v->dtype = in->dtype;
  v->has_shape = in->has_shape;
  v->shape = in->shape;
  v->dim_params.assign(v->shape.size(), "");
  return Status::Ok();
}

Status OptionalOp(NativeCall& call) {
  if (const RtValue* in = call.in(0)) {
    if (in->kind != ValueKind::kTensor && in->kind != ValueKind::kSequence)
      return InvalidArgument(call.node.Describe(), ": input must be a tensor or a sequence, got ", in->Describe());
    RtValue out = *in;
    out.kind = OptionalOf(in->kind);
    out.present = true;
    call.outputs[0] = std::move(out);
    return Status::Ok();
  }
  std::vector<int64_t> type = call.node.GetInts("type");
  if (type.size() != 2)
    return InvalidArgument(call.node.Describe(), ": attribute 'type' is required when there is no input");
  call.outputs[0] = RtValue::EmptyOptional(OptionalOf(static_cast<ValueKind>(type[0])),
                                           static_cast<DataType>(type[1]));
  return Status::Ok();
}

Status HasElementOp(NativeCall& call) {
  const RtValue* in = call.in(0);
  bool has = in && in->present;
  HostTensor t = HostTensor::Allocate(DataType::kBool, {});
  t.data.mutable_data()[0] = has ? 1 : 0;
  call.outputs[0] = RtValue::FromTensor(std::move(t));
  return Status::Ok();
}

Status GetElementOp(NativeCall& call) {
  const RtValue* in = call.in(0);
  if (!in) return InvalidArgument(call.node.Describe(), ": input 0 is required");
  if (!in->present) return InvalidArgument(call.node.Describe(), ": the optional input is empty");
  RtValue out = *in;
  if (in->kind == ValueKind::kOptionalTensor) out.kind = ValueKind::kTensor;
  if (in->kind == ValueKind::kOptionalSequence) out.kind = ValueKind::kSequence;
  call.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

NativeOpFn FindOptionalOp(const std::string& op_type) {
  if (op_type == "Optional") return OptionalOp;
  if (op_type == "OptionalHasElement") return HasElementOp;
  if (op_type == "OptionalGetElement") return GetElementOp;
  return nullptr;
}

void RegisterOptionalOps(OpRegistry& r) {
  r.Register({.op_type = "Optional", .min_opset = 15, .infer = InferOptional,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "OptionalHasElement", .min_opset = 15, .infer = InferHasElement,
              .foldable = false, .native_types = kAllDataTypes});
  r.Register({.op_type = "OptionalGetElement", .min_opset = 15, .infer = InferGetElement,
              .foldable = false, .native_types = kAllDataTypes});
}

}  // namespace oc

// Identity and Dropout (inference: a copy; the optional mask output is all true).
// Also the reference for how an op group is written: an infer function, a kernel
// class with everything precomputed in its factory, and one OpDef per op.
#include <cstring>
#include <string>

#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferIdentity(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  SetOutputLike(node, 0, *node.input(0));
  if (node.op_type == "Dropout" && node.output(1)) {
    SetOutputLike(node, 1, *node.input(0));
    node.output(1)->dtype = DataType::kBool;
  }
  return Status::Ok();
}

// True when a floating-point value of `bytes` bytes (any IEEE-style format) is
// +-0: every bit but the sign is clear.
bool IsFloatZero(const void* p, size_t bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, bytes < sizeof bits ? bytes : sizeof bits);
  const uint64_t magnitude = bytes >= 8 ? ~(uint64_t{1} << 63) : (uint64_t{1} << (8 * bytes - 1)) - 1;
  return (bits & magnitude) == 0;
}

// Dropout with a training_mode input known only at run time: training with a
// ratio above zero needs a random mask, which this inference runtime does not
// draw, so such a run fails instead of returning the input unchanged.
struct TrainingCheck {
  bool enabled = false;
  bool ratio_zero = false;     // ratio constant 0 (training is then a copy)
  size_t ratio_bytes = 0;      // > 0: ratio is a run-time input of this element size
  std::string node;
};

class CopyKernel final : public Kernel {
 public:
  CopyKernel(size_t bytes, size_t mask_bytes, TrainingCheck check)
      : bytes_(bytes), mask_bytes_(mask_bytes), check_(std::move(check)) {}
  Status Run(const KernelIO& io) override {
    if (check_.enabled && io.inputs[2] && *static_cast<const uint8_t*>(io.inputs[2])) {
      bool zero = check_.ratio_zero || (check_.ratio_bytes && IsFloatZero(io.inputs[1], check_.ratio_bytes));
      if (!zero)
        return NotSupported(check_.node, ": training_mode=true with ratio > 0 is not supported (inference only: "
                            "no random dropout mask)");
    }
    if (io.outputs[0] != io.inputs[0]) std::memcpy(io.outputs[0], io.inputs[0], bytes_);
    if (mask_bytes_ && io.num_outputs > 1 && io.outputs[1]) std::memset(io.outputs[1], 1, mask_bytes_);
    return Status::Ok();
  }

 private:
  size_t bytes_;
  size_t mask_bytes_;
  TrainingCheck check_;
};

Expected<KernelPtr> MakeCopy(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  const Node& n = init.node;
  TrainingCheck check;
  if (n.op_type == "Dropout" && n.input(2)) {
    const Value* ratio = n.input(1);
    // No ratio input means the default 0.5.
    check.ratio_zero = ratio && ratio->constant && IsFloatZero(ratio->constant->data(), ratio->constant->size());
    if (n.input(2)->constant) {
      auto training = n.input(2)->constant->data();
      if (n.input(2)->constant->size() && training[0] && !check.ratio_zero)
        return NotSupported(n.Describe(), ": training_mode=true is not supported (inference only)");
    } else {
      check.enabled = true;
      if (ratio && !ratio->constant) check.ratio_bytes = DataTypeSize(ratio->dtype);
      check.node = n.Describe();
    }
  }
  size_t mask = n.output(1) ? static_cast<size_t>(n.output(1)->NumElements()) : 0;
  return KernelPtr(new CopyKernel(static_cast<size_t>(n.input(0)->ByteSize()), mask, std::move(check)));
}

}  // namespace

void RegisterMiscOps(OpRegistry& r) {
  r.Register({.op_type = "Identity", .infer = InferIdentity, .cpu = MakeCopy});
  r.Register({.op_type = "Dropout", .infer = InferIdentity, .cpu = MakeCopy});
}

}  // namespace oc

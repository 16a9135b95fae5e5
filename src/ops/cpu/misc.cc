// Identity and Dropout (inference: a copy; the optional mask output is all true).
// Also the reference for how an op group is written: an infer function, a kernel
// class with everything precomputed in its factory, and one OpDef per op.
#include <cstring>

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

class CopyKernel final : public Kernel {
 public:
  CopyKernel(size_t bytes, size_t mask_bytes) : bytes_(bytes), mask_bytes_(mask_bytes) {}
  Status Run(const KernelIO& io) override {
    if (io.outputs[0] != io.inputs[0]) std::memcpy(io.outputs[0], io.inputs[0], bytes_);
    if (mask_bytes_ && io.num_outputs > 1 && io.outputs[1]) std::memset(io.outputs[1], 1, mask_bytes_);
    return Status::Ok();
  }

 private:
  size_t bytes_;
  size_t mask_bytes_;
};

Expected<KernelPtr> MakeCopy(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  const Node& n = init.node;
  if (n.op_type == "Dropout" && n.input(2) && n.input(2)->constant) {
    auto training = n.input(2)->constant->data();
    if (n.input(2)->constant->size() && training[0])
      return NotSupported(n.Describe(), ": training_mode=true is not supported (inference only)");
  }
  size_t mask = n.output(1) ? static_cast<size_t>(n.output(1)->NumElements()) : 0;
  return KernelPtr(new CopyKernel(static_cast<size_t>(n.input(0)->ByteSize()), mask));
}

}  // namespace

void RegisterMiscOps(OpRegistry& r) {
  r.Register({.op_type = "Identity", .infer = InferIdentity, .cpu = MakeCopy});
  r.Register({.op_type = "Dropout", .infer = InferIdentity, .cpu = MakeCopy});
}

}  // namespace oc

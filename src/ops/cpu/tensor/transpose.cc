// Transpose. The kernel is a StridedCopy over the permuted input strides; its
// dim merging turns the common layouts (2-D, last-two-axes swap, NCHW<->NHWC)
// into a batched blocked 2-D transpose, and everything else into row copies.
#include <numeric>

#include "ops/cpu/tensor/grads.h"
#include "ops/cpu/common/tensor_util.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Expected<std::vector<int64_t>> Permutation(const Node& node, size_t rank) {
  std::vector<int64_t> perm = node.GetInts("perm");
  if (!node.HasAttr("perm")) {
    perm.resize(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    return perm;
  }
  if (perm.size() != rank)
    return InvalidArgument(node.Describe(), ": perm ", DimsString(perm), " has ", perm.size(),
                           " entries, expected the input rank ", rank);
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    int64_t q = p < 0 ? p + static_cast<int64_t>(rank) : p;
    if (q < 0 || q >= static_cast<int64_t>(rank) || seen[q])
      return InvalidArgument(node.Describe(), ": perm ", DimsString(node.GetInts("perm")),
                             " is not a permutation of 0..", rank - 1);
    seen[q] = true;
    p = q;
  }
  return perm;
}

Status InferTranspose(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Value& x = *node.input(0);
  OC_ASSIGN_OR_RETURN(auto perm, Permutation(node, x.shape.size()));
  std::vector<int64_t> out(perm.size());
  std::vector<std::string> params(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out[i] = x.shape[perm[i]];
    if (static_cast<size_t>(perm[i]) < x.dim_params.size()) params[i] = x.dim_params[perm[i]];
  }
  SetOutput(node, 0, x.dtype, std::move(out));
  node.output(0)->dim_params = std::move(params);
  return Status::Ok();
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(StridedCopy plan) : plan_(std::move(plan)) {}
  Status Run(const KernelIO& io) override {
    plan_.Run(io.inputs[0], io.outputs[0], io.pool);
    return Status::Ok();
  }

 private:
  StridedCopy plan_;
};

Expected<KernelPtr> MakeTranspose(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const Value& x = *n.input(0);
  OC_RETURN_IF_ERROR(RequireMovableType(n, x.dtype));
  OC_ASSIGN_OR_RETURN(auto perm, Permutation(n, x.shape.size()));
  std::vector<int64_t> in_strides = Strides(x.shape), dims(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = x.shape[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  OC_ASSIGN_OR_RETURN(StridedCopy plan, StridedCopy::Make(n, dims, strides, 0, DataTypeSize(x.dtype)));
  return KernelPtr(new TransposeKernel(std::move(plan)));
}

}  // namespace

void RegisterTransposeOps(OpRegistry& r) {
  r.Register({.op_type = "Transpose", .infer = InferTranspose, .kernels = CpuKernel(MakeTranspose),
              .native_types = kAllDataTypes, .grad = tensor::GradTranspose});
}

}  // namespace oc

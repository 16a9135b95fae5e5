// ReluGrad (com.opencann): dX = Y > 0 ? dY : 0 for Y = Relu(X) (or X itself:
// the test is the same), the gradient of Relu in one pass; the rule in
// elementwise_grad.cc emits it for float32 / float64 with the Relu's output.
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

Status InferReluGrad(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  OC_RETURN_IF_ERROR(RequireInput(node, 1));
  const Value& dy = *node.input(0);
  const Value& x = *node.input(1);
  if (dy.dtype != x.dtype || (dy.dtype != DataType::kFloat32 && dy.dtype != DataType::kFloat64))
    return NotSupported(node.Describe(), ": dY ", DataTypeName(dy.dtype), " and X ", DataTypeName(x.dtype),
                        " (supported: both float32 or both float64)");
  if (dy.has_shape && x.has_shape && dy.shape != x.shape)
    return InvalidArgument(node.Describe(), ": dY ", dy.ShapeString(), " and X ", x.ShapeString(), " differ");
  SetOutputLike(node, 0, x);
  return Status::Ok();
}

template <typename T>
class ReluGradKernel final : public Kernel {
 public:
  explicit ReluGradKernel(int64_t n) : n_(n) {}
  Status Run(const KernelIO& io) override {
    const T* dy = io.in<T>(0);
    const T* x = io.in<T>(1);
    T* dx = io.out<T>(0);
    io.pool->ParallelFor(n_, 32768, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T g = dy[i];  // loaded unconditionally: the select vectorizes (no branch per element)
        dx[i] = x[i] > T(0) ? g : T(0);
      }
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
};

Expected<KernelPtr> MakeReluGrad(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const int64_t count = n.input(1)->NumElements();
  if (n.input(1)->dtype == DataType::kFloat64) return KernelPtr(new ReluGradKernel<double>(count));
  return KernelPtr(new ReluGradKernel<float>(count));
}

}  // namespace

void RegisterReluGradOps(OpRegistry& r) {
  r.Register({.domain = kOpenCannDomain, .op_type = "ReluGrad", .infer = InferReluGrad,
              .kernels = CpuKernel(MakeReluGrad)});
}

}  // namespace oc

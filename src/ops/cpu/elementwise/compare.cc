// Comparisons (Equal Less Greater LessOrEqual GreaterOrEqual), boolean logic
// (And Or Xor) with numpy broadcasting, and Where (three-way broadcast; any
// element type, moved by size).
#include <type_traits>

#include "ops/cpu/elementwise/grads.h"
#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

using ew::BinaryStep;
using ew::BroadcastPlan;

struct EqualOp { template <typename T> bool operator()(T a, T b) const { return a == b; } };
struct LessOp { template <typename T> bool operator()(T a, T b) const { return a < b; } };
struct GreaterOp { template <typename T> bool operator()(T a, T b) const { return a > b; } };
struct LessEqOp { template <typename T> bool operator()(T a, T b) const { return a <= b; } };
struct GreaterEqOp { template <typename T> bool operator()(T a, T b) const { return a >= b; } };
struct AndOp { bool operator()(bool a, bool b) const { return a && b; } };
struct OrOp { bool operator()(bool a, bool b) const { return a || b; } };
struct XorOp { bool operator()(bool a, bool b) const { return a != b; } };

template <typename T, typename Op>
class CompareKernel final : public Kernel {
 public:
  explicit CompareKernel(BroadcastPlan plan) : step_(std::move(plan)) {}
  Status Run(const KernelIO& io) override {
    step_.Run(io.in<T>(0), io.in<T>(1), io.out<bool>(0), *io.pool);
    return Status::Ok();
  }

 private:
  BinaryStep<T, T, bool, Op> step_;
};

Status InferCompare(Node& node) {
  if (node.inputs.size() != 2 || !node.input(0) || !node.input(1))
    return InvalidArgument(node.Describe(), ": expects 2 inputs (A, B)");
  OC_RETURN_IF_ERROR(ew::RequireSameDtype(node));
  OC_ASSIGN_OR_RETURN(auto shape, ew::BroadcastAll(node));
  SetOutput(node, 0, DataType::kBool, std::move(shape));
  return Status::Ok();
}

Status InferLogic(Node& node) {
  OC_RETURN_IF_ERROR(InferCompare(node));
  if (node.input(0)->dtype != DataType::kBool)
    return InvalidArgument(node.Describe(), ": inputs must be bool, got ", DataTypeName(node.input(0)->dtype));
  return Status::Ok();
}

Expected<BroadcastPlan> PlanOf(const Node& n) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (n.inputs.size() < 2 || !n.input(0) || !n.input(1) || !n.output(0))
    return InvalidArgument(n.Describe(), ": expects 2 inputs and an output");
  return ew::MakeBroadcastPlan(n, {n.input(0)->shape, n.input(1)->shape}, n.output(0)->shape);
}

template <typename Op, bool kWithBool>
Expected<KernelPtr> MakeCompare(const KernelInit& init) {
  const Node& n = init.node;
  OC_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanOf(n));
#define OC_CCASE(DT, T) \
  case DT: return KernelPtr(new CompareKernel<T, Op>(std::move(plan)));
  switch (n.input(0)->dtype) {
    OC_CCASE(DataType::kFloat32, float)
    OC_CCASE(DataType::kFloat64, double)
    OC_CCASE(DataType::kInt8, int8_t)
    OC_CCASE(DataType::kUInt8, uint8_t)
    OC_CCASE(DataType::kInt16, int16_t)
    OC_CCASE(DataType::kUInt16, uint16_t)
    OC_CCASE(DataType::kInt32, int32_t)
    OC_CCASE(DataType::kUInt32, uint32_t)
    OC_CCASE(DataType::kInt64, int64_t)
    OC_CCASE(DataType::kUInt64, uint64_t)
    case DataType::kBool:
      if constexpr (kWithBool) return KernelPtr(new CompareKernel<bool, Op>(std::move(plan)));
      break;
    default: break;
  }
#undef OC_CCASE
  return ew::UnsupportedDtype(n, n.input(0)->dtype);
}

template <typename Op>
Expected<KernelPtr> MakeLogic(const KernelInit& init) {
  const Node& n = init.node;
  OC_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanOf(n));
  if (n.input(0)->dtype != DataType::kBool) return ew::UnsupportedDtype(n, n.input(0)->dtype);
  return KernelPtr(new CompareKernel<bool, Op>(std::move(plan)));
}

// ---- Where ------------------------------------------------------------------------

template <int SC, int SX, int SY, typename T>
void WhereLoop(const bool* c, const T* x, const T* y, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = c[i * SC] ? x[i * SX] : y[i * SY];
}

template <typename T>
class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(BroadcastPlan plan) : plan_(std::move(plan)) {
    int code = plan_.inner_stride[0] * 4 + plan_.inner_stride[1] * 2 + plan_.inner_stride[2];
    static constexpr void (*kLoops[8])(const bool*, const T*, const T*, T*, int64_t) = {
        WhereLoop<0, 0, 0, T>, WhereLoop<0, 0, 1, T>, WhereLoop<0, 1, 0, T>, WhereLoop<0, 1, 1, T>,
        WhereLoop<1, 0, 0, T>, WhereLoop<1, 0, 1, T>, WhereLoop<1, 1, 0, T>, WhereLoop<1, 1, 1, T>};
    loop_ = kLoops[code];
  }
  Status Run(const KernelIO& io) override {
    const bool* c = io.in<bool>(0);
    const T* x = io.in<T>(1);
    const T* y = io.in<T>(2);
    T* o = io.out<T>(0);
    io.pool->ParallelFor(plan_.total, ew::kGrain, [&](int64_t b, int64_t e) {
      ew::ForEachRun(plan_, b, e, [&](int64_t oo, const int64_t* off, int64_t len) {
        loop_(c + off[0], x + off[1], y + off[2], o + oo, len);
      });
    });
    return Status::Ok();
  }

 private:
  BroadcastPlan plan_;
  void (*loop_)(const bool*, const T*, const T*, T*, int64_t);
};

Status InferWhere(Node& node) {
  if (node.inputs.size() != 3 || !node.input(0) || !node.input(1) || !node.input(2))
    return InvalidArgument(node.Describe(), ": expects 3 inputs (condition, X, Y)");
  if (node.input(0)->dtype != DataType::kBool)
    return InvalidArgument(node.Describe(), ": condition must be bool, got ", DataTypeName(node.input(0)->dtype));
  OC_RETURN_IF_ERROR(ew::RequireSameDtype(node, 1, 2));
  OC_ASSIGN_OR_RETURN(auto shape, ew::BroadcastAll(node));
  SetOutput(node, 0, node.input(1)->dtype, std::move(shape));
  return Status::Ok();
}

Expected<KernelPtr> MakeWhere(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  OC_ASSIGN_OR_RETURN(BroadcastPlan plan,
                      ew::MakeBroadcastPlan(n, {n.input(0)->shape, n.input(1)->shape, n.input(2)->shape},
                                            n.output(0)->shape));
  switch (DataTypeSize(n.input(1)->dtype)) {
    case 1: return KernelPtr(new WhereKernel<uint8_t>(std::move(plan)));
    case 2: return KernelPtr(new WhereKernel<uint16_t>(std::move(plan)));
    case 4: return KernelPtr(new WhereKernel<uint32_t>(std::move(plan)));
    case 8: return KernelPtr(new WhereKernel<uint64_t>(std::move(plan)));
    default: return ew::UnsupportedDtype(n, n.input(1)->dtype);
  }
}

}  // namespace

void RegisterCompareOps(OpRegistry& r) {
  r.Register({.op_type = "Equal", .min_opset = 7, .infer = InferCompare, .kernels = CpuKernel(MakeCompare<EqualOp, true>)});
  r.Register({.op_type = "Less", .min_opset = 7, .infer = InferCompare, .kernels = CpuKernel(MakeCompare<LessOp, false>)});
  r.Register({.op_type = "Greater", .min_opset = 7, .infer = InferCompare, .kernels = CpuKernel(MakeCompare<GreaterOp, false>)});
  r.Register({.op_type = "LessOrEqual", .min_opset = 12, .infer = InferCompare, .kernels = CpuKernel(MakeCompare<LessEqOp, false>)});
  r.Register({.op_type = "GreaterOrEqual", .min_opset = 12, .infer = InferCompare,
              .kernels = CpuKernel(MakeCompare<GreaterEqOp, false>)});
  r.Register({.op_type = "And", .min_opset = 7, .infer = InferLogic, .kernels = CpuKernel(MakeLogic<AndOp>)});
  r.Register({.op_type = "Or", .min_opset = 7, .infer = InferLogic, .kernels = CpuKernel(MakeLogic<OrOp>)});
  r.Register({.op_type = "Xor", .min_opset = 7, .infer = InferLogic, .kernels = CpuKernel(MakeLogic<XorOp>)});
  r.Register({.op_type = "Where", .min_opset = 9, .infer = InferWhere, .kernels = CpuKernel(MakeWhere),
              .native_types = kAllDataTypes, .grad = ew::GradWhere});
}

}  // namespace oc

// Bit-level ops: BitwiseAnd / BitwiseOr / BitwiseXor (numpy broadcasting),
// BitwiseNot, and BitCast (reinterpretation between types of one bit width).
// The bitwise ops depend only on the element width, so each is instantiated
// once per width (8/16/32/64 bits) and serves the signed and unsigned type of it.
#include <cstring>

#include "ops/cpu/elementwise/elementwise_common.h"
#include "ops/infer_util.h"
#include "ops/op_registry.h"

namespace oc {
namespace {

using ew::BinaryStep;
using ew::BroadcastPlan;

struct AndOp { template <typename T> T operator()(T a, T b) const { return static_cast<T>(a & b); } };
struct OrOp { template <typename T> T operator()(T a, T b) const { return static_cast<T>(a | b); } };
struct XorOp { template <typename T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); } };

bool IsIntegerType(DataType t) { return ew::IsSignedIntType(t) || ew::IsUnsignedIntType(t); }

template <typename U, typename Op>
class BitwiseKernel final : public Kernel {
 public:
  explicit BitwiseKernel(BroadcastPlan plan) : step_(std::move(plan)) {}
  Status Run(const KernelIO& io) override {
    step_.Run(io.in<U>(0), io.in<U>(1), io.out<U>(0), *io.pool);
    return Status::Ok();
  }

 private:
  BinaryStep<U, U, U, Op> step_;
};

Status InferBitwise(Node& node) {
  if (node.inputs.size() != 2 || !node.input(0) || !node.input(1))
    return InvalidArgument(node.Describe(), ": expects 2 inputs (A, B)");
  OC_RETURN_IF_ERROR(ew::RequireSameDtype(node));
  if (!IsIntegerType(node.input(0)->dtype))
    return InvalidArgument(node.Describe(), ": inputs must be integers, got ", DataTypeName(node.input(0)->dtype));
  OC_ASSIGN_OR_RETURN(auto shape, ew::BroadcastAll(node));
  SetOutput(node, 0, node.input(0)->dtype, std::move(shape));
  return Status::Ok();
}

template <typename Op>
Expected<KernelPtr> MakeBitwise(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  if (!IsIntegerType(n.input(0)->dtype)) return ew::UnsupportedDtype(n, n.input(0)->dtype);
  OC_ASSIGN_OR_RETURN(BroadcastPlan plan,
                      ew::MakeBroadcastPlan(n, {n.input(0)->shape, n.input(1)->shape}, n.output(0)->shape));
  switch (DataTypeSize(n.input(0)->dtype)) {
    case 1: return KernelPtr(new BitwiseKernel<uint8_t, Op>(std::move(plan)));
    case 2: return KernelPtr(new BitwiseKernel<uint16_t, Op>(std::move(plan)));
    case 4: return KernelPtr(new BitwiseKernel<uint32_t, Op>(std::move(plan)));
    default: return KernelPtr(new BitwiseKernel<uint64_t, Op>(std::move(plan)));
  }
}

template <typename U>
class NotKernel final : public Kernel {
 public:
  explicit NotKernel(int64_t n) : n_(n) {}
  Status Run(const KernelIO& io) override {
    const U* x = io.in<U>(0);
    U* y = io.out<U>(0);
    io.pool->ParallelFor(n_, ew::kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = static_cast<U>(~x[i]);
    });
    return Status::Ok();
  }

 private:
  int64_t n_;
};

Status InferBitwiseNot(Node& node) {
  if (node.inputs.size() != 1 || !node.input(0))
    return InvalidArgument(node.Describe(), ": expects 1 input (X)");
  if (!IsIntegerType(node.input(0)->dtype))
    return InvalidArgument(node.Describe(), ": input must be an integer, got ", DataTypeName(node.input(0)->dtype));
  SetOutputLike(node, 0, *node.input(0));
  return Status::Ok();
}

Expected<KernelPtr> MakeBitwiseNot(const KernelInit& init) {
  const Node& n = init.node;
  OC_RETURN_IF_ERROR(RequireStaticShapes(n));
  const int64_t count = n.input(0)->NumElements();
  switch (DataTypeSize(n.input(0)->dtype)) {
    case 1: return KernelPtr(new NotKernel<uint8_t>(count));
    case 2: return KernelPtr(new NotKernel<uint16_t>(count));
    case 4: return KernelPtr(new NotKernel<uint32_t>(count));
    case 8: return KernelPtr(new NotKernel<uint64_t>(count));
    default: return ew::UnsupportedDtype(n, n.input(0)->dtype);
  }
}

// ---- BitCast ------------------------------------------------------------------------

Status InferBitCast(Node& node) {
  OC_RETURN_IF_ERROR(RequireInput(node, 0));
  const Attribute* to = node.FindAttr("to");
  if (!to) return InvalidArgument(node.Describe(), ": required attribute 'to' is missing");
  if (!IsKnownDataType(static_cast<int32_t>(to->i)))
    return NotSupported(node.Describe(), ": bit cast to ONNX data type ", to->i, " is not supported");
  const DataType from = node.input(0)->dtype, dst = static_cast<DataType>(to->i);
  if (DataTypeBits(from) != DataTypeBits(dst))
    return InvalidArgument(node.Describe(), ": 'to' type ", DataTypeName(dst), " has ", DataTypeBits(dst),
                           " bits but the input ", DataTypeName(from), " has ", DataTypeBits(from),
                           "; BitCast needs equal widths");
  SetOutputLike(node, 0, *node.input(0));
  node.output(0)->dtype = dst;
  return Status::Ok();
}

class BitCopyKernel final : public Kernel {
 public:
  explicit BitCopyKernel(size_t bytes) : bytes_(bytes) {}
  Status Run(const KernelIO& io) override {
    if (io.outputs[0] != io.inputs[0]) std::memcpy(io.outputs[0], io.inputs[0], bytes_);
    return Status::Ok();
  }

 private:
  size_t bytes_;
};

Expected<KernelPtr> MakeBitCast(const KernelInit& init) {
  OC_RETURN_IF_ERROR(RequireStaticShapes(init.node));
  // Little-endian hosts only (x86-64, AArch64): the bytes are already the
  // little-endian pattern ONNX specifies.
  return KernelPtr(new BitCopyKernel(static_cast<size_t>(init.node.input(0)->ByteSize())));
}

}  // namespace

void RegisterBitwiseOps(OpRegistry& r) {
  r.Register({.op_type = "BitwiseAnd", .min_opset = 18, .infer = InferBitwise, .kernels = CpuKernel(MakeBitwise<AndOp>)});
  r.Register({.op_type = "BitwiseOr", .min_opset = 18, .infer = InferBitwise, .kernels = CpuKernel(MakeBitwise<OrOp>)});
  r.Register({.op_type = "BitwiseXor", .min_opset = 18, .infer = InferBitwise, .kernels = CpuKernel(MakeBitwise<XorOp>)});
  r.Register({.op_type = "BitwiseNot", .min_opset = 18, .infer = InferBitwiseNot, .kernels = CpuKernel(MakeBitwiseNot)});
  r.Register({.op_type = "BitCast", .min_opset = 26, .infer = InferBitCast, .kernels = CpuKernel(MakeBitCast),
              .native_types = kAllDataTypes});
}

}  // namespace oc

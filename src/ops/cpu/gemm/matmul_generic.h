// MatMul and Gemm for the element types the float32 GEMM engine (gemm_kernel.h)
// does not cover: float64 (computed in double, not narrowed to float) and the
// 32/64-bit integers (wrap-around arithmetic, as onnxruntime). Straightforward
// row-parallel loops: these types are rare in models and only need to be right.
#pragma once

#include "ops/kernel.h"

namespace oc {

// True when MakeGenericMatMul / MakeGenericGemm handle `t`.
bool GenericMatMulType(DataType t);
// The node's shapes are static; numpy MatMul semantics (1-D operands, batch
// broadcasting).
Expected<KernelPtr> MakeGenericMatMul(const Node& node);
// Y = alpha * op(A) * op(B) + beta * C, C broadcast to (M, N).
Expected<KernelPtr> MakeGenericGemm(const Node& node);

}  // namespace oc

// HCCL's data types and reduction operations on the host: element sizes and
// the element-wise reduction functions the engine calls (engine.h).
#pragma once

#include <cstddef>

#include "base/status.h"
#include "hccl/engine.h"
#include "hccl/hccl_types.h"

namespace oc::hccl {

// Bytes per element; 0 when `t` is not an HcclDataType.
size_t ElementSize(HcclDataType t);
const char* DataTypeName(HcclDataType t);
const char* ReduceOpName(HcclReduceOp op);

// The reduction of `op` on `t`: sums and products of integers wrap (two's
// complement), float16 / bfloat16 are computed in float32 and rounded back to
// nearest even, MAX/MIN of floats follow fmax/fmin. NotSupported for the types
// HCCL does not reduce (INT128, HIF8 and the float8 types) and InvalidArgument
// for values outside the enums.
Expected<ReduceFn> FindReduceFn(HcclDataType t, HcclReduceOp op);

}  // namespace oc::hccl

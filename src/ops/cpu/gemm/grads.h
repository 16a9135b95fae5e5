// Gradient rules of MatMul and Gemm (ops/grad.h), named by their OpDefs.
#pragma once

#include "ops/grad.h"

namespace oc::gemm {

Status GradMatMul(GradBuilder& b, const GradArgs& a);
Status GradGemm(GradBuilder& b, const GradArgs& a);

}  // namespace oc::gemm

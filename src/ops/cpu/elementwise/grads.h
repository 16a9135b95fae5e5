// Gradient rules of the element-wise ops (ops/grad.h), named by their OpDefs.
#pragma once

#include "ops/grad.h"

namespace oc::ew {

// Binary (numpy broadcasting) and variadic.
Status GradAdd(GradBuilder& b, const GradArgs& a);
Status GradSub(GradBuilder& b, const GradArgs& a);
Status GradMul(GradBuilder& b, const GradArgs& a);
Status GradDiv(GradBuilder& b, const GradArgs& a);
Status GradPow(GradBuilder& b, const GradArgs& a);
Status GradSum(GradBuilder& b, const GradArgs& a);
Status GradMaxMin(GradBuilder& b, const GradArgs& a);
Status GradWhere(GradBuilder& b, const GradArgs& a);
Status GradCast(GradBuilder& b, const GradArgs& a);

// Unary and activations.
Status GradRelu(GradBuilder& b, const GradArgs& a);
Status GradLeakyRelu(GradBuilder& b, const GradArgs& a);
Status GradSigmoid(GradBuilder& b, const GradArgs& a);
Status GradTanh(GradBuilder& b, const GradArgs& a);
Status GradExp(GradBuilder& b, const GradArgs& a);
Status GradLog(GradBuilder& b, const GradArgs& a);
Status GradSqrt(GradBuilder& b, const GradArgs& a);
Status GradNeg(GradBuilder& b, const GradArgs& a);
Status GradAbs(GradBuilder& b, const GradArgs& a);
Status GradReciprocal(GradBuilder& b, const GradArgs& a);
Status GradErf(GradBuilder& b, const GradArgs& a);
Status GradSin(GradBuilder& b, const GradArgs& a);
Status GradCos(GradBuilder& b, const GradArgs& a);
Status GradSoftplus(GradBuilder& b, const GradArgs& a);
Status GradElu(GradBuilder& b, const GradArgs& a);
Status GradGelu(GradBuilder& b, const GradArgs& a);
Status GradHardSigmoid(GradBuilder& b, const GradArgs& a);
Status GradClip(GradBuilder& b, const GradArgs& a);
// Floor, Ceil, Round, Sign: zero almost everywhere.
Status GradZero(GradBuilder& b, const GradArgs& a);

}  // namespace oc::ew

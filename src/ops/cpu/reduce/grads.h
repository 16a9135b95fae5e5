// Gradient rules of the reductions and softmaxes (ops/grad.h), named by their OpDefs.
#pragma once

#include "ops/grad.h"

namespace oc::reduce {

Status GradReduceSum(GradBuilder& b, const GradArgs& a);
Status GradReduceMean(GradBuilder& b, const GradArgs& a);
// ReduceMax / ReduceMin: to the elements equal to the result (ties: each).
Status GradReduceMaxMin(GradBuilder& b, const GradArgs& a);
Status GradReduceSumSquare(GradBuilder& b, const GradArgs& a);
Status GradReduceL2(GradBuilder& b, const GradArgs& a);
Status GradReduceLogSumExp(GradBuilder& b, const GradArgs& a);
Status GradSoftmax(GradBuilder& b, const GradArgs& a);
Status GradLogSoftmax(GradBuilder& b, const GradArgs& a);

}  // namespace oc::reduce

namespace oc::reduce {

// SoftmaxCrossEntropyLoss (through the loss and the log-probabilities output)
// and NegativeLogLikelihoodLoss, with class weights, ignore_index and every
// reduction; the targets carry no gradient.
Status GradSoftmaxCrossEntropyLoss(GradBuilder& b, const GradArgs& a);
Status GradNegativeLogLikelihoodLoss(GradBuilder& b, const GradArgs& a);

}  // namespace oc::reduce

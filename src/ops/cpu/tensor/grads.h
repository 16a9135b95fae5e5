// Gradient rules of the shape and data-movement ops (ops/grad.h), named by their OpDefs.
#pragma once

#include "ops/grad.h"

namespace oc::tensor {

// Reshape, Flatten, Squeeze, Unsqueeze, Identity: the gradient reshaped back.
Status GradReshapeLike(GradBuilder& b, const GradArgs& a);
Status GradTranspose(GradBuilder& b, const GradArgs& a);
Status GradConcat(GradBuilder& b, const GradArgs& a);
Status GradSplit(GradBuilder& b, const GradArgs& a);
Status GradExpand(GradBuilder& b, const GradArgs& a);
// Gather: the gradient added into the gathered rows (repeated indices add up).
Status GradGather(GradBuilder& b, const GradArgs& a);
// Slice with steps of 1: the gradient padded back with zeros.
Status GradSlice(GradBuilder& b, const GradArgs& a);
// Dropout: identity in inference mode; with training_mode, through its mask.
Status GradDropout(GradBuilder& b, const GradArgs& a);

}  // namespace oc::tensor

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

}  // namespace oc::tensor

// Gradient rules of the normalisations (ops/grad.h), named by their OpDefs.
#pragma once

#include "ops/grad.h"

namespace oc::norm {

// Inference form (running statistics: an affine map per channel) and, from
// opset 14 with training_mode=1, the batch-statistics form.
Status GradBatchNorm(GradBuilder& b, const GradArgs& a);
Status GradLayerNorm(GradBuilder& b, const GradArgs& a);
Status GradRmsNorm(GradBuilder& b, const GradArgs& a);

}  // namespace oc::norm

// Gradient rules of the pools (ops/grad.h), named by their OpDefs.
#pragma once

#include "ops/grad.h"

namespace oc::pool {

Status GradMaxPool(GradBuilder& b, const GradArgs& a);
Status GradAveragePool(GradBuilder& b, const GradArgs& a);
Status GradGlobalAveragePool(GradBuilder& b, const GradArgs& a);
Status GradGlobalMaxPool(GradBuilder& b, const GradArgs& a);

}  // namespace oc::pool

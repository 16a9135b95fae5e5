// Gradient rules of the convolutions (ops/grad.h), named by their OpDefs.
#pragma once

#include <vector>

#include "ops/grad.h"

namespace oc::conv {

Status GradConv(GradBuilder& b, const GradArgs& a);
Status GradConvTranspose(GradBuilder& b, const GradArgs& a);

// The begin and end pads of a Conv/pool node over its spatial dims (from
// `pads` or `auto_pad`), for static input dims `in` and kernel dims `k`.
Expected<std::vector<int64_t>> EffectivePads(const Node& n, const std::vector<int64_t>& in,
                                             const std::vector<int64_t>& k);

}  // namespace oc::conv

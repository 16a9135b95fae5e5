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

// The ConvTranspose output_padding that maps an output of extent `out` back to
// `in` for a window of `k` taps (strides, dilations, begin/end pads as given).
std::vector<int64_t> OutputPadding(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                   const std::vector<int64_t>& k, const std::vector<int64_t>& strides,
                                   const std::vector<int64_t>& dil, const std::vector<int64_t>& pads);

}  // namespace oc::conv

// The three atc jobs: compile (--mode=0), .om to JSON (--mode=1) and .om
// summary (--mode=6). Each returns the coded error to print, or nothing.
#pragma once

#include <optional>

#include "atc_flags.h"

namespace oc::atc {

std::optional<AtcError> RunCompile(const AtcFlags& flags);
std::optional<AtcError> RunOmToJson(const AtcFlags& flags);
std::optional<AtcError> RunOmSummary(const AtcFlags& flags);
// --singleop: one .om per listed operator in the --output directory (atc_singleop.cc).
std::optional<AtcError> RunSingleOp(const AtcFlags& flags);

}  // namespace oc::atc

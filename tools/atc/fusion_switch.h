// atc --fusion_switch_file: which optimisation passes to switch off.
//
// Two spellings are read, as ATC users write them:
//   JSON  {"Switch": {"GraphFusion": {"fuse-attention": "off", "ALL": "off"},
//                     "UBFusion": {...}}}
//   text  one "name:on|off" per line; blank lines and '#' comments skipped.
// Names are this compiler's pass names (atc --help lists them; "ALL" means all
// of them). "ALL" applies first, so "ALL": "off" with "nchwc-layout": "on"
// keeps only the layout pass. Fusion names of Huawei's compiler that have no
// counterpart here are reported back (atc warns) and otherwise ignored: we run
// no such fusion, so switching it off changes nothing, and asking for it
// cannot make us run it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "atc_flags.h"

namespace oc::atc {

struct FusionSwitch {
  std::vector<std::string> disabled;  // pass names to skip, pipeline order
  std::vector<std::string> ignored;   // names that are not passes of ours
};

// Parses the file's contents (`path` is only for messages).
std::optional<AtcError> ParseFusionSwitch(const std::string& path, const std::string& text, FusionSwitch* out);

// Reads and parses the file.
std::optional<AtcError> LoadFusionSwitch(const std::string& path, FusionSwitch* out);

}  // namespace oc::atc

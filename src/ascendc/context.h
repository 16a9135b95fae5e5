// Internal to libascendc.so: chip profiles, the fault a failed check throws,
// and helpers shared by the launcher and the context.
#pragma once

#include <string>
#include <vector>

#include "kernel_operator.h"

namespace AscendC::ocimpl {

struct SocProfile {
  const char* name;
  uint32_t bytes[kMemKinds];  // capacity of each on-chip memory
};
// Chosen once per process by OPENCANN_ASCENDC_SOC (default Ascend910B).
const SocProfile& ActiveProfile();

// Thrown by Fail inside a kernel; caught at the block boundary by the launcher.
struct KernelFault {
  std::string message;
};

// "x, y, (uint8_t*)z" -> {"x", "y", "(uint8_t*)z"}.
std::vector<std::string> SplitArgNames(const char* names);

}  // namespace AscendC::ocimpl

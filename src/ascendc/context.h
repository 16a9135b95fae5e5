// Internal to libascendc.so: chip profiles, the fault a failed check throws,
// and helpers shared by the launcher and the context.
#pragma once

#include <functional>
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

// Runs `launch` with every kernel launch it makes run at once on this thread
// (its blocks on the thread pool) instead of queueing on a stream: a model's
// AscendCustom node inside the model's own stream task. False, with *error
// set, when a block stopped or the launch was refused.
bool RunLaunchesInline(const std::function<uint32_t()>& launch, std::string* error);

// "x, y, (uint8_t*)z" -> {"x", "y", "(uint8_t*)z"}.
std::vector<std::string> SplitArgNames(const char* names);

}  // namespace AscendC::ocimpl

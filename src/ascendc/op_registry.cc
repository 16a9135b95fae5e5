// The custom operators OP_ADD registered in this process, and what
// platform_ascendc tells a tiling function about the chip.
#include <cstdlib>
#include <cstring>
#include <thread>

#include "ascendc/context.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace ops {

std::map<std::string, std::unique_ptr<OpDef>>& OcOpRegistry() {
  static auto* r = new std::map<std::string, std::unique_ptr<OpDef>>();
  return *r;
}

}  // namespace ops

namespace platform_ascendc {

uint32_t PlatformAscendC::GetCoreNumAiv() const {
  // The blocks of a launch run on the process's thread pool: its size.
  if (const char* env = std::getenv("OPENCANN_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return static_cast<uint32_t>(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

uint32_t PlatformAscendC::GetCoreNumAic() const { return GetCoreNumAiv(); }

void PlatformAscendC::GetCoreMemSize(CoreMemType type, uint64_t& size) const {
  const auto& p = AscendC::ocimpl::ActiveProfile();
  using AscendC::ocimpl::MemKind;
  switch (type) {
    case CoreMemType::UB: size = p.bytes[AscendC::ocimpl::kUB]; break;
    case CoreMemType::L1: size = p.bytes[AscendC::ocimpl::kL1]; break;
    case CoreMemType::L0_A: size = p.bytes[AscendC::ocimpl::kL0A]; break;
    case CoreMemType::L0_B: size = p.bytes[AscendC::ocimpl::kL0B]; break;
    case CoreMemType::L0_C: size = p.bytes[AscendC::ocimpl::kL0C]; break;
    default: size = 0;
  }
}

SocVersion PlatformAscendC::GetSocVersion() const {
  const char* n = AscendC::ocimpl::ActiveProfile().name;
  if (std::strcmp(n, "Ascend910B") == 0) return SocVersion::ASCEND910B;
  if (std::strcmp(n, "Ascend310P") == 0) return SocVersion::ASCEND310P;
  return SocVersion::ASCEND910;
}

}  // namespace platform_ascendc

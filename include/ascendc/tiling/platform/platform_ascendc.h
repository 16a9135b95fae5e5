/* OpenCANN: what a tiling function may ask of the chip (namespace
 * platform_ascendc): core counts and on-chip memory sizes of the profile the
 * kernels run with (OPENCANN_ASCENDC_SOC; docs/ascendc.md). */
#ifndef OPENCANN_ASCENDC_TILING_PLATFORM_ASCENDC_H_
#define OPENCANN_ASCENDC_TILING_PLATFORM_ASCENDC_H_

#include <cstdint>

namespace fe {
class PlatFormInfos {};
}  // namespace fe

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };
enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND310P, ASCEND310B, RESERVED_VERSION = 99999 };

class PlatformAscendC {
 public:
  PlatformAscendC() = default;
  explicit PlatformAscendC(fe::PlatFormInfos*) {}
  /* The vector cores: the threads kernels run on. */
  uint32_t GetCoreNumAiv() const;
  uint32_t GetCoreNumAic() const;
  uint32_t GetCoreNum() const { return GetCoreNumAiv(); }
  void GetCoreMemSize(CoreMemType type, uint64_t& size) const;
  SocVersion GetSocVersion() const;
  uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
    (void)aicCoreNum, (void)aivCoreNum;
    return sliceNum;
  }
  uint32_t GetLibApiWorkSpaceSize() const { return 16u << 20; }
};

}  // namespace platform_ascendc

#endif  // OPENCANN_ASCENDC_TILING_PLATFORM_ASCENDC_H_

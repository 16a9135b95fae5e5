/* TCubeTiling: the tiling of one Matmul (the cube unit), as the host computes it
 * (matmul_tiling::MultiCoreMatmulTiling::GetTiling, tiling/tiling_api.h) and a
 * kernel reads it from global memory (Matmul::Init, REGIST_MATMUL_OBJ).
 *
 * Every field is a 32-bit integer, so a kernel may copy the structure word by
 * word from global memory as CANN's samples do. The field names follow Huawei's
 * public interface; see docs/ascendc.md for what each one means here. */
#ifndef OPENCANN_ASCENDC_KERNEL_TILING_H_
#define OPENCANN_ASCENDC_KERNEL_TILING_H_

#include <cstdint>

/* X(name) for every field, in layout order. */
#define OPENCANN_TCUBETILING_FIELDS(X)                                                                           \
  X(usedCoreNum) X(M) X(N) X(Ka) X(Kb) X(singleCoreM) X(singleCoreN) X(singleCoreK) X(baseM) X(baseN) X(baseK) \
  X(depthA1) X(depthB1) X(stepM) X(stepN) X(isBias) X(transLength) X(iterateOrder) X(shareMode)               \
  X(shareL1Size) X(shareL0CSize) X(shareUbSize) X(batchM) X(batchN) X(singleBatchM) X(singleBatchN)           \
  X(stepKa) X(stepKb) X(depthAL1CacheUB) X(depthBL1CacheUB) X(dbL0A) X(dbL0B) X(dbL0C) X(ALayoutInfoB)        \
  X(ALayoutInfoS) X(ALayoutInfoN) X(ALayoutInfoG) X(ALayoutInfoD) X(BLayoutInfoB) X(BLayoutInfoS)             \
  X(BLayoutInfoN) X(BLayoutInfoG) X(BLayoutInfoD) X(CLayoutInfoB) X(CLayoutInfoS1) X(CLayoutInfoN)            \
  X(CLayoutInfoG) X(CLayoutInfoS2) X(BatchNum) X(reserved)

struct TCubeTiling {
#define OPENCANN_TCUBETILING_DECLARE(name) int32_t name = 0;
  OPENCANN_TCUBETILING_FIELDS(OPENCANN_TCUBETILING_DECLARE)
#undef OPENCANN_TCUBETILING_DECLARE
};

#endif  // OPENCANN_ASCENDC_KERNEL_TILING_H_

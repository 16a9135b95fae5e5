/* C = A * B + bias on the cube unit through the Matmul high-level API, written
 * as CANN's Matmul sample is: the host computes a TCubeTiling with
 * MultiCoreMatmulTiling and copies it to global memory; each block copies it
 * in, offsets the global tensors to its singleCoreM x singleCoreN tile of C,
 * registers the Matmul object and computes the tile with IterateAll.
 * matmul_custom: half A, B -> float C (float bias); matmul_custom_float and
 * matmul_custom_bf16: the same for float and bfloat16_t inputs. */
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace matmul;

__aicore__ inline uint32_t Ceiling(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* The tiling, word by word, from global memory. */
__aicore__ inline void CopyTiling(TCubeTiling* tiling, GM_ADDR tilingGM) {
  uint32_t* ptr = reinterpret_cast<uint32_t*>(tiling);
  auto tiling32 = reinterpret_cast<__gm__ uint32_t*>(tilingGM);
  for (uint32_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); i++, ptr++) *ptr = *(tiling32 + i);
}

template <typename AType, typename BType, typename CType, typename BiasType>
class MatmulKernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                              const TCubeTiling& tilingIn) {
    (void)workspace;
    tiling = tilingIn;
    aGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ AType*>(a), uint64_t(tiling.M) * tiling.Ka);
    bGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ BType*>(b), uint64_t(tiling.Ka) * tiling.N);
    cGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ CType*>(c), uint64_t(tiling.M) * tiling.N);
    if (tiling.isBias) biasGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ BiasType*>(bias), tiling.N);
    int32_t offsetA = 0, offsetB = 0, offsetC = 0, offsetBias = 0;
    CalcOffset(AscendC::GetBlockIdx(), offsetA, offsetB, offsetC, offsetBias);
    aGlobal = aGlobal[offsetA];
    bGlobal = bGlobal[offsetB];
    cGlobal = cGlobal[offsetC];
    if (tiling.isBias) biasGlobal = biasGlobal[offsetBias];
  }
  __aicore__ inline void Process(AscendC::TPipe* pipe) {
    (void)pipe;
    matmulObj.SetTensorA(aGlobal);
    matmulObj.SetTensorB(bGlobal);
    if (tiling.isBias) matmulObj.SetBias(biasGlobal);
    if (tailM < tiling.singleCoreM || tailN < tiling.singleCoreN) matmulObj.SetTail(tailM, tailN);
    matmulObj.IterateAll(cGlobal);
    matmulObj.End();
  }

  Matmul<MatmulType<AscendC::TPosition::GM, CubeFormat::ND, AType>,
         MatmulType<AscendC::TPosition::GM, CubeFormat::ND, BType>,
         MatmulType<AscendC::TPosition::GM, CubeFormat::ND, CType>,
         MatmulType<AscendC::TPosition::GM, CubeFormat::ND, BiasType>>
      matmulObj;
  TCubeTiling tiling;

 private:
  /* Block i takes tile (i % mBlocks, i / mBlocks) of the mBlocks x nBlocks grid. */
  __aicore__ inline void CalcOffset(int32_t blockIdx, int32_t& offsetA, int32_t& offsetB, int32_t& offsetC,
                                    int32_t& offsetBias) {
    uint32_t mBlocks = Ceiling(tiling.M, tiling.singleCoreM);
    uint32_t mIdx = blockIdx % mBlocks, nIdx = blockIdx / mBlocks;
    offsetA = mIdx * tiling.Ka * tiling.singleCoreM;
    offsetB = nIdx * tiling.singleCoreN;
    offsetC = mIdx * tiling.N * tiling.singleCoreM + nIdx * tiling.singleCoreN;
    offsetBias = nIdx * tiling.singleCoreN;
    tailM = tiling.M - mIdx * tiling.singleCoreM;
    tailM = tailM < tiling.singleCoreM ? tailM : tiling.singleCoreM;
    tailN = tiling.N - nIdx * tiling.singleCoreN;
    tailN = tailN < tiling.singleCoreN ? tailN : tiling.singleCoreN;
  }

  AscendC::GlobalTensor<AType> aGlobal;
  AscendC::GlobalTensor<BType> bGlobal;
  AscendC::GlobalTensor<CType> cGlobal;
  AscendC::GlobalTensor<BiasType> biasGlobal;
  int32_t tailM = 0, tailN = 0;
};

template <typename AType>
__aicore__ inline void RunMatmul(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                                 GM_ADDR tilingGm) {
  TCubeTiling tiling;
  CopyTiling(&tiling, tilingGm);
  if (AscendC::GetBlockIdx() >= tiling.usedCoreNum) return;  // more blocks launched than the tiling uses
  AscendC::TPipe pipe;
  MatmulKernel<AType, AType, float, float> kernel;
  kernel.Init(a, b, bias, c, workspace, tiling);
  REGIST_MATMUL_OBJ(&pipe, AscendC::GetSysWorkSpacePtr(), kernel.matmulObj, &kernel.tiling);
  kernel.Process(&pipe);
}

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                    GM_ADDR workspace, GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
  RunMatmul<half>(a, b, bias, c, workspace, tiling);
}

extern "C" __global__ __aicore__ void matmul_custom_float(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                          GM_ADDR workspace, GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
  RunMatmul<float>(a, b, bias, c, workspace, tiling);
}

extern "C" __global__ __aicore__ void matmul_custom_bf16(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                         GM_ADDR workspace, GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
  RunMatmul<bfloat16_t>(a, b, bias, c, workspace, tiling);
}

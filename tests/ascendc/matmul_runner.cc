// Test driver of the Matmul high-level API (tests/python/test_ascendc_matmul.py):
// the host computes a tiling with MultiCoreMatmulTiling (fields may then be
// overridden, to provoke the checks), and the kernel computes each block's
// tile with IterateAll, or piece by piece with Iterate + GetTensorC into
// global memory or through a local tensor.
//   matmul_runner DTYPE CDTYPE M N K key=value... a.bin b.bin bias.bin c.bin
// keys: transA transB bias blockDim mode (all|iterate|seq|local) atomic, and
// aElems (A's GlobalTensor size), nzA (A in CubeFormat::NZ: the host tiling refuses it), any TCubeTiling field (baseM=512 ...). c.bin is read (for atomic) and written.
#include <cstring>
#include <string>
#include <vector>

#include "../../samples/ascendc/common/data_utils.h"
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/tiling_api.h"

using namespace AscendC;

struct RunParams {
  int32_t transA, transB, mode, atomic;
  int32_t aElems;  // the size A's GlobalTensor is given (0: M x K)
};
enum { kAll = 0, kIterate, kSeq, kLocal };

template <typename T, typename C>
__aicore__ inline void MatmulTest(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tilingGm,
                                  GM_ADDR paramsGm) {
  TCubeTiling tiling = *reinterpret_cast<__gm__ TCubeTiling*>(tilingGm);
  RunParams p = *reinterpret_cast<__gm__ RunParams*>(paramsGm);
  if (GetBlockIdx() >= tiling.usedCoreNum) return;
  TPipe pipe;
  Matmul<MatmulType<TPosition::GM, CubeFormat::ND, T, true>, MatmulType<TPosition::GM, CubeFormat::ND, T, true>,
         MatmulType<TPosition::GM, CubeFormat::ND, C>, MatmulType<TPosition::GM, CubeFormat::ND, float>>
      mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
  const int32_t M = tiling.M, N = tiling.N, K = tiling.Ka;
  GlobalTensor<T> aG, bG;
  GlobalTensor<C> cG;
  GlobalTensor<float> biasG;
  aG.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a), p.aElems ? uint64_t(p.aElems) : uint64_t(M) * K);
  bG.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b), uint64_t(K) * N);
  cG.SetGlobalBuffer(reinterpret_cast<__gm__ C*>(c), uint64_t(M) * N);
  const int32_t mBlocks = (M + tiling.singleCoreM - 1) / tiling.singleCoreM;
  const int32_t mIdx = GetBlockIdx() % mBlocks, nIdx = GetBlockIdx() / mBlocks;
  const int32_t m0 = mIdx * tiling.singleCoreM, n0 = nIdx * tiling.singleCoreN;
  // A is M x K (K x M transposed), B is K x N (N x K transposed).
  mm.SetTensorA(aG[p.transA ? m0 : uint64_t(m0) * K], p.transA);
  mm.SetTensorB(bG[p.transB ? uint64_t(n0) * K : n0], p.transB);
  if (tiling.isBias) {
    biasG.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), N);
    mm.SetBias(biasG[n0]);
  }
  const int32_t tailM = M - m0 < tiling.singleCoreM ? M - m0 : tiling.singleCoreM;
  const int32_t tailN = N - n0 < tiling.singleCoreN ? N - n0 : tiling.singleCoreN;
  mm.SetTail(tailM, tailN);
  GlobalTensor<C> cBlock = cG[uint64_t(m0) * N + n0];
  if (p.mode == kAll) {
    mm.IterateAll(cBlock, p.atomic);
  } else if (p.mode == kIterate) {
    while (mm.Iterate()) mm.GetTensorC(cBlock, p.atomic);
  } else {
    // kSeq: pieces packed (rows of baseN) into a scratch area of global memory,
    // then copied to their place; kLocal: through a VECOUT tensor.
    const int32_t bm = tiling.baseM, bn = tiling.baseN;
    const int32_t mIters = (tailM + bm - 1) / bm, nIters = (tailN + bn - 1) / bn;
    TQue<TPosition::VECOUT, 1> outQ;
    if (p.mode == kLocal) pipe.InitBuffer(outQ, 1, bm * bn * sizeof(C));
    std::vector<C> seq(size_t(bm) * bn);
    GlobalTensor<C> seqG;
    seqG.SetGlobalBuffer(seq.data(), seq.size());
    for (int32_t it = 0; mm.Iterate(); ++it) {
      const int32_t pm = tiling.iterateOrder == 1 ? it / nIters : it % mIters;
      const int32_t pn = tiling.iterateOrder == 1 ? it % nIters : it / mIters;
      const int32_t rows = tailM - pm * bm < bm ? tailM - pm * bm : bm;
      const int32_t cols = tailN - pn * bn < bn ? tailN - pn * bn : bn;
      const C* src = nullptr;
      LocalTensor<C> local;
      if (p.mode == kLocal) {
        local = outQ.AllocTensor<C>();
        mm.GetTensorC(local);
        src = local.GetPhyAddr();
      } else {
        mm.GetTensorC(seqG, 0, true);
        src = seq.data();
      }
      for (int32_t i = 0; i < rows; ++i)
        for (int32_t j = 0; j < cols; ++j) cBlock.SetValue(uint64_t(pm * bm + i) * N + pn * bn + j, src[i * bn + j]);
      if (p.mode == kLocal) outQ.FreeTensor(local);
    }
  }
  mm.End();
}

extern "C" __global__ __aicore__ void mm_half_float(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling,
                                              GM_ADDR params) {
  MatmulTest<half, float>(a, b, bias, c, tiling, params);
}
extern "C" __global__ __aicore__ void mm_float_float(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling,
                                              GM_ADDR params) {
  MatmulTest<float, float>(a, b, bias, c, tiling, params);
}
extern "C" __global__ __aicore__ void mm_bf16_float(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling,
                                              GM_ADDR params) {
  MatmulTest<bfloat16_t, float>(a, b, bias, c, tiling, params);
}
extern "C" __global__ __aicore__ void mm_half_half(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tiling,
                                              GM_ADDR params) {
  MatmulTest<half, half>(a, b, bias, c, tiling, params);
}

int main(int argc, char** argv) {
  if (argc < 10) {
    std::fprintf(stderr, "usage: matmul_runner DTYPE CDTYPE M N K key=value... a.bin b.bin bias.bin c.bin\n");
    return 2;
  }
  std::string dtype = argv[1], cdtype = argv[2];
  int32_t M = std::atoi(argv[3]), N = std::atoi(argv[4]), K = std::atoi(argv[5]);
  const char* files[4] = {argv[argc - 4], argv[argc - 3], argv[argc - 2], argv[argc - 1]};
  RunParams params{0, 0, kAll, 0, 0};
  int32_t blockDim = 1;
  bool bias = false, nzA = false;
  std::vector<std::pair<std::string, int32_t>> overrides;
  for (int i = 6; i < argc - 4; ++i) {
    std::string kv = argv[i];
    size_t eq = kv.find('=');
    std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "transA") params.transA = std::stoi(v);
    else if (k == "transB") params.transB = std::stoi(v);
    else if (k == "bias") bias = std::stoi(v) != 0;
    else if (k == "blockDim") blockDim = std::stoi(v);
    else if (k == "atomic") params.atomic = std::stoi(v);
    else if (k == "nzA") nzA = std::stoi(v) != 0;
    else if (k == "aElems") params.aElems = std::stoi(v);
    else if (k == "mode") params.mode = v == "all" ? kAll : v == "iterate" ? kIterate : v == "seq" ? kSeq : kLocal;
    else overrides.emplace_back(k, std::stoi(v));
  }
  using matmul_tiling::CubeFormat;
  using matmul_tiling::DataType;
  using matmul_tiling::TPosition;
  DataType in = dtype == "half" ? DataType::DT_FLOAT16 : dtype == "bf16" ? DataType::DT_BF16 : DataType::DT_FLOAT;
  DataType out = cdtype == "half" ? DataType::DT_FLOAT16 : DataType::DT_FLOAT;
  matmul_tiling::MultiCoreMatmulTiling api;
  api.SetDim(blockDim);
  api.SetAType(TPosition::GM, nzA ? CubeFormat::NZ : CubeFormat::ND, in, params.transA);
  api.SetBType(TPosition::GM, CubeFormat::ND, in, params.transB);
  api.SetCType(TPosition::GM, CubeFormat::ND, out);
  api.SetBiasType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
  api.SetShape(M, N, K);
  api.SetOrgShape(M, N, K);
  api.SetBias(bias);
  api.SetBufferSpace(-1, -1, -1);
  TCubeTiling tiling;
  if (api.GetTiling(tiling) != 0) return 3;
  for (auto& [k, v] : overrides) {
    bool found = false;
#define OVERRIDE_FIELD(name) \
  if (k == #name) tiling.name = v, found = true;
    OPENCANN_TCUBETILING_FIELDS(OVERRIDE_FIELD)
#undef OVERRIDE_FIELD
    if (!found) {
      std::fprintf(stderr, "unknown key %s\n", k.c_str());
      return 2;
    }
  }
  std::printf("tiling: usedCoreNum %d singleCore %d x %d x %d base %d x %d x %d depth %d/%d step %d/%d\n",
              tiling.usedCoreNum, tiling.singleCoreM, tiling.singleCoreN, tiling.singleCoreK, tiling.baseM,
              tiling.baseN, tiling.baseK, tiling.depthA1, tiling.depthB1, tiling.stepKa, tiling.stepKb);
  size_t ib = dtype == "float" ? 4 : 2, cb = cdtype == "half" ? 2 : 4;
  size_t sizes[4] = {size_t(M) * K * ib, size_t(K) * N * ib, size_t(N) * 4, size_t(M) * N * cb};
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  void* dev[6];
  std::vector<std::vector<uint8_t>> host(4);
  for (int i = 0; i < 4; ++i) {
    host[i].resize(sizes[i]);
    if ((i != 2 || bias) && !ReadFile(files[i], host[i].data(), sizes[i])) return 1;
    CHECK_ACL(aclrtMalloc(&dev[i], sizes[i], ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(dev[i], sizes[i], host[i].data(), sizes[i], ACL_MEMCPY_HOST_TO_DEVICE));
  }
  CHECK_ACL(aclrtMalloc(&dev[4], sizeof tiling, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMemcpy(dev[4], sizeof tiling, &tiling, sizeof tiling, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMalloc(&dev[5], sizeof params, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMemcpy(dev[5], sizeof params, &params, sizeof params, ACL_MEMCPY_HOST_TO_DEVICE));
  std::string kernel = dtype + "_" + cdtype;
  uint32_t rc;
  if (kernel == "half_float") rc = mm_half_float<<<blockDim, nullptr, stream>>>((GM_ADDR)dev[0], (GM_ADDR)dev[1], (GM_ADDR)dev[2], (GM_ADDR)dev[3], (GM_ADDR)dev[4], (GM_ADDR)dev[5]);
  else if (kernel == "float_float") rc = mm_float_float<<<blockDim, nullptr, stream>>>((GM_ADDR)dev[0], (GM_ADDR)dev[1], (GM_ADDR)dev[2], (GM_ADDR)dev[3], (GM_ADDR)dev[4], (GM_ADDR)dev[5]);
  else if (kernel == "bf16_float") rc = mm_bf16_float<<<blockDim, nullptr, stream>>>((GM_ADDR)dev[0], (GM_ADDR)dev[1], (GM_ADDR)dev[2], (GM_ADDR)dev[3], (GM_ADDR)dev[4], (GM_ADDR)dev[5]);
  else if (kernel == "half_half") rc = mm_half_half<<<blockDim, nullptr, stream>>>((GM_ADDR)dev[0], (GM_ADDR)dev[1], (GM_ADDR)dev[2], (GM_ADDR)dev[3], (GM_ADDR)dev[4], (GM_ADDR)dev[5]);
  else {
    std::fprintf(stderr, "no kernel for %s\n", kernel.c_str());
    return 2;
  }
  CHECK_ACL(rc);
  CHECK_ACL(aclrtSynchronizeStream(stream));
  CHECK_ACL(aclrtMemcpy(host[3].data(), sizes[3], dev[3], sizes[3], ACL_MEMCPY_DEVICE_TO_HOST));
  WriteFile(files[3], host[3].data(), sizes[3]);
  for (void* d : dev) CHECK_ACL(aclrtFree(d));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
  return 0;
}

/* The Matmul high-level API (the cube unit): C = A * B (+ bias) per block, tiled
 * by a TCubeTiling the host computed (tiling/tiling_api.h).
 *
 * On the NPU the cube unit multiplies baseM x baseK by baseK x baseN fractals
 * out of L0A / L0B into L0C, fed from L1. Here a block's product runs on
 * OpenCANN's CPU GEMM (the one the operators use), on the block's thread:
 * IterateAll computes the whole singleCoreM x singleCoreN tile in one call,
 * Iterate one baseM x baseN piece at a time. The tiling is checked as the NPU
 * would need it: the base sizes against L0A, L0B and L0C of the chip profile,
 * the steps and depths against L1; the global tensors against their sizes in
 * checking mode. Names and signatures follow Huawei's public interface. */
#ifndef OPENCANN_ASCENDC_MATMUL_H_
#define OPENCANN_ASCENDC_MATMUL_H_

#include "ascendc_cpu/pipe.h"
#include "ascendc_cpu/tensor.h"
#include "kernel_tiling/kernel_tiling.h"

#include <vector>

namespace AscendC {

enum class CubeFormat : uint8_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class LayoutMode : uint8_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
enum class IterateOrder : int32_t { ORDER_M = 0, ORDER_N, UNDEF };

/* Where an operand lives, its layout and element type. ISTRANS says the
 * operand may be transposed (SetTensorA/B's flag says whether it is). */
template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
  constexpr static TPosition pos = POSITION;
  constexpr static CubeFormat format = FORMAT;
  using T = TYPE;
  constexpr static bool isTrans = ISTRANS;
  constexpr static LayoutMode layout = LAYOUT;
  constexpr static bool ibShare = IBSHARE;
};

/* The scheduling template of a Matmul; every configuration computes the same
 * product here, so the fields are kept for the source's sake only. */
struct MatmulConfig {
  bool doNorm = true;
  bool doBasicBlock = false;
  bool doMultiDataLoad = false;
  uint32_t basicM = 0, basicN = 0, basicK = 0;
  bool intrinsicsCheck = false;
  bool isNBatch = false;
  bool enVecND2NZ = false;
  bool doSpecialBasicBlock = false;
  uint32_t doMTE2Preload = 0;
  uint32_t singleCoreM = 0, singleCoreN = 0, singleCoreK = 0;
  uint32_t stepM = 0, stepN = 0, baseMN = 0, singleCoreMN = 0;
  bool enUnitFlag = true;
  bool isPerTensor = false, hasAntiQuantOffset = false;
  bool doIBShareNorm = false, doSpecialMDL = false;
  bool enableInit = true;
  bool enableUBReuse = false, enableL1CacheUB = false;
};
constexpr MatmulConfig GetNormalConfig() { return MatmulConfig{}; }
constexpr MatmulConfig GetMDLConfig() {
  MatmulConfig c{};
  c.doNorm = false;
  c.doMultiDataLoad = true;
  return c;
}
inline constexpr MatmulConfig CFG_NORM = GetNormalConfig();
inline constexpr MatmulConfig CFG_MDL = GetMDLConfig();
inline constexpr MatmulConfig CFG_IBSHARE_NORM = GetNormalConfig();

template <void (*DataCopyOut)(const __gm__ void*, const uint32_t[], uint64_t, uint64_t, uint64_t) = nullptr,
          void (*CopyA1)(const void*, const __gm__ void*, int, int, int, int, uint64_t, uint64_t) = nullptr,
          void (*CopyB1)(const void*, const __gm__ void*, int, int, int, int, uint64_t, uint64_t) = nullptr>
struct MatmulCallBackFunc {};

namespace ocimpl {

/* Element types the cube unit takes here. */
enum MmType : int { kMmFloat = 0, kMmHalf, kMmBf16 };
template <typename T> struct MmTypeOf { static constexpr int value = -1; };
template <> struct MmTypeOf<float> { static constexpr int value = kMmFloat; };
template <> struct MmTypeOf<half> { static constexpr int value = kMmHalf; };
template <> struct MmTypeOf<bfloat16_t> { static constexpr int value = kMmBf16; };

/* One product on the block's thread: C(m x n) op= op(A)(m x k) * op(B)(k x n)
 * (+ bias[0..n)), row-major with the given leading dimensions; op is store
 * (atomic 0), add (1), max (2) or min (3). A and B share one element type. */
struct MatmulCall {
  int ab_type = kMmFloat, c_type = kMmFloat, bias_type = kMmFloat;
  const void* a = nullptr;
  int64_t lda = 0;
  bool trans_a = false;  // A is stored k x m
  const void* b = nullptr;
  int64_t ldb = 0;
  bool trans_b = false;  // B is stored n x k
  const void* bias = nullptr;
  void* c = nullptr;
  int64_t ldc = 0;
  int64_t m = 0, n = 0, k = 0;
  int atomic = 0;
};
void MatmulRun(const MatmulCall& call);

/* Checks a tiling against the running block's chip profile (L0A, L0B, L0C,
 * L1) and for self-consistency; Fail names Matmul, the limit and the profile. */
void MatmulCheckTiling(const TCubeTiling& t, int ab_bytes);

}  // namespace ocimpl

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const MatmulConfig& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<>>
class Matmul {
  using SrcT = typename A_TYPE::T;
  using SrcBT = typename B_TYPE::T;
  using DstT = typename C_TYPE::T;
  using BiasT = typename BIAS_TYPE::T;
  static_assert(A_TYPE::format == CubeFormat::ND && B_TYPE::format == CubeFormat::ND &&
                    C_TYPE::format == CubeFormat::ND && BIAS_TYPE::format == CubeFormat::ND,
                "OpenCANN's Matmul takes CubeFormat::ND operands only: the NZ/ZN fractal layouts are not "
                "supported yet (docs/ascendc.md)");
  static_assert(A_TYPE::pos == TPosition::GM && B_TYPE::pos == TPosition::GM && BIAS_TYPE::pos == TPosition::GM,
                "OpenCANN's Matmul reads A, B and the bias from global memory (TPosition::GM) only: "
                "VECOUT/TSCM inputs are not supported yet (docs/ascendc.md)");
  static_assert(std::is_same_v<SrcT, SrcBT>, "Matmul: A and B must have the same element type");
  static_assert(ocimpl::MmTypeOf<SrcT>::value >= 0,
                "OpenCANN's Matmul multiplies half, bfloat16_t or float (int8/int4 are not supported yet)");
  static_assert(ocimpl::MmTypeOf<DstT>::value >= 0, "Matmul: C must be float, half or bfloat16_t");
  static_assert(ocimpl::MmTypeOf<BiasT>::value >= 0, "Matmul: the bias must be float, half or bfloat16_t");

 public:
  Matmul() = default;

  /* Takes the tiling (copied) and checks it against the chip. `tpipe` is the
   * kernel's pipe; the CPU product needs none of its buffers. */
  void Init(const TCubeTiling* cubeTiling, TPipe* tpipe = nullptr) {
    (void)tpipe;
    if (!cubeTiling) ocimpl::Fail("Matmul::Init", "the TCubeTiling pointer is null");
    tiling_ = *cubeTiling;
    ocimpl::MatmulCheckTiling(tiling_, sizeof(SrcT));
    inited_ = true;
    orgM_ = tiling_.M, orgN_ = tiling_.N, orgKa_ = tiling_.Ka, orgKb_ = tiling_.Kb, orgKc_ = 0;
    singleM_ = tiling_.singleCoreM, singleN_ = tiling_.singleCoreN, singleK_ = tiling_.singleCoreK;
    hasBias_ = false;
    ResetIteration();
  }
  void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
  void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
    if (orgM <= 0 || orgN <= 0 || orgKa <= 0 || orgKb <= 0 || orgKc < 0)
      ocimpl::Fail("Matmul::SetOrgShape", ocimpl::Format("the shape (M %d, N %d, Ka %d, Kb %d, Kc %d) must be "
                                                         "positive", orgM, orgN, orgKa, orgKb, orgKc));
    orgM_ = orgM, orgN_ = orgN, orgKa_ = orgKa, orgKb_ = orgKb, orgKc_ = orgKc;
  }
  void SetSingleShape(int singleM, int singleN, int singleK) {
    if (singleM <= 0 || singleN <= 0 || singleK <= 0)
      ocimpl::Fail("Matmul::SetSingleShape",
                   ocimpl::Format("the shape (%d, %d, %d) must be positive", singleM, singleN, singleK));
    singleM_ = singleM, singleN_ = singleN, singleK_ = singleK;
    ResetIteration();
  }
  /* The shape of a block at the edge of C: values <= 0 keep the current ones. */
  void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
    if (tailM > 0) singleM_ = tailM;
    if (tailN > 0) singleN_ = tailN;
    if (tailK > 0) singleK_ = tailK;
    ResetIteration();
  }
  void SetTensorA(const GlobalTensor<SrcT>& gm, bool isTransposeA = false) {
    a_ = gm;
    transA_ = isTransposeA;
    hasA_ = true;
    ResetIteration();
  }
  void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false) {
    b_ = gm;
    transB_ = isTransposeB;
    hasB_ = true;
    ResetIteration();
  }
  void SetBias(const GlobalTensor<BiasT>& biasGlobal) {
    bias_ = biasGlobal;
    hasBias_ = true;
  }
  void DisableBias() { hasBias_ = false; }
  void ClearBias() { hasBias_ = false; }
  void SetHF32(bool, int32_t = 0) {}
  void SetWorkspace(GM_ADDR, int) {}
  template <class T> void SetWorkspace(GlobalTensor<T>&) {}
  void SetUserDefInfo(uint64_t) {}
  void SetSelfDefineData(uint64_t) {}

  /* The whole singleCoreM x singleCoreN tile of C, at `gm` (leading dimension
   * N of the original shape). enAtomic: 0 store, 1 add, 2 max, 3 min. */
  template <bool sync = true>
  void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                  bool waitIterateAll = false, bool fakeMsg = false) {
    (void)enSequentialWrite, (void)waitIterateAll, (void)fakeMsg;
    const char* api = "Matmul::IterateAll";
    Ready(api);
    CheckAtomic(api, enAtomic);
    ocimpl::MatmulCall call = Call(0, 0, singleM_, singleN_);
    CheckC(api, gm, singleM_, singleN_, Ldc());
    call.c = gm.GetPhyAddr();
    call.ldc = Ldc();
    call.atomic = enAtomic;
    ocimpl::MatmulRun(call);
  }
  template <bool sync = true>
  void WaitIterateAll() {}

  /* Computes the next baseM x baseN piece of the tile (in the tiling's
   * iterateOrder); false once every piece was computed. */
  template <bool sync = true>
  bool Iterate(bool enPartialSum = false) {
    (void)enPartialSum;
    Ready("Matmul::Iterate");
    const int bm = tiling_.baseM, bn = tiling_.baseN;
    const int mIters = (singleM_ + bm - 1) / bm, nIters = (singleN_ + bn - 1) / bn;
    if (iter_ >= mIters * nIters) return false;
    if (tiling_.iterateOrder == 1) curM_ = iter_ / nIters, curN_ = iter_ % nIters;  // ORDER_N: along N first
    else curM_ = iter_ % mIters, curN_ = iter_ / mIters;                            // ORDER_M: along M first
    ++iter_;
    rows_ = std::min(bm, singleM_ - curM_ * bm);
    cols_ = std::min(bn, singleN_ - curN_ * bn);
    if (l0c_.size() < static_cast<size_t>(bm) * bn) l0c_.assign(static_cast<size_t>(bm) * bn, 0.f);
    ocimpl::MatmulCall call = Call(curM_ * bm, curN_ * bn, rows_, cols_);
    call.c_type = ocimpl::kMmFloat;
    call.c = l0c_.data();
    call.ldc = cols_;
    call.atomic = 0;
    ocimpl::MatmulRun(call);
    pending_ = true;
    return true;
  }
  /* The piece Iterate computed, into global memory: at its place in the tile
   * (leading dimension N), or packed at `gm` (rows of baseN) when
   * enSequentialWrite. */
  template <bool sync = true>
  void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
    const char* api = "Matmul::GetTensorC";
    Pending(api);
    CheckAtomic(api, enAtomic);
    int64_t ld = enSequentialWrite ? tiling_.baseN : Ldc();
    int64_t off = enSequentialWrite ? 0 : static_cast<int64_t>(curM_) * tiling_.baseM * ld +
                                              static_cast<int64_t>(curN_) * tiling_.baseN;
    CheckC(api, gm, rows_, cols_, ld, off);
    Store(gm.GetPhyAddr() + off, ld, enAtomic);
  }
  /* The piece into a local tensor (VECIN/VECOUT/TSCM...), rows of baseN elements. */
  template <bool sync = true>
  void GetTensorC(const LocalTensor<DstT>& co2Local, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
    (void)enSequentialWrite;
    const char* api = "Matmul::GetTensorC";
    Pending(api);
    CheckAtomic(api, enAtomic);
    co2Local.Check(api, 0, static_cast<uint64_t>(rows_ - 1) * tiling_.baseN + cols_);
    Store(co2Local.GetPhyAddr(), tiling_.baseN, enAtomic);
  }
  void End() {
    pending_ = false;
    iter_ = 0;
  }

 private:
  void ResetIteration() {
    iter_ = 0;
    pending_ = false;
  }
  void Ready(const char* api) {
    if (!inited_) ocimpl::Fail(api, "the Matmul was not initialised (REGIST_MATMUL_OBJ or Init with a TCubeTiling)");
    if (!hasA_ || !hasB_) ocimpl::Fail(api, ocimpl::Format("matrix %s is not set (SetTensor%s)", hasA_ ? "B" : "A",
                                                           hasA_ ? "B" : "A"));
    if (singleM_ <= 0 || singleN_ <= 0 || singleK_ <= 0)
      ocimpl::Fail(api, ocimpl::Format("the single-core shape (%d, %d, %d) must be positive", singleM_, singleN_,
                                       singleK_));
  }
  void Pending(const char* api) {
    if (!pending_) ocimpl::Fail(api, "no piece of C is pending: call Iterate() first (and only once per GetTensorC)");
    pending_ = false;
  }
  static void CheckAtomic(const char* api, uint8_t enAtomic) {
    if (enAtomic > 3)
      ocimpl::Fail(api, ocimpl::Format("enAtomic is %u: 0 (none), 1 (add), 2 (max) or 3 (min)", enAtomic));
  }
  int64_t Ldc() const { return orgKc_ > 0 ? orgKc_ : orgN_; }
  int64_t Lda() const { return transA_ ? orgM_ : orgKa_; }
  int64_t Ldb() const { return transB_ ? orgKb_ : orgN_; }
  template <class Tensor>
  static void CheckExtent(const char* api, const Tensor& t, int64_t rows, int64_t cols, int64_t ld, int64_t off,
                          const char* what) {
#if ASCENDC_OC_CHECK
    if (cols > ld)
      ocimpl::Fail(api, ocimpl::Format("%s: rows of %lld elements do not fit its leading dimension %lld (from the "
                                       "original shape, SetOrgShape)", what, static_cast<long long>(cols),
                                       static_cast<long long>(ld)));
    std::string where = std::string(api) + " (" + what + ")";
    t.Check(where.c_str(), static_cast<uint64_t>(off), static_cast<uint64_t>((rows - 1) * ld + cols));
#else
    (void)api, (void)t, (void)rows, (void)cols, (void)ld, (void)off, (void)what;
#endif
  }
  void CheckC(const char* api, const GlobalTensor<DstT>& gm, int64_t rows, int64_t cols, int64_t ld,
              int64_t off = 0) const {
    CheckExtent(api, gm, rows, cols, ld, off, "matrix C");
  }
  /* The product of rows [m0, m0 + rows) and columns [n0, n0 + cols) of the tile. */
  ocimpl::MatmulCall Call(int64_t m0, int64_t n0, int64_t rows, int64_t cols) const {
    const char* api = "Matmul";
    ocimpl::MatmulCall c;
    c.ab_type = ocimpl::MmTypeOf<SrcT>::value;
    c.c_type = ocimpl::MmTypeOf<DstT>::value;
    c.bias_type = ocimpl::MmTypeOf<BiasT>::value;
    c.m = rows, c.n = cols, c.k = singleK_;
    c.trans_a = transA_, c.trans_b = transB_;
    c.lda = Lda(), c.ldb = Ldb();
    int64_t aoff = transA_ ? m0 : m0 * c.lda;
    int64_t boff = transB_ ? n0 * c.ldb : n0;
    if (transA_) CheckExtent(api, a_, c.k, c.m, c.lda, aoff, "matrix A, transposed");
    else CheckExtent(api, a_, c.m, c.k, c.lda, aoff, "matrix A");
    if (transB_) CheckExtent(api, b_, c.n, c.k, c.ldb, boff, "matrix B, transposed");
    else CheckExtent(api, b_, c.k, c.n, c.ldb, boff, "matrix B");
    c.a = a_.GetPhyAddr() + aoff;
    c.b = b_.GetPhyAddr() + boff;
    if (hasBias_) {
      CheckExtent(api, bias_, 1, c.n, c.n, n0, "bias");
      c.bias = bias_.GetPhyAddr() + n0;
    }
    return c;
  }
  /* Writes the pending piece (floats in l0c_) to dst with leading dimension ld. */
  void Store(DstT* dst, int64_t ld, uint8_t atomic) const {
    for (int i = 0; i < rows_; ++i) {
      const float* s = l0c_.data() + static_cast<size_t>(i) * cols_;
      DstT* d = dst + i * ld;
      for (int j = 0; j < cols_; ++j) {
        float v = s[j];
        if (atomic) {
          float o = static_cast<float>(d[j]);
          v = atomic == 1 ? o + v : atomic == 2 ? std::max(o, v) : std::min(o, v);
        }
        d[j] = static_cast<DstT>(v);
      }
    }
  }

  TCubeTiling tiling_{};
  bool inited_ = false;
  GlobalTensor<SrcT> a_;
  GlobalTensor<SrcBT> b_;
  GlobalTensor<BiasT> bias_;
  bool hasA_ = false, hasB_ = false, hasBias_ = false;
  bool transA_ = false, transB_ = false;
  int orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0, orgKc_ = 0;
  int singleM_ = 0, singleN_ = 0, singleK_ = 0;
  int iter_ = 0, curM_ = 0, curN_ = 0, rows_ = 0, cols_ = 0;
  bool pending_ = false;
  std::vector<float> l0c_;  // the piece Iterate computed (L0C on the NPU)
};

namespace ocimpl {
inline void RegistMatmul(TPipe*, GM_ADDR) {}
template <class MM, class... Rest>
inline void RegistMatmul(TPipe* pipe, GM_ADDR workspace, MM& mm, const TCubeTiling* tiling, Rest&&... rest) {
  mm.Init(tiling, pipe);
  RegistMatmul(pipe, workspace, rest...);
}
template <class MM, class... Rest>
inline void RegistMatmul(TPipe* pipe, GM_ADDR workspace, MM& mm, std::nullptr_t, Rest&&... rest) {
  (void)mm;  // CANN lets a later Init supply the tiling
  RegistMatmul(pipe, workspace, rest...);
}
}  // namespace ocimpl

}  // namespace AscendC

/* CANN's spelling: Matmul, MatmulType and the formats in namespace matmul. */
namespace matmul {
using AscendC::CFG_IBSHARE_NORM;
using AscendC::CFG_MDL;
using AscendC::CFG_NORM;
using AscendC::CubeFormat;
using AscendC::GetMDLConfig;
using AscendC::GetNormalConfig;
using AscendC::LayoutMode;
using AscendC::Matmul;
using AscendC::MatmulCallBackFunc;
using AscendC::MatmulConfig;
using AscendC::MatmulType;
}  // namespace matmul

/* Initialises one or more Matmul objects with their tilings:
 * REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm1, &tiling1, mm2, &tiling2). */
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) \
  AscendC::ocimpl::RegistMatmul((tpipe), reinterpret_cast<GM_ADDR>(workspace), __VA_ARGS__)

#endif  // OPENCANN_ASCENDC_MATMUL_H_

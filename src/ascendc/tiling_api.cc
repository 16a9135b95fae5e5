// matmul_tiling (include/ascendc/tiling/tiling_api.h): a TCubeTiling for the
// chip profile. Base sizes fill L0A / L0B / L0C as the NPU's double buffering
// allows (baseM 128, baseN 256 and baseK 64 for half on the 910B), shrunk to
// the shape; the K steps fill L1; MultiCoreMatmulTiling splits M x N over the
// blocks so that the largest block is smallest (then the least packing).
#include <algorithm>
#include <cstdio>

#include "ascendc/context.h"
#include "ops/cpu/gemm/gemm_bf16.h"
#include "tiling/tiling_api.h"

namespace matmul_tiling {
namespace {

using AscendC::ocimpl::ActiveProfile;

int32_t Ceil(int64_t a, int64_t b) { return static_cast<int32_t>((a + b - 1) / b); }
int32_t RoundUp(int64_t a, int64_t b) { return Ceil(a, b) * static_cast<int32_t>(b); }

int Bytes(DataType t) { return t == DataType::DT_FLOAT ? 4 : 2; }
bool IsCubeInput(DataType t) {
  return t == DataType::DT_FLOAT16 || t == DataType::DT_BF16 || t == DataType::DT_FLOAT;
}
const char* Name(DataType t) {
  switch (t) {
    case DataType::DT_FLOAT: return "DT_FLOAT";
    case DataType::DT_FLOAT16: return "DT_FLOAT16";
    case DataType::DT_BF16: return "DT_BF16";
    case DataType::DT_INT8: return "DT_INT8";
    case DataType::DT_INT32: return "DT_INT32";
    case DataType::DT_INT4: return "DT_INT4";
    default: return "this data type";
  }
}

bool Error(const char* what) {
  std::fprintf(stderr, "[ERROR] matmul_tiling: %s\n", what);
  return false;
}

}  // namespace

MatmulApiTiling::MatmulApiTiling() {
  const auto& p = ActiveProfile();
  l0a_ = p.bytes[AscendC::ocimpl::kL0A];
  l0b_ = p.bytes[AscendC::ocimpl::kL0B];
  c_.dataType = DataType::DT_FLOAT;
  bias_.dataType = DataType::DT_FLOAT;
}

int32_t MatmulApiTiling::SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans) {
  a_ = MatTilingType{pos, type, dataType, isTrans, true};
  return 0;
}
int32_t MatmulApiTiling::SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans) {
  b_ = MatTilingType{pos, type, dataType, isTrans, true};
  return 0;
}
int32_t MatmulApiTiling::SetCType(TPosition pos, CubeFormat type, DataType dataType) {
  c_ = MatTilingType{pos, type, dataType, false, true};
  return 0;
}
int32_t MatmulApiTiling::SetBiasType(TPosition pos, CubeFormat type, DataType dataType) {
  bias_ = MatTilingType{pos, type, dataType, false, true};
  return 0;
}
int32_t MatmulApiTiling::SetShape(int32_t m, int32_t n, int32_t k) {
  m_ = m, n_ = n, k_ = k;
  return 0;
}
int32_t MatmulApiTiling::SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn) {
  return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn);
}
int32_t MatmulApiTiling::SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn) {
  orgM_ = orgMIn, orgN_ = orgNIn, orgKa_ = orgKaIn, orgKb_ = orgKbIn;
  return 0;
}
int32_t MatmulApiTiling::SetBias(bool isBiasIn) {
  isBias_ = isBiasIn;
  return 0;
}
int32_t MatmulApiTiling::SetBufferSpace(int32_t l1Size, int32_t l0CSize, int32_t ubSize, int32_t btSize) {
  l1_ = l1Size, l0c_ = l0CSize, ub_ = ubSize, bt_ = btSize;
  return 0;
}
int32_t MatmulApiTiling::SetFixSplit(int32_t baseMIn, int32_t baseNIn, int32_t baseKIn) {
  fixM_ = baseMIn, fixN_ = baseNIn, fixK_ = baseKIn;
  return 0;
}
int32_t MatmulApiTiling::SetTraverse(MatrixTraverse traverse) {
  traverse_ = traverse;
  return 0;
}
int32_t MatmulApiTiling::SetSingleShape(int32_t singleMIn, int32_t singleNIn, int32_t singleKIn) {
  singleM_ = singleMIn, singleN_ = singleNIn, singleK_ = singleKIn;
  return 0;
}
int32_t MatmulApiTiling::SetDoubleBuffer(bool a, bool b, bool c, bool, bool, bool) {
  dbA_ = a, dbB_ = b, dbC_ = c;
  return 0;
}

bool MatmulApiTiling::SplitCores(::TCubeTiling& t) {
  t.singleCoreM = singleM_ > 0 ? std::min(singleM_, t.M) : t.M;
  t.singleCoreN = singleN_ > 0 ? std::min(singleN_, t.N) : t.N;
  t.usedCoreNum = 1;
  return true;
}

bool MatmulApiTiling::Compute(::TCubeTiling& t) {
  char msg[512];
  if (!a_.set || !b_.set) return Error("SetAType and SetBType must be called before GetTiling");
  for (const MatTilingType* x : {&a_, &b_, &c_, &bias_}) {
    if (x->type != CubeFormat::ND)
      return Error("only CubeFormat::ND operands are supported (the NZ/ZN fractal layouts are not supported yet)");
  }
  if (a_.pos != TPosition::GM || b_.pos != TPosition::GM || (isBias_ && bias_.pos != TPosition::GM))
    return Error("A, B and the bias must be in TPosition::GM (VECOUT/TSCM inputs are not supported yet)");
  if (!IsCubeInput(a_.dataType) || a_.dataType != b_.dataType) {
    std::snprintf(msg, sizeof msg, "A (%s) and B (%s) must both be DT_FLOAT16, DT_BF16 or DT_FLOAT",
                  Name(a_.dataType), Name(b_.dataType));
    return Error(msg);
  }
  if (!IsCubeInput(c_.dataType) || (isBias_ && !IsCubeInput(bias_.dataType)))
    return Error("C and the bias must be DT_FLOAT, DT_FLOAT16 or DT_BF16");
  if (m_ <= 0 || n_ <= 0 || k_ <= 0) {
    std::snprintf(msg, sizeof msg, "SetShape(M %d, N %d, K %d): every dimension must be positive", m_, n_, k_);
    return Error(msg);
  }
  t = ::TCubeTiling{};
  t.M = orgM_ > 0 ? orgM_ : m_;
  t.N = orgN_ > 0 ? orgN_ : n_;
  t.Ka = orgKa_ > 0 ? orgKa_ : k_;
  t.Kb = orgKb_ > 0 ? orgKb_ : t.Ka;
  if (t.M < m_ || t.N < n_ || t.Ka < k_ || t.Ka != t.Kb) {
    std::snprintf(msg, sizeof msg, "the original shape (M %d, N %d, Ka %d, Kb %d) must hold the shape (%d, %d, %d) "
                  "with Ka == Kb", t.M, t.N, t.Ka, t.Kb, m_, n_, k_);
    return Error(msg);
  }
  // The product to split is the shape set, within the original matrices.
  const int32_t fullM = t.M, fullN = t.N;
  t.M = m_, t.N = n_;
  if (!SplitCores(t)) return false;
  t.M = fullM, t.N = fullN;
  t.singleCoreK = singleK_ > 0 ? std::min(singleK_, k_) : k_;

  const auto& p = ActiveProfile();
  const uint32_t l1 = l1_ > 0 ? static_cast<uint32_t>(l1_) : p.bytes[AscendC::ocimpl::kL1];
  const uint32_t l0c = l0c_ > 0 ? static_cast<uint32_t>(l0c_) : p.bytes[AscendC::ocimpl::kL0C];
  const int sa = Bytes(a_.dataType), kAlign = 32 / sa;
  const int dbA = dbA_ ? 2 : 1, dbB = dbB_ ? 2 : 1, dbC = dbC_ ? 2 : 1;
  // baseM x baseN float accumulators in L0C.
  int32_t baseM = fixM_ > 0 ? fixM_ : std::min(128, RoundUp(t.singleCoreM, 16));
  int32_t baseN = fixN_ > 0 ? fixN_ : std::min(256, RoundUp(t.singleCoreN, 16));
  while (uint64_t(baseM) * baseN * 4 * dbC > l0c) {
    if (fixN_ <= 0 && baseN > 16 && baseN >= baseM) baseN -= 16;
    else if (fixM_ <= 0 && baseM > 16) baseM -= 16;
    else if (fixN_ <= 0 && baseN > 16) baseN -= 16;
    else {
      std::snprintf(msg, sizeof msg, "baseM %d x baseN %d float accumulators do not fit L0C (%u bytes) of %s",
                    baseM, baseN, l0c, p.name);
      return Error(msg);
    }
  }
  if (baseM % 16 || baseN % 16) {
    std::snprintf(msg, sizeof msg, "SetFixSplit: baseM %d and baseN %d must be multiples of 16", baseM, baseN);
    return Error(msg);
  }
  // baseK: as much of K as L0A and L0B hold (double-buffered).
  int32_t baseK = fixK_;
  const int64_t maxK = std::min<int64_t>(l0a_ / dbA / (int64_t(baseM) * sa), l0b_ / dbB / (int64_t(baseN) * sa));
  if (baseK <= 0) {
    baseK = static_cast<int32_t>(maxK / kAlign * kAlign);
    baseK = std::min(baseK, RoundUp(t.singleCoreK, kAlign));
    if (baseK < kAlign) {
      std::snprintf(msg, sizeof msg, "baseM %d / baseN %d leave no room for a baseK of %d in L0A / L0B (%u / %u "
                    "bytes) of %s", baseM, baseN, kAlign, l0a_, l0b_, p.name);
      return Error(msg);
    }
  } else if (baseK > maxK || baseK % kAlign) {
    std::snprintf(msg, sizeof msg, "SetFixSplit: baseK %d must be a multiple of %d and at most %lld for baseM %d, "
                  "baseN %d in L0A / L0B (%u / %u bytes) of %s", baseK, kAlign, static_cast<long long>(maxK),
                  baseM, baseN, l0a_, l0b_, p.name);
    return Error(msg);
  }
  // K steps held in L1: depthA1 = stepM * stepKa (x2 when they double-buffer).
  const int32_t kIters = Ceil(t.singleCoreK, baseK);
  int32_t stepK = std::min(4, kIters);
  auto l1Use = [&](int32_t depthA, int32_t depthB) {
    return uint64_t(depthA) * baseM * baseK * sa + uint64_t(depthB) * baseK * baseN * sa +
           (isBias_ ? uint64_t(baseN) * 4 : 0);
  };
  int32_t depth = 0;
  for (; stepK >= 1; --stepK) {
    if (l1Use(2 * stepK, 2 * stepK) <= l1) { depth = 2 * stepK; break; }
    if (l1Use(stepK, stepK) <= l1) { depth = stepK; break; }
  }
  if (!depth) {
    std::snprintf(msg, sizeof msg, "one A block (%d x %d) and one B block (%d x %d) do not fit L1 (%u bytes) of %s",
                  baseM, baseK, baseK, baseN, l1, p.name);
    return Error(msg);
  }
  t.baseM = baseM, t.baseN = baseN, t.baseK = baseK;
  t.stepM = t.stepN = 1;
  t.stepKa = t.stepKb = stepK;
  t.depthA1 = t.depthB1 = depth;
  t.isBias = isBias_ ? 1 : 0;
  t.transLength = 0;
  t.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
  t.shareMode = 0;
  t.shareL1Size = static_cast<int32_t>(l1Use(depth, depth));
  t.shareL0CSize = baseM * baseN * 4;
  t.shareUbSize = 0;
  t.batchM = t.batchN = t.singleBatchM = t.singleBatchN = 1;
  t.dbL0A = dbA, t.dbL0B = dbB, t.dbL0C = dbC;
  return true;
}

int64_t MatmulApiTiling::GetTiling(::TCubeTiling& tiling) {
  ::TCubeTiling t{};
  if (!Compute(t)) return -1;
  tiling_ = t;
  tiling = t;
  return 0;
}

int64_t MatmulApiTiling::GetTiling(optiling::TCubeTiling& tiling) { return GetTiling(tiling.Raw()); }

int32_t MultiCoreMatmulTiling::SetDim(int32_t dim) {
  if (dim <= 0 || dim > 65535) {
    Error("SetDim: the block count must be 1..65535");
    return -1;
  }
  dim_ = dim;
  return 0;
}

int32_t MultiCoreMatmulTiling::SetSingleRange(int32_t, int32_t, int32_t, int32_t, int32_t, int32_t) { return 0; }

bool MultiCoreMatmulTiling::SplitCores(::TCubeTiling& t) {
  if (singleM_ > 0 || singleN_ > 0) {  // the caller fixed the split
    t.singleCoreM = singleM_ > 0 ? std::min(singleM_, t.M) : t.M;
    t.singleCoreN = singleN_ > 0 ? std::min(singleN_, t.N) : t.N;
  } else {
    double best = -1;
    for (int32_t md = 1; md <= dim_; ++md) {
      const int32_t nd = dim_ / md;
      int32_t sm = Ceil(t.M, md), sn = Ceil(t.N, nd);
      // whole 16 x 16 fractals per block (less where the matrix is smaller)
      sm = std::min(RoundUp(sm, 16), t.M);
      sn = std::min(RoundUp(sn, 16), t.N);
      // The largest block's work, then the copies all blocks make: each packs
      // its rows of A and its columns of B; half A (and bfloat16 A where the
      // CPU has no bf16 GEMM) is also widened to float in a pass of its own
      // (B is widened as it is packed).
      const bool widened = a_.dataType == DataType::DT_FLOAT16 ||
                           (a_.dataType == DataType::DT_BF16 && !oc::gemm::DefaultBf16Ukernel());
      const double aPasses = widened ? 2 : 1;
      const double cost =
          double(sm) * sn * 1e6 + double(Ceil(t.M, sm)) * t.N + double(Ceil(t.N, sn)) * t.M * aPasses;
      if (best < 0 || cost < best) best = cost, t.singleCoreM = sm, t.singleCoreN = sn;
    }
  }
  mDim_ = Ceil(t.M, t.singleCoreM);
  nDim_ = Ceil(t.N, t.singleCoreN);
  t.usedCoreNum = mDim_ * nDim_;
  if (t.usedCoreNum > dim_) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "single-core shape %d x %d needs %d blocks, more than SetDim's %d",
                  t.singleCoreM, t.singleCoreN, t.usedCoreNum, dim_);
    return Error(msg);
  }
  return true;
}

int32_t MultiCoreMatmulTiling::GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const {
  dim = tiling_.usedCoreNum, mDim = mDim_, nDim = nDim_;
  return 0;
}

int32_t MultiCoreMatmulTiling::GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK) const {
  shapeM = tiling_.singleCoreM, shapeN = tiling_.singleCoreN, shapeK = tiling_.singleCoreK;
  return 0;
}

}  // namespace matmul_tiling

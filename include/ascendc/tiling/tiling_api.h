/* Host side of the Matmul high-level API: matmul_tiling::MatmulApiTiling (one
 * core) and MultiCoreMatmulTiling (the product split over blocks) compute a
 * TCubeTiling for the selected chip profile (OPENCANN_ASCENDC_SOC), which the
 * host copies to global memory and the kernel hands to REGIST_MATMUL_OBJ.
 * Names follow Huawei's public interface; the algorithm is OpenCANN's own
 * (docs/ascendc.md). GetTiling returns 0, or -1 with the reason on stderr. */
#ifndef OPENCANN_ASCENDC_TILING_API_H_
#define OPENCANN_ASCENDC_TILING_API_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernel_tiling/kernel_tiling.h"

namespace optiling {
/* The host's view of the tiling, with CANN's set_/get_ accessors. */
class TCubeTiling {
 public:
#define OPENCANN_TCUBETILING_ACCESSORS(name)                  \
  void set_##name(int32_t v) { data_.name = v; }              \
  int32_t get_##name() const { return data_.name; }
  OPENCANN_TCUBETILING_FIELDS(OPENCANN_TCUBETILING_ACCESSORS)
#undef OPENCANN_TCUBETILING_ACCESSORS
  size_t GetDataSize() const { return sizeof(::TCubeTiling); }
  void SaveToBuffer(void* buf, size_t size) const {
    std::memcpy(buf, &data_, size < sizeof data_ ? size : sizeof data_);
  }
  ::TCubeTiling& Raw() { return data_; }
  const ::TCubeTiling& Raw() const { return data_; }

 private:
  ::TCubeTiling data_{};
};
}  // namespace optiling

namespace matmul_tiling {

/* The values of ge::DataType. */
enum class DataType : int32_t {
  DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
  DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_BF16 = 27, DT_INT4 = 29,
  DT_UNDEFINED = 28,
};
enum class TPosition : int32_t {
  GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX,
};
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };

struct MatTilingType {
  TPosition pos = TPosition::GM;
  CubeFormat type = CubeFormat::ND;
  DataType dataType = DataType::DT_FLOAT16;
  bool isTrans = false;
  bool set = false;
};

class MatmulApiTiling {
 public:
  MatmulApiTiling();
  /* CANN passes a platform_ascendc::PlatformAscendC here; the chip is the
   * profile OPENCANN_ASCENDC_SOC selects. */
  template <class Platform>
  explicit MatmulApiTiling(const Platform&) : MatmulApiTiling() {}
  virtual ~MatmulApiTiling() = default;

  int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
  int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
  int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType);
  int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType);
  int32_t SetShape(int32_t m, int32_t n, int32_t k);
  int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn);
  int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn);
  int32_t SetBias(bool isBiasIn = false);
  /* -1 keeps the chip's size. */
  int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1);
  /* Fixes baseM / baseN / baseK (-1: chosen). */
  int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1);
  int32_t SetTraverse(MatrixTraverse traverse);
  int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1);
  int32_t SetDoubleBuffer(bool a, bool b, bool c, bool bias, bool transND2NZ = true, bool transNZ2ND = true);
  int64_t GetTiling(optiling::TCubeTiling& tiling);
  int64_t GetTiling(::TCubeTiling& tiling);
  int32_t GetBaseM() const { return tiling_.baseM; }
  int32_t GetBaseN() const { return tiling_.baseN; }
  int32_t GetBaseK() const { return tiling_.baseK; }

 protected:
  /* Splits M x N over blocks (1 here); fills singleCore*, usedCoreNum. */
  virtual bool SplitCores(::TCubeTiling& t);
  bool Compute(::TCubeTiling& t);

  MatTilingType a_, b_, c_, bias_;
  int32_t m_ = -1, n_ = -1, k_ = -1;
  int32_t orgM_ = -1, orgN_ = -1, orgKa_ = -1, orgKb_ = -1;
  int32_t singleM_ = -1, singleN_ = -1, singleK_ = -1;
  int32_t fixM_ = -1, fixN_ = -1, fixK_ = -1;
  bool isBias_ = false;
  int32_t l1_ = -1, l0c_ = -1, ub_ = -1, bt_ = -1;
  uint32_t l0a_ = 0, l0b_ = 0;
  MatrixTraverse traverse_ = MatrixTraverse::NOSET;
  bool dbA_ = true, dbB_ = true, dbC_ = false;
  ::TCubeTiling tiling_{};
};

class MultiCoreMatmulTiling : public MatmulApiTiling {
 public:
  MultiCoreMatmulTiling() = default;
  template <class Platform>
  explicit MultiCoreMatmulTiling(const Platform& p) : MatmulApiTiling(p) {}
  /* The number of blocks the kernel is launched with. */
  int32_t SetDim(int32_t dim);
  int32_t SetSingleRange(int32_t maxM = -1, int32_t maxN = -1, int32_t maxK = -1, int32_t minM = -1,
                         int32_t minN = -1, int32_t minK = -1);
  /* After GetTiling: blocks used and their split of M and N. */
  int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const;
  int32_t GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK) const;

 protected:
  bool SplitCores(::TCubeTiling& t) override;
  int32_t dim_ = 1, mDim_ = 1, nDim_ = 1;
};

}  // namespace matmul_tiling

#endif  // OPENCANN_ASCENDC_TILING_API_H_

/* Vector add of float tensors of any length: the host computes the tiling
 * (elements per block, per tile), the kernel reads it from global memory.
 * Tails that are not whole 32-byte blocks move with DataCopyPad. */
#include "kernel_operator.h"
#include "add_tiling.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelAddTiled {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTiling& t) {
    uint32_t start = t.blockLength * GetBlockIdx();
    length_ = start >= t.totalLength ? 0 : (t.totalLength - start < t.blockLength ? t.totalLength - start
                                                                                  : t.blockLength);
    tile_ = t.tileLength;
    xGm.SetGlobalBuffer((__gm__ float*)x + start, length_);
    yGm.SetGlobalBuffer((__gm__ float*)y + start, length_);
    zGm.SetGlobalBuffer((__gm__ float*)z + start, length_);
    pipe.InitBuffer(inX, BUFFER_NUM, tile_ * sizeof(float));
    pipe.InitBuffer(inY, BUFFER_NUM, tile_ * sizeof(float));
    pipe.InitBuffer(outZ, BUFFER_NUM, tile_ * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint32_t done = 0; done < length_; done += tile_) {
      uint32_t n = length_ - done < tile_ ? length_ - done : tile_;
      CopyIn(done, n);
      Compute(n);
      CopyOut(done, n);
    }
  }

 private:
  __aicore__ inline void Load(LocalTensor<float>& dst, const GlobalTensor<float>& src, uint32_t n) {
    if (n % 8 == 0) {
      DataCopy(dst, src, n);
    } else {
      DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
      DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
      DataCopyPad(dst, src, p, pad);
    }
  }
  __aicore__ inline void CopyIn(uint32_t offset, uint32_t n) {
    LocalTensor<float> x = inX.AllocTensor<float>();
    LocalTensor<float> y = inY.AllocTensor<float>();
    Load(x, xGm[offset], n);
    Load(y, yGm[offset], n);
    inX.EnQue(x);
    inY.EnQue(y);
  }
  __aicore__ inline void Compute(uint32_t n) {
    LocalTensor<float> x = inX.DeQue<float>();
    LocalTensor<float> y = inY.DeQue<float>();
    LocalTensor<float> z = outZ.AllocTensor<float>();
    Add(z, x, y, n);
    outZ.EnQue(z);
    inX.FreeTensor(x);
    inY.FreeTensor(y);
  }
  __aicore__ inline void CopyOut(uint32_t offset, uint32_t n) {
    LocalTensor<float> z = outZ.DeQue<float>();
    if (n % 8 == 0) {
      DataCopy(zGm[offset], z, n);
    } else {
      DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
      DataCopyPad(zGm[offset], z, p);
    }
    outZ.FreeTensor(z);
  }

  TPipe pipe;
  TQue<QuePosition::VECIN, BUFFER_NUM> inX, inY;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outZ;
  GlobalTensor<float> xGm, yGm, zGm;
  uint32_t length_ = 0, tile_ = 0;
};

extern "C" __global__ __aicore__ void add_tiled(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
  AddTiling t = *reinterpret_cast<__gm__ AddTiling*>(tiling);
  KernelAddTiled op;
  op.Init(x, y, z, t);
  op.Process();
}

/* LeakyReluCustom's kernel: each block takes its share of the elements in
 * tiles (copy-in, LeakyRelu, copy-out, double-buffered); a tile that is not a
 * whole number of 32-byte units is moved with DataCopyPad. */
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

template <typename T>
class KernelLeakyRelu {
 public:
  __aicore__ inline KernelLeakyRelu() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t blockLength, uint32_t tileLength,
                              float negativeSlope) {
    const uint32_t start = blockLength * AscendC::GetBlockIdx();
    length_ = start >= totalLength ? 0 : (totalLength - start < blockLength ? totalLength - start : blockLength);
    tileLength_ = tileLength;
    slope_ = static_cast<T>(negativeSlope);
    if (length_ == 0) return;
    xGm.SetGlobalBuffer((__gm__ T*)x + start, length_);
    yGm.SetGlobalBuffer((__gm__ T*)y + start, length_);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength_ * sizeof(T));
    pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength_ * sizeof(T));
  }
  __aicore__ inline void Process() {
    for (uint32_t offset = 0; offset < length_; offset += tileLength_) {
      const uint32_t n = length_ - offset < tileLength_ ? length_ - offset : tileLength_;
      CopyIn(offset, n);
      Compute(n);
      CopyOut(offset, n);
    }
  }

 private:
  static constexpr uint32_t kAlign = 32 / sizeof(T);
  __aicore__ inline void CopyIn(uint32_t offset, uint32_t n) {
    AscendC::LocalTensor<T> x = inQueueX.AllocTensor<T>();
    if (n % kAlign == 0) {
      AscendC::DataCopy(x, xGm[offset], n);
    } else {
      AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
      AscendC::DataCopyPad(x, xGm[offset], p, AscendC::DataCopyPadExtParams<T>{false, 0, 0, 0});
    }
    inQueueX.EnQue(x);
  }
  __aicore__ inline void Compute(uint32_t n) {
    AscendC::LocalTensor<T> x = inQueueX.DeQue<T>();
    AscendC::LocalTensor<T> y = outQueueY.AllocTensor<T>();
    AscendC::LeakyRelu(y, x, slope_, n);
    outQueueY.EnQue<T>(y);
    inQueueX.FreeTensor(x);
  }
  __aicore__ inline void CopyOut(uint32_t offset, uint32_t n) {
    AscendC::LocalTensor<T> y = outQueueY.DeQue<T>();
    if (n % kAlign == 0) {
      AscendC::DataCopy(yGm[offset], y, n);
    } else {
      AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
      AscendC::DataCopyPad(yGm[offset], y, p);
    }
    outQueueY.FreeTensor(y);
  }

  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
  AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
  AscendC::GlobalTensor<T> xGm, yGm;
  uint32_t length_ = 0, tileLength_ = 0;
  T slope_;
};

extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA(tiling_data, tiling);
  if (TILING_KEY_IS(1)) {
    KernelLeakyRelu<float> op;
    op.Init(x, y, tiling_data.totalLength, tiling_data.blockLength, tiling_data.tileLength, tiling_data.negativeSlope);
    op.Process();
  } else if (TILING_KEY_IS(2)) {
    KernelLeakyRelu<half> op;
    op.Init(x, y, tiling_data.totalLength, tiling_data.blockLength, tiling_data.tileLength, tiling_data.negativeSlope);
    op.Process();
  }
}

/* LeakyReLU over half tensors with a host-computed tiling: y = x > 0 ? x : alpha * x.
 * Each block processes its share in tileNum double-buffered tiles. */
#include "kernel_operator.h"
#include "leaky_relu_tiling.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelLeakyRelu {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t tileNum, float alpha) {
    blockLength_ = totalLength / GetBlockNum();
    tileLength_ = blockLength_ / tileNum / BUFFER_NUM;
    loops_ = tileNum * BUFFER_NUM;
    alpha_ = static_cast<half>(alpha);
    xGm.SetGlobalBuffer((__gm__ half*)x + blockLength_ * GetBlockIdx(), blockLength_);
    yGm.SetGlobalBuffer((__gm__ half*)y + blockLength_ * GetBlockIdx(), blockLength_);
    pipe.InitBuffer(inQueue, BUFFER_NUM, tileLength_ * sizeof(half));
    pipe.InitBuffer(outQueue, BUFFER_NUM, tileLength_ * sizeof(half));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < loops_; i++) {
      LocalTensor<half> x = inQueue.AllocTensor<half>();
      DataCopy(x, xGm[i * tileLength_], tileLength_);
      inQueue.EnQue(x);

      LocalTensor<half> xin = inQueue.DeQue<half>();
      LocalTensor<half> y = outQueue.AllocTensor<half>();
      LeakyRelu(y, xin, alpha_, tileLength_);
      outQueue.EnQue(y);
      inQueue.FreeTensor(xin);

      LocalTensor<half> yout = outQueue.DeQue<half>();
      DataCopy(yGm[i * tileLength_], yout, tileLength_);
      outQueue.FreeTensor(yout);
    }
  }

 private:
  TPipe pipe;
  TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
  GlobalTensor<half> xGm, yGm;
  uint32_t blockLength_ = 0, tileLength_ = 0, loops_ = 0;
  half alpha_ = 0;
};

extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA(tilingData, tiling);
  KernelLeakyRelu op;
  op.Init(x, y, tilingData.totalLength, tilingData.tileNum, tilingData.alpha);
  op.Process();
}

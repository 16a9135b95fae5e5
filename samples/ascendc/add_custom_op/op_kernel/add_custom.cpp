/* AddCustom's kernel, laid out as a CANN custom-operator project's op_kernel:
 * the tiling comes from the host's tiling function through GET_TILING_DATA. */
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

class KernelAdd {
 public:
  __aicore__ inline KernelAdd() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileNum) {
    blockLength_ = totalLength / AscendC::GetBlockNum();
    tileNum_ = tileNum;
    tileLength_ = blockLength_ / tileNum / BUFFER_NUM;
    xGm.SetGlobalBuffer((__gm__ half*)x + blockLength_ * AscendC::GetBlockIdx(), blockLength_);
    yGm.SetGlobalBuffer((__gm__ half*)y + blockLength_ * AscendC::GetBlockIdx(), blockLength_);
    zGm.SetGlobalBuffer((__gm__ half*)z + blockLength_ * AscendC::GetBlockIdx(), blockLength_);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength_ * sizeof(half));
    pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength_ * sizeof(half));
    pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength_ * sizeof(half));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tileNum_ * BUFFER_NUM; i++) {
      AscendC::LocalTensor<half> x = inQueueX.AllocTensor<half>();
      AscendC::LocalTensor<half> y = inQueueY.AllocTensor<half>();
      AscendC::DataCopy(x, xGm[i * tileLength_], tileLength_);
      AscendC::DataCopy(y, yGm[i * tileLength_], tileLength_);
      inQueueX.EnQue(x);
      inQueueY.EnQue(y);
      AscendC::LocalTensor<half> xin = inQueueX.DeQue<half>();
      AscendC::LocalTensor<half> yin = inQueueY.DeQue<half>();
      AscendC::LocalTensor<half> z = outQueueZ.AllocTensor<half>();
      AscendC::Add(z, xin, yin, tileLength_);
      outQueueZ.EnQue<half>(z);
      inQueueX.FreeTensor(xin);
      inQueueY.FreeTensor(yin);
      AscendC::LocalTensor<half> zout = outQueueZ.DeQue<half>();
      AscendC::DataCopy(zGm[i * tileLength_], zout, tileLength_);
      outQueueZ.FreeTensor(zout);
    }
  }

 private:
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
  AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
  AscendC::GlobalTensor<half> xGm, yGm, zGm;
  uint32_t blockLength_ = 0, tileNum_ = 0, tileLength_ = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA(tiling_data, tiling);
  KernelAdd op;
  op.Init(x, y, z, tiling_data.totalLength, tiling_data.tileNum);
  op.Process();
}

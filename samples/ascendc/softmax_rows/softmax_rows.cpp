/* Softmax over the rows of a float matrix [rows, cols]: blocks take rows in
 * turn; each row is reduced with ReduceMax, shifted, exponentiated, reduced
 * with ReduceSum and scaled. cols must be a multiple of 8 (32 bytes). */
#include "kernel_operator.h"

using namespace AscendC;

struct SoftmaxTiling {
  uint32_t rows;
  uint32_t cols;
};

class KernelSoftmaxRows {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxTiling& t) {
    rows_ = t.rows;
    cols_ = t.cols;
    xGm.SetGlobalBuffer((__gm__ float*)x, uint64_t{rows_} * cols_);
    yGm.SetGlobalBuffer((__gm__ float*)y, uint64_t{rows_} * cols_);
    pipe.InitBuffer(inQueue, 2, cols_ * sizeof(float));
    pipe.InitBuffer(outQueue, 2, cols_ * sizeof(float));
    pipe.InitBuffer(work, cols_ * sizeof(float));
    pipe.InitBuffer(scalar, 32);
  }
  __aicore__ inline void Process() {
    for (uint32_t r = GetBlockIdx(); r < rows_; r += GetBlockNum()) {
      LocalTensor<float> x = inQueue.AllocTensor<float>();
      DataCopy(x, xGm[uint64_t{r} * cols_], cols_);
      inQueue.EnQue(x);
      Compute();
      LocalTensor<float> y = outQueue.DeQue<float>();
      DataCopy(yGm[uint64_t{r} * cols_], y, cols_);
      outQueue.FreeTensor(y);
    }
  }

 private:
  __aicore__ inline void Compute() {
    LocalTensor<float> x = inQueue.DeQue<float>();
    LocalTensor<float> y = outQueue.AllocTensor<float>();
    LocalTensor<float> w = work.Get<float>();
    LocalTensor<float> s = scalar.Get<float>();
    ReduceMax(s, x, w, cols_);
    float m = s.GetValue(0);
    Adds(y, x, -m, cols_);
    Exp(y, y, cols_);
    ReduceSum(s, y, w, cols_);
    Muls(y, y, 1.0f / s.GetValue(0), cols_);
    outQueue.EnQue(y);
    inQueue.FreeTensor(x);
  }

  TPipe pipe;
  TQue<QuePosition::VECIN, 2> inQueue;
  TQue<QuePosition::VECOUT, 2> outQueue;
  TBuf<TPosition::VECCALC> work, scalar;
  GlobalTensor<float> xGm, yGm;
  uint32_t rows_ = 0, cols_ = 0;
};

extern "C" __global__ __aicore__ void softmax_rows(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  SoftmaxTiling t = *reinterpret_cast<__gm__ SoftmaxTiling*>(tiling);
  KernelSoftmaxRows op;
  op.Init(x, y, t);
  op.Process();
}

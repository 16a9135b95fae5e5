// The lowering functions of the supported primitives (mindir_prims.cc lists
// them with their arguments). Argument indices follow each PrimDef.
#pragma once

#include "parser/mindir/mindir_lower.h"

namespace oc::mindir::ops {

// nn: mindir_ops_nn.cc
Expected<MsValue> Conv2D(Lowering& l);
Expected<MsValue> MaxPool(Lowering& l);
Expected<MsValue> AvgPool(Lowering& l);
Expected<MsValue> BatchNorm(Lowering& l);
Expected<MsValue> LayerNorm(Lowering& l);
Expected<MsValue> MatMul(Lowering& l);
Expected<MsValue> BiasAdd(Lowering& l);
Expected<MsValue> Dense(Lowering& l);
Expected<MsValue> Softmax(Lowering& l);
Expected<MsValue> LogSoftmax(Lowering& l);

// math and tensors: mindir_ops_math.cc
Expected<MsValue> PassFirst(Lowering& l);  // Load, Depend: the first argument
Expected<MsValue> Monad(Lowering& l);      // UpdateState
Expected<MsValue> Add(Lowering& l);
Expected<MsValue> Sub(Lowering& l);
Expected<MsValue> Mul(Lowering& l);
Expected<MsValue> Div(Lowering& l);
Expected<MsValue> Maximum(Lowering& l);
Expected<MsValue> Minimum(Lowering& l);
Expected<MsValue> Pow(Lowering& l);
Expected<MsValue> Unary(Lowering& l);  // by primitive name: ReLU, Sigmoid, Exp, ...
Expected<MsValue> Elu(Lowering& l);
Expected<MsValue> Round(Lowering& l);
Expected<MsValue> Reshape(Lowering& l);
Expected<MsValue> Flatten(Lowering& l);
Expected<MsValue> Transpose(Lowering& l);
Expected<MsValue> ExpandDims(Lowering& l);
Expected<MsValue> Squeeze(Lowering& l);
Expected<MsValue> Reduce(Lowering& l);  // ReduceMean / ReduceSum / ReduceMax / ReduceMin
Expected<MsValue> Cast(Lowering& l);
Expected<MsValue> Concat(Lowering& l);
Expected<MsValue> Gather(Lowering& l);

}  // namespace oc::mindir::ops

// The supported MindSpore primitives: each one's arguments in MindSpore's
// order with their defaults (MindSpore 2.x op definitions), and its lowering.
#include <algorithm>

#include "parser/mindir/mindir_ops.h"

namespace oc::mindir {
namespace {

ArgDef Req(const char* name) { return {name, MsValue::None(), true}; }
ArgDef Opt(const char* name, MsValue def = MsValue::None()) { return {name, std::move(def), false}; }

const std::vector<PrimDef>& Table() {
  using M = MsValue;
  static const std::vector<PrimDef> kPrims = [] {
    std::vector<PrimDef> t;
    auto unary = [&](const char* op, const char* arg = "input") { t.push_back({op, {Req(arg)}, ops::Unary}); };
    auto binary = [&](const char* op, LowerFn fn) { t.push_back({op, {Req("input"), Req("other")}, fn}); };
    // Side-effect bookkeeping: a parameter read, the state after it, an ordering edge.
    t.push_back({"Load", {Req("x"), Opt("u")}, ops::PassFirst});
    t.push_back({"UpdateState", {Opt("u"), Opt("x")}, ops::Monad});
    t.push_back({"Depend", {Req("value"), Opt("expr")}, ops::PassFirst});
    // nn
    t.push_back({"Conv2D",
                 {Req("x"), Req("w"), Opt("out_channel"), Opt("kernel_size"), Opt("mode", M::Int(1)),
                  Opt("pad_mode", M::String("valid")), Opt("pad", M::Ints({0, 0, 0, 0})), Opt("stride", M::Int(1)),
                  Opt("dilation", M::Int(1)), Opt("group", M::Int(1)), Opt("data_format", M::String("NCHW"))},
                 ops::Conv2D,
                 {{"data_format", "format"}}});
    const std::vector<ArgDef> pool = {Req("x"), Opt("kernel_size", M::Int(1)), Opt("strides", M::Int(1)),
                                      Opt("pad_mode", M::String("VALID")), Opt("data_format", M::String("NCHW"))};
    t.push_back({"MaxPool", pool, ops::MaxPool, {{"data_format", "format"}}});
    t.push_back({"AvgPool", pool, ops::AvgPool, {{"data_format", "format"}}});
    t.push_back({"BatchNorm",
                 {Req("x"), Req("scale"), Req("bias"), Req("mean"), Req("variance"), Opt("is_training", M::Bool(false)),
                  Opt("epsilon", M::Float(1e-5)), Opt("momentum", M::Float(0.1)), Opt("data_format", M::String("NCHW"))},
                 ops::BatchNorm,
                 {{"data_format", "format"}}});
    t.push_back({"LayerNorm",
                 {Req("input_x"), Req("gamma"), Req("beta"), Opt("begin_norm_axis", M::Int(1)),
                  Opt("begin_params_axis", M::Int(1)), Opt("epsilon", M::Float(1e-7))},
                 ops::LayerNorm});
    // MatMulExt / BatchMatMulExt (mint / ops.matmul) have no transpose arguments: the defaults stand.
    for (const char* op : {"MatMul", "BatchMatMul", "MatMulExt", "BatchMatMulExt"})
      t.push_back({op, {Req("x"), Req("y"), Opt("transpose_a", M::Bool(false)), Opt("transpose_b", M::Bool(false))},
                   ops::MatMul});
    t.push_back({"BiasAdd", {Req("input_x"), Req("bias"), Opt("data_format", M::String("NCHW"))}, ops::BiasAdd,
                 {{"data_format", "format"}}});
    t.push_back({"Dense", {Req("input"), Req("weight"), Opt("bias")}, ops::Dense});
    t.push_back({"Softmax", {Req("input"), Opt("axis", M::Int(-1))}, ops::Softmax});
    t.push_back({"LogSoftmax", {Req("logits"), Opt("axis", M::Int(-1))}, ops::LogSoftmax});
    // element-wise
    binary("Add", ops::Add);
    binary("Sub", ops::Sub);
    binary("Mul", ops::Mul);
    binary("Muls", ops::Mul);
    binary("RealDiv", ops::Div);
    binary("Div", ops::Div);
    binary("Divs", ops::Div);
    binary("Maximum", ops::Maximum);
    binary("Minimum", ops::Minimum);
    binary("Pow", ops::Pow);
    for (const char* op : {"ReLU", "ReLU6", "Sigmoid", "Tanh", "GeLU", "FastGeLU", "SiLU", "HSwish", "HSigmoid",
                           "Exp", "Log", "Neg", "Abs", "Erf", "Sqrt", "Rsqrt", "Square", "Reciprocal", "Identity",
                           "Floor", "Ceil", "Sin", "Cos", "Softsign", "Sign"})
      unary(op);
    t.push_back({"Round", {Req("input"), Opt("decimals", M::Int(0))}, ops::Round});
    t.push_back({"Elu", {Req("input_x"), Opt("alpha", M::Float(1.0))}, ops::Elu});
    // shapes and data movement
    t.push_back({"Reshape", {Req("input"), Req("shape")}, ops::Reshape});
    t.push_back({"Flatten", {Req("input_x")}, ops::Flatten});
    t.push_back({"Transpose", {Req("input"), Req("dims")}, ops::Transpose, {{"dims", "perm"}}});
    t.push_back({"ExpandDims", {Req("input_x"), Req("axis")}, ops::ExpandDims});
    t.push_back({"Squeeze", {Req("input"), Opt("axis", M::Ints({}))}, ops::Squeeze});
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin"})
      t.push_back({op, {Req("x"), Opt("axis", M::Ints({})), Opt("keep_dims", M::Bool(false))}, ops::Reduce});
    t.push_back({"ReduceSum",
                 {Req("x"), Opt("axis", M::Ints({})), Opt("keep_dims", M::Bool(false)), Opt("skip_mode", M::Bool(false))},
                 ops::Reduce});
    t.push_back({"Cast", {Req("input_x"), Req("dtype")}, ops::Cast});
    t.push_back({"Concat", {Req("tensors"), Opt("axis", M::Int(0))}, ops::Concat});
    t.push_back({"Gather", {Req("input_params"), Req("input_indices"), Req("axis"), Opt("batch_dims", M::Int(0))},
                 ops::Gather});
    return t;
  }();
  return kPrims;
}

}  // namespace

const PrimDef* FindPrim(const std::string& op) {
  for (const PrimDef& d : Table())
    if (op == d.op) return &d;
  return nullptr;
}

std::vector<std::string> SupportedPrims() {
  std::vector<std::string> out;
  for (const PrimDef& d : Table()) out.push_back(d.op);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace oc::mindir

// Lowering one MindSpore primitive call to IR nodes. Each supported primitive
// has a PrimDef: its arguments by name, in MindSpore's order (the tensors
// first, then what MindSpore calls the primitive's attributes), and a function
// that emits default-domain ONNX-semantics nodes into the Graph.
//
// A MINDIR node gives its arguments two ways (PrimitiveProto.prim_type): a
// PRIMITIVE_FUNCTION node passes every argument as an input (Constant nodes
// for the scalars); a PRIMITIVE node passes the tensors as inputs and keeps
// the rest as attributes of its primitive. Lowering reads both the same way.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "parser/mindir/mindir_value.h"

namespace oc::mindir {

// The ONNX opset of the nodes the lowerings emit.
constexpr int kEmitOpset = 21;

class Lowering;
using LowerFn = Expected<MsValue> (*)(Lowering&);

struct ArgDef {
  const char* name;
  MsValue def;            // used when the node gives no value
  bool required = false;  // no default: the node must give it
};

struct PrimDef {
  const char* op;  // MindSpore's primitive name ("Conv2D")
  std::vector<ArgDef> args;
  LowerFn lower;
  // Attribute names the file may use for an argument instead of its own ("format" for data_format).
  std::map<std::string, std::string> aliases = {};
};

// The definition of `op`, or nullptr when it is not supported.
const PrimDef* FindPrim(const std::string& op);
// Every supported primitive's name, sorted (for docs and error messages).
std::vector<std::string> SupportedPrims();

class Lowering {
 public:
  Lowering(Graph& graph, const PrimDef& def, std::string node_name, std::string out_name,
           std::vector<MsValue> args, std::vector<TensorType> result_types)
      : g_(graph), def_(def), node_(std::move(node_name)), out_(std::move(out_name)), args_(std::move(args)),
        types_(std::move(result_types)) {}

  // Argument `i` of the PrimDef (already resolved to a value or its default).
  const MsValue& Arg(size_t i) const { return args_[i]; }
  size_t NumArgs() const { return args_.size(); }
  Expected<MsValue> TensorArg(size_t i) const;
  Expected<int64_t> IntArg(size_t i) const;
  Expected<double> FloatArg(size_t i) const;
  Expected<bool> BoolArg(size_t i) const;
  Expected<std::string> StringArg(size_t i) const;
  // An int or a tuple of ints.
  Expected<std::vector<int64_t>> IntsArg(size_t i) const;
  // A tensor argument, or a scalar made a constant tensor of `dtype`.
  Expected<Value*> TensorOrScalar(size_t i, DataType dtype);

  // What the file records of result `k` (kUndefined / -1 when unknown).
  TensorType Result(size_t k = 0) const { return k < types_.size() ? types_[k] : TensorType{}; }
  const std::string& node_name() const { return node_; }
  const char* op() const { return def_.op; }

  // Appends `op_type` (default domain) reading `inputs`; returns its outputs.
  std::vector<Value*> Emit(const std::string& op_type, std::vector<Value*> inputs, size_t num_outputs = 1,
                           std::map<std::string, Attribute> attrs = {});
  Value* Emit1(const std::string& op_type, std::vector<Value*> inputs, std::map<std::string, Attribute> attrs = {}) {
    return Emit(op_type, std::move(inputs), 1, std::move(attrs))[0];
  }
  Value* ConstInts(const std::vector<int64_t>& v);
  Value* ConstScalar(double v, DataType dtype);
  // A tensor result named like the MINDIR node's output.
  MsValue Out(Value* v, size_t k = 0) const { return MsValue::Tensor(v, Result(k).dtype, Result(k).rank); }

  Status Error(const std::string& what) const;       // InvalidFile naming the node and primitive
  Status Unsupported(const std::string& what) const;  // NotSupported naming the node and primitive

 private:
  Status ArgError(size_t i, const char* expected) const;

  Graph& g_;
  const PrimDef& def_;
  std::string node_, out_;
  std::vector<MsValue> args_;
  std::vector<TensorType> types_;
  int emitted_ = 0;
};

Attribute IntAttr(int64_t v);
Attribute FloatAttr(float v);
Attribute IntsAttr(std::vector<int64_t> v);
Attribute StringAttr(std::string v);

}  // namespace oc::mindir

// What a MINDIR name stands for while the graph is lowered: MindSpore's graphs
// pass tensors, but also scalars, tuples, types and side-effect monads
// between nodes (a Conv2D's stride is a node input, a BatchNorm returns a
// tuple). Only tensors become IR values; the rest is resolved at parse time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "mindir.pb.h"

namespace oc::mindir {

struct MsValue {
  enum class Kind { kNone, kMonad, kTensor, kInt, kFloat, kBool, kString, kTuple };
  Kind kind = Kind::kNone;
  // kTensor: the IR value, and what the file says of it (kUndefined / rank -1
  // when it does not say).
  Value* tensor = nullptr;
  DataType dtype = DataType::kUndefined;
  int rank = -1;
  int64_t i = 0;  // kInt, kBool
  double f = 0;   // kFloat
  std::string s;  // kString
  std::vector<MsValue> items;  // kTuple

  static MsValue None() { return {}; }
  static MsValue Int(int64_t v) { MsValue m; m.kind = Kind::kInt; m.i = v; return m; }
  static MsValue Float(double v) { MsValue m; m.kind = Kind::kFloat; m.f = v; return m; }
  static MsValue Bool(bool v) { MsValue m; m.kind = Kind::kBool; m.i = v; return m; }
  static MsValue String(std::string v) { MsValue m; m.kind = Kind::kString; m.s = std::move(v); return m; }
  static MsValue Ints(const std::vector<int64_t>& v);
  static MsValue Tensor(Value* v, DataType dtype, int rank);
  // "int 3", "tuple(int 1, int 2)", "tensor 'x'" for error messages.
  std::string Describe() const;
};

// The dtype and rank the file records for one tensor result ("shape" attribute).
struct TensorType {
  DataType dtype = DataType::kUndefined;
  int rank = -1;
};

struct DecodedTensor {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  TensorData data;
};

// `s` with bytes outside printable ASCII written as \xNN: names from the file
// go into IR names and error messages, which must stay readable text.
std::string Printable(const std::string& s);

// MINDIR element type -> ours; NotSupported naming `what` for strings/complex.
Expected<DataType> ConvertElemType(int32_t code, const std::string& what);
// MindSpore's TypeId (Cast's `dtype` argument: 43 = float32, ...) -> ours.
Expected<DataType> ConvertTypeId(int64_t type_id, const std::string& what);
// A TensorProto with its data, every size checked against its dims.
Expected<DecodedTensor> DecodeTensor(const mind_ir::TensorProto& t, const std::string& what);
// A Constant node's value or a primitive's attribute. Tensor values are
// added to `graph` as constants named from `name`.
Expected<MsValue> DecodeAttribute(const mind_ir::AttributeProto& a, Graph& graph, const std::string& name,
                                  const std::string& what, int depth = 0);
// A node's "shape" attribute: one entry per tensor result (a tuple gives one per item).
std::vector<TensorType> DecodeResultTypes(const mind_ir::AttributeProto& a);

}  // namespace oc::mindir

// Single operators as small graphs: the compile side of AscendCL's aclop* API
// (src/acl/acl_op.cc) and of `atc --singleop` (tools/atc). An operator call --
// op type, input and output tensors, attributes -- becomes a graph of one node
// (a few for the CANN op types whose names or attributes differ from ONNX's,
// docs/single_op.md) that the model pipeline compiles like any model.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace oc {

struct SingleOpTensor {
  DataType dtype = DataType::kUndefined;  // kUndefined: an absent optional input / any output type
  std::vector<int64_t> dims;              // outputs may hold -1 (any size)
  std::shared_ptr<const std::vector<uint8_t>> const_value;  // inputs: compiled in when set
  int format = -1;  // aclFormat number (-1: undefined); Conv2D reads its input's layout from it
};

struct SingleOpSpec {
  std::string op_type;
  std::vector<SingleOpTensor> inputs, outputs;
  std::map<std::string, Attribute> attrs;
  // Attributes whose values are aclDataType numbers (aclopSetAttrDataType, a
  // JSON "data_type"): translated to ONNX type codes for ONNX ops.
  std::set<std::string> acl_type_attrs;
};

enum class SingleOpErrorKind {
  kNone,
  kOpNotFound,       // unknown op type
  kInputMismatch,    // inputs the op rejects
  kOutputMismatch,   // output count, type or shape differs from the op's
  kAttrMismatch,     // an attribute the op rejects
  kUnsupportedType,  // an element type the CPU operators lack
  kUnsupported,      // a form not supported (unknown dims, data-dependent shapes, NHWC Conv2D, ...)
  kLoadFailed,       // kernel creation failed
};

struct CompiledSingleOp {
  std::shared_ptr<Graph> graph;               // compiled and memory-planned
  std::vector<size_t> slots;                  // per graph input: the caller's input index
  std::vector<size_t> in_bytes;               // per caller input (0: absent or constant)
  std::vector<size_t> out_bytes;              // per caller output
  std::vector<std::vector<int64_t>> out_dims;
  std::vector<DataType> out_types;
};

struct SingleOpResult {
  SingleOpErrorKind error = SingleOpErrorKind::kNone;
  std::string message;  // "<op>: <what>" when error != kNone
  CompiledSingleOp op;
};

// Builds and compiles the graph of `spec` (not the kernels: Executable::Create does that).
SingleOpResult CompileSingleOp(const SingleOpSpec& spec);

// A key that is equal for specs that compile to the same operator (op type,
// tensors with constant values, attributes).
std::string SingleOpKey(const SingleOpSpec& spec);

// Metadata keys of a single-op .om (atc --singleop).
inline constexpr const char* kSingleOpTypeKey = "single_op_type";
inline constexpr const char* kSingleOpKeyKey = "single_op_key";

}  // namespace oc

// Graph IR: a Graph owns Nodes and Values. Values are tensors (dtype, shape with
// symbolic dims kept, optional constant data, and after memory planning an
// arena offset). Nodes are op instances identified by (domain, op_type, opset).
// Nodes are kept in topological order by the passes (TopologicalSort()).
//
// Subgraphs (If branches, Loop/Scan bodies, SequenceMap bodies) are Graphs held
// by graph-valued attributes. A subgraph may read values of enclosing scopes by
// name (ONNX's outer-scope rule). Such reads are bound explicitly, so that the
// enclosing graph's topological order, dead-code elimination and memory planning
// see them as ordinary uses:
//  - the subgraph has one placeholder Value per outer value it reads, listed in
//    Graph::captures (no producer; available from the start, like an input);
//  - the node owning the subgraph lists the outer values themselves as trailing
//    "implicit" inputs, after its ONNX inputs: the captures of each graph
//    attribute in attribute-name order (std::map order), graphs of a kGraphs
//    attribute in list order. Node::NumImplicitInputs() counts them.
// So capture k of a subgraph is bound to the owning node's input at
// NumExplicitInputs() + (captures of the graph attributes before it) + k. A
// nested subgraph reading a value two scopes up makes the middle graph capture
// it too. Passes that rewire values (ReplaceAllUsesWith) therefore keep the
// binding right without looking inside subgraphs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/dtype.h"

namespace oc {

// Constant tensor bytes. Either owned (64-byte aligned heap copy) or a view into
// memory kept alive by `owner` (for example an mmapped .om file).
class TensorData {
 public:
  TensorData() = default;
  // Owned, zero-initialised, 64-byte aligned buffer of `size` bytes.
  static TensorData Allocate(size_t size);
  static TensorData Copy(const void* data, size_t size);
  static TensorData View(std::shared_ptr<const void> owner, const void* data, size_t size);

  const uint8_t* data() const { return data_; }
  // Only on bytes this TensorData may write: a buffer made by Allocate/Copy, or
  // a view of one whose owner holds it exclusively (a loop's recycled buffers).
  uint8_t* mutable_data() { return const_cast<uint8_t*>(data_); }
  size_t size() const { return size_; }
  template <typename T> const T* as() const { return reinterpret_cast<const T*>(data_); }

 private:
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

class Node;
class Graph;

// What a Value holds. For sequences and optionals, dtype/shape describe the
// element tensor (shape usually unknown: has_shape false).
enum class ValueKind : uint8_t {
  kTensor = 0,
  kSequence = 1,          // sequence of tensors of one dtype
  kOptionalTensor = 2,    // optional(tensor)
  kOptionalSequence = 3,  // optional(sequence(tensor))
};
// "tensor", "sequence", "optional(tensor)", "optional(sequence)".
const char* ValueKindName(ValueKind k);

struct Value {
  int id = -1;  // index in Graph::values(); stable until the graph compacts
  std::string name;
  DataType dtype = DataType::kUndefined;
  ValueKind kind = ValueKind::kTensor;
  bool has_shape = false;          // rank known
  std::vector<int64_t> shape;      // -1 = unknown dim
  std::vector<std::string> dim_params;  // symbolic names ("" = none), same size as shape
  std::optional<TensorData> constant;   // initializer or folded value
  Node* producer = nullptr;
  int64_t arena_offset = -1;       // set by the memory planner for activations

  bool IsConstant() const { return constant.has_value(); }
  bool IsStatic() const;           // rank and every dim known
  // -1 unless static, and also when the count does not fit int64 (no UB on
  // absurd dims: SizeOverflows tells that case apart).
  int64_t NumElements() const;
  int64_t ByteSize() const;
  // Every dim known, but the element or byte count does not fit int64: a shape
  // from a file, a flag or an inference that no tensor can have.
  bool SizeOverflows() const;
  std::string ShapeString() const; // "[1,3,N,224]"
};

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph, kGraphs };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  // kTensor:
  DataType tensor_dtype = DataType::kUndefined;
  std::vector<int64_t> tensor_shape;
  TensorData tensor;
  // kGraph / kGraphs (shared: copying a Node shares its bodies, which are
  // treated as immutable once the owning graph is compiled).
  std::shared_ptr<Graph> graph;
  std::vector<std::shared_ptr<Graph>> graphs;
};

class Node {
 public:
  std::string name;
  std::string domain;   // "" is the default ONNX domain
  std::string op_type;
  int opset = 0;        // opset version of `domain` in force for this node
  std::vector<Value*> inputs;   // nullptr for an omitted optional input
  std::vector<Value*> outputs;  // nullptr for an omitted optional output
  std::map<std::string, Attribute> attrs;

  const Attribute* FindAttr(const std::string& n) const;
  bool HasAttr(const std::string& n) const { return FindAttr(n) != nullptr; }
  int64_t GetInt(const std::string& n, int64_t def) const;
  float GetFloat(const std::string& n, float def) const;
  std::string GetString(const std::string& n, const std::string& def) const;
  std::vector<int64_t> GetInts(const std::string& n, std::vector<int64_t> def = {}) const;
  std::vector<float> GetFloats(const std::string& n, std::vector<float> def = {}) const;
  void SetInt(const std::string& n, int64_t v);
  void SetFloat(const std::string& n, float v);
  void SetString(const std::string& n, std::string v);
  void SetInts(const std::string& n, std::vector<int64_t> v);
  void SetFloats(const std::string& n, std::vector<float> v);

  // Input i if present, else nullptr (also for i past the end).
  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
  // "Conv 'conv1'" for error messages.
  std::string Describe() const;

  // Graph-valued attributes' graphs, in binding order (see the file comment).
  std::vector<const Graph*> Subgraphs() const;
  // Trailing inputs that bind the subgraphs' captures (0 without subgraphs).
  size_t NumImplicitInputs() const;
  size_t NumExplicitInputs() const { return inputs.size() - std::min(inputs.size(), NumImplicitInputs()); }
  // Index of the input that binds capture 0 of graph attribute `attr` (for a
  // list of graphs, of its first graph): NumExplicitInputs() plus the
  // captures of every graph bound before it.
  size_t CaptureOffset(std::string_view attr) const;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Creates a value; `name` must be unique (use UniqueName for generated ones).
  Value* AddValue(const std::string& name);
  Value* AddConstant(const std::string& name, DataType dtype, std::vector<int64_t> shape,
                     TensorData data);
  Value* FindValue(const std::string& name) const;
  // Gives `v` a new name (which must be unused), keeping FindValue right.
  void RenameValue(Value* v, const std::string& name);
  // Appends a node; call TopologicalSort() after inserting out of order.
  Node* AddNode(const std::string& op_type, const std::string& name,
                std::vector<Value*> inputs, std::vector<Value*> outputs,
                const std::string& domain = "");
  void RemoveNode(Node* node);
  // Every input use of `from` (and graph output) now refers to `to`.
  void ReplaceAllUsesWith(Value* from, Value* to);
  // Nodes reading `v` (computed on demand).
  std::vector<Node*> Consumers(const Value* v) const;
  bool IsGraphInput(const Value* v) const;
  bool IsGraphOutput(const Value* v) const;
  // Removes values no node, input or output refers to, and renumbers ids.
  void Compact();
  std::string UniqueName(const std::string& prefix);
  Status TopologicalSort();
  // Checks invariants: unique names, producers match, no dangling pointers,
  // topological order, inputs/outputs exist. Names the offending node/value.
  Status Verify() const;
  // Human-readable text form, stable for tests.
  std::string Dump() const;

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  std::map<std::string, int> opset_imports;  // domain ("" = ai.onnx) -> version
  std::string name;
  std::string producer_name;
  int64_t ir_version = 0;
  int64_t arena_size = -1;           // set by the memory planner
  int64_t arena_size_no_reuse = -1;  // sum of all activation sizes (for reporting)
  // Free-form model facts carried into the .om ("input_format" -> "NCHW", ...).
  std::map<std::string, std::string> metadata;
  // Subgraphs only: placeholders of the outer-scope values this graph reads
  // (see the file comment). Empty for a top-level graph.
  std::vector<Value*> captures;
  // True when any node (at any depth) has a graph attribute.
  bool HasSubgraphs() const;
  // True when any value (at any depth) is a sequence or an optional.
  bool HasNonTensorValues() const;

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> by_name_;
  int64_t name_counter_ = 0;
};

// Error naming the node and the output when an output's dims are all known
// but too large to count (Value::SizeOverflows): shape inference runs this
// after each node, so absurd dims in a model or its inputs stop there.
Status CheckOutputSizes(const Node& node);

}  // namespace oc

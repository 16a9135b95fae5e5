// Interpreter: node-by-node evaluation of a Graph with concrete values. The
// fallback for what the static Executable cannot run: shapes known only at run
// time (data-dependent ops, unknown dims), control flow (If/Loop/Scan bodies)
// and sequence/optional values.
//
// Contract:
//  - The graph need not be static or memory-planned; it must pass Graph::Verify
//    and every node's op must be in the OpRegistry. Shape inference is done per
//    node at run time: each node's infer function sees its inputs' concrete
//    shapes and the data of graph constants. When that does not give static
//    outputs (or the kernel factory wants a constant), the node is specialised
//    again with the data of its small inputs (<= 64 elements: shape vectors,
//    axes, scalars) shown as constants too, and from then on always so; as a
//    last resort with every input shown (that kernel is used once, not cached).
//  - Kernels are created from that specialised node and cached per node, keyed
//    by the input dtypes, shapes and the bytes of the inputs shown as constant;
//    so a Loop body that runs 100 iterations at one shape creates its kernels
//    (and packs its weights) once. The cache holds at most kCacheEntriesPerNode
//    entries per node (oldest evicted): memory stays bounded when shapes vary.
//  - A Loop/Scan with zero iterations gives scan outputs of shape
//    [0, <the body output's declared dims, unknown ones as 0>].
//  - Control flow, sequence and optional ops (and Identity) are evaluated by the
//    interpreter itself rather than through kernels (see interpreter_ops.h).
//  - Run() is const and thread-safe: concurrent runs share the kernel cache
//    (one mutex per node, held while a kernel is looked up or created, so runs
//    that miss together create it once; kernels themselves run outside the
//    lock, each run with its own scratch, which the Kernel contract allows).
//  - Errors name the failing node ("... while running Loop node 'loop1'").
//  - Every output tensor is freshly allocated (or shares the bytes of a graph
//    constant or an input, never caller-visible memory written later): a
//    caller may keep results after the next Run.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "graph/graph.h"

namespace oc {

// A concrete tensor: dtype, shape and dense row-major bytes.
struct HostTensor {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  TensorData data;  // ByteSize() bytes; may be a TensorData::View of caller memory

  int64_t NumElements() const;
  size_t ByteSize() const;
  // Owned, zero-filled tensor of this dtype and shape.
  static HostTensor Allocate(DataType dtype, std::vector<int64_t> shape);
};

// A concrete value of any ValueKind.
struct RtValue {
  ValueKind kind = ValueKind::kTensor;
  // Element dtype of a sequence / optional (needed when it is empty).
  DataType elem_dtype = DataType::kUndefined;
  bool present = true;               // optionals: false = empty optional
  HostTensor tensor;                 // kTensor, and kOptionalTensor when present
  std::vector<HostTensor> sequence;  // kSequence, and kOptionalSequence when present

  static RtValue FromTensor(HostTensor t);
  static RtValue FromSequence(DataType elem, std::vector<HostTensor> items);
  static RtValue EmptyOptional(ValueKind kind, DataType elem);
  bool is_tensor() const { return kind == ValueKind::kTensor; }
  // "tensor float32[2,3]", "sequence<int64> of 4", "optional(tensor) empty".
  std::string Describe() const;
};

// Per-node cached kernel (defined in interpreter.cc).
struct InterpreterNodeCache;

class Interpreter {
 public:
  static constexpr size_t kCacheEntriesPerNode = 8;

  // Checks that every op is known; the graph must stay alive (shared).
  static Expected<std::unique_ptr<Interpreter>> Create(std::shared_ptr<const Graph> graph);
  ~Interpreter();

  const Graph& graph() const { return *graph_; }

  // `inputs` in graph().inputs order; `captures` in graph().captures order
  // (subgraphs only). Each input must match its Value's kind and dtype, and
  // its shape where the graph fixes dims. Returns graph().outputs in order.
  Expected<std::vector<RtValue>> Run(std::span<const RtValue> inputs, ThreadPool& pool,
                                     std::span<const RtValue> captures = {}) const;

  // Kernels created so far (all nodes, all depths of this graph only); for tests.
  size_t kernels_created() const;

 private:
  Interpreter() = default;
  std::shared_ptr<const Graph> graph_;
  // One slot per node (graph order); subgraph interpreters live in the nodes' slots.
  std::vector<std::unique_ptr<InterpreterNodeCache>> caches_;
};

// The run-time value of a constant Value (shares its bytes).
RtValue ConstantValue(const Value& v);

}  // namespace oc

// Executable: a planned, static graph with one kernel bound per node. Running it
// is a flat loop over pre-bound steps with no allocation and no map look-ups.
// One Executable may run concurrently from many threads: it is read-only, and
// each run uses its own ExecutionContext (activation arena + pointer table).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "graph/graph.h"
#include "ops/kernel.h"

namespace oc::rt { class Device; }

namespace oc {

class Executable;

// Per-run state. Made by Executable::NewContext; reusable across runs.
class ExecutionContext {
 public:
  ~ExecutionContext();
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

 private:
  friend class Executable;
  ExecutionContext() = default;
  uint8_t* arena_ = nullptr;
  size_t arena_bytes_ = 0;
  bool owns_arena_ = true;
  std::vector<void*> value_ptrs_;   // indexed by Value::id
  uint8_t* scratch_ = nullptr;       // kernels' per-run scratch (owned)
  std::vector<const void*> in_scratch_;
  std::vector<void*> out_scratch_;
};

class Executable {
 public:
  // `graph` must be static with every activation planned (Value::arena_offset,
  // Graph::arena_size). `prepacked[i]` are the bytes for node i (may be empty;
  // they are the CPU kernel's, so only a node placed on the CPU receives them).
  // `devices`: where nodes may run besides the CPU, in priority order; each
  // node goes to the first that has a kernel for it, else to the CPU
  // (runtime/device/device.h). The devices must outlive the Executable.
  static Expected<std::shared_ptr<Executable>> Create(
      std::shared_ptr<const Graph> graph, std::vector<std::span<const uint8_t>> prepacked = {},
      std::span<rt::Device* const> devices = {});

  const Graph& graph() const { return *graph_; }
  size_t num_inputs() const { return graph_->inputs.size(); }
  size_t num_outputs() const { return graph_->outputs.size(); }
  const Value& input(size_t i) const { return *graph_->inputs[i]; }
  const Value& output(size_t i) const { return *graph_->outputs[i]; }
  int64_t arena_size() const { return graph_->arena_size; }

  Expected<std::unique_ptr<ExecutionContext>> NewContext() const;
  // A context whose arena is caller-owned memory of at least arena_size() bytes,
  // 64-byte aligned (aclmdlLoadFromFileWithMem). The memory must outlive it.
  Expected<std::unique_ptr<ExecutionContext>> NewContextWithArena(void* arena, size_t bytes) const;
  // A context from the free list (or a new one); give it back with Release.
  Expected<std::unique_ptr<ExecutionContext>> AcquireContext() const;
  void ReleaseContext(std::unique_ptr<ExecutionContext> ctx) const;

  // inputs[i] / outputs[i] point to dense buffers of input(i).ByteSize() /
  // output(i).ByteSize() bytes. Errors name the failing node.
  Status Run(ExecutionContext& ctx, std::span<const void* const> inputs,
             std::span<void* const> outputs, ThreadPool& pool) const;

  // The device type node i (index in graph().nodes()) was placed on ("cpu").
  std::string_view node_device(size_t node) const;

  // Bytes of kernel scratch each context holds besides the arena.
  size_t scratch_bytes() const { return scratch_bytes_; }

  // Kernel-prepacked bytes per node (for the .om writer).
  std::vector<std::vector<uint8_t>> ExportPrepacked() const;
  // The same for one node (index in graph().nodes()); empty when out of range.
  std::vector<uint8_t> ExportPrepacked(size_t node) const;
  // Per node, the inputs its prepacked bytes hold exactly (Kernel::PrepackedInputs),
  // for OmWriteOptions::prepacked_inputs.
  std::vector<std::vector<int>> PrepackedInputs() const;

 private:
  struct Step {
    Kernel* kernel;
    const Node* node;
    rt::Device* device;  // nullptr: the CPU, whose launch is a direct call
    uint32_t in_begin, in_count;    // into step_inputs_
    uint32_t out_begin, out_count;  // into step_outputs_
  };
  struct OutputCopy {
    int value_id;     // source value
    size_t output;    // graph output index to fill
    size_t bytes;
  };
  Executable() = default;
  // The step loop; kProfile adds the per-step timers (chosen once per run):
  // OPENCANN_PROFILE_NODES totals and/or, when trace_graph != 0, one
  // profiling record per node (runtime/trace.h).
  template <bool kProfile>
  Status RunSteps(ExecutionContext& ctx, ThreadPool& pool, uint32_t trace_graph) const;
  // The tracer's id for this graph, registered on first use.
  uint32_t TraceGraphId() const;

  std::shared_ptr<const Graph> graph_;
  std::vector<KernelPtr> kernels_;
  std::vector<Step> steps_;
  std::vector<int> step_inputs_;   // value ids, -1 for a missing optional input
  std::vector<int> step_outputs_;  // value ids, -1 for a missing optional output
  std::vector<int> input_ids_;
  std::vector<int> output_ids_;    // -1 where the output is filled by a copy
  std::vector<OutputCopy> output_copies_;
  std::vector<int64_t> arena_offsets_;  // per value id, -1 if not in the arena
  std::vector<const void*> const_ptrs_; // per value id, non-null for constants
  size_t max_step_io_ = 0;
  size_t scratch_bytes_ = 0;  // max over kernels of ScratchBytes()

  // OPENCANN_PROFILE_NODES=1: per-step wall time, summed over runs, merged into
  // a process-wide table by op type when the Executable is destroyed and
  // printed to stderr at exit (executor/node_profile.cc).
  bool profile_ = false;
  std::unique_ptr<std::atomic<int64_t>[]> step_ns_;
  mutable std::atomic<int64_t> profiled_runs_{0};
  mutable std::atomic<uint32_t> trace_graph_id_{0};
  mutable std::mutex trace_mu_;

 public:
  ~Executable();

 private:

  mutable std::mutex pool_mu_;
  mutable std::vector<std::unique_ptr<ExecutionContext>> free_contexts_;
};

// Runs one node with constant inputs and returns its outputs (used by constant
// folding). Inputs must be constant and static; outputs must have static shapes.
Expected<std::vector<TensorData>> EvaluateNode(const Node& node);

}  // namespace oc

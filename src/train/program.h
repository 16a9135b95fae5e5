// Training programs: a graph compiled once and run many times against a store
// of named, persistent tensors (parameters, optimiser state, batch-norm
// statistics, the step counter).
//
// A graph input whose name is a stored tensor is bound to it; the others are
// fed at each run. A program may
//  - evaluate (no loss): fetches from feeds, e.g. a network's predictions;
//  - differentiate: with a loss, AppendGradients adds the backward nodes, and
//    the gradients with respect to the named parameters are either fetched
//    (return_grads: MindSpore's value_and_grad) or handed to
//  - an optimiser (OptimizerSpec): a second, small compiled graph whose
//    outputs are bound to the buffers of the parameters and states they update
//    (in place); the step counter advances with each update.
// With neither loss nor graph — update-only — the program applies the
// optimiser to gradients fed by the caller (MindSpore's `optimizer(grads)`).
//
// state_updates write values the graph computes back into stored tensors after
// each run (batch normalisation's running statistics in training mode).
//
// Everything is allocated when the program is compiled: a run allocates nothing.
#pragma once

#include <map>
#include <span>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "graph/graph.h"
#include "train/optimizer.h"

namespace oc {
class Executable;
class ExecutionContext;
}  // namespace oc

namespace oc::train {

// One stored tensor: dense, 64-byte aligned.
struct StoredTensor {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  TensorData data;
  size_t bytes() const { return data.size(); }
};

// Named persistent tensors. Entries stay where they are (programs keep
// pointers to them); Set on an existing name keeps its buffer when the dtype
// and shape are unchanged and replaces it otherwise (programs bound to the old
// one then refuse to run, naming it).
class TensorStore {
 public:
  // `data` may be null: zeros.
  Status Set(const std::string& name, DataType dtype, std::vector<int64_t> shape, const void* data);
  StoredTensor* Find(const std::string& name);
  const StoredTensor* Find(const std::string& name) const;
  Status Remove(const std::string& name);
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, std::unique_ptr<StoredTensor>> tensors_;
  std::vector<std::unique_ptr<StoredTensor>> retired_;  // removed, still pointed at by programs
};

struct ProgramSpec {
  std::string loss;                   // empty: no backward
  // The tensors to differentiate: stored tensors, or (without an optimiser)
  // fed graph inputs too (gradients with respect to inputs).
  std::vector<std::string> params;
  bool return_grads = false;          // fetch the gradients, after `fetches`
  std::vector<std::string> fetches;   // values returned by Run, in order
  std::vector<std::pair<std::string, std::string>> state_updates;  // (graph value, stored tensor)
  OptimizerSpec optimizer;            // kind kNone: no update
};

// The shape and type of a feed or fetch.
struct TensorInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  size_t bytes = 0;
};

class Program {
 public:
  // `graph` may be null only for an update-only program (no loss, an
  // optimiser; the feeds are then the gradients, "grad.<param>").
  // Optimiser states and the step counter missing from the store are created
  // (zeros). Errors name the input, value or parameter at fault.
  static Expected<std::unique_ptr<Program>> Compile(std::unique_ptr<Graph> graph, const ProgramSpec& spec,
                                                    TensorStore& store);
  ~Program();

  const std::vector<TensorInfo>& feeds() const { return feeds_; }
  const std::vector<TensorInfo>& fetches() const { return fetches_; }

  // feeds[i] / fetches[i]: dense buffers of feeds()[i].bytes / fetches()[i].bytes.
  // `lr` is the learning rate of this run's update (ignored without one).
  Status Run(std::span<const void* const> feeds, std::span<void* const> fetches, float lr, ThreadPool& pool);

 private:
  struct Binding {
    size_t input;              // executable input index
    std::string name;          // stored tensor
    StoredTensor* tensor;
    DataType dtype;
    std::vector<int64_t> shape;
  };
  Program() = default;
  Status CheckBindings(const std::vector<Binding>& bindings) const;
  Status CompileMain(std::unique_ptr<Graph> graph, const ProgramSpec& spec, TensorStore& store);
  Status CompileUpdate(const ProgramSpec& spec, TensorStore& store);

  // The forward (+ backward) graph.
  std::shared_ptr<Executable> main_;
  std::unique_ptr<ExecutionContext> main_ctx_;
  std::vector<Binding> main_bound_;
  std::vector<size_t> main_feed_inputs_;   // per feed, its main input index
  size_t num_user_fetches_ = 0;            // main outputs [0, n) are the caller's fetches
  std::vector<TensorData> grads_;          // main outputs after the fetches and state values (no return_grads)
  std::vector<std::pair<TensorData, StoredTensor*>> state_out_;
  std::vector<const void*> main_in_;
  std::vector<void*> main_out_;

  // The optimiser.
  std::shared_ptr<Executable> update_;
  std::unique_ptr<ExecutionContext> update_ctx_;
  std::vector<Binding> update_bound_;      // params, states and the step counter
  std::vector<size_t> update_aliases_;
  StoredTensor* step_ = nullptr;
  std::vector<size_t> update_grad_inputs_; // per parameter, its update input index
  bool update_only_ = false;
  float lr_ = 0;
  std::vector<const void*> update_in_;
  std::vector<void*> update_out_;

  std::vector<TensorInfo> feeds_, fetches_;
};

}  // namespace oc::train

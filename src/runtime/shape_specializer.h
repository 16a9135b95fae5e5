// ShapeSpecializer: runs a graph that has unknown dims (compiled with
// CompileOptions::allow_dynamic; a format-version-2 .om) at concrete input
// shapes. For each input-shape signature it clones the graph, sets the input
// shapes, reruns the compile pipeline on the clone (shape inference now
// resolves every dim, shape computations fold, fusion sees static shapes, the
// memory plan is made for those sizes) and creates an Executable, reusing
// kernel-prepacked weight bytes by node name. Constant bytes are shared with
// the base graph, never copied.
//
// The executables are kept in a least-recently-used cache of a fixed number of
// entries (OPENCANN_SHAPE_CACHE_SIZE, default 8) plus any pinned ones (the
// gears of an ATC dynamic-batch / image-size / dims model, specialised at
// load), so memory stays bounded however many shapes an application uses.
// An evicted executable lives on until its last run holding it finishes.
//
// Where static executables cannot do (an op whose output shape depends on input
// data, such as NonZero or Unique, or an op without a static kernel, such as
// control flow), the signature is marked for the node-by-node Interpreter
// (executor/interpreter.h) over the base graph, made once per specializer.
//
// Thread-safe: Get() may be called from many threads; a new signature is
// specialised under the cache's lock (other signatures wait meanwhile).
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "executor/executable.h"
#include "executor/interpreter.h"
#include "graph/graph.h"

namespace oc {

using ShapeSignature = std::vector<std::vector<int64_t>>;  // one shape per graph input

// Graph metadata key of atc's shape ranges: "x:1~8,-,224,224;y:..." (per dim
// lo~hi, hi -1 unbounded, "-" no range). CheckSignature enforces them.
inline constexpr const char* kInputShapeRangeKey = "input_shape_range";

// "x[1,3,224,224], y[1,10]": the inputs' names with their shapes.
std::string SignatureString(const Graph& graph, const ShapeSignature& shapes);

class ShapeSpecializer {
 public:
  static constexpr size_t kDefaultCapacity = 8;
  // OPENCANN_SHAPE_CACHE_SIZE when it is a whole number in [1, 4096], else 8.
  static size_t DefaultCapacity();

  // `prepacked[i]` belongs to graph->nodes()[i] (may be empty); the bytes must
  // outlive the specializer (they usually live in the mmapped .om).
  ShapeSpecializer(std::shared_ptr<const Graph> graph, std::vector<std::span<const uint8_t>> prepacked,
                   size_t capacity = DefaultCapacity());

  const Graph& graph() const { return *graph_; }

  // Checks a signature against the graph inputs: one shape per input, the
  // input's rank, every dim >= 0 and equal to the input's fixed dims. Errors
  // name the input and the dim.
  Status CheckSignature(const ShapeSignature& shapes) const;
  // The range of dim `d` of input `i` from kInputShapeRangeKey: {lo, hi}
  // (hi -1: unbounded); {0, -1} without one.
  std::pair<int64_t, int64_t> DimRange(size_t i, size_t d) const;

  // The executable for `shapes` (specialised on first use), or nullptr when
  // those shapes need the interpreter (see above; Interpreter() then runs
  // them). Errors: a bad signature (InvalidArgument) or shapes the model's ops
  // reject.
  Expected<std::shared_ptr<const Executable>> Get(const ShapeSignature& shapes);
  // The node-by-node interpreter over the base graph (made on first use).
  Expected<std::shared_ptr<const Interpreter>> GetInterpreter();
  // Specialises `shapes` now and keeps it out of the LRU (never evicted).
  Status Pin(const ShapeSignature& shapes);

  size_t capacity() const { return capacity_; }
  // Entries now cached (pinned included).
  size_t cached() const;
  // Specialisations made so far (cache misses).
  uint64_t specializations() const;
  // Kernel-prepacked bytes by node name: those given at construction plus those
  // learnt from the specialisations so far. The spans stay valid while the
  // specializer lives. (atc stores them in a dynamic model's .om.)
  std::map<std::string, std::span<const uint8_t>> PackedByName() const;
  // Nodes whose packing was learnt from a specialisation (packed at run time
  // because the bytes given at construction had none for them).
  size_t learnt() const;

 private:
  struct Entry {
    ShapeSignature shapes;
    std::shared_ptr<const Executable> exe;
    bool pinned = false;
  };
  Expected<std::shared_ptr<const Executable>> Specialize(const ShapeSignature& shapes);
  Expected<std::shared_ptr<const Executable>> GetLocked(const ShapeSignature& shapes, bool pin);

  std::shared_ptr<const Graph> graph_;
  size_t capacity_;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges_;  // per input, per dim
  // Prepacked bytes by node name: from the .om, then learnt from the first
  // executable that packed a node the .om had none for (kernels check the
  // bytes' layout and repack when they do not fit).
  std::map<std::string, std::span<const uint8_t>> packed_;
  std::list<std::vector<uint8_t>> learnt_;  // owns bytes that packed_ points into
  std::set<std::string> asked_;              // nodes whose packing was looked for once

  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
  std::shared_ptr<const Interpreter> interpreter_;
  uint64_t specializations_ = 0;
};

}  // namespace oc

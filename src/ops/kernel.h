// The CPU kernel contract. A kernel object is created once per node when a model
// is loaded (or when atc folds constants); at that point every shape is static
// and known, so the kernel precomputes whatever it can (strides, broadcast plans,
// packed weights). Run() receives only raw pointers and must not allocate.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "graph/graph.h"

namespace oc {

// What a kernel factory sees. `node` carries attributes, opset and the input and
// output Values (dtype, static shape, constant data when the input is constant).
struct KernelInit {
  const Node& node;
  // Bytes the same kernel returned from ExportPrepacked() at compile time (stored
  // in the .om); empty when there are none. Stays valid while the model is loaded.
  std::span<const uint8_t> prepacked;
  // Most threads Run() will be given (size per-thread buffers for this).
  int max_threads = 1;
};

// Pointers for one run, in the node's input/output order. A missing optional
// input is nullptr. Tensors are dense, row-major, with the shapes given at init.
struct KernelIO {
  const void* const* inputs;
  size_t num_inputs;
  void* const* outputs;
  size_t num_outputs;
  ThreadPool* pool;  // never null
  // Per-run scratch of at least Kernel::ScratchBytes() bytes, 64-byte aligned,
  // owned by the execution context: concurrent runs of one model never share it.
  void* scratch = nullptr;

  template <typename T> const T* in(size_t i) const { return static_cast<const T*>(inputs[i]); }
  template <typename T> T* out(size_t i) const { return static_cast<T*>(outputs[i]); }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Errors are for data-dependent failures only (for example an index out of
  // range); they name the node. Shapes were validated at init.
  virtual Status Run(const KernelIO& io) = 0;
  // Weights transformed for this kernel (for example packed GEMM panels), to be
  // stored in the .om and handed back through KernelInit::prepacked.
  virtual std::vector<uint8_t> ExportPrepacked() const { return {}; }
  // Node inputs (constant) that ExportPrepacked() holds exactly, on any ISA: the
  // .om writer may then store such an input only inside these bytes (when every
  // node reading it says so). A kernel created from a .om can then see that
  // input's Value with `constant` set but constant->data() == nullptr (and
  // KernelIO::inputs[i] == nullptr); it must take what it needs from
  // KernelInit::prepacked, rebuilding the raw values when its micro-kernel
  // differs from the one the bytes were packed for, and fail with a Status
  // (never crash) when the bytes do not hold them. The reader accepts such
  // inputs only for the ops listed in om_internal::AcceptsPackedOnlyInput.
  virtual std::vector<int> PrepackedInputs() const { return {}; }
  // Bytes of per-run scratch Run() needs in KernelIO::scratch (fixed after
  // creation). Prefer this over buffers inside the kernel object, which would
  // serialise concurrent runs of the same model.
  virtual size_t ScratchBytes() const { return 0; }
};

using KernelPtr = std::unique_ptr<Kernel>;

}  // namespace oc

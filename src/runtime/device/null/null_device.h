// The null device: a test-only second device that shows the device seam at
// work. It registers kernels for a few ops under the type "null" (Relu and
// same-shape float32 Add, Sub, Mul, Div, written here as plain loops) and
// claims only those nodes; every other node of a model falls back to the CPU,
// as with ONNX Runtime's execution providers. Its memory is host memory with
// its own accounting; its streams are host streams. It counts the kernels
// launched on it, so a test can see where nodes ran.
//
// Built into the unit tests only (CMakeLists.txt), never into the library.
#pragma once

#include <atomic>
#include <map>
#include <mutex>

#include "runtime/device/device.h"

namespace oc::rt {

inline constexpr std::string_view kNullDevice = "null";

class NullDevice final : public Device {
 public:
  // Registers the null kernels in the global op registry (idempotent).
  static Status RegisterKernels();
  // Takes them off again.
  static void UnregisterKernels();

  explicit NullDevice(bool host_accessible = true) : host_accessible_(host_accessible) {}
  ~NullDevice() override;

  std::string_view type() const override { return kNullDevice; }
  bool host_accessible() const override { return host_accessible_; }

  Expected<void*> Allocate(size_t bytes) override;
  Status Free(void* p) override;
  Status Copy(void* dst, const void* src, size_t bytes, CopyKind kind) override;

  std::unique_ptr<Stream> CreateStream() override { return streams_.Create(); }
  Status Synchronize() override { return streams_.SynchronizeAll(); }

  KernelFactory FindKernel(const Node& node, const OpDef& def) const override;
  Status Launch(Kernel& kernel, const KernelIO& io) override;

  int64_t launches() const { return launches_.load(); }
  size_t live_bytes() const;

 private:
  const bool host_accessible_;
  std::atomic<int64_t> launches_{0};
  mutable std::mutex mu_;
  std::map<void*, size_t> blocks_;
  HostStreamSet streams_;
};

}  // namespace oc::rt

// The CPU device: the device built into the library and the one every other
// device falls back to. Its "device" memory is host RAM kept in a registry
// (memory_registry.h) so that the API layer can tell device from host memory;
// its streams are host streams; a kernel launch is a direct call.
#pragma once

#include "runtime/device/cpu/memory_registry.h"
#include "runtime/device/device.h"

namespace oc::rt {

class CpuDevice final : public Device {
 public:
  // The process's CPU device (never destroyed: streams' workers and atexit
  // ordering must not race with it).
  static CpuDevice& Get();

  CpuDevice() = default;
  CpuDevice(const CpuDevice&) = delete;
  CpuDevice& operator=(const CpuDevice&) = delete;

  std::string_view type() const override { return kCpuDevice; }
  bool host_accessible() const override { return true; }

  Expected<void*> Allocate(size_t bytes) override;
  Status Free(void* p) override;
  Status Copy(void* dst, const void* src, size_t bytes, CopyKind kind) override;

  std::unique_ptr<Stream> CreateStream() override { return streams_.Create(); }
  Status Synchronize() override { return streams_.SynchronizeAll(); }

  Status Launch(Kernel& kernel, const KernelIO& io) override { return kernel.Run(io); }

  // Device and pinned-host blocks with their accounting (aclrtMalloc and
  // aclrtMallocHost, the host/device checks of aclrtMemcpy).
  MemoryRegistry& memory() { return memory_; }

 private:
  MemoryRegistry memory_;
  HostStreamSet streams_;
};

}  // namespace oc::rt

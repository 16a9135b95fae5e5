// The CPU devices: the device type built into the library and the one every
// other device falls back to. The process has several logical CPU devices
// (OPENCANN_DEVICE_COUNT, default 8, at most kMaxLogicalDevices), so that a
// program binding one device per rank (HCCL: aclrtSetDevice(rank % n)) runs
// unchanged; each has its own streams and its own account of device memory,
// all backed by the host. "Device" memory is host RAM kept in one registry
// (memory_registry.h) so that the API layer can tell device from host memory;
// streams are host streams; a kernel launch is a direct call.
#pragma once

#include "runtime/device/cpu/memory_registry.h"
#include "runtime/device/device.h"

namespace oc::rt {

class CpuDevice final : public Device {
 public:
  // Logical CPU device `id` (0 <= id < Count(); never destroyed: streams'
  // workers and atexit ordering must not race with it).
  static CpuDevice& Get(int id = 0);
  // How many logical CPU devices the process offers: OPENCANN_DEVICE_COUNT
  // (1..kMaxLogicalDevices) or 8; read once.
  static int Count();

  explicit CpuDevice(int id) : id_(id) {}
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

  int id() const { return id_; }
  // Device and pinned-host blocks of every logical CPU device with their
  // accounting (aclrtMalloc and aclrtMallocHost, the host/device checks of
  // aclrtMemcpy): one registry, since all are the same RAM.
  static MemoryRegistry& memory();

 private:
  const int id_;
  HostStreamSet streams_;
};

}  // namespace oc::rt

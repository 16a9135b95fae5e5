// "Device" memory of the CPU device. Allocations are kept in an address-ordered
// registry so that the API layer can tell device memory from host memory and
// check that a copy's range lies inside one block: the host/device split is
// real even though both live in the same RAM, so code written against this
// device behaves the same on a discrete accelerator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include "base/status.h"
#include "runtime/device/cpu/device_pool.h"

namespace oc::rt {

enum class MemKind { kDevice, kHost };  // aclrtMalloc / aclrtMallocHost

// Logical devices the registry keeps separate accounts for (device ids 0..63).
inline constexpr int kMaxLogicalDevices = 64;

struct MemBlock {
  uintptr_t begin = 0;
  size_t size = 0;
  MemKind kind = MemKind::kDevice;
  size_t chunk = 0;  // bytes held in the pool for this block (>= size)
  int device = 0;    // the logical device a kDevice block belongs to
};

struct MemStats {
  size_t device_bytes = 0;  // live aclrtMalloc bytes, all devices
  size_t device_bytes_by_id[kMaxLogicalDevices] = {};  // ... per logical device
  size_t host_bytes = 0;    // live aclrtMallocHost bytes
  size_t peak_bytes = 0;    // highest device_bytes + host_bytes seen
  size_t live_blocks = 0;
  PoolStats pool;           // the caching allocator behind both kinds
};

class MemoryRegistry {
 public:
  MemoryRegistry() = default;
  ~MemoryRegistry() { FreeAll(); }
  MemoryRegistry(const MemoryRegistry&) = delete;
  MemoryRegistry& operator=(const MemoryRegistry&) = delete;

  // 64-byte aligned, uninitialised, from the caching pool. size must be > 0;
  // `device` (0..kMaxLogicalDevices-1) is the owner of a kDevice block.
  Expected<void*> Allocate(size_t size, MemKind kind, int device = 0);
  // `p` must be the start of a live block of `kind`.
  Status Free(void* p, MemKind kind);
  // The live block that contains all of [p, p + size) (size 0 counts as 1).
  std::optional<MemBlock> Find(const void* p, size_t size) const;
  // True when any byte of [p, p + size) is inside a device block.
  bool OverlapsDevice(const void* p, size_t size) const;
  MemStats Stats() const;
  // Frees every live block and returns the pool's cache to the system.
  void FreeAll();
  // Returns cached (freed) chunks to the system; live blocks stay.
  void ReleaseCached() { pool_.ReleaseCached(); }

 private:
  std::optional<MemBlock> FindLocked(const void* p, size_t size) const;
  mutable std::mutex mu_;
  std::map<uintptr_t, MemBlock> blocks_;
  MemStats stats_;
  DevicePool pool_;
};

// Total and available bytes of the machine from /proc/meminfo (MemTotal,
// MemAvailable); falls back to sysconf when the file is unreadable.
struct SystemMemory {
  size_t total = 0;
  size_t available = 0;
};
SystemMemory ReadSystemMemory();

}  // namespace oc::rt

// A caching allocator for the CPU device's memory (aclrtMalloc / aclrtMallocHost).
//
// Applications allocate and free buffers of the same few sizes over and over
// (inputs and outputs per request, model work memory per load). Going to the
// system allocator each time costs page faults on every reuse of a large
// buffer (fresh pages are zero-filled by the kernel) and fragments the heap.
// The pool keeps freed chunks, keyed by size, and hands them out again when a
// request fits one closely; chunks above the cache limit go back to the system.
// Like a GPU caching allocator, it trades address reuse for speed: a stale
// pointer into a freed buffer is not detected, so sanitizer builds default to a
// cache limit of 0 (every free goes back to the system, where ASan sees it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "base/status.h"

namespace oc::rt {

struct PoolStats {
  size_t in_use_bytes = 0;     // bytes the callers asked for, live
  size_t reserved_bytes = 0;   // chunk bytes held from the system (live + cached)
  size_t cached_bytes = 0;     // chunk bytes kept for reuse
  size_t peak_in_use_bytes = 0;
  size_t peak_reserved_bytes = 0;
  uint64_t allocations = 0;    // Allocate calls that succeeded
  uint64_t cache_hits = 0;     // ... served from the cache
  uint64_t system_allocations = 0;
  uint64_t system_frees = 0;
};

class DevicePool {
 public:
  // Default cache limit: OPENCANN_DEVICE_POOL_CACHE_MB if set (0 disables the
  // cache), else 1 GiB (0 under AddressSanitizer).
  DevicePool();
  explicit DevicePool(size_t cache_limit_bytes) : cache_limit_(cache_limit_bytes) {}
  ~DevicePool() { ReleaseCached(); }
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // 64-byte aligned, uninitialised (a reused chunk keeps its old contents).
  // `size` must be > 0. `*chunk_bytes` receives the chunk size actually held.
  Expected<void*> Allocate(size_t size, size_t* chunk_bytes = nullptr);
  // `p` from Allocate with the same `size` and the `chunk_bytes` it reported;
  // the caller has validated the pointer.
  void Free(void* p, size_t size, size_t chunk_bytes);
  // Returns every cached chunk to the system (live chunks are untouched).
  void ReleaseCached();
  PoolStats Stats() const;
  size_t cache_limit() const { return cache_limit_; }

  // Chunk size for a request: 512-byte granules up to 1 MiB, then 64 KiB
  // granules up to 64 MiB, then 2 MiB granules. Exposed for tests.
  static size_t ChunkSize(size_t size);

 private:
  void ReleaseDownToLocked(size_t limit);
  mutable std::mutex mu_;
  size_t cache_limit_;
  std::multimap<size_t, void*> cached_;  // chunk size -> chunk
  PoolStats stats_;
};

}  // namespace oc::rt

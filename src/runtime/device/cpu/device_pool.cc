#include "runtime/device/cpu/device_pool.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <sys/mman.h>
#include <string>

namespace oc::rt {

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMiB = size_t{1} << 20;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

size_t DefaultCacheLimit() {
  if (const char* env = std::getenv("OPENCANN_DEVICE_POOL_CACHE_MB")) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0' && mb < (SIZE_MAX >> 20)) return static_cast<size_t>(mb) << 20;
  }
  return kSanitized ? 0 : 1024 * kMiB;
}

size_t RoundUp(size_t v, size_t g) { return (v + g - 1) / g * g; }

// Chunks of 2 MiB and more are 2 MiB aligned and asked to be backed by
// transparent huge pages (where the kernel's THP mode is "madvise", as on
// Debian): a large tensor then costs 512 times fewer page faults and TLB
// entries, which is most of a first copy into it.
constexpr size_t kHugeAlign = 2 * kMiB;
size_t AlignFor(size_t chunk) { return chunk >= kHugeAlign ? kHugeAlign : kAlign; }

void* SystemAllocate(size_t chunk) {
  void* p = ::operator new(chunk, std::align_val_t(AlignFor(chunk)), std::nothrow);
#if defined(MADV_HUGEPAGE)
  if (p && chunk >= kHugeAlign && !kSanitized) ::madvise(p, chunk, MADV_HUGEPAGE);
#endif
  return p;
}

void SystemFree(void* p, size_t chunk) { ::operator delete(p, std::align_val_t(AlignFor(chunk))); }

}  // namespace

DevicePool::DevicePool() : cache_limit_(DefaultCacheLimit()) {}

size_t DevicePool::ChunkSize(size_t size) {
  if (size <= kMiB) return RoundUp(size, 512);
  if (size <= 64 * kMiB) return RoundUp(size, 64 * 1024);
  return RoundUp(size, 2 * kMiB);
}

Expected<void*> DevicePool::Allocate(size_t size, size_t* chunk_bytes) {
  if (size == 0) return InvalidArgument("size must be greater than 0");
  if (size > SIZE_MAX / 2) return ResourceExhausted("size ", size, " is too large");
  const size_t chunk = ChunkSize(size);
  {
    std::lock_guard<std::mutex> lk(mu_);
    // A cached chunk at most 1/8 larger than needed: repeated sizes hit exactly,
    // and a small request never pins a much larger chunk.
    auto it = cached_.lower_bound(chunk);
    if (it != cached_.end() && it->first <= chunk + chunk / 8) {
      size_t got = it->first;
      void* p = it->second;
      cached_.erase(it);
      stats_.cached_bytes -= got;
      stats_.in_use_bytes += size;
      stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
      ++stats_.allocations;
      ++stats_.cache_hits;
      if (chunk_bytes) *chunk_bytes = got;
      return p;
    }
  }
  void* p = SystemAllocate(chunk);
  if (!p) {
    // The cache may be what stands in the way: give it back and try once more.
    ReleaseCached();
    p = SystemAllocate(chunk);
    if (!p) return ResourceExhausted("cannot allocate ", size, " bytes");
  }
  std::lock_guard<std::mutex> lk(mu_);
  stats_.reserved_bytes += chunk;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  stats_.in_use_bytes += size;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
  ++stats_.allocations;
  ++stats_.system_allocations;
  if (chunk_bytes) *chunk_bytes = chunk;
  return p;
}

void DevicePool::Free(void* p, size_t size, size_t chunk_bytes) {
  std::lock_guard<std::mutex> lk(mu_);
  stats_.in_use_bytes -= size;
  if (chunk_bytes > cache_limit_) {
    stats_.reserved_bytes -= chunk_bytes;
    ++stats_.system_frees;
    SystemFree(p, chunk_bytes);
    return;
  }
  cached_.emplace(chunk_bytes, p);
  stats_.cached_bytes += chunk_bytes;
  ReleaseDownToLocked(cache_limit_);
}

void DevicePool::ReleaseDownToLocked(size_t limit) {
  // Largest first: the fewest system calls to get under the limit.
  while (stats_.cached_bytes > limit && !cached_.empty()) {
    auto it = std::prev(cached_.end());
    stats_.cached_bytes -= it->first;
    stats_.reserved_bytes -= it->first;
    ++stats_.system_frees;
    SystemFree(it->second, it->first);
    cached_.erase(it);
  }
}

void DevicePool::ReleaseCached() {
  std::lock_guard<std::mutex> lk(mu_);
  ReleaseDownToLocked(0);
}

PoolStats DevicePool::Stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

}  // namespace oc::rt

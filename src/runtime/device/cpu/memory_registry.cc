#include "runtime/device/cpu/memory_registry.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <new>
#include <sstream>
#include <string>

namespace oc::rt {

namespace {
const char* KindName(MemKind k) { return k == MemKind::kDevice ? "device" : "host"; }
}  // namespace

Expected<void*> MemoryRegistry::Allocate(size_t size, MemKind kind, int device) {
  if (device < 0 || device >= kMaxLogicalDevices) return InvalidArgument("device ", device, " is out of range");
  if (size == 0) return InvalidArgument("size must be greater than 0");
  size_t chunk = 0;
  auto got = pool_.Allocate(size, &chunk);
  if (!got.ok()) return ResourceExhausted("cannot allocate ", size, " bytes of ", KindName(kind), " memory: ",
                                          got.status().message());
  void* p = *got;
  std::lock_guard<std::mutex> lk(mu_);
  blocks_[reinterpret_cast<uintptr_t>(p)] = MemBlock{reinterpret_cast<uintptr_t>(p), size, kind, chunk, device};
  (kind == MemKind::kDevice ? stats_.device_bytes : stats_.host_bytes) += size;
  if (kind == MemKind::kDevice) stats_.device_bytes_by_id[device] += size;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.device_bytes + stats_.host_bytes);
  ++stats_.live_blocks;
  return p;
}

Status MemoryRegistry::Free(void* p, MemKind kind) {
  MemBlock freed;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(p));
    if (it == blocks_.end()) {
      if (auto inside = FindLocked(p, 1))
        return InvalidArgument(p, " points ", reinterpret_cast<uintptr_t>(p) - inside->begin,
                               " bytes into a ", KindName(inside->kind),
                               " allocation; pass the address the allocation returned");
      return InvalidArgument(p, " is not a live ", KindName(kind), " allocation (never allocated or already freed)");
    }
    if (it->second.kind != kind)
      return InvalidArgument(p, " is ", KindName(it->second.kind), " memory, not ", KindName(kind),
                             " memory (use the matching free function)");
    (kind == MemKind::kDevice ? stats_.device_bytes : stats_.host_bytes) -= it->second.size;
    if (kind == MemKind::kDevice) stats_.device_bytes_by_id[it->second.device] -= it->second.size;
    --stats_.live_blocks;
    freed = it->second;
    blocks_.erase(it);
  }
  pool_.Free(p, freed.size, freed.chunk);
  return Status::Ok();
}

std::optional<MemBlock> MemoryRegistry::Find(const void* p, size_t size) const {
  std::lock_guard<std::mutex> lk(mu_);
  return FindLocked(p, size);
}

std::optional<MemBlock> MemoryRegistry::FindLocked(const void* p, size_t size) const {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = blocks_.upper_bound(a);
  if (it == blocks_.begin()) return std::nullopt;
  --it;
  const MemBlock& b = it->second;
  size_t n = size ? size : 1;
  if (a < b.begin || a - b.begin >= b.size || n > b.size - (a - b.begin)) return std::nullopt;
  return b;
}

bool MemoryRegistry::OverlapsDevice(const void* p, size_t size) const {
  std::lock_guard<std::mutex> lk(mu_);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uintptr_t e = a + (size ? size : 1);
  if (e < a) e = UINTPTR_MAX;
  // The first block starting at or after `e` and everything before it that
  // could reach into [a, e).
  auto it = blocks_.lower_bound(e);
  while (it != blocks_.begin()) {
    --it;
    const MemBlock& b = it->second;
    if (b.begin + b.size <= a) break;  // blocks do not overlap each other
    if (b.kind == MemKind::kDevice) return true;
  }
  return false;
}

MemStats MemoryRegistry::Stats() const {
  MemStats s;
  {
    std::lock_guard<std::mutex> lk(mu_);
    s = stats_;
  }
  s.pool = pool_.Stats();
  return s;
}

void MemoryRegistry::FreeAll() {
  std::map<uintptr_t, MemBlock> blocks;
  {
    std::lock_guard<std::mutex> lk(mu_);
    blocks.swap(blocks_);
    stats_.device_bytes = stats_.host_bytes = 0;
    for (size_t& b : stats_.device_bytes_by_id) b = 0;
    stats_.live_blocks = 0;
  }
  for (auto& [addr, b] : blocks) pool_.Free(reinterpret_cast<void*>(addr), b.size, b.chunk);
  pool_.ReleaseCached();
}

SystemMemory ReadSystemMemory() {
  SystemMemory m;
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    std::string key;
    size_t kb = 0;
    is >> key >> kb;
    if (key == "MemTotal:") m.total = kb * 1024;
    else if (key == "MemAvailable:") m.available = kb * 1024;
  }
  if (m.total == 0) {
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) m.total = static_cast<size_t>(pages) * static_cast<size_t>(page);
    if (avail > 0 && page > 0) m.available = static_cast<size_t>(avail) * static_cast<size_t>(page);
  }
  if (m.available == 0 || m.available > m.total) m.available = m.total;
  return m;
}

}  // namespace oc::rt

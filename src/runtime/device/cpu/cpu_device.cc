#include "runtime/device/cpu/cpu_device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace oc::rt {

int CpuDevice::Count() {
  static const int count = [] {
    const char* v = std::getenv("OPENCANN_DEVICE_COUNT");
    if (!v || !*v) return 8;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 1 || n > kMaxLogicalDevices) {
      std::fprintf(stderr, "[opencann] OPENCANN_DEVICE_COUNT=%s is not a device count from 1 to %d: using 8\n", v,
                   kMaxLogicalDevices);
      return 8;
    }
    return static_cast<int>(n);
  }();
  return count;
}

CpuDevice& CpuDevice::Get(int id) {
  static CpuDevice** devices = [] {
    auto** d = new CpuDevice*[kMaxLogicalDevices];
    for (int i = 0; i < kMaxLogicalDevices; ++i) d[i] = new CpuDevice(i);
    return d;
  }();
  return *devices[id >= 0 && id < kMaxLogicalDevices ? id : 0];
}

MemoryRegistry& CpuDevice::memory() {
  static MemoryRegistry* registry = new MemoryRegistry();
  return *registry;
}

Expected<void*> CpuDevice::Allocate(size_t bytes) {
  if (bytes == 0) return InvalidArgument("cannot allocate 0 bytes of CPU device memory");
  return memory().Allocate(bytes, MemKind::kDevice, id_);
}

Status CpuDevice::Free(void* p) {
  auto block = memory().Find(p, 1);
  if (block && block->begin == reinterpret_cast<uintptr_t>(p) && block->kind == MemKind::kDevice &&
      block->device != id_)
    return InvalidArgument(p, " belongs to CPU device ", block->device, ", not to device ", id_);
  return memory().Free(p, MemKind::kDevice);
}

Status CpuDevice::Copy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  if (bytes == 0) return Status::Ok();
  if (!dst || !src) return InvalidArgument("copy of ", bytes, " bytes with a null ", !dst ? "destination" : "source");
  const bool dst_device = kind == CopyKind::kHostToDevice || kind == CopyKind::kDeviceToDevice;
  const bool src_device = kind == CopyKind::kDeviceToHost || kind == CopyKind::kDeviceToDevice;
  if (dst_device && !memory().Find(dst, bytes))
    return InvalidArgument("copy destination ", dst, " + ", bytes, " bytes is not inside one block of CPU device memory");
  if (src_device && !memory().Find(src, bytes))
    return InvalidArgument("copy source ", src, " + ", bytes, " bytes is not inside one block of CPU device memory");
  auto d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  if (d < s + bytes && s < d + bytes) return InvalidArgument("copy source and destination overlap");
  std::memcpy(dst, src, bytes);
  return Status::Ok();
}

}  // namespace oc::rt

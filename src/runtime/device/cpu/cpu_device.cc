#include "runtime/device/cpu/cpu_device.h"

#include <cstring>

namespace oc::rt {

CpuDevice& CpuDevice::Get() {
  static CpuDevice* device = new CpuDevice();
  return *device;
}

Expected<void*> CpuDevice::Allocate(size_t bytes) {
  if (bytes == 0) return InvalidArgument("cannot allocate 0 bytes of CPU device memory");
  return memory_.Allocate(bytes, MemKind::kDevice);
}

Status CpuDevice::Free(void* p) { return memory_.Free(p, MemKind::kDevice); }

Status CpuDevice::Copy(void* dst, const void* src, size_t bytes, CopyKind kind) {
  if (bytes == 0) return Status::Ok();
  if (!dst || !src) return InvalidArgument("copy of ", bytes, " bytes with a null ", !dst ? "destination" : "source");
  const bool dst_device = kind == CopyKind::kHostToDevice || kind == CopyKind::kDeviceToDevice;
  const bool src_device = kind == CopyKind::kDeviceToHost || kind == CopyKind::kDeviceToDevice;
  if (dst_device && !memory_.Find(dst, bytes))
    return InvalidArgument("copy destination ", dst, " + ", bytes, " bytes is not inside one block of CPU device memory");
  if (src_device && !memory_.Find(src, bytes))
    return InvalidArgument("copy source ", src, " + ", bytes, " bytes is not inside one block of CPU device memory");
  auto d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  if (d < s + bytes && s < d + bytes) return InvalidArgument("copy source and destination overlap");
  std::memcpy(dst, src, bytes);
  return Status::Ok();
}

}  // namespace oc::rt

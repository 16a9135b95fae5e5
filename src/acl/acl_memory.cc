// Device and host memory, copies and fills. "Device" memory is host RAM kept in
// a registry (runtime/memory_registry.h) so copy directions are checked.
#include <cstring>

#include "acl/acl_internal.h"

using namespace oc::acl;
using oc::StrCat;

namespace {

aclError NullArg(const char* name) {
  return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument '", name, "' is NULL"));
}

const char* KindName(aclrtMemcpyKind kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_DEFAULT: return "ACL_MEMCPY_DEFAULT";
  }
  return "?";
}

// Where a range lives: inside one device block, entirely outside device
// memory, or straddling (an error for any kind).
enum class Side { kDevice, kHost, kMixed };

Side Locate(oc::rt::MemoryRegistry& mem, const void* p, size_t n) {
  auto block = mem.Find(p, n);
  if (block && block->kind == oc::rt::MemKind::kDevice) return Side::kDevice;
  return mem.OverlapsDevice(p, n) ? Side::kMixed : Side::kHost;
}

// Validates a copy request; on success it is safe to memmove.
aclError CheckCopy(void* dst, size_t destMax, const void* src, size_t count, const aclrtMemcpyKind& kind) {
  if (EnumBits(kind) < ACL_MEMCPY_HOST_TO_HOST || EnumBits(kind) > ACL_MEMCPY_DEFAULT)
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("kind ", EnumBits(kind), " is not an aclrtMemcpyKind"));
  if (count > destMax)
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat("count ", count, " is larger than destMax ", destMax, " (the destination would overflow)"));
  if (count == 0) return ACL_SUCCESS;
  if (!dst) return NullArg("dst");
  if (!src) return NullArg("src");
  auto& mem = RuntimeState().memory;
  Side d = Locate(mem, dst, count), s = Locate(mem, src, count);
  auto describe = [&](const char* arg, const void* p, Side side) {
    return StrCat(arg, " ", PtrString(p), " (", count, " bytes) ",
                  side == Side::kMixed ? "straddles the end of a device allocation"
                  : side == Side::kDevice ? "is device memory"
                                          : "is host memory");
  };
  if (d == Side::kMixed)
    return Fail(ACL_ERROR_INVALID_PARAM, describe("dst", dst, d) + "; the copy would run past the allocation");
  if (s == Side::kMixed)
    return Fail(ACL_ERROR_INVALID_PARAM, describe("src", src, s) + "; the copy would run past the allocation");
  if (kind == ACL_MEMCPY_DEFAULT) return ACL_SUCCESS;
  bool want_dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  bool want_src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  if ((d == Side::kDevice) != want_dst_dev)
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat(describe("dst", dst, d), " but kind ", KindName(kind), " needs it to be ",
                       want_dst_dev ? "device memory from aclrtMalloc" : "host memory"));
  if ((s == Side::kDevice) != want_src_dev)
    return Fail(ACL_ERROR_INVALID_PARAM,
                StrCat(describe("src", src, s), " but kind ", KindName(kind), " needs it to be ",
                       want_src_dev ? "device memory from aclrtMalloc" : "host memory"));
  return ACL_SUCCESS;
}

// The current context's device, or -1 when the thread has none.
int CurrentDevice() {
  Runtime& r = RuntimeState();
  std::lock_guard<std::mutex> lk(r.mu);
  ContextObj* ctx = CurrentContextLocked(r);
  return ctx ? ctx->device : -1;
}

}  // namespace

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!devPtr) return NullArg("devPtr");
    if (size == 0) return Fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    const int device = CurrentDevice();
    if (device < 0)
      return Fail(ACL_ERROR_RT_CONTEXT_NULL,
                  "this thread has no current context; call aclrtSetDevice or aclrtSetCurrentContext first");
    auto p = oc::rt::CpuDevice::Get(device).Allocate(size);
    if (!p.ok()) return FailStatus(p.status(), ACL_ERROR_BAD_ALLOC);
    *devPtr = *p;
    Log(kLogDebug, StrCat("aclrtMalloc: ", size, " bytes at ", PtrString(*p), " (policy ", EnumBits(policy), ")"));
    return ACL_SUCCESS;
  });
}

aclError aclrtFree(void* devPtr) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!devPtr) return NullArg("devPtr");
    if (IsDvppBlock(devPtr))
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("devPtr ", PtrString(devPtr), " was allocated by acldvppMalloc; free it with acldvppFree"));
    oc::Status st = RuntimeState().memory.Free(devPtr, oc::rt::MemKind::kDevice);
    if (!st.ok()) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("devPtr ", st.message()));
    return ACL_SUCCESS;
  });
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!hostPtr) return NullArg("hostPtr");
    if (size == 0) return Fail(ACL_ERROR_INVALID_PARAM, "size is 0");
    auto p = RuntimeState().memory.Allocate(size, oc::rt::MemKind::kHost);
    if (!p.ok()) return FailStatus(p.status(), ACL_ERROR_BAD_ALLOC);
    *hostPtr = *p;
    return ACL_SUCCESS;
  });
}

aclError aclrtFreeHost(void* hostPtr) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!hostPtr) return NullArg("hostPtr");
    oc::Status st = RuntimeState().memory.Free(hostPtr, oc::rt::MemKind::kHost);
    if (!st.ok()) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("hostPtr ", st.message()));
    return ACL_SUCCESS;
  });
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (aclError e = CheckCopy(dst, destMax, src, count, kind)) return e;
    oc::trace::Scope trace_copy(oc::trace::Kind::kMemcpy, oc::trace::kAll, count,
                                static_cast<uint32_t>(EnumBits(kind)));
    if (count) std::memmove(dst, src, count);
    return ACL_SUCCESS;
  });
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  return Guard(__func__, [&]() -> aclError {
    std::shared_ptr<StreamObj> s;
    if (aclError e = ResolveStream(stream, &s)) return e;
    if (aclError e = CheckCopy(dst, destMax, src, count, kind)) return e;
    if (count == 0) return ACL_SUCCESS;
    const uint32_t copy_kind = static_cast<uint32_t>(EnumBits(kind));
    s->queue->Enqueue(
        [dst, src, count, copy_kind]() -> oc::Status {
          oc::trace::Scope trace_copy(oc::trace::Kind::kMemcpy, oc::trace::kAll, count, copy_kind);
          std::memmove(dst, src, count);
          return oc::Status::Ok();
        },
        StrCat("aclrtMemcpyAsync of ", count, " bytes"));
    return ACL_SUCCESS;
  });
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!devPtr) return NullArg("devPtr");
    if (count > maxCount)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("count ", count, " is larger than maxCount ", maxCount));
    if (count == 0) return ACL_SUCCESS;
    if (!RuntimeState().memory.Find(devPtr, count))
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("devPtr ", PtrString(devPtr), " (", count,
                         " bytes) is not inside one allocation from aclrtMalloc or aclrtMallocHost"));
    std::memset(devPtr, value & 0xFF, count);
    return ACL_SUCCESS;
  });
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (EnumBits(attr) < ACL_DDR_MEM || EnumBits(attr) > ACL_HBM_MEM_P2P_NORMAL)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("attr ", EnumBits(attr), " is not an aclrtMemAttr"));
    if (!free) return NullArg("free");
    if (!total) return NullArg("total");
    oc::rt::SystemMemory sys = oc::rt::ReadSystemMemory();
    oc::rt::MemStats st = RuntimeState().memory.Stats();
    // Chunks the pool keeps cached are free to the application (the next
    // aclrtMalloc reuses them) although the system counts them as used.
    size_t used = st.pool.in_use_bytes;
    size_t by_registry = sys.total > used ? sys.total - used : 0;
    *total = sys.total;
    *free = std::min(sys.available + st.pool.cached_bytes, by_registry);
    return ACL_SUCCESS;
  });
}

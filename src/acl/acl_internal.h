// Shared machinery of the C API: error recording, logging, the guard that keeps
// exceptions from crossing the C boundary, and the process-wide runtime state
// (initialisation, the CPU device, contexts, streams, events, device memory).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "acl/acl.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "runtime/device/cpu/cpu_device.h"
#include "runtime/trace.h"

namespace oc::acl {

// ---- Errors and logging --------------------------------------------------------

// Names the API function being executed on this thread, for messages.
class ApiScope {
 public:
  explicit ApiScope(const char* fn);
  ~ApiScope();

 private:
  const char* prev_;
};

// Records "<function>: <msg>" as this thread's recent error, logs it at error
// level, and returns `code`.
aclError Fail(aclError code, const std::string& msg);
// Maps a Status code to an aclError (`fallback` for codes with no better match)
// and records its message.
aclError FailStatus(const Status& st, aclError fallback);
aclError CodeFor(const Status& st, aclError fallback);

enum LogLevel { kLogDebug = 0, kLogInfo = 1, kLogWarning = 2, kLogError = 3, kLogNone = 4 };
bool LogEnabled(int level);
void Log(int level, const std::string& msg);

// A C caller may pass any int where the API takes an enum, but in C++ reading
// an enum object whose value lies outside the enum's range is undefined
// (UBSan: "load of value 99, which is not a valid value for type ..."). So
// enum arguments are validated through their bits, read without an enum load.
template <typename E>
int EnumBits(const E& e) {
  static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Times the enclosing API call while ACL_PROF_ACL_API is being profiled
// (runtime/trace.h); off, it costs one relaxed load and a branch. Guard and
// GuardValue use it, so every entry point made with them is covered.
#define OC_ACL_TRACE_API(fn) \
  ::oc::trace::Scope oc_trace_api_scope_(::oc::trace::Kind::kApi, ::oc::trace::kAclApi, reinterpret_cast<uint64_t>(fn))

template <typename F>
aclError Guard(const char* fn, F&& body) noexcept {
  OC_ACL_TRACE_API(fn);
  ApiScope scope(fn);
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(ACL_ERROR_BAD_ALLOC, "out of host memory");
  } catch (const std::exception& e) {
    return Fail(ACL_ERROR_INTERNAL_ERROR, std::string("internal error: ") + e.what());
  } catch (...) {
    return Fail(ACL_ERROR_INTERNAL_ERROR, "internal error: unknown exception");
  }
}

// For entry points that return a value instead of aclError.
template <typename R, typename F>
R GuardValue(const char* fn, R on_error, F&& body) noexcept {
  OC_ACL_TRACE_API(fn);
  ApiScope scope(fn);
  try {
    return body();
  } catch (const std::bad_alloc&) {
    Fail(ACL_ERROR_BAD_ALLOC, "out of host memory");
  } catch (const std::exception& e) {
    Fail(ACL_ERROR_INTERNAL_ERROR, std::string("internal error: ") + e.what());
  } catch (...) {
    Fail(ACL_ERROR_INTERNAL_ERROR, "internal error: unknown exception");
  }
  return on_error;
}

std::string PtrString(const void* p);

// ---- Handle sets for plain host objects ------------------------------------------

// Remembers live objects so that a destroyed or foreign pointer is refused
// instead of dereferenced.
class HandleSet {
 public:
  void Add(const void* p);
  bool Remove(const void* p);
  bool Contains(const void* p) const;

 private:
  mutable std::mutex mu_;
  std::unordered_set<const void*> live_;
};

// ---- Runtime state ---------------------------------------------------------------------

struct StreamObj;

struct ContextObj {
  uint64_t id = 0;
  int32_t device = 0;
  bool is_default = false;
  StreamObj* default_stream = nullptr;
};

struct StreamObj {
  ContextObj* ctx = nullptr;
  bool is_default = false;
  // aclrtSubscribeReport: the thread that runs this stream's host callbacks.
  bool subscribed = false;
  uint64_t report_thread = 0;
  // Created by the context's logical CPU device (runtime/device/device.h).
  std::unique_ptr<rt::Stream> queue;
};

struct EventObj {
  explicit EventObj(uint32_t f)
      : flags(f), event(rt::CpuDevice::Get().CreateEvent((f & ACL_EVENT_TIME_LINE) != 0)) {}
  uint32_t flags;
  std::unique_ptr<rt::Event> event;
};

struct Runtime {
  std::mutex mu;  // guards everything below except `memory` (which locks itself)
  bool initialized = false;
  bool ever_initialized = false;
  // Per logical device set by aclrtSetDevice: its reference count and its
  // default context (created by the first aclrtSetDevice).
  struct DeviceUse {
    int refs = 0;
    ContextObj* default_ctx = nullptr;
  };
  std::map<int32_t, DeviceUse> devices;
  uint64_t next_ctx_id = 1;
  std::map<const void*, std::unique_ptr<ContextObj>> contexts;
  std::map<const void*, std::shared_ptr<StreamObj>> streams;
  std::map<const void*, std::shared_ptr<EventObj>> events;
  // The CPU devices' memory (it locks itself).
  rt::MemoryRegistry& memory = rt::CpuDevice::memory();
};

Runtime& RuntimeState();

// ACL_SUCCESS after aclInit, else records ACL_ERROR_UNINITIALIZE.
aclError RequireInit();
// The calling thread's current context (nullptr if none or destroyed). Needs mu.
ContextObj* CurrentContextLocked(Runtime& r);
void SetCurrentContextLocked(ContextObj* ctx);
// A live stream for `handle` (NULL: the current context's default stream,
// created on first use). Records the error on failure.
aclError ResolveStream(aclrtStream handle, std::shared_ptr<StreamObj>* out);
// Waits for a stream and converts its first task error into an aclError.
aclError SyncStream(StreamObj& s, int64_t timeout_ms);
// A new stream of `ctx` on its logical device, registered in r.streams. Needs mu.
StreamObj* NewStreamLocked(Runtime& r, ContextObj* ctx, bool is_default);
// Removes and returns the streams of `ctx` (all streams when ctx is null). Needs mu.
std::vector<std::shared_ptr<StreamObj>> DetachStreamsLocked(Runtime& r, ContextObj* ctx);

// DVPP memory (acl_dvpp_desc.cc): true when p is the start of a live
// acldvppMalloc block (aclrtFree refuses it); aclFinalize, which frees all
// device memory, forgets them.
bool IsDvppBlock(const void* p);
void ForgetDvppMemory();

// Models (acl_model.cc).
void UnloadAllModels();
// Waits for every stream; returns the first error (used before thread changes).
aclError SynchronizeAllStreams();

// Model runs use the process's thread pool by reference, and
// aclrtSetOpExecuteThreads replaces that pool: a run holds a ThreadPoolUse for
// its whole length, and ReplaceThreadPool waits until none is held (holding
// new ones back meanwhile) so no run is left with a destroyed pool (acl_device.cc).
class ThreadPoolUse {
 public:
  ThreadPoolUse();
  ~ThreadPoolUse();
  ThreadPoolUse(const ThreadPoolUse&) = delete;
  ThreadPoolUse& operator=(const ThreadPoolUse&) = delete;
  oc::ThreadPool& pool() const { return *pool_; }

 private:
  oc::ThreadPool* pool_;
};
void ReplaceThreadPool(int num_threads);

}  // namespace oc::acl

// The opaque C types (global namespace, as declared by the headers).
struct aclDataBuffer {
  void* data = nullptr;
  size_t size = 0;
};

struct aclTensorDesc {
  aclDataType dtype = ACL_DT_UNDEFINED;
  aclFormat format = ACL_FORMAT_UNDEFINED;
  std::vector<int64_t> dims;
  std::string name;
  // aclSetTensorConst: the value (copied), shared by copies of the desc.
  std::shared_ptr<const std::vector<uint8_t>> const_value;
  int placement = ACL_MEMTYPE_DEVICE;  // aclSetTensorPlaceMent
};

struct aclmdlDataset {
  std::vector<aclDataBuffer*> buffers;
  // Per buffer index: a desc owned by the dataset (aclmdlSetDatasetTensorDesc
  // copies, output shapes of dynamic models), or nullptr. Registered in
  // TensorDescs() while owned; freed with the dataset (acl_dynamic.cc).
  std::vector<aclTensorDesc*> descs;
};

namespace oc::acl {
struct IoInfo {
  std::string name;
  aclDataType dtype = ACL_DT_UNDEFINED;
  aclFormat format = ACL_FORMAT_ND;
  std::vector<int64_t> dims;
  size_t bytes = 0;
};
HandleSet& DataBuffers();
HandleSet& TensorDescs();
}  // namespace oc::acl

namespace oc { struct GearSet; }

struct aclmdlDesc {
  uint32_t model_id = 0;
  bool filled = false;
  std::shared_ptr<const oc::GearSet> gears;  // gear models only (acl_dynamic.cc)
  std::vector<oc::acl::IoInfo> inputs;
  std::vector<oc::acl::IoInfo> outputs;
};

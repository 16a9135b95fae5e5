// Running a kernel's blocks: each block is a task on the process's thread
// pool (libascendcl.so's, through aclrtOcParallelFor) with its own arenas of
// the chip's on-chip memory sizes; a check that fails stops that block, the
// launch reports the first failure, and the remaining blocks are skipped.
#include <atomic>
#include <functional>
#include <cstdio>
#include <memory>
#include <mutex>

#include "acl/acl_hooks.h"
#include "ascendc/context.h"
#include "kernel_operator.h"

namespace AscendC::ocimpl {

namespace {

constexpr uint32_t kMaxBlockDim = 65535;

thread_local uint64_t t_next_tiling_key = 0;
// Set while RunLaunchesInline runs: launches then run at once on this thread.
thread_local std::string* t_inline_error = nullptr;

uint64_t TakeTilingKey() {
  uint64_t k = t_next_tiling_key;
  t_next_tiling_key = 0;
  return k;
}

// The calling thread's on-chip memories, allocated on its first block.
struct ThreadArenas {
  std::unique_ptr<uint8_t[]> storage;
  uint8_t* base[kMemKinds] = {};
};
thread_local ThreadArenas t_arenas;

void BindArenas(Block& b) {
  const SocProfile& soc = ActiveProfile();
  if (!t_arenas.storage) {
    size_t total = 0;
    for (uint32_t bytes : soc.bytes) total += bytes + 64;
    t_arenas.storage.reset(new uint8_t[total + 64]);
    uintptr_t p = (reinterpret_cast<uintptr_t>(t_arenas.storage.get()) + 63) & ~uintptr_t{63};
    for (int m = 0; m < kMemKinds; ++m) {
      t_arenas.base[m] = reinterpret_cast<uint8_t*>(p);
      p += (soc.bytes[m] + 63) & ~uint32_t{63};
    }
  }
  for (int m = 0; m < kMemKinds; ++m) b.mem[m] = Arena{t_arenas.base[m], soc.bytes[m]};
  b.soc = soc.name;
}

struct Run {
  const KernelCall* call;
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string error;
};

void RunBlock(Run& run, int64_t idx) {
  Block& b = Current();
  b = Block{};
  b.kernel = run.call->kernel;
  b.idx = idx;
  b.num = run.call->block_dim;
  b.call = run.call;
  b.tiling_key = run.call->tiling_key;
  BindArenas(b);
  b.in_kernel = true;
  std::string fault;
  try {
    run.call->body(run.call->ctx);
  } catch (const KernelFault& f) {
    fault = f.message;
  } catch (const std::exception& e) {
    fault = Format("Ascend C kernel '%s', block %lld of %lld threw %s", b.kernel, static_cast<long long>(idx),
                   static_cast<long long>(b.num), e.what());
  } catch (...) {
    fault = Format("Ascend C kernel '%s', block %lld of %lld threw an exception", b.kernel,
                   static_cast<long long>(idx), static_cast<long long>(b.num));
  }
  b = Block{};
  if (!fault.empty()) {
    std::lock_guard<std::mutex> lock(run.mu);
    if (!run.failed.exchange(true)) run.error = std::move(fault);
  }
}

void RunRange(void* ctx, int64_t begin, int64_t end) {
  auto& run = *static_cast<Run*>(ctx);
  for (int64_t i = begin; i < end && !run.failed.load(std::memory_order_relaxed); ++i) RunBlock(run, i);
}

std::string CheckCall(const KernelCall& call) {
  if (call.block_dim == 0 || call.block_dim > kMaxBlockDim)
    return Format("Ascend C kernel '%s': blockDim %u is outside 1..%u", call.kernel, call.block_dim, kMaxBlockDim);
  return {};
}

int32_t StreamTask(void* arg, char* msg, size_t len) {
  std::string error;
  if (RunNow(*static_cast<KernelCall*>(arg), &error)) return 0;
  std::snprintf(msg, len, "%s", error.c_str());
  return 507015;  // ACL_ERROR_RT_AICORE_EXCEPTION
}

void ReleaseTask(void* arg) {
  auto* call = static_cast<KernelCall*>(arg);
  if (call->release) call->release(call->ctx);
  delete call;
}

}  // namespace

void SetNextTilingKey(uint64_t key) { t_next_tiling_key = key; }

bool RunLaunchesInline(const std::function<uint32_t()>& launch, std::string* error) {
  std::string* outer = t_inline_error;
  t_inline_error = error;
  uint32_t rc = launch();
  t_inline_error = outer;
  if (rc != 0 && error->empty()) *error = Format("the kernel launch was refused (%u)", rc);
  return rc == 0;
}

bool RunNow(const KernelCall& launched, std::string* error) {
  KernelCall call = launched;
  if (!call.tiling_key) call.tiling_key = TakeTilingKey();
  std::string bad = CheckCall(call);
  if (!bad.empty()) {
    *error = bad;
    return false;
  }
  if (Current().in_kernel) {
    *error = Format("Ascend C kernel '%s' was launched from inside kernel '%s'", call.kernel, Current().kernel);
    return false;
  }
  Run run;
  run.call = &call;
  int64_t t0 = aclrtOcNowNs();
  aclrtOcParallelFor(call.block_dim, &RunRange, &run);
  aclrtOcTraceKernel(call.kernel, call.block_dim, t0, aclrtOcNowNs());
  if (!run.failed) return true;
  *error = std::move(run.error);
  return false;
}

uint32_t BadPackedArgs(const char* name, size_t want, size_t got) {
  std::fprintf(stderr, "[ERROR] aclrtLaunchKernel: kernel '%s' takes %zu bytes of arguments (8 per parameter), "
                       "argsSize is %zu\n", name, want, got);
  return 100000;  // ACL_ERROR_INVALID_PARAM
}

uint32_t LaunchOnStream(const KernelCall& launched, void* stream) {
  KernelCall call = launched;
  call.tiling_key = TakeTilingKey();
  if (t_inline_error) {
    bool ok = RunNow(call, t_inline_error);
    if (call.release) call.release(call.ctx);
    return ok ? 0 : 507015;  // ACL_ERROR_RT_AICORE_EXCEPTION
  }
  std::string bad = CheckCall(call);
  if (!bad.empty()) {
    std::fprintf(stderr, "[ERROR] %s\n", bad.c_str());
    if (call.release) call.release(call.ctx);
    return 100000;  // ACL_ERROR_INVALID_PARAM
  }
  // The names are string literals and the pointers live in the closure, which
  // is released only after the task: both stay valid for the messages.
  auto* owned = new KernelCall(call);
  return static_cast<uint32_t>(
      aclrtOcEnqueueHostTask(static_cast<aclrtStream>(stream), &StreamTask, owned, &ReleaseTask, call.kernel));
}

}  // namespace AscendC::ocimpl

/* Launching a kernel: blockDim blocks, each a task on the host's thread pool,
 * queued on an aclrtStream behind its earlier work (ACLRT_LAUNCH_KERNEL and the
 * <<<blockDim, l2ctrl, stream>>> syntax, which the ascendc++ driver rewrites
 * into OcChevron), or run at once (ICPU_RUN_KF, tikicpulib.h). */
#ifndef OPENCANN_ASCENDC_LAUNCH_H_
#define OPENCANN_ASCENDC_LAUNCH_H_

#include <tuple>
#include <utility>

#include "ascendc_cpu/base.h"

namespace AscendC {
namespace ocimpl {

/* What a launch runs: body(ctx) once per block; release(ctx) once after. */
struct KernelCall {
  const char* kernel;
  uint32_t block_dim;
  void (*body)(void* ctx);
  void* ctx;
  void (*release)(void* ctx);
  const char* arg_names;   // "x, y, z" where known, for messages about global memory
  const void* const* args; // the pointer arguments (count nargs), same order
  int nargs;
  uint64_t tiling_key = 0; // TILING_KEY_IS: set from SetNextTilingKey when the launch is made
};

/* The tiling key the calling thread's next launch runs with (the host's
 * TilingContext::SetTilingKey, ICPU_SET_TILING_KEY); taken by that launch. */
void SetNextTilingKey(uint64_t key);

/* Queues the call on `stream` (NULL: the default stream). Returns an aclError;
 * a kernel that stops on a check makes the stream's synchronisation fail with
 * ACL_ERROR_RT_AICORE_EXCEPTION and the message (aclGetRecentErrMsg). */
uint32_t LaunchOnStream(const KernelCall& call, void* stream);
/* Runs the call now; returns false with *error set when a block stopped. */
bool RunNow(const KernelCall& call, std::string* error);

template <typename... P>
struct Closure {
  void (*kernel)(P...);
  std::tuple<P...> args;
  const void* ptrs[sizeof...(P) + 1];
  static void Run(void* c) {
    auto* self = static_cast<Closure*>(c);
    std::apply(self->kernel, self->args);
  }
  static void Release(void* c) { delete static_cast<Closure*>(c); }
};
template <typename P, typename A>
inline P ArgAs(A a) {
  if constexpr (std::is_pointer_v<P> && std::is_pointer_v<A>) return static_cast<P>(static_cast<void*>(const_cast<std::remove_const_t<std::remove_pointer_t<A>>*>(a)));
  else return static_cast<P>(a);
}
template <typename T>
inline const void* PtrOf(const T& v) {
  if constexpr (std::is_pointer_v<T>) return static_cast<const void*>(v);
  else return nullptr;
}

template <typename... P, typename... A>
inline Closure<P...>* MakeClosure(void (*kernel)(P...), A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "the launch passes a different number of arguments than the kernel takes");
  auto* c = new Closure<P...>{kernel, std::tuple<P...>(ArgAs<P>(args)...), {}};
  int i = 0;
  ((c->ptrs[i++] = PtrOf(args)), ...);
  return c;
}

template <typename... P, typename... A>
inline uint32_t Launch(const char* name, const char* arg_names, void (*kernel)(P...), uint32_t blockDim,
                       void* stream, A... args) {
  auto* c = MakeClosure(kernel, args...);
  KernelCall call{name, blockDim, &Closure<P...>::Run, c, &Closure<P...>::Release, arg_names, c->ptrs,
                  static_cast<int>(sizeof...(P))};
  return LaunchOnStream(call, stream);
}

/* aclrtLaunchKernel: the arguments packed one per 8-byte slot, read from `args`
 * when the launch runs (stream order), not when it is queued. */
template <typename... P>
struct PackedClosure {
  void (*kernel)(P...);
  const uint8_t* args;
  template <size_t... I>
  void Call(std::index_sequence<I...>) const {
    std::tuple<P...> t;
    ((std::memcpy(&std::get<I>(t), args + 8 * I, sizeof(P))), ...);
    std::apply(kernel, t);
  }
  static void Run(void* c) {
    auto* self = static_cast<PackedClosure*>(c);
    self->Call(std::index_sequence_for<P...>{});
  }
  static void Release(void* c) { delete static_cast<PackedClosure*>(c); }
};
uint32_t BadPackedArgs(const char* name, size_t want, size_t got);
template <typename... P>
inline uint32_t LaunchPacked(const char* name, void (*kernel)(P...), uint32_t blockDim, void* stream,
                             const void* args, size_t size) {
  static_assert(((sizeof(P) <= 8) && ...), "aclrtLaunchKernel passes each argument in an 8-byte slot");
  if (size != 8 * sizeof...(P)) return BadPackedArgs(name, 8 * sizeof...(P), size);
  auto* c = new PackedClosure<P...>{kernel, static_cast<const uint8_t*>(args)};
  KernelCall call{name, blockDim, &PackedClosure<P...>::Run, c, &PackedClosure<P...>::Release, nullptr, nullptr, 0};
  return LaunchOnStream(call, stream);
}

/* kernel<<<blockDim, l2ctrl, stream>>>(args...) after the driver's rewrite. */
template <typename K>
struct Chevron {
  const char* name;
  K kernel;
  uint32_t block_dim;
  void* stream;
  template <typename... A>
  uint32_t operator()(A... args) const {
    return Launch(name, nullptr, kernel, block_dim, stream, args...);
  }
};
template <typename K>
inline Chevron<K> OcChevron(const char* name, K kernel, uint32_t blockDim, void* /*l2ctrl*/, void* stream) {
  return Chevron<K>{name, kernel, blockDim, stream};
}

[[noreturn]] void ExitWithError(const std::string& message);

/* ICPU_RUN_KF: runs now; a kernel that stops prints its message and ends the
 * process with exit status 1 (as the CPU-debug mode of CANN stops). */
template <typename... P, typename... A>
inline void RunCpuDebug(const char* name, void (*kernel)(P...), uint32_t blockDim, const char* arg_names,
                        A... args) {
  auto* c = MakeClosure(kernel, args...);
  KernelCall call{name, blockDim, &Closure<P...>::Run, c, &Closure<P...>::Release, arg_names, c->ptrs,
                  static_cast<int>(sizeof...(P))};
  std::string error;
  bool ok = RunNow(call, &error);
  Closure<P...>::Release(c);
  if (!ok) ExitWithError(error);
}

}  // namespace ocimpl
}  // namespace AscendC

#endif  // OPENCANN_ASCENDC_LAUNCH_H_

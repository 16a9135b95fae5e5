// Shared machinery of the HCCL C API (hccl_comm_api.cc, hccl_ops_api.cc): the
// guard that keeps exceptions from crossing the C boundary and turns failures
// into HcclResult codes with a logged message, and the table of live
// communicators (a destroyed or foreign handle is refused, never followed).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "hccl/comm.h"
#include "hccl/hccl_types.h"

namespace oc::hccl {

// A failure with its HcclResult: from a Status (ResultFor), or made directly
// for the codes no Status maps to (HCCL_E_PTR).
struct Result {
  HcclResult code = HCCL_SUCCESS;
  std::string message;
  Result() = default;
  Result(const Status& st) : code(ResultFor(st)), message(st.message()) {}  // NOLINT: implicit on purpose
  Result(HcclResult c, std::string m) : code(c), message(std::move(m)) {}
};

inline Result NullPointer(const char* name) {
  return Result(HCCL_E_PTR, StrCat("argument '", name, "' is NULL"));
}

// Logs "[hccl] <function>: <message>" to stderr for failures (HCCL_LOG=0
// silences it) and returns the code.
HcclResult Report(const char* fn, const Result& r);

template <typename F>
HcclResult Guard(const char* fn, F&& body) noexcept {
  try {
    return Report(fn, body());
  } catch (const std::bad_alloc&) {
    return Report(fn, Result(HCCL_E_MEMORY, "out of host memory"));
  } catch (const std::exception& e) {
    return Report(fn, Result(HCCL_E_INTERNAL, std::string("internal error: ") + e.what()));
  } catch (...) {
    return Report(fn, Result(HCCL_E_INTERNAL, "internal error: unknown exception"));
  }
}

HcclComm RegisterComm(std::shared_ptr<Communicator> comm);
Expected<std::shared_ptr<Communicator>> FindComm(HcclComm handle);
Expected<HcclComm> FindCommByName(const std::string& name);
// Forgets the handle; operations already queued keep the communicator alive
// until they have run.
Status UnregisterComm(HcclComm handle);

void SetDeterministic(int32_t v);
int32_t Deterministic();

}  // namespace oc::hccl

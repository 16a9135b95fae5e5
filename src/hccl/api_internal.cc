#include "hccl/api_internal.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

namespace oc::hccl {
namespace {

std::mutex g_mu;
std::map<HcclComm, std::shared_ptr<Communicator>> g_comms;
std::atomic<int32_t> g_deterministic{0};

bool LogOn() {
  static const bool on = [] {
    const char* v = std::getenv("HCCL_LOG");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

}  // namespace

HcclResult Report(const char* fn, const Result& r) {
  if (r.code != HCCL_SUCCESS && LogOn())
    std::fprintf(stderr, "[hccl] %s failed (%d): %s\n", fn, static_cast<int>(r.code), r.message.c_str());
  return r.code;
}

HcclComm RegisterComm(std::shared_ptr<Communicator> comm) {
  HcclComm h = comm.get();
  std::lock_guard<std::mutex> lock(g_mu);
  g_comms[h] = std::move(comm);
  return h;
}

Expected<std::shared_ptr<Communicator>> FindComm(HcclComm handle) {
  if (!handle) return InvalidArgument("comm is NULL");
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_comms.find(handle);
  if (it == g_comms.end())
    return InvalidArgument("comm ", handle, " is not a live communicator (never created, or destroyed)");
  return it->second;
}

Expected<HcclComm> FindCommByName(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto& [h, c] : g_comms)
    if (c->name() == name) return h;
  return NotFound("no live communicator is named '", name, "'");
}

Status UnregisterComm(HcclComm handle) {
  std::shared_ptr<Communicator> doomed;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_comms.find(handle);
    if (!handle || it == g_comms.end())
      return InvalidArgument("comm ", handle, " is not a live communicator (never created, or destroyed twice)");
    doomed = std::move(it->second);
    g_comms.erase(it);
  }
  return Status::Ok();  // `doomed` closes the connections here unless operations still hold it
}

void SetDeterministic(int32_t v) { g_deterministic = v; }
int32_t Deterministic() { return g_deterministic.load(); }

}  // namespace oc::hccl

#include "hccl/env.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace oc::hccl {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

Expected<int64_t> IntEnv(const char* name, int64_t lo, int64_t hi, int64_t dflt) {
  const char* v = Env(name);
  if (!v) return dflt;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < lo || n > hi)
    return InvalidArgument(name, "=", v, " is not an integer in [", lo, ", ", hi, "]");
  return static_cast<int64_t>(n);
}

bool IsIpv4(const std::string& s) {
  in_addr a;
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

// Does interface `name` pass the HCCL_SOCKET_IFNAME filter `spec`?
bool PassesFilter(const std::string& name, const std::string& spec) {
  bool exclude = false, exact = false;
  size_t pos = 0;
  if (pos < spec.size() && spec[pos] == '^') exclude = true, ++pos;
  if (pos < spec.size() && spec[pos] == '=') exact = true, ++pos;
  std::stringstream ss(spec.substr(pos));
  std::string item;
  bool match = false;
  while (std::getline(ss, item, ','))
    if (!item.empty() && (exact ? name == item : name.rfind(item, 0) == 0)) match = true;
  return exclude ? !match : match;
}

// The first IPv4 address of an up, non-loopback interface that passes the
// filter; loopback when there is none and no filter was given.
Expected<std::string> DetectAddress(const char* filter) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return std::string("127.0.0.1");
  std::string found, loopback;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
    char buf[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    const bool is_lo = (i->ifa_flags & IFF_LOOPBACK) != 0;
    if (filter) {
      if (PassesFilter(i->ifa_name, filter)) {
        found = buf;
        break;
      }
      continue;
    }
    if (is_lo) {
      if (loopback.empty()) loopback = buf;
    } else if (found.empty()) {
      found = buf;
    }
  }
  ::freeifaddrs(list);
  if (!found.empty()) return found;
  if (filter) return NotFound("no up interface with an IPv4 address matches HCCL_SOCKET_IFNAME=", filter);
  return loopback.empty() ? std::string("127.0.0.1") : loopback;
}

Expected<std::vector<std::string>> ReadWhitelist() {
  const char* disable = Env("HCCL_WHITELIST_DISABLE");
  if (!disable || std::string(disable) == "1") return std::vector<std::string>{};
  if (std::string(disable) != "0") return InvalidArgument("HCCL_WHITELIST_DISABLE=", disable, " is neither 0 nor 1");
  const char* file = Env("HCCL_WHITELIST_FILE");
  if (!file) return InvalidArgument("HCCL_WHITELIST_DISABLE=0 needs HCCL_WHITELIST_FILE (a JSON file with host_ip)");
  std::ifstream in(file);
  if (!in) return NotFound("cannot open HCCL_WHITELIST_FILE=", file);
  std::vector<std::string> hosts;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    for (const auto& h : j.at("host_ip")) {
      std::string ip = h.get<std::string>();
      if (!IsIpv4(ip)) return InvalidFile("HCCL_WHITELIST_FILE ", file, ": '", ip, "' is not an IPv4 address");
      hosts.push_back(ip);
    }
  } catch (const std::exception& e) {
    return InvalidFile("HCCL_WHITELIST_FILE ", file, " is not a whitelist ({\"host_ip\": [...]}): ", e.what());
  }
  if (hosts.empty()) return InvalidFile("HCCL_WHITELIST_FILE ", file, " lists no host_ip");
  return hosts;
}

}  // namespace

Expected<Settings> ReadSettings(std::optional<int32_t> exec_timeout_s) {
  Settings s;
  if (const char* ip = Env("HCCL_IF_IP")) {
    if (!IsIpv4(ip)) return InvalidArgument("HCCL_IF_IP=", ip, " is not an IPv4 address");
    s.if_ip = ip;
  } else {
    OC_ASSIGN_OR_RETURN(s.if_ip, DetectAddress(Env("HCCL_SOCKET_IFNAME")));
  }
  if (Env("HCCL_IF_BASE_PORT")) {
    OC_ASSIGN_OR_RETURN(int64_t port, IntEnv("HCCL_IF_BASE_PORT", 1024, 65520, 60000));
    s.base_port = static_cast<uint16_t>(port);
  }
  OC_ASSIGN_OR_RETURN(int64_t connect, IntEnv("HCCL_CONNECT_TIMEOUT", 1, 7200, 120));
  s.connect_timeout = std::chrono::seconds(connect);
  OC_ASSIGN_OR_RETURN(int64_t exec, IntEnv("HCCL_EXEC_TIMEOUT", 0, 2147483647, 1836));
  if (exec_timeout_s && *exec_timeout_s >= 0) exec = *exec_timeout_s;
  // 0 = no limit; gloo takes a duration, so "no limit" is a year.
  s.exec_timeout = exec == 0 ? std::chrono::milliseconds(365LL * 86400 * 1000) : std::chrono::seconds(exec);
  OC_ASSIGN_OR_RETURN(int64_t buffsize, IntEnv("HCCL_BUFFSIZE", 1, 1 << 20, 200));
  s.staging_bytes = static_cast<size_t>(buffsize) << 20;
  OC_ASSIGN_OR_RETURN(int64_t roce, IntEnv("HCCL_INTRA_ROCE_ENABLE", 0, 1, 0));
  OC_ASSIGN_OR_RETURN(int64_t pcie, IntEnv("HCCL_INTRA_PCIE_ENABLE", 0, 1, 1));
  if (roce == 1 && pcie == 1 && Env("HCCL_INTRA_PCIE_ENABLE"))
    return InvalidArgument("HCCL_INTRA_ROCE_ENABLE=1 and HCCL_INTRA_PCIE_ENABLE=1 ask for both intra-host paths; "
                           "set one of them to 0");
  s.same_host_shm = roce == 0;
  OC_ASSIGN_OR_RETURN(s.whitelist, ReadWhitelist());
  return s;
}

}  // namespace oc::hccl

// HCCL's environment variables, read when a communicator is created:
//   HCCL_IF_IP            this host's IPv4 address for rendezvous and transport
//   HCCL_SOCKET_IFNAME    interfaces to take the address from when HCCL_IF_IP is
//                         unset: "eth,enp" prefixes, "^eth" excluded prefixes,
//                         "=eth0" exact names, "^=eth0" excluded names
//   HCCL_IF_BASE_PORT     first port of the root's rendezvous service (it takes
//                         the first free of 32); unset: any free port
//   HCCL_CONNECT_TIMEOUT  seconds to wait for every rank to join (default 120)
//   HCCL_EXEC_TIMEOUT     seconds one operation may wait for its peers (default
//                         1836; 0 = no limit)
//   HCCL_BUFFSIZE         MB of staging buffer per communicator: caps the
//                         shared-memory segment of a same-host communicator
//   HCCL_INTRA_ROCE_ENABLE  1: ranks on one host talk through TCP too, not
//                         through shared memory (HCCL_INTRA_PCIE_ENABLE=1,
//                         the default, keeps shared memory)
//   HCCL_WHITELIST_DISABLE / HCCL_WHITELIST_FILE  with DISABLE=0, only hosts
//                         listed in the file's "host_ip" may join
// A malformed value is an error naming the variable, not a silent default.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace oc::hccl {

struct Settings {
  std::string if_ip;                     // the address to use (resolved)
  std::optional<uint16_t> base_port;     // HCCL_IF_BASE_PORT
  std::chrono::milliseconds connect_timeout{120000};
  std::chrono::milliseconds exec_timeout{1836000};
  std::vector<std::string> whitelist;    // empty: no check
  size_t staging_bytes = 200u << 20;     // HCCL_BUFFSIZE
  bool same_host_shm = true;             // not HCCL_INTRA_ROCE_ENABLE=1
};

// Reads the variables; `exec_timeout_s` (>= 0) from HcclCommConfig overrides
// HCCL_EXEC_TIMEOUT.
Expected<Settings> ReadSettings(std::optional<int32_t> exec_timeout_s = std::nullopt);

}  // namespace oc::hccl

// The HCCL C API, part 1: root info, communicators and errors (hccl.h).
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <optional>

#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "acl/acl.h"
#include "hccl/api_internal.h"
#include "hccl/env.h"
#include "hccl/hccl.h"

using namespace oc::hccl;
using oc::Expected;
using oc::Status;
using oc::StrCat;

namespace {

// The bytes of HcclRootInfo::internal that HcclGetRootInfo writes.
struct RootInfoData {
  char magic[8];
  uint32_t version;
  uint16_t port;
  char ip[46];
  uint8_t id[16];
};
constexpr char kRootMagic[8] = {'O', 'C', 'H', 'C', 'C', 'L', '0', '1'};
static_assert(sizeof(RootInfoData) <= HCCL_ROOT_INFO_BYTES);

std::string Hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += {d[p[i] >> 4], d[p[i] & 15]};
  return s;
}

void RandomBytes(uint8_t* p, size_t n) {
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  size_t got = 0;
  if (fd >= 0) {
    while (got < n) {
      ssize_t r = ::read(fd, p + got, n - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    ::close(fd);
  }
  // Fallback: time and address bits (ids only need to differ between jobs).
  uint64_t x = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               reinterpret_cast<uintptr_t>(p) ^ (static_cast<uint64_t>(::getpid()) << 32);
  for (size_t i = got; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<uint8_t>(x >> 56);
  }
}

// Rendezvous services this process started with HcclGetRootInfo, by root id,
// until a communicator of that id takes them over.
std::mutex g_servers_mu;
std::map<std::string, std::shared_ptr<StoreServer>> g_servers;

std::shared_ptr<StoreServer> TakeServer(const std::string& id) {
  std::lock_guard<std::mutex> lock(g_servers_mu);
  auto it = g_servers.find(id);
  if (it == g_servers.end()) return nullptr;
  auto s = it->second;
  g_servers.erase(it);
  return s;
}

Expected<std::unique_ptr<StoreServer>> StartServer(const Settings& s, const std::string& bind_ip) {
  if (!s.base_port) return StoreServer::Start(bind_ip, 0, s.whitelist);
  Status last;
  for (int i = 0; i < 32 && *s.base_port + i <= 65535; ++i) {
    auto server = StoreServer::Start(bind_ip, static_cast<uint16_t>(*s.base_port + i), s.whitelist);
    if (server.ok()) return server;
    last = server.status();
  }
  return oc::IoError("no free port in HCCL_IF_BASE_PORT=", *s.base_port, " .. ", *s.base_port + 31, ": ",
                     last.message());
}

// The calling thread's device (HCCL binds a communicator to it).
Expected<int32_t> CurrentDevice() {
  int32_t dev = -1;
  if (aclrtGetDevice(&dev) != ACL_SUCCESS)
    return oc::FailedPrecondition("the calling thread has no device; call aclInit and aclrtSetDevice first");
  return dev;
}

// Optional HcclCommConfig fields we honour: the name and the execution timeout.
struct ConfigView {
  std::string name;
  std::optional<int32_t> exec_timeout_s;
};
Expected<ConfigView> ReadConfig(const HcclCommConfig* config) {
  ConfigView v;
  if (!config) return v;
  size_t size;
  uint32_t magic, version;
  std::memcpy(&size, config->reserved, sizeof size);
  std::memcpy(&magic, config->reserved + 8, sizeof magic);
  std::memcpy(&version, config->reserved + 12, sizeof version);
  if (magic != HCCL_COMM_CONFIG_MAGIC_WORD)
    return oc::InvalidArgument("config was not prepared with HcclCommConfigInit (magic word ", magic, ")");
  if (size < offsetof(HcclCommConfig, hcclCommName) + COMM_NAME_MAX_LENGTH)
    return v;  // an older, smaller layout without the name: nothing we use
  v.name.assign(config->hcclCommName, strnlen(config->hcclCommName, COMM_NAME_MAX_LENGTH));
  if (size >= offsetof(HcclCommConfig, hcclExecTimeOut) + sizeof(int32_t) &&
      config->hcclExecTimeOut != HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET)
    v.exec_timeout_s = config->hcclExecTimeOut;
  return v;
}

Expected<HcclComm> Create(const std::string& name, int rank, int size, int32_t device, const Rendezvous& rv,
                          std::shared_ptr<StoreServer> server) {
  OC_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, ConnectEngine(rv, rank, size));
  auto comm = std::make_shared<Communicator>(name, rank, size, device, std::move(engine), rv, std::move(server));
  return RegisterComm(std::move(comm));
}

Result InitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank, const HcclCommConfig* config,
                    HcclComm* comm) {
  if (!rootInfo) return NullPointer("rootInfo");
  if (!comm) return NullPointer("comm");
  if (nRanks == 0 || nRanks > 65536) return oc::InvalidArgument("nRanks ", nRanks, " is not in 1..65536");
  if (rank >= nRanks) return oc::InvalidArgument("rank ", rank, " is not below nRanks ", nRanks);
  RootInfoData d;
  std::memcpy(&d, rootInfo->internal, sizeof d);
  if (std::memcmp(d.magic, kRootMagic, sizeof kRootMagic) != 0 || d.version != 1 ||
      strnlen(d.ip, sizeof d.ip) == sizeof d.ip)
    return oc::InvalidArgument("rootInfo was not produced by HcclGetRootInfo (pass its bytes unchanged to every rank)");
  OC_ASSIGN_OR_RETURN(ConfigView cv, ReadConfig(config));
  OC_ASSIGN_OR_RETURN(Settings s, ReadSettings(cv.exec_timeout_s));
  OC_ASSIGN_OR_RETURN(int32_t device, CurrentDevice());
  const std::string id = Hex(d.id, sizeof d.id);
  Rendezvous rv;
  rv.store_ip = d.ip;
  rv.store_port = d.port;
  rv.prefix = "root/" + id + "/";
  rv.local_ip = s.if_ip;
  rv.connect_timeout = s.connect_timeout;
  rv.exec_timeout = s.exec_timeout;
  rv.same_host_shm = s.same_host_shm;
  rv.staging_bytes = s.staging_bytes;
  OC_ASSIGN_OR_RETURN(*comm, Create(cv.name.empty() ? id : cv.name, static_cast<int>(rank),
                                    static_cast<int>(nRanks), device, rv, TakeServer(id)));
  return Status::Ok();
}

// Rank table version 1.0: {"version": "1.0", "server_count": "2", "server_list": [{"server_id": "10.0.0.1",
// "device": [{"device_id": "0", "device_ip": "...", "rank_id": "0"}, ...]}, ...], "status": "completed"}.
struct RankTable {
  int size = 0;
  std::string root_ip;   // the server of rank 0
  std::string my_ip;     // the server of `rank`
};

Expected<RankTable> ReadRankTable(const char* path, uint32_t rank) {
  std::ifstream in(path);
  if (!in) return oc::InvalidFile("cannot open the rank table '", path, "'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return oc::InvalidFile("rank table '", path, "' is not JSON: ", e.what());
  }
  auto str = [](const nlohmann::json& o, const char* key) -> std::string {
    if (!o.is_object() || !o.contains(key)) return {};
    return o[key].is_string() ? o[key].get<std::string>() : o[key].dump();
  };
  if (str(j, "version") != "1.0")
    return oc::InvalidFile("rank table '", path, "': version is '", str(j, "version"), "', expected \"1.0\"");
  if (j.contains("status") && str(j, "status") != "completed")
    return oc::InvalidFile("rank table '", path, "': status is '", str(j, "status"), "', expected \"completed\"");
  if (!j.contains("server_list") || !j["server_list"].is_array() || j["server_list"].empty())
    return oc::InvalidFile("rank table '", path, "' has no server_list");
  RankTable t;
  std::map<int, std::string> server_of;
  for (const auto& server : j["server_list"]) {
    const std::string ip = str(server, "server_id");
    in_addr a;
    if (::inet_pton(AF_INET, ip.c_str(), &a) != 1)
      return oc::InvalidFile("rank table '", path, "': server_id '", ip, "' is not an IPv4 address");
    if (!server.contains("device") || !server["device"].is_array())
      return oc::InvalidFile("rank table '", path, "': server ", ip, " has no device list");
    for (const auto& dev : server["device"]) {
      const std::string r = str(dev, "rank_id");
      char* end = nullptr;
      long id = std::strtol(r.c_str(), &end, 10);
      if (r.empty() || *end || id < 0 || id > 65535)
        return oc::InvalidFile("rank table '", path, "': rank_id '", r, "' on server ", ip, " is not a rank number");
      if (!server_of.emplace(static_cast<int>(id), ip).second)
        return oc::InvalidFile("rank table '", path, "': rank_id ", id, " appears twice");
    }
  }
  t.size = static_cast<int>(server_of.size());
  for (int r = 0; r < t.size; ++r)
    if (!server_of.count(r))
      return oc::InvalidFile("rank table '", path, "': rank ids must be 0..", t.size - 1, "; ", r, " is missing");
  if (rank >= static_cast<uint32_t>(t.size))
    return oc::InvalidArgument("rank ", rank, " is not in the rank table '", path, "' (ranks 0..", t.size - 1, ")");
  t.root_ip = server_of[0];
  t.my_ip = server_of[static_cast<int>(rank)];
  return t;
}

Result InitClusterInfo(const char* clusterInfo, uint32_t rank, const HcclCommConfig* config, HcclComm* comm) {
  if (!clusterInfo) return NullPointer("clusterInfo");
  if (!comm) return NullPointer("comm");
  OC_ASSIGN_OR_RETURN(RankTable t, ReadRankTable(clusterInfo, rank));
  OC_ASSIGN_OR_RETURN(ConfigView cv, ReadConfig(config));
  OC_ASSIGN_OR_RETURN(Settings s, ReadSettings(cv.exec_timeout_s));
  OC_ASSIGN_OR_RETURN(int32_t device, CurrentDevice());
  // Rank 0 serves the rendezvous at its server's address and the base port.
  const uint16_t port = s.base_port.value_or(60000);
  std::shared_ptr<StoreServer> server;
  if (rank == 0) {
    auto started = StoreServer::Start(t.root_ip, port, s.whitelist);
    if (!started.ok())
      return started.status().WithContext(StrCat("rank 0 serves the rendezvous of rank table '", clusterInfo,
                                                  "' at ", t.root_ip, ":", port));
    server = std::move(*started);
  }
  Rendezvous rv;
  rv.store_ip = t.root_ip;
  rv.store_port = port;
  rv.prefix = "ranktable/";
  rv.local_ip = std::getenv("HCCL_IF_IP") ? s.if_ip : t.my_ip;
  rv.connect_timeout = s.connect_timeout;
  rv.exec_timeout = s.exec_timeout;
  rv.same_host_shm = s.same_host_shm;
  rv.staging_bytes = s.staging_bytes;
  OC_ASSIGN_OR_RETURN(*comm, Create(cv.name.empty() ? StrCat("ranktable:", clusterInfo) : cv.name,
                                    static_cast<int>(rank), t.size, device, rv, std::move(server)));
  return Status::Ok();
}

}  // namespace

extern "C" {

HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo) {
  return Guard(__func__, [&]() -> Result {
    if (!rootInfo) return NullPointer("rootInfo");
    OC_ASSIGN_OR_RETURN(Settings s, ReadSettings());
    OC_ASSIGN_OR_RETURN(std::unique_ptr<StoreServer> server, StartServer(s, s.if_ip));
    RootInfoData d{};
    std::memcpy(d.magic, kRootMagic, sizeof kRootMagic);
    d.version = 1;
    d.port = server->port();
    std::strncpy(d.ip, server->ip().c_str(), sizeof d.ip - 1);
    RandomBytes(d.id, sizeof d.id);
    std::memset(rootInfo->internal, 0, sizeof rootInfo->internal);
    std::memcpy(rootInfo->internal, &d, sizeof d);
    std::lock_guard<std::mutex> lock(g_servers_mu);
    g_servers[Hex(d.id, sizeof d.id)] = std::move(server);
    return Status::Ok();
  });
}

HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank, HcclComm* comm) {
  return Guard(__func__, [&] { return InitRootInfo(nRanks, rootInfo, rank, nullptr, comm); });
}

HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                      const HcclCommConfig* config, HcclComm* comm) {
  return Guard(__func__, [&]() -> Result {
    if (!config) return NullPointer("config");
    return InitRootInfo(nRanks, rootInfo, rank, config, comm);
  });
}

HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank, HcclComm* comm) {
  return Guard(__func__, [&] { return InitClusterInfo(clusterInfo, rank, nullptr, comm); });
}

HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo, uint32_t rank, HcclCommConfig* config,
                                         HcclComm* comm) {
  return Guard(__func__, [&]() -> Result {
    if (!config) return NullPointer("config");
    return InitClusterInfo(clusterInfo, rank, config, comm);
  });
}

HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms) {
  return Guard(__func__, [&]() -> Result {
    if (!devices) return NullPointer("devices");
    if (!comms) return NullPointer("comms");
    uint32_t count = 0;
    if (aclrtGetDeviceCount(&count) != ACL_SUCCESS)
      return oc::FailedPrecondition("AscendCL is not initialised; call aclInit first");
    if (ndev == 0 || ndev > count)
      return oc::InvalidArgument("ndev ", ndev, " is not in 1..", count, " (the process's device count)");
    for (uint32_t i = 0; i < ndev; ++i) {
      if (devices[i] < 0 || static_cast<uint32_t>(devices[i]) >= count)
        return oc::InvalidArgument("devices[", i, "] = ", devices[i], " is not a device id (0..", count - 1, ")");
      for (uint32_t j = 0; j < i; ++j)
        if (devices[j] == devices[i]) return oc::InvalidArgument("device ", devices[i], " is listed twice");
    }
    OC_ASSIGN_OR_RETURN(Settings s, ReadSettings());
    // One process: the rendezvous and the transport stay on the loopback.
    OC_ASSIGN_OR_RETURN(std::unique_ptr<StoreServer> started, StoreServer::Start("127.0.0.1", 0));
    std::shared_ptr<StoreServer> server = std::move(started);
    uint8_t id[16];
    RandomBytes(id, sizeof id);
    Rendezvous rv;
    rv.store_ip = "127.0.0.1";
    rv.store_port = server->port();
    rv.prefix = "all/" + Hex(id, sizeof id) + "/";
    rv.local_ip = "127.0.0.1";
    rv.connect_timeout = s.connect_timeout;
    rv.exec_timeout = s.exec_timeout;
    rv.same_host_shm = s.same_host_shm;
    rv.staging_bytes = s.staging_bytes;
    // Every rank connects at once, each on its own thread.
    std::vector<std::unique_ptr<Engine>> engines(ndev);
    std::vector<Status> failures(ndev);
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < ndev; ++i)
      threads.emplace_back([&, i] {
        auto e = ConnectEngine(rv, static_cast<int>(i), static_cast<int>(ndev));
        if (e.ok()) engines[i] = std::move(e).value();
        else failures[i] = e.status();
      });
    for (auto& t : threads) t.join();
    for (uint32_t i = 0; i < ndev; ++i)
      if (!failures[i].ok()) return failures[i].WithContext(StrCat("rank ", i));
    const std::string name = "all:" + Hex(id, sizeof id);
    for (uint32_t i = 0; i < ndev; ++i) {
      auto comm = std::make_shared<Communicator>(name + ":" + std::to_string(i), static_cast<int>(i),
                                                 static_cast<int>(ndev), devices[i], std::move(engines[i]),
                                                 rv, server);
      comms[i] = RegisterComm(std::move(comm));
    }
    return Status::Ok();
  });
}

HcclResult HcclCreateSubCommConfig(HcclComm* comm, uint32_t rankNum, uint32_t* rankIds, uint64_t subCommId,
                                   uint32_t subCommRankId, HcclCommConfig* config, HcclComm* subComm) {
  return Guard(__func__, [&]() -> Result {
    if (!comm) return NullPointer("comm");
    if (!subComm) return NullPointer("subComm");
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> parent, FindComm(*comm));
    if (!rankIds) {  // this rank is not a member
      *subComm = nullptr;
      return Status::Ok();
    }
    if (rankNum == 0 || rankNum > static_cast<uint32_t>(parent->size()))
      return oc::InvalidArgument("rankNum ", rankNum, " is not in 1..", parent->size(), " (the parent's size)");
    for (uint32_t i = 0; i < rankNum; ++i) {
      if (rankIds[i] >= static_cast<uint32_t>(parent->size()))
        return oc::InvalidArgument("rankIds[", i, "] = ", rankIds[i], " is not a rank of the parent (0..",
                                   parent->size() - 1, ")");
      if (i && rankIds[i] <= rankIds[i - 1])
        return oc::InvalidArgument("rankIds must be sorted and distinct; rankIds[", i, "] = ", rankIds[i],
                                   " follows ", rankIds[i - 1]);
    }
    if (subCommRankId >= rankNum)
      return oc::InvalidArgument("subCommRankId ", subCommRankId, " is not below rankNum ", rankNum);
    if (rankIds[subCommRankId] != static_cast<uint32_t>(parent->rank()))
      return oc::InvalidArgument("rankIds[subCommRankId] = ", rankIds[subCommRankId], " but this is rank ",
                                 parent->rank(), " of the parent");
    OC_ASSIGN_OR_RETURN(ConfigView cv, ReadConfig(config));
    Rendezvous rv = parent->rendezvous();
    rv.prefix += "sub/" + std::to_string(subCommId) + "/";
    if (cv.exec_timeout_s) rv.exec_timeout = std::chrono::seconds(*cv.exec_timeout_s);
    OC_ASSIGN_OR_RETURN(*subComm, Create(cv.name.empty() ? StrCat(parent->name(), "/", subCommId) : cv.name,
                                         static_cast<int>(subCommRankId), static_cast<int>(rankNum),
                                         parent->device(), rv, nullptr));
    return Status::Ok();
  });
}

HcclResult HcclCommDestroy(HcclComm comm) {
  return Guard(__func__, [&]() -> Result { return UnregisterComm(comm); });
}

HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize) {
  return Guard(__func__, [&]() -> Result {
    if (!rankSize) return NullPointer("rankSize");
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    *rankSize = static_cast<uint32_t>(c->size());
    return Status::Ok();
  });
}

HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank) {
  return Guard(__func__, [&]() -> Result {
    if (!rank) return NullPointer("rank");
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    *rank = static_cast<uint32_t>(c->rank());
    return Status::Ok();
  });
}

HcclResult HcclGetCommName(HcclComm comm, char* commName) {
  return Guard(__func__, [&]() -> Result {
    if (!commName) return NullPointer("commName");
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    std::strncpy(commName, c->name().c_str(), COMM_NAME_MAX_LENGTH - 1);
    commName[COMM_NAME_MAX_LENGTH - 1] = '\0';
    return Status::Ok();
  });
}

HcclResult HcclCommGetHandleWithName(const char* commName, HcclComm* comm) {
  return Guard(__func__, [&]() -> Result {
    if (!commName) return NullPointer("commName");
    if (!comm) return NullPointer("comm");
    OC_ASSIGN_OR_RETURN(*comm, FindCommByName(commName));
    return Status::Ok();
  });
}

HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError) {
  return Guard(__func__, [&]() -> Result {
    if (!asyncError) return NullPointer("asyncError");
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    *asyncError = c->AsyncError();
    return Status::Ok();
  });
}

const char* HcclGetErrorString(HcclResult code) {
  switch (static_cast<int>(code)) {
    case HCCL_SUCCESS: return "success";
    case HCCL_E_PARA: return "parameter error";
    case HCCL_E_PTR: return "empty pointer";
    case HCCL_E_MEMORY: return "memory error";
    case HCCL_E_INTERNAL: return "internal error";
    case HCCL_E_NOT_SUPPORT: return "not supported";
    case HCCL_E_NOT_FOUND: return "not found";
    case HCCL_E_UNAVAIL: return "resource unavailable";
    case HCCL_E_SYSCALL: return "system call error";
    case HCCL_E_TIMEOUT: return "timeout";
    case HCCL_E_OPEN_FILE_FAILURE: return "cannot open or read a file";
    case HCCL_E_TCP_CONNECT: return "TCP connection failed";
    case HCCL_E_ROCE_CONNECT: return "RoCE connection failed";
    case HCCL_E_TCP_TRANSFER: return "TCP transfer failed";
    case HCCL_E_ROCE_TRANSFER: return "RoCE transfer failed";
    case HCCL_E_RUNTIME: return "runtime call failed";
    case HCCL_E_DRV: return "driver call failed";
    case HCCL_E_PROFILING: return "profiling error";
    case HCCL_E_CCE: return "CCE call failed";
    case HCCL_E_NETWORK: return "network error";
    case HCCL_E_AGAIN: return "try again";
    case HCCL_E_REMOTE: return "a remote rank failed";
    case HCCL_E_SUSPENDING: return "communicator suspended";
    case HCCL_E_OPRETRY_FAIL: return "operation retry failed";
    case HCCL_E_OOM: return "out of memory";
    default: return "unknown HcclResult";
  }
}

HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue) {
  return Guard(__func__, [&]() -> Result {
    if (static_cast<int>(config) != HCCL_DETERMINISTIC)
      return oc::InvalidArgument("config ", static_cast<int>(config), " is not an HcclConfig");
    // Reductions here are deterministic already: every rank reduces in the same order.
    if (configValue.value < 0 || configValue.value > 2)
      return oc::InvalidArgument("HCCL_DETERMINISTIC takes 0, 1 or 2, not ", configValue.value);
    SetDeterministic(configValue.value);
    return Status::Ok();
  });
}

HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue* configValue) {
  return Guard(__func__, [&]() -> Result {
    if (!configValue) return NullPointer("configValue");
    if (static_cast<int>(config) != HCCL_DETERMINISTIC)
      return oc::InvalidArgument("config ", static_cast<int>(config), " is not an HcclConfig");
    configValue->value = Deterministic();
    return Status::Ok();
  });
}

uint32_t HcclGetCommConfigCapability(void) { return HCCL_COMM_CONFIG_RESERVED; }

}  // extern "C"

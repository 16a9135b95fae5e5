// The rendezvous store: a small key-value service over TCP that the ranks of a
// communicator use to exchange their transport addresses before they connect
// to each other (HCCL's root-info model: the root rank's process serves it at
// the address inside HcclRootInfo; every rank is a client).
//
// Values are opaque bytes. Get blocks until the key is set or the timeout
// passes. The server keeps everything in memory for its lifetime; one thread
// accepts and one thread serves each connected client.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace oc::hccl {

// A key "<prefix>alive/<name>" belongs to the connection that set it: when
// that connection ends (its process died, or it closed the client), the
// server appends "<name>," to the key "<prefix>gone". The HCCL ranks use it to
// name a rank that went away.
class StoreServer {
 public:
  // Listens on `ip` (IPv4 dotted quad) at `port` (0: any free port). A
  // non-empty `allowed` lists the only client addresses served (the
  // HCCL_WHITELIST_FILE); others are disconnected at once.
  static Expected<std::unique_ptr<StoreServer>> Start(const std::string& ip, uint16_t port,
                                                      std::vector<std::string> allowed = {});
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  const std::string& ip() const { return ip_; }
  uint16_t port() const { return port_; }

 private:
  StoreServer() = default;
  void AcceptLoop();
  void Serve(int fd);

  std::string ip_;
  uint16_t port_ = 0;
  std::vector<std::string> allowed_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};  // a pipe that stops the accept loop
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> data_;
  std::vector<std::thread> clients_;
  std::vector<int> client_fds_;
};

class StoreClient {
 public:
  // Connects to the server, retrying until `timeout` passes (the server may
  // start after the client).
  static Expected<std::unique_ptr<StoreClient>> Connect(const std::string& ip, uint16_t port,
                                                        std::chrono::milliseconds timeout);
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  Status Set(const std::string& key, const std::vector<char>& value);
  // Waits up to `timeout` for the key.
  Expected<std::vector<char>> Get(const std::string& key, std::chrono::milliseconds timeout);

 private:
  explicit StoreClient(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
  int fd_;
  std::string where_;
  std::mutex mu_;  // one request at a time
};

}  // namespace oc::hccl

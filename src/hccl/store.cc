#include "hccl/store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace oc::hccl {
namespace {

// Wire format, both directions: a request is [op u8][key length u32][key]
// [value length u32][value][timeout ms u32]; a reply is [status u8][length u32]
// [value]. Status 0 = ok, 1 = timed out.
enum Op : uint8_t { kSet = 1, kGet = 2 };
constexpr uint32_t kMaxItem = 64u << 20;

bool WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool ReadItem(int fd, std::string* s) {
  uint32_t n;
  if (!ReadAll(fd, &n, 4) || n > kMaxItem) return false;
  s->resize(n);
  return n == 0 || ReadAll(fd, s->data(), n);
}

bool WriteItem(int fd, const void* p, uint32_t n) { return WriteAll(fd, &n, 4) && (n == 0 || WriteAll(fd, p, n)); }

std::string Where(const std::string& ip, uint16_t port) { return StrCat(ip, ":", port); }

}  // namespace

Expected<std::unique_ptr<StoreServer>> StoreServer::Start(const std::string& ip, uint16_t port,
                                                          std::vector<std::string> allowed) {
  std::unique_ptr<StoreServer> s(new StoreServer());
  s->allowed_ = std::move(allowed);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1)
    return InvalidArgument("'", ip, "' is not an IPv4 address (HCCL_IF_IP)");
  s->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0) return IoError("socket(): ", std::strerror(errno));
  int one = 1;
  ::setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return IoError("cannot listen on ", Where(ip, port), ": ", std::strerror(errno),
                   port ? " (HCCL_IF_BASE_PORT picks the port)" : "");
  if (::listen(s->listen_fd_, 128) != 0) return IoError("listen(): ", std::strerror(errno));
  socklen_t len = sizeof addr;
  ::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  s->ip_ = ip;
  s->port_ = ntohs(addr.sin_port);
  if (::pipe2(s->wake_fd_, O_CLOEXEC) != 0) return IoError("pipe(): ", std::strerror(errno));
  s->acceptor_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  return s;
}

StoreServer::~StoreServer() {
  stop_ = true;
  if (wake_fd_[1] >= 0) {
    char c = 0;
    [[maybe_unused]] ssize_t w = ::write(wake_fd_[1], &c, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
    cv_.notify_all();
  }
  for (auto& t : clients_) t.join();
  for (int fd : client_fds_) ::close(fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  for (int fd : wake_fd_)
    if (fd >= 0) ::close(fd);
}

void StoreServer::AcceptLoop() {
  while (!stop_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_[0], POLLIN, 0}};
    int r = ::poll(fds, 2, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || stop_ || (fds[1].revents & POLLIN)) break;
    if (!(fds[0].revents & POLLIN)) continue;
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (!allowed_.empty()) {
      char buf[INET_ADDRSTRLEN] = {0};
      ::inet_ntop(AF_INET, &peer.sin_addr, buf, sizeof buf);
      bool ok = false;
      for (const auto& a : allowed_) ok = ok || a == buf;
      if (!ok) {
        std::fprintf(stderr, "[hccl] refused a rendezvous connection from %s: not in HCCL_WHITELIST_FILE\n", buf);
        ::close(fd);
        continue;
      }
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard<std::mutex> lock(mu_);
    client_fds_.push_back(fd);
    clients_.emplace_back([this, fd] { Serve(fd); });
  }
}

void StoreServer::Serve(int fd) {
  // The "<prefix>alive/<name>" keys this connection set (see store.h).
  std::vector<std::pair<std::string, std::string>> owned;  // (gone key, name)
  struct Departure {
    StoreServer* server;
    std::vector<std::pair<std::string, std::string>>& owned;
    ~Departure() {
      if (owned.empty()) return;
      std::lock_guard<std::mutex> lock(server->mu_);
      for (const auto& [gone, name] : owned) {
        std::vector<char>& list = server->data_[gone];
        list.insert(list.end(), name.begin(), name.end());
        list.push_back(',');
      }
      server->cv_.notify_all();
    }
  } departure{this, owned};
  for (;;) {
    uint8_t op;
    std::string key, value;
    uint32_t timeout_ms;
    if (!ReadAll(fd, &op, 1) || !ReadItem(fd, &key) || !ReadItem(fd, &value) || !ReadAll(fd, &timeout_ms, 4))
      return;  // the client went away (or the server stops)
    uint8_t status = 0;
    std::vector<char> reply;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (op == kSet) {
        data_[key].assign(value.begin(), value.end());
        if (const size_t at = key.rfind("alive/"); at != std::string::npos)
          owned.emplace_back(key.substr(0, at) + "gone", key.substr(at + 6));
        cv_.notify_all();
      } else if (op == kGet) {
        const bool found = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                        [&] { return stop_ || data_.count(key) > 0; });
        if (found && !stop_) reply = data_[key];
        else status = 1;
      } else {
        return;
      }
    }
    if (!WriteAll(fd, &status, 1) || !WriteItem(fd, reply.data(), static_cast<uint32_t>(reply.size()))) return;
  }
}

Expected<std::unique_ptr<StoreClient>> StoreClient::Connect(const std::string& ip, uint16_t port,
                                                            std::chrono::milliseconds timeout) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1)
    return InvalidArgument("'", ip, "' is not an IPv4 address");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "no attempt";
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return IoError("socket(): ", std::strerror(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return std::unique_ptr<StoreClient>(new StoreClient(fd, Where(ip, port)));
    }
    last = std::strerror(errno);
    ::close(fd);
    if (std::chrono::steady_clock::now() >= deadline)
      return DeadlineExceeded("cannot reach the root rank's rendezvous service at ", Where(ip, port), " within ",
                              timeout.count() / 1000.0, " s (", last,
                              "); is the root process running, and is the address right? (HCCL_CONNECT_TIMEOUT "
                              "sets the wait, HCCL_IF_IP the root's address)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

StoreClient::~StoreClient() { ::close(fd_); }

Status StoreClient::Set(const std::string& key, const std::vector<char>& value) {
  std::lock_guard<std::mutex> lock(mu_);
  uint8_t op = kSet, status;
  uint32_t timeout = 0, n;
  std::string ignored;
  if (!WriteAll(fd_, &op, 1) || !WriteItem(fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !WriteItem(fd_, value.data(), static_cast<uint32_t>(value.size())) || !WriteAll(fd_, &timeout, 4) ||
      !ReadAll(fd_, &status, 1) || !ReadAll(fd_, &n, 4) || n != 0)
    return Unavailable("the rendezvous service at ", where_, " closed the connection (did the root process exit?)");
  return Status::Ok();
}

Expected<std::vector<char>> StoreClient::Get(const std::string& key, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  uint8_t op = kGet, status;
  uint32_t ms = static_cast<uint32_t>(std::min<int64_t>(timeout.count(), UINT32_MAX));
  std::string value;
  if (!WriteAll(fd_, &op, 1) || !WriteItem(fd_, key.data(), static_cast<uint32_t>(key.size())) ||
      !WriteItem(fd_, nullptr, 0) || !WriteAll(fd_, &ms, 4) || !ReadAll(fd_, &status, 1) || !ReadItem(fd_, &value))
    return Unavailable("the rendezvous service at ", where_, " closed the connection (did the root process exit?)");
  if (status != 0) return DeadlineExceeded("'", key, "' did not appear in the rendezvous within ", ms / 1000.0, " s");
  return std::vector<char>(value.begin(), value.end());
}

}  // namespace oc::hccl

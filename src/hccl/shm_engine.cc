// The same-host path of the Engine (engine.h): collectives through one
// shared-memory segment that every rank of the communicator maps, with Gloo
// (the wrapped `net` engine) kept for point-to-point transfers and for making
// the segment. TCP through the loopback copies every byte through the kernel
// twice and wakes a thread per message; here a rank copies its data into its
// slot once and its peers read it from there.
//
// The segment: a header (the abort record), one control line per rank (its
// progress counter, a futex word, and its process id) and, per rank, two slots
// of `slot_bytes` used in turn. Every rank runs the same sequence of phases:
// it fills its slot, bumps its counter (Signal) and waits until every peer's
// counter has reached the same value (WaitAll); then it may read the peers'
// slots of that phase. Alternating two slots makes the next phase's writes
// safe without another barrier: a peer that has signalled phase k+1 has
// finished reading the slots of phase k-1, which phase k+1 reuses.
//
// Waiting spins briefly, then yields, then sleeps on the futex in short
// slices, checking between slices the abort record (a rank that failed
// writes why, and the others fail with its reason), whether each awaited
// peer's process still exists (a killed rank fails the others at once, with
// HCCL_E_REMOTE) and the deadline (HCCL_EXEC_TIMEOUT; a stopped rank makes
// every other rank fail with HCCL_E_TIMEOUT naming it).
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>

#include "hccl/engine.h"

#include "base/cpu_relax.h"

namespace oc::hccl {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kMagic = 0x3143484d48534f43ull;  // "COSHMHC1"
constexpr size_t kLine = 64;
constexpr size_t kReasonBytes = 1024;
constexpr size_t kDescBytes = 32;

struct Header {
  uint64_t magic;
  uint32_t size;
  uint32_t pad;
  uint64_t slot_bytes;
  std::atomic<uint32_t> abort_claim;     // 0, or 1 + the rank that failed first
  std::atomic<uint32_t> abort_published; // set once reason and code are written
  int32_t abort_code;                    // a StatusCode
  char abort_reason[kReasonBytes];
};

struct alignas(kLine) Control {
  std::atomic<uint32_t> progress;  // phases this rank has signalled (the futex word)
  std::atomic<uint32_t> waiters;   // ranks asleep on `progress`
  int32_t pid;
  // The description of the operation this rank starts with the phase of
  // that parity (Agree); a peer is at most one phase ahead, so it never
  // overwrites the one being read.
  uint8_t desc[2][kDescBytes];
};

size_t HeaderBytes() { return (sizeof(Header) + kLine - 1) / kLine * kLine; }
size_t SegmentBytes(int size, size_t slot) {
  return HeaderBytes() + sizeof(Control) * static_cast<size_t>(size) + 2 * slot * static_cast<size_t>(size);
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* ts) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, ts, nullptr, 0);
}

bool Reached(uint32_t value, uint32_t target) { return static_cast<int32_t>(value - target) >= 0; }

// Is process `pid` gone (exited, a zombie, or never there)?
bool ProcessGone(int32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return true;
  std::string line;
  std::getline(in, line);
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return false;
  const char state = line[paren + 2];
  return state == 'Z' || state == 'X';
}

// Identifies "this host" for the purpose of sharing memory: the boot, and the
// network, PID, IPC and mount namespaces (ranks in different network
// namespaces are treated as different hosts and use TCP).
struct HostKey {
  char text[256];
};
HostKey ThisHost() {
  std::string key;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(boot, id);
  key += id;
  for (const char* ns : {"net", "pid", "ipc", "mnt"}) {
    char buf[128] = {};
    const std::string link = std::string("/proc/self/ns/") + ns;
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
    key.push_back('|');
    key.append(buf, n > 0 ? static_cast<size_t>(n) : 0);
  }
  HostKey h{};
  std::memcpy(h.text, key.data(), std::min(key.size(), sizeof h.text - 1));
  return h;
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

class ShmEngine final : public Engine {
 public:
  ShmEngine(std::unique_ptr<Engine> net, uint8_t* base, size_t bytes, size_t slot, std::chrono::milliseconds timeout)
      : net_(std::move(net)), me_(net_->rank()), n_(net_->size()), base_(base), mapped_(bytes), slot_(slot),
        timeout_(timeout), oversubscribed_(n_ > UsableCpus()) {}
  ~ShmEngine() override { ::munmap(base_, mapped_); }

  int rank() const override { return me_; }
  int size() const override { return n_; }

  Status AllReduce(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, uint32_t) override {
    return ReduceImpl("AllReduce", in, out, n, elem, fn, -1);
  }
  Status Reduce(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, int root, uint32_t) override {
    return ReduceImpl("Reduce", in, out, n, elem, fn, root);
  }

  // Per phase, a chunk of every block: rank r leaves its chunk of block q in
  // part q of its slot; rank q reduces part q of every slot, in rank order.
  Status ReduceScatter(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, uint32_t) override {
    const size_t part = PartElems(elem);
    const auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    for (size_t off = 0; off < n; off += part) {
      const size_t k = std::min(part, n - off), b = k * elem;
      uint8_t* mine = Slot(me_);
      for (int q = 0; q < n_; ++q)
        if (q != me_) std::memcpy(mine + Part(q, elem), src + (static_cast<size_t>(q) * n + off) * elem, b);
      OC_RETURN_IF_ERROR(Phase("ReduceScatter"));
      const uint8_t* own = src + (static_cast<size_t>(me_) * n + off) * elem;
      // In place with the output on this rank's own block (out = in + rank *
      // count): the chain would overwrite it before reading it unless this
      // rank is first or second; reduce into the slot's unused part instead.
      uint8_t* target = dst + off * elem;
      uint8_t* acc = me_ >= 2 && target == own ? mine + Part(me_, elem) : target;
      ReduceInOrder(acc, k, fn, [&](int q) { return q == me_ ? own : Slot(q) + Part(me_, elem); });
      if (acc != target) std::memcpy(target, acc, b);
      Flip();
    }
    return Status::Ok();
  }

  Status Broadcast(void* buf, size_t bytes, int root, uint32_t) override {
    auto* p = static_cast<uint8_t*>(buf);
    for (size_t off = 0; off < bytes; off += slot_) {
      const size_t b = std::min(slot_, bytes - off);
      if (me_ == root) std::memcpy(Slot(me_), p + off, b);
      OC_RETURN_IF_ERROR(Phase("Broadcast"));
      if (me_ != root) std::memcpy(p + off, Slot(root), b);
      Flip();
    }
    return Status::Ok();
  }

  Status AllGather(const void* in, void* out, size_t bytes, uint32_t) override {
    auto* dst = static_cast<uint8_t*>(out);
    const auto* src = static_cast<const uint8_t*>(in);
    uint8_t* own = dst + bytes * static_cast<size_t>(me_);
    // This rank's block goes to its place in `out` chunk by chunk, from the
    // slot just filled (still in cache), unless it is there already (in
    // place) or the two overlap otherwise (then at once, as one move).
    const bool overlap = own != src && own < src + bytes && src < own + bytes;
    if (overlap) std::memmove(own, src, bytes);
    const bool copy_own = own != src && !overlap;
    for (size_t off = 0; off < bytes; off += slot_) {
      const size_t b = std::min(slot_, bytes - off);
      std::memcpy(Slot(me_), src + off, b);
      if (copy_own) std::memcpy(own + off, Slot(me_), b);
      OC_RETURN_IF_ERROR(Phase("AllGather"));
      for (int q = 0; q < n_; ++q)
        if (q != me_) std::memcpy(dst + bytes * static_cast<size_t>(q) + off, Slot(q), b);
      Flip();
    }
    return Status::Ok();
  }

  Status Scatter(const void* in, void* out, size_t bytes, int root, uint32_t) override {
    const size_t part = PartBytes();
    const auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    if (me_ == root) std::memcpy(dst, src + bytes * static_cast<size_t>(me_), bytes);
    for (size_t off = 0; off < bytes; off += part) {
      const size_t b = std::min(part, bytes - off);
      if (me_ == root)
        for (int q = 0; q < n_; ++q)
          if (q != me_) std::memcpy(Slot(me_) + part * static_cast<size_t>(q), src + bytes * static_cast<size_t>(q) + off, b);
      OC_RETURN_IF_ERROR(Phase("Scatter"));
      if (me_ != root) std::memcpy(dst + off, Slot(root) + part * static_cast<size_t>(me_), b);
      Flip();
    }
    return Status::Ok();
  }

  Status AlltoAll(const void* in, void* out, size_t bytes, uint32_t) override {
    std::vector<int64_t> each(static_cast<size_t>(n_), static_cast<int64_t>(bytes));
    return Exchange("AlltoAll", in, each, out, each, bytes);
  }

  Status AlltoAllV(const void* in, const std::vector<int64_t>& in_bytes, void* out,
                   const std::vector<int64_t>& out_bytes, uint32_t) override {
    // The number of phases follows the largest block of any rank: agree on it first.
    uint64_t mine = 0;
    for (int64_t b : in_bytes) mine = std::max<uint64_t>(mine, static_cast<uint64_t>(b));
    std::vector<uint64_t> all(static_cast<size_t>(n_));
    OC_RETURN_IF_ERROR(AllGather(&mine, all.data(), sizeof mine, 0));
    const uint64_t largest = *std::max_element(all.begin(), all.end());
    return Exchange("AlltoAllV", in, in_bytes, out, out_bytes, static_cast<size_t>(largest));
  }

  Status SendRecv(const std::vector<Transfer>& transfers) override { return net_->SendRecv(transfers); }

  // Deferred to the next phase, which carries the description in the
  // control line: one phase per small collective instead of two.
  Status Agree(const void* mine, size_t bytes, Check check, uint32_t tag) override {
    if (bytes > kDescBytes) return Engine::Agree(mine, bytes, std::move(check), tag);
    std::memcpy(pending_desc_, mine, bytes);
    pending_bytes_ = bytes;
    pending_check_ = std::move(check);
    return Status::Ok();
  }
  Status Settle() override {
    if (!pending_check_) return Status::Ok();
    OC_RETURN_IF_ERROR(Phase("comparing the operation's arguments"));
    Flip();
    return Status::Ok();
  }

  Status Barrier(uint32_t) override {
    OC_RETURN_IF_ERROR(Phase("Barrier"));
    Flip();
    return Status::Ok();
  }

 private:
  Header& header() { return *reinterpret_cast<Header*>(base_); }
  Control& control(int r) {
    return reinterpret_cast<Control*>(base_ + HeaderBytes())[r];
  }
  // Rank r's slot of the current phase.
  uint8_t* Slot(int r) {
    return base_ + HeaderBytes() + sizeof(Control) * static_cast<size_t>(n_) +
           (static_cast<size_t>(r) * 2 + buf_) * slot_;
  }
  void Flip() { buf_ ^= 1; }
  // A slot cut in size() parts, each a whole number of cache lines.
  size_t PartBytes() const { return slot_ / static_cast<size_t>(n_) / kLine * kLine; }
  size_t PartElems(size_t elem) const { return PartBytes() / elem; }
  size_t Part(int q, size_t elem) const { return static_cast<size_t>(q) * PartElems(elem) * elem; }

  // out = x(0) op x(1) op ... op x(n-1), always in rank order so that every
  // rank computes bit-identical results.
  template <typename Operand>
  void ReduceInOrder(uint8_t* out, size_t k, ReduceFn fn, Operand x) {
    fn(out, x(0), x(1), k);
    for (int q = 2; q < n_; ++q) fn(out, out, x(q), k);
  }

  // All-reduce and reduce. Small chunks: every rank leaves its chunk in its
  // slot and reduces all of them (one phase). Large chunks: segment q of the
  // chunk is reduced by rank q into its own slot (phase one), then gathered
  // from there (phase two) by every rank, or by the root only.
  Status ReduceImpl(const char* what, const void* in, void* out, size_t n, size_t elem, ReduceFn fn, int root) {
    const auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    const bool all = root < 0, receives = all || root == me_;
    const size_t step = slot_ / elem;
    for (size_t off = 0; off < n; off += step) {
      const size_t k = std::min(step, n - off), b = k * elem;
      if (b * static_cast<size_t>(n_) <= kOnePhaseBytes || k < static_cast<size_t>(n_)) {
        std::memcpy(Slot(me_), src + off * elem, b);
        OC_RETURN_IF_ERROR(Phase(what));
        if (receives) ReduceInOrder(dst + off * elem, k, fn, [&](int q) { return Slot(q); });
        Flip();
        continue;
      }
      auto seg = [&](int q) { return k * static_cast<size_t>(q) / static_cast<size_t>(n_); };
      const size_t lo = seg(me_), hi = seg(me_ + 1);
      uint8_t* mine = Slot(me_);
      // Every segment but this rank's own, which it reads from `in` directly.
      std::memcpy(mine, src + off * elem, lo * elem);
      std::memcpy(mine + hi * elem, src + (off + hi) * elem, (k - hi) * elem);
      OC_RETURN_IF_ERROR(Phase(what));
      const uint8_t* own = src + (off + lo) * elem;
      ReduceInOrder(mine + lo * elem, hi - lo, fn, [&](int q) { return q == me_ ? own : Slot(q) + lo * elem; });
      OC_RETURN_IF_ERROR(Phase(what));
      if (receives)
        for (int q = 0; q < n_; ++q)
          std::memcpy(dst + (off + seg(q)) * elem, Slot(q) + seg(q) * elem, (seg(q + 1) - seg(q)) * elem);
      Flip();
    }
    return Status::Ok();
  }

  // Blocks from every rank to every rank, `in_bytes[q]` to rank q and
  // `out_bytes[q]` from rank q, in rank order; `largest` is the largest block
  // of any rank. Per phase, up to one part of each block.
  Status Exchange(const char* what, const void* in, const std::vector<int64_t>& in_bytes, void* out,
                  const std::vector<int64_t>& out_bytes, size_t largest) {
    const size_t part = PartBytes();
    const auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    std::vector<size_t> in_at(static_cast<size_t>(n_) + 1, 0), out_at(static_cast<size_t>(n_) + 1, 0);
    for (size_t q = 0; q < static_cast<size_t>(n_); ++q) {
      in_at[q + 1] = in_at[q] + static_cast<size_t>(in_bytes[q]);
      out_at[q + 1] = out_at[q] + static_cast<size_t>(out_bytes[q]);
    }
    const size_t me = static_cast<size_t>(me_);
    const int64_t own = std::min(in_bytes[me], out_bytes[me]);
    auto piece = [&](int64_t total, size_t off) {
      return static_cast<size_t>(total) > off ? std::min(part, static_cast<size_t>(total) - off) : size_t{0};
    };
    for (size_t off = 0; off < largest; off += part) {
      for (size_t q = 0; q < static_cast<size_t>(n_); ++q)
        if (q != me) std::memcpy(Slot(me_) + part * q, src + in_at[q] + off, piece(in_bytes[q], off));
      // This rank's own block, a part per phase with the others' (every rank
      // copies at the same pace).
      std::memcpy(dst + out_at[me] + off, src + in_at[me] + off, piece(own, off));
      OC_RETURN_IF_ERROR(Phase(what));
      for (size_t q = 0; q < static_cast<size_t>(n_); ++q)
        if (q != me)
          std::memcpy(dst + out_at[q] + off, Slot(static_cast<int>(q)) + part * me, piece(out_bytes[q], off));
      Flip();
    }
    return Status::Ok();
  }

  // Signals this rank's next phase and waits until every peer has signalled it.
  // A pending description (Agree) goes with it and is compared once every
  // peer has arrived, before the caller reads their slots.
  Status Phase(const char* what) {
    Control& c = control(me_);
    const uint32_t next = c.progress.load(std::memory_order_relaxed) + 1;
    if (pending_check_) std::memcpy(c.desc[next & 1], pending_desc_, pending_bytes_);
    const uint32_t target = c.progress.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (c.waiters.load(std::memory_order_seq_cst) > 0) Futex(&c.progress, FUTEX_WAKE, INT_MAX, nullptr);
    for (int q = 0; q < n_; ++q)
      if (q != me_) OC_RETURN_IF_ERROR(WaitFor(q, target, what));
    if (!pending_check_) return Status::Ok();
    const Check check = std::move(pending_check_);
    pending_check_ = nullptr;
    // The check accepts exactly the case where every description is this
    // rank's: only a mismatch needs it (and its allocations).
    bool same = true;
    for (int q = 0; q < n_ && same; ++q)
      same = std::memcmp(control(q).desc[target & 1], pending_desc_, pending_bytes_) == 0;
    if (same) return Status::Ok();
    std::vector<uint8_t> all(pending_bytes_ * static_cast<size_t>(n_));
    for (int q = 0; q < n_; ++q)
      std::memcpy(all.data() + pending_bytes_ * static_cast<size_t>(q), control(q).desc[target & 1], pending_bytes_);
    return check(all.data());
  }

  Status WaitFor(int q, uint32_t target, const char* what) {
    Control& c = control(q);
    if (Reached(c.progress.load(std::memory_order_acquire), target)) return Status::Ok();
    const Clock::time_point start = Clock::now();
    // Spin, then yield: the peer is usually a microsecond or two away. When
    // ranks share CPUs, spinning past the first microseconds would hold the
    // CPU the peer needs, so the yielding starts at once after them.
    const auto spin = oversubscribed_ ? kSpinShared : kSpin;
    for (int i = 0;; ++i) {
      if (Reached(c.progress.load(std::memory_order_acquire), target)) return Status::Ok();
      if ((i & 15) == 15) {
        const auto waited = Clock::now() - start;
        if (waited > spin + kYield) break;
        if (waited > spin) {
          sched_yield();
          continue;
        }
      }
      OC_CPU_RELAX();
    }
    const Clock::time_point deadline = start + timeout_;
    for (;;) {
      if (Status failed = AbortedByOther(); !failed.ok()) return failed;
      c.waiters.fetch_add(1, std::memory_order_seq_cst);
      const uint32_t v = c.progress.load(std::memory_order_seq_cst);
      if (!Reached(v, target)) {
        const timespec slice{0, static_cast<long>(kSlice.count()) * 1000000L};
        Futex(&c.progress, FUTEX_WAIT, v, &slice);
      }
      c.waiters.fetch_sub(1, std::memory_order_seq_cst);
      if (Reached(c.progress.load(std::memory_order_acquire), target)) return Status::Ok();
      if (c.pid != control(me_).pid && ProcessGone(c.pid))
        return Abort(Unavailable(what, " failed: rank ", q, " (process ", c.pid,
                                 ") went away before it reached the operation's step"));
      if (Clock::now() > deadline)
        return Abort(DeadlineExceeded(what, " did not complete within ", timeout_.count() / 1000.0, " s: rank ", q,
                                      " did not reach the operation (stopped, slow, or calling another operation; "
                                      "HCCL_EXEC_TIMEOUT sets the limit)"));
    }
  }

  // Records this rank's failure for the others and wakes them; returns `st`.
  Status Abort(Status st) {
    Header& h = header();
    uint32_t none = 0;
    if (h.abort_claim.compare_exchange_strong(none, static_cast<uint32_t>(me_) + 1)) {
      std::snprintf(h.abort_reason, sizeof h.abort_reason, "%s", st.message().c_str());
      h.abort_code = static_cast<int32_t>(st.code());
      h.abort_published.store(1, std::memory_order_release);
      for (int q = 0; q < n_; ++q) Futex(&control(q).progress, FUTEX_WAKE, INT_MAX, nullptr);
    }
    return st;
  }

  Status AbortedByOther() {
    Header& h = header();
    if (!h.abort_published.load(std::memory_order_acquire)) return Status::Ok();
    const int failed = static_cast<int>(h.abort_claim.load()) - 1;
    const std::string reason(h.abort_reason, strnlen(h.abort_reason, sizeof h.abort_reason));
    return Status(static_cast<StatusCode>(h.abort_code), StrCat("rank ", failed, " reported: ", reason));
  }

  static constexpr size_t kOnePhaseBytes = 32 << 10;
  static constexpr auto kSpin = std::chrono::microseconds(50);
  static constexpr auto kSpinShared = std::chrono::microseconds(3);
  static constexpr auto kYield = std::chrono::microseconds(500);
  static constexpr std::chrono::milliseconds kSlice{5};

  std::unique_ptr<Engine> net_;
  const int me_, n_;
  uint8_t* const base_;
  const size_t mapped_, slot_;
  const std::chrono::milliseconds timeout_;
  // More ranks than CPUs: a spinning rank would hold the CPU its peer needs,
  // so waiting yields at once.
  const bool oversubscribed_;
  size_t buf_ = 0;  // which of each rank's two slots the current phase uses
  // The description Agree deferred to the next phase.
  Check pending_check_;
  uint8_t pending_desc_[kDescBytes] = {};
  size_t pending_bytes_ = 0;
};

std::string SegmentName() {
  uint64_t r[2] = {static_cast<uint64_t>(::getpid()),
                   static_cast<uint64_t>(Clock::now().time_since_epoch().count())};
  std::ifstream("/dev/urandom", std::ios::binary).read(reinterpret_cast<char*>(r), sizeof r);
  std::ostringstream s;
  s << "/opencann-hccl-" << std::hex << r[0] << r[1];
  return s.str();
}

// Maps the segment `name` (creating it on rank 0). nullptr on failure.
uint8_t* MapSegment(const std::string& name, bool create, size_t bytes) {
  const int fd = ::shm_open(name.c_str(), create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
  if (fd < 0) return nullptr;
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    ::close(fd);
    return nullptr;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

}  // namespace

std::unique_ptr<Engine> MaybeSharedMemory(std::unique_ptr<Engine> net, const Rendezvous& rv) {
  const int me = net->rank(), n = net->size();
  if (!rv.same_host_shm || n < 2) return net;
  // Same host? Every rank compares every rank's key (a collective: all agree).
  HostKey mine = ThisHost();
  std::vector<HostKey> keys(static_cast<size_t>(n));
  if (!net->AllGather(&mine, keys.data(), sizeof mine, 0xFFFF0001u).ok()) return net;
  for (const HostKey& k : keys)
    if (std::memcmp(&k, &mine, sizeof mine) != 0) return net;
  // Two slots per rank; a slot of up to 1 MiB, less when HCCL_BUFFSIZE caps the segment.
  size_t slot = std::min<size_t>(1u << 20, rv.staging_bytes / (2 * static_cast<size_t>(n)));
  slot = std::max<size_t>(slot / 4096 * 4096, 4096 * static_cast<size_t>((n * kLine + 4095) / 4096));
  const size_t bytes = SegmentBytes(n, slot);
  // Rank 0 makes the segment and sends its name; every rank maps it and says
  // whether it could; rank 0 unlinks the name (the mappings stay) either way.
  char name[64] = {};
  uint8_t* base = nullptr;
  if (me == 0) {
    const std::string s = SegmentName();
    base = MapSegment(s, true, bytes);
    if (base) {
      std::snprintf(name, sizeof name, "%s", s.c_str());
      auto* h = new (base) Header{};
      h->magic = kMagic;
      h->size = static_cast<uint32_t>(n);
      h->slot_bytes = slot;
    }
  }
  if (!net->Broadcast(name, sizeof name, 0, 0xFFFF0002u).ok()) {
    if (base) ::munmap(base, bytes);
    return net;
  }
  if (me != 0 && name[0]) base = MapSegment(name, false, bytes);
  bool ok = base != nullptr && reinterpret_cast<Header*>(base)->magic == kMagic &&
            reinterpret_cast<Header*>(base)->size == static_cast<uint32_t>(n);
  if (ok) {
    auto* c = reinterpret_cast<Control*>(base + HeaderBytes()) + me;
    c->pid = ::getpid();
  }
  std::vector<uint8_t> oks(static_cast<size_t>(n));
  const uint8_t my_ok = ok ? 1 : 0;
  const bool exchanged = net->AllGather(&my_ok, oks.data(), 1, 0xFFFF0003u).ok();
  if (me == 0 && name[0]) ::shm_unlink(name);
  if (!exchanged || std::count(oks.begin(), oks.end(), 1) != n) {
    if (base) ::munmap(base, bytes);
    if (me == 0)
      std::fprintf(stderr, "[hccl] the ranks are on one host but could not share memory (/dev/shm); "
                           "collectives go through TCP\n");
    return net;
  }
  return std::unique_ptr<Engine>(new ShmEngine(std::move(net), base, bytes, slot, rv.exec_timeout));
}

Expected<std::unique_ptr<Engine>> ConnectEngine(const Rendezvous& rv, int rank, int size) {
  OC_ASSIGN_OR_RETURN(std::unique_ptr<Engine> net, ConnectGloo(rv, rank, size));
  return MaybeSharedMemory(std::move(net), rv);
}

}  // namespace oc::hccl

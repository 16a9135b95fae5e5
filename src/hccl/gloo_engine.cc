// The Engine over Gloo (engine.h): Gloo's TCP transport, its collective
// algorithms, and a rendezvous through our store (store.h).
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <signal.h>

#include <cstring>
#include <mutex>

#include "hccl/engine.h"
#include "hccl/store.h"

namespace oc::hccl {
namespace {

// A store failure carried through Gloo's rendezvous (which reports errors by
// exceptions) to Guarded, keeping its Status.
struct StoreError : std::runtime_error {
  explicit StoreError(Status s) : std::runtime_error(s.message()), status(std::move(s)) {}
  Status status;
};

// The store key Gloo waits on is the missing rank's number.
Status NameMissingRank(const Status& st, const std::string& key) {
  if (st.code() != StatusCode::kDeadlineExceeded || key.empty() ||
      key.find_first_not_of("0123456789") != std::string::npos)
    return st;
  return DeadlineExceeded("rank ", key, " did not join (", st.message(), ")");
}

// Gloo's rendezvous reads and writes through this adapter to our store.
class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(StoreClient& client, std::string prefix, std::chrono::milliseconds timeout)
      : client_(client), prefix_(std::move(prefix)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    Status st = client_.Set(prefix_ + key, data);
    if (!st.ok()) throw StoreError(st);
  }
  std::vector<char> get(const std::string& key) override {
    auto v = client_.Get(prefix_ + key, timeout_);
    if (!v.ok()) throw StoreError(NameMissingRank(v.status(), key));
    return *v;
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    for (const auto& k : keys) {
      auto v = client_.Get(prefix_ + k, timeout);
      if (!v.ok()) throw StoreError(NameMissingRank(v.status(), k));
    }
  }

 private:
  StoreClient& client_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

// Gloo sizes reductions by sizeof(T): element types of each width HCCL has.
template <size_t N>
struct Elem {
  uint8_t bytes[N];
};

// Calls f(Elem<elem>{}) for the element width `elem` (1, 2, 4, 8 or 16 bytes).
template <typename F>
void WithElem(size_t elem, F&& f) {
  switch (elem) {
    case 1: f(Elem<1>{}); break;
    case 2: f(Elem<2>{}); break;
    case 4: f(Elem<4>{}); break;
    case 8: f(Elem<8>{}); break;
    case 16: f(Elem<16>{}); break;
    default: throw gloo::InvalidOperationException("no element type of " + std::to_string(elem) + " bytes");
  }
}

// Runs one Gloo call, turning its exceptions into a Status.
template <typename F>
Status Guarded(const char* what, std::chrono::milliseconds timeout, F&& f) {
  try {
    f();
    return Status::Ok();
  } catch (const StoreError& e) {
    return e.status.WithContext(what);
  } catch (const gloo::IoException& e) {
    std::string m = e.what();
    if (m.find("Timed out") != std::string::npos || m.find("timed out") != std::string::npos ||
        m.find("Timeout") != std::string::npos)
      return DeadlineExceeded(what, " did not complete within ", timeout.count() / 1000.0,
                              " s: a rank is missing, slow or called another operation (", m,
                              "; HCCL_EXEC_TIMEOUT sets the limit)");
    return Unavailable(what, " failed because a peer rank went away or its connection broke (", m, ")");
  } catch (const gloo::InvalidOperationException& e) {
    return Internal(what, ": ", e.what());
  } catch (const std::exception& e) {  // gloo's enforce failures and the rest
    return Unavailable(what, ": ", e.what());
  }
}

class GlooEngine final : public Engine {
 public:
  GlooEngine(std::shared_ptr<gloo::rendezvous::Context> ctx, std::chrono::milliseconds timeout,
             std::unique_ptr<StoreClient> store, const std::string& prefix)
      : ctx_(std::move(ctx)), timeout_(timeout), store_(std::move(store)), abort_key_(prefix + "abort"),
        gone_key_(prefix + "gone") {
    // Departures are recorded per connection (store.h): announce this rank on it.
    if (store_) (void)store_->Set(prefix + "alive/" + std::to_string(ctx_->rank), {});
  }
  int rank() const override { return ctx_->rank; }
  int size() const override { return ctx_->size; }

  Status AllReduce(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, uint32_t tag) override {
    if (in != out) std::memmove(out, in, n * elem);
    return AllReduceInPlace(out, n, elem, fn, tag);
  }

  // An all-reduce of the whole input in a scratch copy, then this rank's block.
  Status ReduceScatter(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, uint32_t tag) override {
    const size_t bytes = n * elem;
    std::vector<uint8_t> scratch(bytes * static_cast<size_t>(size()));
    std::memcpy(scratch.data(), in, scratch.size());
    OC_RETURN_IF_ERROR(AllReduceInPlace(scratch.data(), n * static_cast<size_t>(size()), elem, fn, tag));
    std::memcpy(out, scratch.data() + bytes * static_cast<size_t>(rank()), bytes);
    return Status::Ok();
  }

  Status AllReduceInPlace(void* buf, size_t n, size_t elem, ReduceFn fn, uint32_t tag) {
    return Guarded("AllReduce", timeout_, [&] {
      WithElem(elem, [&](auto e) {
        using T = decltype(e);
        gloo::AllreduceOptions o(ctx_);
        o.setOutput(static_cast<T*>(buf), n);
        o.setReduceFunction(gloo::AllreduceOptions::Func(fn));
        o.setTag(tag);
        o.setTimeout(timeout_);
        gloo::allreduce(o);
      });
    });
  }

  Status Reduce(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, int root, uint32_t tag) override {
    std::vector<uint8_t> unused;  // Gloo wants an output on every rank
    if (!out) {
      unused.resize(n * elem);
      out = unused.data();
    }
    return Guarded("Reduce", timeout_, [&] {
      WithElem(elem, [&](auto e) {
        using T = decltype(e);
        gloo::ReduceOptions o(ctx_);
        o.setInput(const_cast<T*>(static_cast<const T*>(in)), n);
        o.setOutput(static_cast<T*>(out), n);
        o.setReduceFunction(gloo::ReduceOptions::Func(fn));
        o.setRoot(root);
        o.setTag(tag);
        o.setTimeout(timeout_);
        gloo::reduce(o);
      });
    });
  }

  Status Broadcast(void* buf, size_t bytes, int root, uint32_t tag) override {
    return Guarded("Broadcast", timeout_, [&] {
      gloo::BroadcastOptions o(ctx_);
      o.setOutput(static_cast<uint8_t*>(buf), bytes);
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::broadcast(o);
    });
  }

  Status AllGather(const void* in, void* out, size_t bytes, uint32_t tag) override {
    return Guarded("AllGather", timeout_, [&] {
      gloo::AllgatherOptions o(ctx_);
      o.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), bytes);
      o.setOutput(static_cast<uint8_t*>(out), bytes * static_cast<size_t>(size()));
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::allgather(o);
    });
  }

  Status Scatter(const void* in, void* out, size_t bytes, int root, uint32_t tag) override {
    return Guarded("Scatter", timeout_, [&] {
      gloo::ScatterOptions o(ctx_);
      if (rank() == root) {
        std::vector<uint8_t*> ptrs;
        for (int r = 0; r < size(); ++r)
          ptrs.push_back(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)) + bytes * static_cast<size_t>(r));
        o.setInputs(ptrs, bytes);
      }
      o.setOutput(static_cast<uint8_t*>(out), bytes);
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::scatter(o);
    });
  }

  Status AlltoAll(const void* in, void* out, size_t bytes, uint32_t tag) override {
    return Guarded("AlltoAll", timeout_, [&] {
      gloo::AlltoallOptions o(ctx_);
      const size_t total = bytes * static_cast<size_t>(size());
      o.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), total);
      o.setOutput(static_cast<uint8_t*>(out), total);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::alltoall(o);
    });
  }

  Status AlltoAllV(const void* in, const std::vector<int64_t>& in_bytes, void* out,
                   const std::vector<int64_t>& out_bytes, uint32_t tag) override {
    return Guarded("AlltoAllV", timeout_, [&] {
      gloo::AlltoallvOptions o(ctx_);
      o.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), in_bytes);
      o.setOutput(static_cast<uint8_t*>(out), out_bytes);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::alltoallv(o);
    });
  }

  Status SendRecv(const std::vector<Transfer>& transfers) override {
    return Guarded(transfers.size() == 1 ? (transfers[0].send ? "Send" : "Recv") : "BatchSendRecv", timeout_, [&] {
      std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> bufs;
      for (const Transfer& t : transfers) {
        bufs.push_back(ctx_->createUnboundBuffer(t.buf, t.bytes));
        if (t.send) bufs.back()->send(t.peer, t.slot);
        else bufs.back()->recv(t.peer, t.slot);
      }
      for (size_t i = 0; i < transfers.size(); ++i) {
        const bool ok = transfers[i].send ? bufs[i]->waitSend(timeout_) : bufs[i]->waitRecv(timeout_);
        if (!ok)
          throw gloo::IoException(StrCat("Timed out waiting for rank ", transfers[i].peer, " to ",
                                         transfers[i].send ? "receive" : "send", " ", transfers[i].bytes, " bytes"));
      }
    });
  }

  Status Barrier(uint32_t tag) override {
    return Guarded("Barrier", timeout_, [&] {
      gloo::BarrierOptions o(ctx_);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::barrier(o);
    });
  }

 private:
  // Gloo's call, its failure shared with the other ranks (Share).
  template <typename F>
  Status Guarded(const char* what, std::chrono::milliseconds timeout, F&& f) {
    return Share(::oc::hccl::Guarded(what, timeout, std::forward<F>(f)));
  }

  // A rank whose operation timed out records why in the store before it
  // exits and its sockets close; a peer that then loses its connection to
  // that rank reports the timeout and the rank that caused it rather than a
  // broken connection.
  Status Share(Status st) {
    if (st.ok() || !store_) return st;
    if (st.code() == StatusCode::kDeadlineExceeded) {
      st = Status(st.code(), StrCat(st.message(), Departed(std::chrono::milliseconds(0))));
      const std::string m = StrCat("rank ", rank(), " reported: ", st.message());
      (void)store_->Set(abort_key_, std::vector<char>(m.begin(), m.end()));
    } else if (st.code() == StatusCode::kUnavailable) {
      // No waiting: a rank records its timeout before its sockets close.
      auto why = store_->Get(abort_key_, std::chrono::milliseconds(0));
      if (why.ok())
        return DeadlineExceeded(std::string(why->begin(), why->end()), " (this rank then lost its connection: ",
                                st.message(), ")");
      // The departed rank's connection to the rendezvous service ended when
      // its process did, usually within a moment of its sockets.
      st = Unavailable(st.message(), Departed(std::chrono::milliseconds(100)));
    }
    return st;
  }

  // "; rank N went away first (...)" when the rendezvous service has seen a
  // rank of this communicator leave (store.h), else "".
  std::string Departed(std::chrono::milliseconds wait) {
    auto gone = store_->Get(gone_key_, wait);
    if (!gone.ok() || gone->empty()) return "";
    const std::string ranks(gone->begin(), gone->end() - 1);  // "2" or "2,0,..." in the order they left
    const size_t comma = ranks.find(',');
    std::string msg = StrCat("; rank ", ranks.substr(0, comma),
                             " went away first (its process ended or it destroyed its communicator)");
    if (comma != std::string::npos) msg += StrCat(", then rank(s) ", ranks.substr(comma + 1));
    return msg;
  }

  std::shared_ptr<gloo::rendezvous::Context> ctx_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<StoreClient> store_;  // the rendezvous store, kept for failure reports
  std::string abort_key_;
  std::string gone_key_;
};

}  // namespace

// Gloo writes to its sockets without MSG_NOSIGNAL: a write to a peer that has
// died would raise SIGPIPE and kill this process instead of failing the
// operation. Ignore SIGPIPE, unless the application has its own handler.
void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      ::sigemptyset(&ignore.sa_mask);
      ::sigaction(SIGPIPE, &ignore, nullptr);
    }
  });
}

Expected<std::unique_ptr<Engine>> ConnectGloo(const Rendezvous& rv, int rank, int size) {
  IgnoreSigpipe();
  OC_ASSIGN_OR_RETURN(std::unique_ptr<StoreClient> client,
                      StoreClient::Connect(rv.store_ip, rv.store_port, rv.connect_timeout));
  std::shared_ptr<gloo::rendezvous::Context> ctx;
  Status st = Guarded("connecting the ranks", rv.connect_timeout, [&] {
    gloo::transport::tcp::attr attr;
    attr.hostname = rv.local_ip;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    GlooStore store(*client, rv.prefix, rv.connect_timeout);
    ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(rv.connect_timeout);
    ctx->connectFullMesh(store, device);
    ctx->setTimeout(rv.exec_timeout);
  });
  if (!st.ok()) {
    if (st.code() == StatusCode::kDeadlineExceeded)
      return DeadlineExceeded("rank ", rank, " of ", size, " could not meet every other rank within ",
                              rv.connect_timeout.count() / 1000.0, " s (HCCL_CONNECT_TIMEOUT sets the wait): ",
                              st.message());
    return st;
  }
  return std::unique_ptr<Engine>(new GlooEngine(std::move(ctx), rv.exec_timeout, std::move(client), rv.prefix));
}

}  // namespace oc::hccl

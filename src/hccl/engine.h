// The one interface between HCCL and the communication engine that moves the
// bytes: a connected group of ranks running collectives on host buffers,
// blocking until done. Gloo serves it today (gloo_engine.cc, TCP within and
// across hosts); NCCL can serve GPU devices behind the same interface later.
//
// ConnectEngine picks the path: when every rank of the communicator runs on
// this host (same boot, network, PID and mount namespaces), collectives go
// through a shared-memory segment (shm_engine.cc) and only point-to-point
// transfers through Gloo; otherwise everything goes through Gloo.
//
// Every rank must call the same operations in the same order with matching
// sizes; `tag` (the communicator's sequence number) keeps the messages of
// different operations apart. A failure (a peer gone, a timeout) returns a
// Status naming what happened: kDeadlineExceeded for timeouts, kUnavailable for
// peers that failed; the engine is unusable afterwards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace oc::hccl {

// out[i] = a[i] (op) b[i] for n elements; out may alias a or b.
using ReduceFn = void (*)(void* out, const void* a, const void* b, size_t n);

class Engine {
 public:
  virtual ~Engine() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // n elements of elem bytes; out may be in.
  virtual Status AllReduce(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, uint32_t tag) = 0;
  // `in` holds size() blocks of n elements; block r, reduced over the ranks,
  // goes to rank r's out.
  virtual Status ReduceScatter(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, uint32_t tag) = 0;
  // Every rank's `in` reduced into the root's `out` (null on the other ranks).
  virtual Status Reduce(const void* in, void* out, size_t n, size_t elem, ReduceFn fn, int root, uint32_t tag) = 0;
  virtual Status Broadcast(void* buf, size_t bytes, int root, uint32_t tag) = 0;
  // out holds size() blocks of `bytes`, in rank order.
  virtual Status AllGather(const void* in, void* out, size_t bytes, uint32_t tag) = 0;
  // The root's `in` holds size() blocks of `bytes`; block r goes to rank r's out.
  virtual Status Scatter(const void* in, void* out, size_t bytes, int root, uint32_t tag) = 0;
  // Blocks of `bytes` from each rank to each rank (in and out: size() blocks).
  virtual Status AlltoAll(const void* in, void* out, size_t bytes, uint32_t tag) = 0;
  // Contiguous blocks: in_bytes[r] to rank r, out_bytes[r] from rank r.
  virtual Status AlltoAllV(const void* in, const std::vector<int64_t>& in_bytes, void* out,
                           const std::vector<int64_t>& out_bytes, uint32_t tag) = 0;
  // Point-to-point: posts every transfer, then waits for all of them, so a
  // batch that sends to and receives from the same peers cannot deadlock.
  // Messages between two ranks match by `slot`, which the caller numbers.
  struct Transfer {
    bool send;
    void* buf;
    size_t bytes;
    int peer;
    uint64_t slot;
  };
  virtual Status SendRecv(const std::vector<Transfer>& transfers) = 0;
  virtual Status Barrier(uint32_t tag) = 0;

  // Compares this rank's `bytes`-byte description of the next operation with
  // every rank's: `check` gets them all (size() descriptions in rank order)
  // and returns the error to fail with, or Ok; it must accept the case where
  // every description equals this rank's, which an engine may therefore
  // settle without calling it. An engine may defer the
  // comparison to the first step of the operation that follows (it runs
  // before that step reads any peer's data, and fails it); Settle() runs a
  // deferred comparison when that operation took no step.
  using Check = std::function<Status(const uint8_t* all)>;
  virtual Status Agree(const void* mine, size_t bytes, Check check, uint32_t tag) {
    std::vector<uint8_t> all(bytes * static_cast<size_t>(size()));
    OC_RETURN_IF_ERROR(AllGather(mine, all.data(), bytes, tag));
    return check(all.data());
  }
  virtual Status Settle() { return Status::Ok(); }
};

// The rendezvous every rank of one communicator joins (store.h): the root
// process's service, keys under `prefix` (one per communicator).
struct Rendezvous {
  std::string store_ip;
  uint16_t store_port = 0;
  std::string prefix;
  std::string local_ip;  // the address this rank's transport listens on
  std::chrono::milliseconds connect_timeout{120000};
  std::chrono::milliseconds exec_timeout{1836000};
  bool same_host_shm = true;           // HCCL_INTRA_ROCE_ENABLE=1 turns it off
  size_t staging_bytes = 200u << 20;   // HCCL_BUFFSIZE: caps the shared segment
};

// Connects rank `rank` of `size` through Gloo's TCP transport.
Expected<std::unique_ptr<Engine>> ConnectGloo(const Rendezvous& rv, int rank, int size);
// Over a connected Gloo engine: a shared-memory engine when every rank is on
// this host and the segment could be made, else `net` itself.
std::unique_ptr<Engine> MaybeSharedMemory(std::unique_ptr<Engine> net, const Rendezvous& rv);
// ConnectGloo, then MaybeSharedMemory.
Expected<std::unique_ptr<Engine>> ConnectEngine(const Rendezvous& rv, int rank, int size);

}  // namespace oc::hccl

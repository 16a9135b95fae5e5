// Communicators and the operations queued on them.
//
// A Communicator holds its engine (engine.h), its identity (name, rank, size,
// the logical device it was created on) and its state: a sequence number given
// to each operation when it is enqueued — so every rank numbers its operations
// alike — and the first asynchronous error. Operations run as host tasks on an
// aclrtStream (acl/acl_hooks.h), in the stream's order with its other work.
//
// Before each collective the ranks exchange a small descriptor (operation,
// count, type, reduction, root) and compare them, so that a rank calling
// another operation or other arguments makes every rank fail at once with
// HCCL_E_PARA naming the ranks and what each called, instead of hanging or
// exchanging garbage. After a failure the communicator is unusable: later
// operations fail at once with the first error.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "hccl/engine.h"
#include "hccl/hccl_types.h"
#include "hccl/store.h"

namespace oc::hccl {

enum class OpKind : uint32_t {
  kAllReduce = 1, kBroadcast, kAllGather, kReduceScatter, kReduce, kScatter, kAlltoAll, kAlltoAllV, kSend, kRecv,
  kBatchSendRecv, kBarrier, kAllGatherV, kReduceScatterV,
};
const char* OpName(OpKind k);

// One queued operation. Counts are elements; buffers as the caller gave them.
struct Op {
  OpKind kind;
  const void* send = nullptr;
  void* recv = nullptr;
  uint64_t count = 0;          // AllReduce/Broadcast/Reduce: count; AllGather: sendCount; ReduceScatter/Scatter: recvCount
  HcclDataType dtype = HCCL_DATA_TYPE_FP32;
  HcclReduceOp reduce = HCCL_REDUCE_SUM;
  ReduceFn fn = nullptr;
  int root = 0;                // root, or the peer of Send/Recv
  std::vector<uint64_t> send_counts, send_displs, recv_counts, recv_displs;  // AlltoAllV / *V, elements
  std::vector<HcclSendRecvItem> items;  // BatchSendRecv
};

// What every rank says about an operation before running it (CheckDescriptors).
struct Descriptor {
  uint32_t magic;
  uint32_t seq;
  uint32_t kind;
  uint32_t dtype;
  uint32_t reduce;
  int32_t root;
  uint64_t count;
};

class Communicator {
 public:
  Communicator(std::string name, int rank, int size, int32_t device, std::unique_ptr<Engine> engine,
               Rendezvous rv, std::shared_ptr<StoreServer> server);

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int32_t device() const { return device_; }
  const Rendezvous& rendezvous() const { return rv_; }

  // The number the next enqueued operation gets.
  uint32_t NextSequence() { return seq_.fetch_add(1); }
  // Runs `op` (numbered `seq`) now, on the calling thread (a stream worker).
  Status Run(const Op& op, uint32_t seq);
  // HCCL_SUCCESS, or the code of the first failure.
  HcclResult AsyncError() const { return async_error_.load(); }

 private:
  Status Execute(const Op& op, uint32_t seq);
  Status Dispatch(const Op& op, uint32_t seq);
  Status CheckDescriptors(const Op& op, uint32_t seq);

  const std::string name_;
  const int rank_, size_;
  const int32_t device_;
  std::unique_ptr<Engine> engine_;
  const Rendezvous rv_;
  std::shared_ptr<StoreServer> server_;  // the rendezvous service, in the root's process
  std::atomic<uint32_t> seq_{0};
  std::mutex run_mu_;  // one operation at a time on the engine
  std::atomic<HcclResult> async_error_{HCCL_SUCCESS};
  Status first_error_;
  // Point-to-point messages sent to / received from each peer so far: the
  // n-th message between two ranks has slot n on both sides.
  std::vector<uint64_t> sent_, received_;
  Descriptor described_{};  // this rank's descriptor of the operation being checked
};

// The HcclResult for a failed Status.
HcclResult ResultFor(const Status& st);

}  // namespace oc::hccl

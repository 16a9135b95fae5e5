// The HCCL C API, part 2: the communication operations (hccl.h). Each call
// checks its arguments, numbers the operation on its communicator and queues it
// on the stream (acl/acl_hooks.h); the stream's worker runs it (comm.h).
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "acl/acl_hooks.h"
#include "hccl/api_internal.h"
#include "hccl/hccl.h"
#include "hccl/reduce_ops.h"

using namespace oc::hccl;
using oc::Expected;
using oc::Status;
using oc::StrCat;

namespace {

struct Task {
  std::shared_ptr<Communicator> comm;
  Op op;
  uint32_t seq;
};

int32_t RunTask(void* arg, char* msg, size_t msg_len) {
  auto* t = static_cast<Task*>(arg);
  Status st;
  try {
    st = t->comm->Run(t->op, t->seq);
  } catch (const std::exception& e) {
    st = oc::Internal(OpName(t->op.kind), ": ", e.what());
  }
  if (st.ok()) return 0;
  // The stream prefixes the task's name (the operation's); the rest is named here.
  std::snprintf(msg, msg_len, "#%u on communicator '%s': %s", t->seq, t->comm->name().c_str(), st.message().c_str());
  return ACL_ERROR_RT_MODEL_EXECUTE;  // what the stream's synchronisation reports
}

void ReleaseTask(void* arg) { delete static_cast<Task*>(arg); }

Result Enqueue(std::shared_ptr<Communicator> comm, Op op, aclrtStream stream) {
  // Nothing is formatted here unless it fails: this runs once per operation
  // on the caller's thread.
  const uint32_t seq = comm->NextSequence();
  const char* what = OpName(op.kind);
  auto* task = new Task{comm, std::move(op), seq};
  aclError e = aclrtOcEnqueueHostTask(stream, RunTask, task, ReleaseTask, what);
  if (e != ACL_SUCCESS)
    return Result(HCCL_E_RUNTIME, StrCat("cannot queue ", what, " #", seq, " on communicator '", comm->name(), "' on stream ",
                                         stream, " (aclError ", e, ": ",
                                         aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "", ")"));
  return Result();
}

// count elements of `t` and, times `blocks`, still a byte count.
Expected<size_t> Bytes(uint64_t count, HcclDataType t, uint64_t blocks, const char* what) {
  const size_t elem = ElementSize(t);
  if (elem == 0) return oc::InvalidArgument("dataType ", static_cast<int>(t), " is not an HcclDataType");
  const uint64_t limit = std::numeric_limits<int64_t>::max() / elem / std::max<uint64_t>(blocks, 1);
  if (count > limit) return oc::InvalidArgument(what, " ", count, " elements of ", DataTypeName(t), " overflow");
  return static_cast<size_t>(count * elem);
}

Status CheckRank(uint32_t r, const Communicator& c, const char* what) {
  if (r >= static_cast<uint32_t>(c.size()))
    return oc::InvalidArgument(what, " ", r, " is not a rank of communicator '", c.name(), "' (0..", c.size() - 1,
                               ")");
  return Status::Ok();
}

#define OC_HCCL_RETURN_IF_FAILED(expr)      \
  do {                                      \
    Result r_ = (expr);                     \
    if (r_.code != HCCL_SUCCESS) return r_; \
  } while (0)

std::vector<uint64_t> CopyCounts(const void* p, size_t n) {
  std::vector<uint64_t> v(n);
  std::memcpy(v.data(), p, n * sizeof(uint64_t));
  return v;
}

// Blocks of counts[r] elements at displs[r]: byte ranges that do not overflow,
// and a buffer where any block is non-empty.
Result CheckBlocks(const std::vector<uint64_t>& counts, const std::vector<uint64_t>& displs, HcclDataType t,
                   const void* buf, const char* side) {
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > std::numeric_limits<uint64_t>::max() - displs[r])
      return oc::InvalidArgument(side, "Counts[", r, "] + ", side, "Displs[", r, "] overflow");
    OC_RETURN_IF_ERROR(Bytes(counts[r] + displs[r], t, 1, side).status());
    if (counts[r] && !buf) return NullPointer(side[0] == 's' ? "sendBuf" : "recvBuf");
  }
  return Result();
}

// Point-to-point calls between HcclGroupStart and HcclGroupEnd wait here, per
// thread, and go out as one batch per communicator and stream at the end.
struct PendingGroup {
  int depth = 0;
  std::map<std::pair<Communicator*, aclrtStream>, std::pair<std::shared_ptr<Communicator>, std::vector<HcclSendRecvItem>>>
      batches;
};
thread_local PendingGroup t_group;

Result SendOrRecv(bool send, void* buf, uint64_t count, HcclDataType dataType, uint32_t peer, HcclComm comm,
                  aclrtStream stream) {
  OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
  if (!buf && count) return NullPointer(send ? "sendBuf" : "recvBuf");
  OC_RETURN_IF_ERROR(Bytes(count, dataType, 1, "count").status());
  OC_RETURN_IF_ERROR(CheckRank(peer, *c, send ? "destRank" : "srcRank"));
  if (static_cast<int>(peer) == c->rank())
    return oc::InvalidArgument(send ? "destRank " : "srcRank ", peer, " is this rank itself");
  HcclSendRecvItem item{send ? HCCL_SEND : HCCL_RECV, buf, count, dataType, peer};
  if (t_group.depth > 0) {
    auto& slot = t_group.batches[{c.get(), stream}];
    slot.first = c;
    slot.second.push_back(item);
    return Result();
  }
  Op op{send ? OpKind::kSend : OpKind::kRecv};
  op.send = buf;
  op.recv = buf;
  op.count = count;
  op.dtype = dataType;
  op.root = static_cast<int>(peer);
  return Enqueue(std::move(c), std::move(op), stream);
}

}  // namespace

extern "C" {

HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                         HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (count && !sendBuf) return NullPointer("sendBuf");
    if (count && !recvBuf) return NullPointer("recvBuf");
    OC_RETURN_IF_ERROR(Bytes(count, dataType, 1, "count").status());
    OC_ASSIGN_OR_RETURN(ReduceFn fn, FindReduceFn(dataType, op));
    Op o{OpKind::kAllReduce, sendBuf, recvBuf, count, dataType, op, fn};
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                         aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (count && !buf) return NullPointer("buf");
    OC_RETURN_IF_ERROR(Bytes(count, dataType, 1, "count").status());
    OC_RETURN_IF_ERROR(CheckRank(root, *c, "root"));
    Op o{OpKind::kBroadcast, buf, buf, count, dataType};
    o.root = static_cast<int>(root);
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                      uint32_t root, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (count && !sendBuf) return NullPointer("sendBuf");
    OC_RETURN_IF_ERROR(CheckRank(root, *c, "root"));
    if (count && !recvBuf && static_cast<int>(root) == c->rank()) return NullPointer("recvBuf (on the root)");
    OC_RETURN_IF_ERROR(Bytes(count, dataType, 1, "count").status());
    OC_ASSIGN_OR_RETURN(ReduceFn fn, FindReduceFn(dataType, op));
    Op o{OpKind::kReduce, sendBuf, recvBuf, count, dataType, op, fn};
    o.root = static_cast<int>(root);
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType, HcclComm comm,
                         aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (sendCount && !sendBuf) return NullPointer("sendBuf");
    if (sendCount && !recvBuf) return NullPointer("recvBuf");
    OC_RETURN_IF_ERROR(Bytes(sendCount, dataType, static_cast<uint64_t>(c->size()), "sendCount").status());
    Op o{OpKind::kAllGather, sendBuf, recvBuf, sendCount, dataType};
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                             HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (recvCount && !sendBuf) return NullPointer("sendBuf");
    if (recvCount && !recvBuf) return NullPointer("recvBuf");
    OC_RETURN_IF_ERROR(Bytes(recvCount, dataType, static_cast<uint64_t>(c->size()), "recvCount").status());
    OC_ASSIGN_OR_RETURN(ReduceFn fn, FindReduceFn(dataType, op));
    Op o{OpKind::kReduceScatter, sendBuf, recvBuf, recvCount, dataType, op, fn};
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType, uint32_t root,
                       HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    OC_RETURN_IF_ERROR(CheckRank(root, *c, "root"));
    if (recvCount && !sendBuf && static_cast<int>(root) == c->rank()) return NullPointer("sendBuf (on the root)");
    if (recvCount && !recvBuf) return NullPointer("recvBuf");
    OC_RETURN_IF_ERROR(Bytes(recvCount, dataType, static_cast<uint64_t>(c->size()), "recvCount").status());
    Op o{OpKind::kScatter, sendBuf, recvBuf, recvCount, dataType};
    o.root = static_cast<int>(root);
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType, const void* recvBuf,
                        uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    OC_ASSIGN_OR_RETURN(size_t sbytes, Bytes(sendCount, sendType, static_cast<uint64_t>(c->size()), "sendCount"));
    OC_ASSIGN_OR_RETURN(size_t rbytes, Bytes(recvCount, recvType, static_cast<uint64_t>(c->size()), "recvCount"));
    if (sbytes != rbytes)
      return oc::InvalidArgument("sendCount ", sendCount, " of ", DataTypeName(sendType), " and recvCount ", recvCount,
                                 " of ", DataTypeName(recvType), " are not the same number of bytes per rank");
    if (sbytes && !sendBuf) return NullPointer("sendBuf");
    if (rbytes && !recvBuf) return NullPointer("recvBuf");
    Op o{OpKind::kAlltoAll, sendBuf, const_cast<void*>(recvBuf), sendCount, sendType};
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts, const void* sdispls, HcclDataType sendType,
                         const void* recvBuf, const void* recvCounts, const void* rdispls, HcclDataType recvType,
                         HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (!sendCounts) return NullPointer("sendCounts");
    if (!sdispls) return NullPointer("sdispls");
    if (!recvCounts) return NullPointer("recvCounts");
    if (!rdispls) return NullPointer("rdispls");
    if (ElementSize(sendType) == 0 || ElementSize(sendType) != ElementSize(recvType))
      return oc::InvalidArgument("sendType ", DataTypeName(sendType), " and recvType ", DataTypeName(recvType),
                                 " must be data types of the same size");
    const size_t n = static_cast<size_t>(c->size());
    Op o{OpKind::kAlltoAllV, sendBuf, const_cast<void*>(recvBuf), 0, sendType};
    o.send_counts = CopyCounts(sendCounts, n);
    o.send_displs = CopyCounts(sdispls, n);
    o.recv_counts = CopyCounts(recvCounts, n);
    o.recv_displs = CopyCounts(rdispls, n);
    OC_HCCL_RETURN_IF_FAILED(CheckBlocks(o.send_counts, o.send_displs, sendType, sendBuf, "send"));
    OC_HCCL_RETURN_IF_FAILED(CheckBlocks(o.recv_counts, o.recv_displs, recvType, recvBuf, "recv"));
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    return Enqueue(std::move(c), Op{OpKind::kBarrier}, stream);
  });
}

HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                    aclrtStream stream) {
  return Guard(__func__, [&] { return SendOrRecv(true, sendBuf, count, dataType, destRank, comm, stream); });
}

HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                    aclrtStream stream) {
  return Guard(__func__, [&] { return SendOrRecv(false, recvBuf, count, dataType, srcRank, comm, stream); });
}

HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (itemNum && !sendRecvInfo) return NullPointer("sendRecvInfo");
    Op o{OpKind::kBatchSendRecv};
    for (uint32_t i = 0; i < itemNum; ++i) {
      const HcclSendRecvItem& it = sendRecvInfo[i];
      int type;  // read as bits: a C caller may store any int in the enum field
      std::memcpy(&type, &it.sendRecvType, sizeof type);
      if (type != HCCL_SEND && type != HCCL_RECV)
        return oc::InvalidArgument("sendRecvInfo[", i, "].sendRecvType ", type, " is neither HCCL_SEND nor HCCL_RECV");
      OC_RETURN_IF_ERROR(Bytes(it.count, it.dataType, 1, "count").status());
      if (it.count && !it.buf) return NullPointer("sendRecvInfo[].buf");
      OC_RETURN_IF_ERROR(CheckRank(it.remoteRank, *c, "remoteRank"));
      for (uint32_t j = 0; j < i; ++j)
        if (sendRecvInfo[j].sendRecvType == it.sendRecvType && sendRecvInfo[j].remoteRank == it.remoteRank)
          return oc::InvalidArgument("sendRecvInfo[", j, "] and [", i, "] both ", type == HCCL_SEND ? "send to" : "receive from",
                                     " rank ", it.remoteRank, " (one of each per peer in one call)");
      o.items.push_back(it);
    }
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclGroupStart(void) {
  return Guard(__func__, [&]() -> Result {
    ++t_group.depth;
    return Result();
  });
}

HcclResult HcclGroupEnd(void) {
  return Guard(__func__, [&]() -> Result {
    if (t_group.depth == 0) return oc::FailedPrecondition("HcclGroupEnd without a matching HcclGroupStart");
    if (--t_group.depth > 0) return Result();
    auto batches = std::move(t_group.batches);
    t_group.batches.clear();
    for (auto& [key, entry] : batches) {
      Op o{OpKind::kBatchSendRecv};
      o.items = std::move(entry.second);
      Result r = Enqueue(entry.first, std::move(o), key.second);
      if (r.code != HCCL_SUCCESS) return r;
    }
    return Result();
  });
}

// Declared for programs that mention them; not provided by the host backend.
#define OC_HCCL_NOT_SUPPORTED(fn, why) \
  return Guard(fn, [&]() -> Result { return Result(HCCL_E_NOT_SUPPORT, StrCat(fn, " is not supported: ", why)); })

HcclResult HcclAllGatherV(void* sendBuf, uint64_t sendCount, void* recvBuf, const void* recvCounts,
                          const void* recvDispls, HcclDataType dataType, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (!recvCounts) return NullPointer("recvCounts");
    if (!recvDispls) return NullPointer("recvDispls");
    if (sendCount && !sendBuf) return NullPointer("sendBuf");
    OC_RETURN_IF_ERROR(Bytes(sendCount, dataType, static_cast<uint64_t>(c->size()), "sendCount").status());
    const size_t n = static_cast<size_t>(c->size());
    Op o{OpKind::kAllGatherV, sendBuf, recvBuf, sendCount, dataType};
    o.send_counts.assign(n, sendCount);
    o.send_displs.assign(n, 0);
    o.recv_counts = CopyCounts(recvCounts, n);
    o.recv_displs = CopyCounts(recvDispls, n);
    if (o.recv_counts[static_cast<size_t>(c->rank())] != sendCount)
      return oc::InvalidArgument("recvCounts[", c->rank(), "] = ", o.recv_counts[static_cast<size_t>(c->rank())],
                                 " must equal this rank's sendCount ", sendCount);
    OC_HCCL_RETURN_IF_FAILED(CheckBlocks(o.recv_counts, o.recv_displs, dataType, recvBuf, "recv"));
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclReduceScatterV(void* sendBuf, const void* sendCounts, const void* sendDispls, void* recvBuf,
                              uint64_t recvCount, HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                              aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (!sendCounts) return NullPointer("sendCounts");
    if (!sendDispls) return NullPointer("sendDispls");
    if (recvCount && !recvBuf) return NullPointer("recvBuf");
    OC_ASSIGN_OR_RETURN(ReduceFn fn, FindReduceFn(dataType, op));
    const size_t n = static_cast<size_t>(c->size());
    Op o{OpKind::kReduceScatterV, sendBuf, recvBuf, recvCount, dataType, op, fn};
    o.send_counts = CopyCounts(sendCounts, n);
    o.send_displs = CopyCounts(sendDispls, n);
    if (o.send_counts[static_cast<size_t>(c->rank())] != recvCount)
      return oc::InvalidArgument("sendCounts[", c->rank(), "] = ", o.send_counts[static_cast<size_t>(c->rank())],
                                 " must equal this rank's recvCount ", recvCount);
    OC_HCCL_RETURN_IF_FAILED(CheckBlocks(o.send_counts, o.send_displs, dataType, sendBuf, "send"));
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclAlltoAllVC(const void* sendBuf, const void* sendCountMatrix, HcclDataType sendType,
                          const void* recvBuf, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&]() -> Result {
    OC_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> c, FindComm(comm));
    if (!sendCountMatrix) return NullPointer("sendCountMatrix");
    if (ElementSize(sendType) == 0 || ElementSize(sendType) != ElementSize(recvType))
      return oc::InvalidArgument("sendType ", DataTypeName(sendType), " and recvType ", DataTypeName(recvType),
                                 " must be data types of the same size");
    const size_t n = static_cast<size_t>(c->size()), me = static_cast<size_t>(c->rank());
    const std::vector<uint64_t> m = CopyCounts(sendCountMatrix, n * n);  // [i][j]: rank i to rank j
    Op o{OpKind::kAlltoAllV, sendBuf, const_cast<void*>(recvBuf), 0, sendType};
    uint64_t soff = 0, roff = 0;
    for (size_t r = 0; r < n; ++r) {
      o.send_counts.push_back(m[me * n + r]);
      o.send_displs.push_back(soff);
      soff += m[me * n + r];
      o.recv_counts.push_back(m[r * n + me]);
      o.recv_displs.push_back(roff);
      roff += m[r * n + me];
    }
    OC_HCCL_RETURN_IF_FAILED(CheckBlocks(o.send_counts, o.send_displs, sendType, sendBuf, "send"));
    OC_HCCL_RETURN_IF_FAILED(CheckBlocks(o.recv_counts, o.recv_displs, recvType, recvBuf, "recv"));
    return Enqueue(std::move(c), std::move(o), stream);
  });
}

HcclResult HcclCommSuspend(HcclComm) { OC_HCCL_NOT_SUPPORTED("HcclCommSuspend", "no fault-recovery mode on the host"); }
HcclResult HcclCommResume(HcclComm) { OC_HCCL_NOT_SUPPORTED("HcclCommResume", "no fault-recovery mode on the host"); }
HcclResult HcclCommWorkingDevNicSet(HcclComm, uint32_t*, bool*, uint32_t) {
  OC_HCCL_NOT_SUPPORTED("HcclCommWorkingDevNicSet", "device NICs do not exist on the host");
}
HcclResult HcclCommSetMemoryRange(HcclComm, void*, size_t, size_t, uint64_t) {
  OC_HCCL_NOT_SUPPORTED("HcclCommSetMemoryRange", "zero-copy memory ranges need device virtual memory");
}
HcclResult HcclCommUnsetMemoryRange(HcclComm, void*) {
  OC_HCCL_NOT_SUPPORTED("HcclCommUnsetMemoryRange", "zero-copy memory ranges need device virtual memory");
}
HcclResult HcclCommActivateCommMemory(HcclComm, void*, size_t, size_t, void*, uint64_t) {
  OC_HCCL_NOT_SUPPORTED("HcclCommActivateCommMemory", "zero-copy memory ranges need device virtual memory");
}
HcclResult HcclCommDeactivateCommMemory(HcclComm, void*) {
  OC_HCCL_NOT_SUPPORTED("HcclCommDeactivateCommMemory", "zero-copy memory ranges need device virtual memory");
}

}  // extern "C"

#include "hccl/comm.h"

#include <cstring>
#include <numeric>

#include "hccl/reduce_ops.h"

namespace oc::hccl {
namespace {

constexpr uint32_t kDescriptorMagic = 0x4f434843;  // "OCHC"

// Tags: two per operation (its descriptor exchange and its data).
uint32_t DescriptorTag(uint32_t seq) { return seq * 2u + 1u; }
uint32_t DataTag(uint32_t seq) { return seq * 2u + 2u; }
// Point-to-point slots, apart from the ones Gloo's collectives derive from tags
// (an 8-bit prefix in the top byte).
constexpr uint64_t kPointToPointSlots = 0xA5ull << 56;

bool Reduces(OpKind k) {
  return k == OpKind::kAllReduce || k == OpKind::kReduce || k == OpKind::kReduceScatter ||
         k == OpKind::kReduceScatterV;
}
bool Rooted(OpKind k) { return k == OpKind::kBroadcast || k == OpKind::kReduce || k == OpKind::kScatter; }
// Operations whose count must agree across ranks (the V forms and the
// point-to-point operations carry per-rank counts).
bool SameCount(OpKind k) {
  return k == OpKind::kAllReduce || k == OpKind::kBroadcast || k == OpKind::kAllGather ||
         k == OpKind::kReduceScatter || k == OpKind::kReduce || k == OpKind::kScatter || k == OpKind::kAlltoAll;
}

std::string Describe(const Descriptor& d) {
  std::string s = OpName(static_cast<OpKind>(d.kind));
  const auto kind = static_cast<OpKind>(d.kind);
  if (kind == OpKind::kBarrier) return s;
  s += StrCat("(count ", d.count, ", ", DataTypeName(static_cast<HcclDataType>(d.dtype)));
  if (Reduces(kind)) s += StrCat(", ", ReduceOpName(static_cast<HcclReduceOp>(d.reduce)));
  if (Rooted(kind)) s += StrCat(", root ", d.root);
  return s + ")";
}

}  // namespace

const char* OpName(OpKind k) {
  switch (k) {
    case OpKind::kAllReduce: return "HcclAllReduce";
    case OpKind::kBroadcast: return "HcclBroadcast";
    case OpKind::kAllGather: return "HcclAllGather";
    case OpKind::kReduceScatter: return "HcclReduceScatter";
    case OpKind::kReduce: return "HcclReduce";
    case OpKind::kScatter: return "HcclScatter";
    case OpKind::kAlltoAll: return "HcclAlltoAll";
    case OpKind::kAlltoAllV: return "HcclAlltoAllV";
    case OpKind::kSend: return "HcclSend";
    case OpKind::kRecv: return "HcclRecv";
    case OpKind::kBatchSendRecv: return "HcclBatchSendRecv";
    case OpKind::kBarrier: return "HcclBarrier";
    case OpKind::kAllGatherV: return "HcclAllGatherV";
    case OpKind::kReduceScatterV: return "HcclReduceScatterV";
  }
  return "an HCCL operation";
}

HcclResult ResultFor(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOk: return HCCL_SUCCESS;
    case StatusCode::kInvalidArgument: case StatusCode::kOutOfRange: return HCCL_E_PARA;
    case StatusCode::kNotSupported: return HCCL_E_NOT_SUPPORT;
    case StatusCode::kNotFound: return HCCL_E_NOT_FOUND;
    case StatusCode::kResourceExhausted: return HCCL_E_MEMORY;
    case StatusCode::kInvalidFile: return HCCL_E_OPEN_FILE_FAILURE;
    case StatusCode::kIoError: return HCCL_E_TCP_CONNECT;
    case StatusCode::kDeadlineExceeded: return HCCL_E_TIMEOUT;
    case StatusCode::kUnavailable: return HCCL_E_REMOTE;
    case StatusCode::kFailedPrecondition: return HCCL_E_UNAVAIL;
    case StatusCode::kInternal: return HCCL_E_INTERNAL;
  }
  return HCCL_E_INTERNAL;
}

Communicator::Communicator(std::string name, int rank, int size, int32_t device, std::unique_ptr<Engine> engine,
                           Rendezvous rv, std::shared_ptr<StoreServer> server)
    : name_(std::move(name)), rank_(rank), size_(size), device_(device), engine_(std::move(engine)),
      rv_(std::move(rv)), server_(std::move(server)), sent_(static_cast<size_t>(size)),
      received_(static_cast<size_t>(size)) {}

Status Communicator::Run(const Op& op, uint32_t seq) {
  std::lock_guard<std::mutex> lock(run_mu_);
  // The stream names the operation and the communicator (the task's name).
  if (!first_error_.ok())
    return Status(first_error_.code(), StrCat("the communicator failed earlier and cannot be used (destroy it): ",
                                              first_error_.message()));
  Status st = Execute(op, seq);
  if (st.ok()) return st;
  st = st.WithContext(StrCat("rank ", rank_, " of ", size_));
  first_error_ = st;
  async_error_ = ResultFor(st);
  return st;
}

Status Communicator::CheckDescriptors(const Op& op, uint32_t seq) {
  Descriptor mine{kDescriptorMagic, seq, static_cast<uint32_t>(op.kind), static_cast<uint32_t>(op.dtype),
                  static_cast<uint32_t>(op.reduce), op.root, op.count};
  if (!Reduces(op.kind)) mine.reduce = 0;
  if (!Rooted(op.kind)) mine.root = 0;
  if (!SameCount(op.kind)) mine.count = 0;
  if (op.kind == OpKind::kBarrier) mine.dtype = 0;
  // The comparison may run later (Engine::Agree): it reads this rank's
  // descriptor from the member, and captures only `this` (no allocation).
  described_ = mine;
  auto compare = [this](const uint8_t* bytes) -> Status {
    const Descriptor& mine = described_;
    std::vector<Descriptor> all(static_cast<size_t>(size_));
    std::memcpy(all.data(), bytes, sizeof(Descriptor) * all.size());
    bool differ = false;
    for (const Descriptor& d : all) differ = differ || std::memcmp(&d, &mine, sizeof d) != 0;
    if (!differ) return Status::Ok();
    std::string msg = "the ranks called different operations: ";
    for (int r = 0; r < size_; ++r) {
      const Descriptor& d = all[static_cast<size_t>(r)];
      if (r) msg += "; ";
      msg += d.magic == kDescriptorMagic ? StrCat("rank ", r, " ", Describe(d), " as its operation #", d.seq)
                                         : StrCat("rank ", r, " sent no valid descriptor");
    }
    return InvalidArgument(msg, " (every rank must issue the same collectives, in the same order, with the same "
                                "count, data type, reduction and root)");
  };
  Status st = engine_->Agree(&mine, sizeof mine, compare, DescriptorTag(seq));
  if (!st.ok() && st.code() != StatusCode::kInvalidArgument)
    return st.WithContext("while comparing the operation's arguments with the other ranks");
  return st;
}

Status Communicator::Execute(const Op& op, uint32_t seq) {
  Status st = Dispatch(op, seq);
  return st.ok() ? engine_->Settle() : st;
}

Status Communicator::Dispatch(const Op& op, uint32_t seq) {
  const size_t elem = ElementSize(op.dtype);
  const size_t bytes = op.count * elem;
  const uint32_t tag = DataTag(seq);
  const size_t n = static_cast<size_t>(size_);
  if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv && op.kind != OpKind::kBatchSendRecv)
    OC_RETURN_IF_ERROR(CheckDescriptors(op, seq));
  switch (op.kind) {
    case OpKind::kAllReduce:
      if (op.count == 0) return Status::Ok();
      return engine_->AllReduce(op.send, op.recv, op.count, elem, op.fn, tag);
    case OpKind::kBroadcast:
      if (op.count == 0) return Status::Ok();
      return engine_->Broadcast(op.recv, bytes, op.root, tag);
    case OpKind::kAllGather:
      if (op.count == 0) return Status::Ok();
      return engine_->AllGather(op.send, op.recv, bytes, tag);
    case OpKind::kReduceScatter:
      if (op.count == 0) return Status::Ok();
      return engine_->ReduceScatter(op.send, op.recv, op.count, elem, op.fn, tag);
    case OpKind::kReduce:
      if (op.count == 0) return Status::Ok();
      return engine_->Reduce(op.send, rank_ == op.root ? op.recv : nullptr, op.count, elem, op.fn, op.root, tag);
    case OpKind::kScatter:
      if (op.count == 0) return Status::Ok();
      return engine_->Scatter(op.send, op.recv, bytes, op.root, tag);
    case OpKind::kAlltoAll:
      if (op.count == 0) return Status::Ok();
      return engine_->AlltoAll(op.send, op.recv, bytes, tag);
    case OpKind::kReduceScatterV: {
      // All-reduce of every block packed in rank order, then this rank's block.
      std::vector<size_t> offset(n + 1, 0);
      for (size_t r = 0; r < n; ++r) offset[r + 1] = offset[r] + op.send_counts[r];
      if (offset[n] == 0) return Status::Ok();
      std::vector<uint8_t> packed(offset[n] * elem);
      for (size_t r = 0; r < n; ++r)
        std::memcpy(packed.data() + offset[r] * elem, static_cast<const uint8_t*>(op.send) + op.send_displs[r] * elem,
                    op.send_counts[r] * elem);
      OC_RETURN_IF_ERROR(engine_->AllReduce(packed.data(), packed.data(), offset[n], elem, op.fn, tag));
      const size_t me = static_cast<size_t>(rank_);
      std::memcpy(op.recv, packed.data() + offset[me] * elem, op.send_counts[me] * elem);
      return Status::Ok();
    }
    case OpKind::kAllGatherV:  // an all-to-all whose send blocks are all the one input
    case OpKind::kAlltoAllV: {
      // Gloo takes contiguous blocks in rank order: gather by displacement into
      // one, scatter the result out by displacement.
      const uint64_t in_total = std::accumulate(op.send_counts.begin(), op.send_counts.end(), uint64_t{0});
      const uint64_t out_total = std::accumulate(op.recv_counts.begin(), op.recv_counts.end(), uint64_t{0});
      std::vector<uint8_t> in(in_total * elem + 1), out(out_total * elem + 1);
      std::vector<int64_t> in_bytes(n), out_bytes(n);
      size_t off = 0;
      for (size_t r = 0; r < n; ++r) {
        in_bytes[r] = static_cast<int64_t>(op.send_counts[r] * elem);
        std::memcpy(in.data() + off, static_cast<const uint8_t*>(op.send) + op.send_displs[r] * elem,
                    static_cast<size_t>(in_bytes[r]));
        off += static_cast<size_t>(in_bytes[r]);
        out_bytes[r] = static_cast<int64_t>(op.recv_counts[r] * elem);
      }
      OC_RETURN_IF_ERROR(engine_->AlltoAllV(in.data(), in_bytes, out.data(), out_bytes, tag));
      off = 0;
      for (size_t r = 0; r < n; ++r) {
        std::memcpy(static_cast<uint8_t*>(op.recv) + op.recv_displs[r] * elem, out.data() + off,
                    static_cast<size_t>(out_bytes[r]));
        off += static_cast<size_t>(out_bytes[r]);
      }
      return Status::Ok();
    }
    case OpKind::kSend:
    case OpKind::kRecv:
    case OpKind::kBatchSendRecv: {
      std::vector<HcclSendRecvItem> items = op.items;
      if (op.kind != OpKind::kBatchSendRecv)
        items.push_back({op.kind == OpKind::kSend ? HCCL_SEND : HCCL_RECV,
                         op.kind == OpKind::kSend ? const_cast<void*>(op.send) : op.recv, op.count, op.dtype,
                         static_cast<uint32_t>(op.root)});
      std::vector<Engine::Transfer> transfers;
      for (const HcclSendRecvItem& it : items) {
        const size_t b = it.count * ElementSize(it.dataType);
        if (b == 0) continue;
        const size_t peer = it.remoteRank;
        const bool send = it.sendRecvType == HCCL_SEND;
        const uint64_t n_th = send ? sent_[peer]++ : received_[peer]++;
        transfers.push_back({send, it.buf, b, static_cast<int>(peer), kPointToPointSlots | n_th});
      }
      if (transfers.empty()) return Status::Ok();
      return engine_->SendRecv(transfers);
    }
    case OpKind::kBarrier:
      return engine_->Barrier(tag);
  }
  return Internal("unknown operation");
}

}  // namespace oc::hccl

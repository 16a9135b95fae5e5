/* TPipe (the owner of a block's on-chip memory), the TQue / TQueBind queues that
 * hand buffers from one pipeline stage to the next, and TBuf (scratch). */
#ifndef OPENCANN_ASCENDC_PIPE_H_
#define OPENCANN_ASCENDC_PIPE_H_

#include "ascendc_cpu/tensor.h"

namespace AscendC {

class TPipe;

namespace ocimpl {
constexpr int kMaxQueueBuffers = 8;   // buffers one InitBuffer call may create
constexpr int kMaxQueueDepth = 8;
constexpr int kMaxPipeBuffers = 64;   // buffers of all queues and TBufs of a pipe
constexpr int kMaxEventIds = 8;       // per hardware event type
inline uint32_t Align32(uint32_t n) { return (n + 31u) & ~31u; }
}  // namespace ocimpl

/* A queue between two pipeline stages: `depth` tensors may wait in it; the
 * buffers are created by TPipe::InitBuffer. Misuse that would make the NPU
 * wait forever (allocating with every buffer taken, dequeuing from an empty
 * queue) or corrupt data (freeing a tensor twice, enqueuing a foreign one)
 * stops the kernel with a message. */
template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
  static_assert(depth >= 0 && depth <= ocimpl::kMaxQueueDepth, "TQue depth must be 0..8");

 public:
  TQueBind() = default;
  TQueBind(const TQueBind&) = delete;
  TQueBind& operator=(const TQueBind&) = delete;

  template <typename T>
  LocalTensor<T> AllocTensor() {
    Require("TQue::AllocTensor");
    for (int k = 0; k < num_; ++k) {
      int i = (next_ + k) % num_;
      if (bufs_[i].state == ocimpl::kFree) {
        bufs_[i].state = ocimpl::kAllocated;
        next_ = static_cast<uint8_t>((i + 1) % num_);
        return LocalTensor<T>(reinterpret_cast<T*>(bufs_[i].base), bufs_[i].bytes / sizeof(T), Position(),
                              &bufs_[i]);
      }
    }
    ocimpl::Fail("TQue::AllocTensor",
                 ocimpl::Format("all %d buffers of %s are in use (%d queued, %d allocated and not yet enqueued or "
                                "freed); on the NPU this call would wait forever: FreeTensor one first",
                                num_, Name().c_str(), count_, num_ - count_));
  }
  template <typename T>
  bool EnQue(const LocalTensor<T>& tensor) {
    ocimpl::BufferInfo* b = Own("TQue::EnQue", tensor.Info(), tensor.GetPhyAddr());
    if (b->state != ocimpl::kAllocated)
      ocimpl::Fail("TQue::EnQue", ocimpl::Format("%s is %s: only an allocated tensor can be enqueued",
                                                 tensor.Describe().c_str(), StateName(b->state)));
    if (depth > 0 && count_ >= depth)
      ocimpl::Fail("TQue::EnQue", ocimpl::Format("%s already holds %d tensors, its depth: DeQue one first",
                                                 Name().c_str(), count_));
    b->state = ocimpl::kQueued;
    fifo_[(head_ + count_) % ocimpl::kMaxQueueBuffers] = static_cast<uint8_t>(b - bufs_);
    ++count_;
    return true;
  }
  template <TPosition, TPosition, typename T>
  bool EnQue(const LocalTensor<T>& tensor) { return EnQue(tensor); }
  template <typename T>
  LocalTensor<T> DeQue() {
    Require("TQue::DeQue");
    if (count_ == 0)
      ocimpl::Fail("TQue::DeQue", ocimpl::Format("%s is empty; on the NPU this call would wait forever: EnQue a "
                                                 "tensor first", Name().c_str()));
    ocimpl::BufferInfo& b = bufs_[fifo_[head_]];
    head_ = static_cast<uint8_t>((head_ + 1) % ocimpl::kMaxQueueBuffers);
    --count_;
    b.state = ocimpl::kAllocated;
    return LocalTensor<T>(reinterpret_cast<T*>(b.base), b.bytes / sizeof(T), Position(), &b);
  }
  template <TPosition, TPosition, typename T>
  LocalTensor<T> DeQue() { return DeQue<T>(); }
  template <typename T>
  void FreeTensor(LocalTensor<T>& tensor) {
    ocimpl::BufferInfo* b = Own("TQue::FreeTensor", tensor.Info(), tensor.GetPhyAddr());
    if (b->state != ocimpl::kAllocated)
      ocimpl::Fail("TQue::FreeTensor", ocimpl::Format("%s is %s: only an allocated (or dequeued) tensor can be "
                                                      "freed", tensor.Describe().c_str(), StateName(b->state)));
    b->state = ocimpl::kFree;
  }
  /* True while another tensor may be enqueued. */
  bool VacantInQue() const { return depth == 0 || count_ < depth; }
  bool HasTensorInQue() const { return count_ > 0; }
  int32_t GetTensorCountInQue() const { return count_; }
  bool HasIdleBuffer() const {
    for (int i = 0; i < num_; ++i)
      if (bufs_[i].state == ocimpl::kFree) return true;
    return false;
  }
  void FreeAllEvent() {}
  static constexpr TPosition Position() { return src == TPosition::GM ? dst : src; }

  /* Called by TPipe::InitBuffer. */
  void OcInit(uint8_t* base, uint8_t num, uint32_t len, int16_t id) {
    num_ = num;
    id_ = id;
    head_ = count_ = next_ = 0;
    for (int i = 0; i < num; ++i) {
      bufs_[i] = ocimpl::BufferInfo{base + static_cast<size_t>(i) * len, len, id, static_cast<int16_t>(i),
                                    ocimpl::kFree, Position(), "TQue"};
    }
  }
  void OcReset() { num_ = 0; }

 private:
  std::string Name() const {
    return ocimpl::Format("TQue #%d (%s, depth %d, %d buffers of %u bytes)", id_, ocimpl::PositionName(Position()),
                          depth, num_, num_ ? bufs_[0].bytes : 0u);
  }
  static const char* StateName(uint8_t s) {
    return s == ocimpl::kFree ? "already free" : s == ocimpl::kQueued ? "still in the queue" : "allocated";
  }
  void Require(const char* api) const {
    if (num_ == 0)
      ocimpl::Fail(api, "the queue has no buffers: call TPipe::InitBuffer(queue, num, len) first");
  }
  ocimpl::BufferInfo* Own(const char* api, ocimpl::BufferInfo* info, const void* data) {
    Require(api);
    if (!info || info < bufs_ || info >= bufs_ + num_ || data != info->base)
      ocimpl::Fail(api, ocimpl::Format("the tensor (%s) was not allocated from %s",
                                       ocimpl::Describe(info, data, Position()).c_str(), Name().c_str()));
    return info;
  }

  ocimpl::BufferInfo bufs_[ocimpl::kMaxQueueBuffers];
  uint8_t fifo_[ocimpl::kMaxQueueBuffers] = {};
  uint8_t num_ = 0, head_ = 0, count_ = 0, next_ = 0;
  int16_t id_ = 0;
};

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};

/* Scratch memory of one position: Get hands out views of it, no queueing. */
template <TPosition pos>
class TBuf {
 public:
  TBuf() = default;
  TBuf(const TBuf&) = delete;
  TBuf& operator=(const TBuf&) = delete;
  template <typename T>
  LocalTensor<T> Get() {
    Require("TBuf::Get");
    return LocalTensor<T>(reinterpret_cast<T*>(info_.base), info_.bytes / sizeof(T), pos, &info_);
  }
  template <typename T>
  LocalTensor<T> Get(uint32_t len) {
    Require("TBuf::Get");
    if (static_cast<uint64_t>(len) * sizeof(T) > info_.bytes)
      ocimpl::Fail("TBuf::Get", ocimpl::Format("%u elements of %s (%llu bytes) do not fit in TBuf #%d of %u bytes",
                                               len, ocimpl::TypeName<T>::Get(),
                                               static_cast<unsigned long long>(uint64_t{len} * sizeof(T)),
                                               info_.owner, info_.bytes));
    return LocalTensor<T>(reinterpret_cast<T*>(info_.base), len, pos, &info_);
  }
  template <typename T>
  LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
    Require("TBuf::GetWithOffset");
    if (bufOffset % ONE_BLK_SIZE)
      ocimpl::Fail("TBuf::GetWithOffset", ocimpl::Format("offset %u bytes is not a multiple of 32", bufOffset));
    if (uint64_t{bufOffset} + uint64_t{size} * sizeof(T) > info_.bytes)
      ocimpl::Fail("TBuf::GetWithOffset",
                   ocimpl::Format("%u elements of %s at byte offset %u do not fit in TBuf #%d of %u bytes", size,
                                  ocimpl::TypeName<T>::Get(), bufOffset, info_.owner, info_.bytes));
    return LocalTensor<T>(reinterpret_cast<T*>(info_.base + bufOffset), size, pos, &info_);
  }
  static constexpr TPosition Position() { return pos; }
  void OcInit(uint8_t* base, uint8_t, uint32_t len, int16_t id) {
    info_ = ocimpl::BufferInfo{base, len, id, 0, ocimpl::kAllocated, pos, "TBuf"};
  }
  void OcReset() { info_ = ocimpl::BufferInfo{}; }

 private:
  void Require(const char* api) const {
    if (!info_.base) ocimpl::Fail(api, "the TBuf has no memory: call TPipe::InitBuffer(buf, len) first");
  }
  ocimpl::BufferInfo info_;
};

/* The block's memory manager: one per kernel (the NPU has one), it carves the
 * queues' and TBufs' buffers out of the chip's memories and checks they fit. */
class TPipe {
 public:
  TPipe();
  ~TPipe();
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <TPosition s, TPosition d, int32_t depth, auto mask>
  bool InitBuffer(TQueBind<s, d, depth, mask>& que, uint8_t num, uint32_t len) {
    if (num == 0 || num > ocimpl::kMaxQueueBuffers)
      ocimpl::Fail("TPipe::InitBuffer", ocimpl::Format("a queue takes 1 to %d buffers, not %u",
                                                       ocimpl::kMaxQueueBuffers, num));
    uint32_t aligned = ocimpl::Align32(len);
    uint8_t* base = Carve(que.Position(), num, aligned, len, "TQue");
    que.OcInit(base, num, aligned, count_);
    return true;
  }
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
    uint32_t aligned = ocimpl::Align32(len);
    buf.OcInit(Carve(pos, 1, aligned, len, "TBuf"), 1, aligned, count_);
    return true;
  }
  /* Releases every buffer (the queues and TBufs keep dangling views). */
  void Reset();
  void Destroy() { Reset(); }
  void Init() {}

  template <HardEvent evt>
  TEventID AllocEventID() {
    int e = static_cast<int>(evt);
    for (int i = 0; i < ocimpl::kMaxEventIds; ++i)
      if (!(events_[e] & (1u << i))) {
        events_[e] |= static_cast<uint8_t>(1u << i);
        return static_cast<TEventID>(i);
      }
    ocimpl::Fail("TPipe::AllocEventID", "all 8 event IDs of this event type are allocated: ReleaseEventID first");
  }
  template <HardEvent evt>
  void ReleaseEventID(TEventID id) {
    events_[static_cast<int>(evt)] &= static_cast<uint8_t>(~(1u << (id & 7)));
  }
  TEventID FetchEventID(HardEvent) { return 0; }
  template <HardEvent evt>
  TEventID FetchEventID() { return 0; }

  /* Bytes of memory `m` in use. */
  uint32_t OcUsed(ocimpl::MemKind m) const { return used_[m]; }

 private:
  uint8_t* Carve(TPosition pos, uint32_t num, uint32_t aligned, uint32_t len, const char* what);
  uint32_t used_[ocimpl::kMemKinds] = {};
  int16_t count_ = 0;  // InitBuffer calls so far (queues and TBufs are numbered by them)
  int16_t buffers_ = 0;
  uint8_t events_[static_cast<int>(HardEvent::MAX)] = {};
};

inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(ocimpl::Current().pipe); }

}  // namespace AscendC

#endif  // OPENCANN_ASCENDC_PIPE_H_

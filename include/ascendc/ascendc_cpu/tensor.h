/* GlobalTensor (a view of global memory) and LocalTensor (a buffer in an
 * on-chip memory, handed out by a queue or a TBuf). */
#ifndef OPENCANN_ASCENDC_TENSOR_H_
#define OPENCANN_ASCENDC_TENSOR_H_

#include "ascendc_cpu/base.h"

namespace AscendC {

enum class CacheMode : uint8_t { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL, CACHE_MODE_LAST, CACHE_MODE_PERSISTENT };

template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;
  GlobalTensor() = default;

  /* A view of `bufferSize` elements at `buffer`. In checking mode the size is
   * checked against the allocation that holds it, and every access against the
   * size. */
  void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    data_ = buffer;
    size_ = bufferSize;
#if ASCENDC_OC_CHECK
    uint64_t extent = ocimpl::GmExtent(buffer);
    if (extent && bufferSize * sizeof(T) > extent)
      ocimpl::Fail("GlobalTensor::SetGlobalBuffer",
                   ocimpl::Format("%llu elements of %s (%llu bytes) at %s run past the end of the global memory "
                                  "allocation holding it (%llu bytes left from that address)",
                                  static_cast<unsigned long long>(bufferSize), ocimpl::TypeName<T>::Get(),
                                  static_cast<unsigned long long>(bufferSize * sizeof(T)),
                                  ocimpl::DescribeGm(buffer).c_str(), static_cast<unsigned long long>(extent)));
#endif
  }
  /* Without a size the view ends where its allocation ends (when known). */
  void SetGlobalBuffer(__gm__ T* buffer) {
    data_ = buffer;
    uint64_t extent = ASCENDC_OC_CHECK ? ocimpl::GmExtent(buffer) : 0;
    size_ = extent / sizeof(T);
  }

  __gm__ T* GetPhyAddr() const { return data_; }
  __gm__ T* GetPhyAddr(uint64_t offset) const { return data_ + offset; }
  /* Elements in the view (0: unknown). */
  uint64_t GetSize() const { return size_; }
  T GetValue(uint64_t offset) const {
    Check("GlobalTensor::GetValue", offset, 1);
    return data_[offset];
  }
  void SetValue(uint64_t offset, T value) const {
    Check("GlobalTensor::SetValue", offset, 1);
    data_[offset] = value;
  }
  T& operator()(uint64_t offset) const {
    Check("GlobalTensor::operator()", offset, 1);
    return data_[offset];
  }
  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor r = *this;
    r.data_ = data_ + offset;
    if (size_) {
      if (offset > size_)
        ocimpl::Fail("GlobalTensor::operator[]",
                     ocimpl::Format("offset %llu is past the end of a GlobalTensor of %llu elements",
                                    static_cast<unsigned long long>(offset),
                                    static_cast<unsigned long long>(size_)));
      r.size_ = size_ - offset;
    }
    return r;
  }
  void SetL2CacheHint(CacheMode) {}
  template <typename U>
  GlobalTensor<U> ReinterpretCast() const {
    GlobalTensor<U> r;
    r.SetGlobalBuffer(reinterpret_cast<__gm__ U*>(data_), size_ * sizeof(T) / sizeof(U));
    return r;
  }

  /* Checks that [offset, offset + count) elements lie inside the view. */
  void Check(const char* api, uint64_t offset, uint64_t count) const {
#if ASCENDC_OC_CHECK
    if (!data_) ocimpl::Fail(api, "the GlobalTensor has no buffer (call SetGlobalBuffer first)");
    if (size_ && offset + count > size_)
      ocimpl::Fail(api, ocimpl::Format("elements [%llu, %llu) of a GlobalTensor<%s> at %s are outside its %llu "
                                       "elements (the size given to SetGlobalBuffer, less any offset)",
                                       static_cast<unsigned long long>(offset),
                                       static_cast<unsigned long long>(offset + count), ocimpl::TypeName<T>::Get(),
                                       ocimpl::DescribeGm(data_).c_str(), static_cast<unsigned long long>(size_)));
#else
    (void)api, (void)offset, (void)count;
#endif
  }

 private:
  __gm__ T* data_ = nullptr;
  uint64_t size_ = 0;
};

namespace ocimpl {
/* Where a local buffer came from, for the queues' bookkeeping and messages. */
struct BufferInfo {
  uint8_t* base = nullptr;   // start of the buffer
  uint32_t bytes = 0;        // its length
  int16_t owner = -1;        // the queue / TBuf number in InitBuffer order (1-based)
  int16_t index = 0;         // which of the owner's buffers
  uint8_t state = 0;         // kFree / kAllocated / kQueued
  TPosition pos = TPosition::VECCALC;
  const char* kind = "TBuf";
};
enum BufferState : uint8_t { kFree = 0, kAllocated, kQueued };
std::string Describe(const BufferInfo* info, const void* data, TPosition pos);
}  // namespace ocimpl

template <typename T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;
  LocalTensor(T* data, uint32_t elements, TPosition pos, ocimpl::BufferInfo* info)
      : data_(data), size_(elements), pos_(pos), info_(info) {}

  __ubuf__ T* GetPhyAddr() const { return data_; }
  __ubuf__ T* GetPhyAddr(uint32_t offset) const { return data_ + offset; }
  uint32_t GetSize() const { return size_; }
  void SetSize(uint32_t elements) {
#if ASCENDC_OC_CHECK
    if (info_ && static_cast<uint64_t>(elements) * sizeof(T) >
                     info_->bytes - static_cast<uint64_t>(reinterpret_cast<uint8_t*>(data_) - info_->base))
      ocimpl::Fail("LocalTensor::SetSize",
                   ocimpl::Format("%u elements do not fit in %s", elements, Describe().c_str()));
#endif
    size_ = elements;
  }
  uint32_t GetLength() const { return size_ * sizeof(T); }
  TPosition GetPosition() const { return pos_; }
  int32_t GetUserTag() const { return tag_; }
  void SetUserTag(int32_t tag) { tag_ = tag; }

  T GetValue(uint32_t offset) const {
    Check("LocalTensor::GetValue", offset, 1);
    return data_[offset];
  }
  void SetValue(uint32_t offset, T value) const {
    Check("LocalTensor::SetValue", offset, 1);
    data_[offset] = value;
  }
  T& operator()(uint32_t offset) const {
    Check("LocalTensor::operator()", offset, 1);
    return data_[offset];
  }
  LocalTensor operator[](uint32_t offset) const {
#if ASCENDC_OC_CHECK
    if (offset > size_)
      ocimpl::Fail("LocalTensor::operator[]", ocimpl::Format("offset %u is past the end of %s", offset,
                                                              Describe().c_str()));
#endif
    LocalTensor r = *this;
    r.data_ = data_ + offset;
    r.size_ = size_ - offset;
    return r;
  }
  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> r(reinterpret_cast<U*>(data_), static_cast<uint32_t>(uint64_t{size_} * sizeof(T) / sizeof(U)),
                     pos_, info_);
    return r;
  }

  ocimpl::BufferInfo* Info() const { return info_; }
  std::string Describe() const {
    return ocimpl::Format("LocalTensor<%s> of %u elements in %s", ocimpl::TypeName<T>::Get(), size_,
                          ocimpl::Describe(info_, data_, pos_).c_str());
  }
  /* Checks [offset, offset + count) against the tensor's elements. */
  void Check(const char* api, uint64_t offset, uint64_t count) const {
#if ASCENDC_OC_CHECK
    if (!data_) ocimpl::Fail(api, "the LocalTensor is empty (it was not allocated from a queue or TBuf)");
    if (offset + count > size_)
      ocimpl::Fail(api, ocimpl::Format("elements [%llu, %llu) are outside %s",
                                       static_cast<unsigned long long>(offset),
                                       static_cast<unsigned long long>(offset + count), Describe().c_str()));
#else
    (void)api, (void)offset, (void)count;
#endif
  }
  /* Local addresses that vector and copy instructions use must be 32-byte aligned. */
  void CheckAligned(const char* api) const {
#if ASCENDC_OC_CHECK
    if (reinterpret_cast<uintptr_t>(data_) % ONE_BLK_SIZE)
      ocimpl::Fail(api, ocimpl::Format("%s starts at a UB address that is not 32-byte aligned (offset %% 32 = %u): "
                                       "the NPU requires 32-byte aligned local operands",
                                       Describe().c_str(),
                                       static_cast<unsigned>(reinterpret_cast<uintptr_t>(data_) % ONE_BLK_SIZE)));
#else
    (void)api;
#endif
  }

 private:
  T* data_ = nullptr;
  uint32_t size_ = 0;
  TPosition pos_ = TPosition::VECCALC;
  ocimpl::BufferInfo* info_ = nullptr;
  int32_t tag_ = 0;
};

}  // namespace AscendC

#endif  // OPENCANN_ASCENDC_TENSOR_H_

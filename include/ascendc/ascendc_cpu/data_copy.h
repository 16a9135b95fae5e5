/* Data movement between global memory and the on-chip buffers: DataCopy (whole
 * 32-byte blocks, count or block/stride form) and DataCopyPad (any byte length,
 * padded to 32 bytes in the local buffer). */
#ifndef OPENCANN_ASCENDC_DATA_COPY_H_
#define OPENCANN_ASCENDC_DATA_COPY_H_

#include "ascendc_cpu/tensor.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace AscendC {

/* blockCount blocks of blockLen 32-byte units; the strides are the gaps between
 * consecutive blocks, also in 32-byte units. */
struct DataCopyParams {
  DataCopyParams() = default;
  DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = DEFAULT_DATA_COPY_NBURST;
  uint16_t blockLen = 0;
  uint16_t srcStride = DEFAULT_DATA_COPY_STRIDE;
  uint16_t dstStride = DEFAULT_DATA_COPY_STRIDE;
};

/* DataCopyPad's geometry: blockLen in bytes; the global-memory gap in bytes,
 * the local gap in 32-byte units. */
struct DataCopyExtParams {
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn, uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
  uint16_t blockCount = DEFAULT_DATA_COPY_NBURST;
  uint32_t blockLen = 0;
  uint32_t srcStride = DEFAULT_DATA_COPY_STRIDE;
  uint32_t dstStride = DEFAULT_DATA_COPY_STRIDE;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool isPadIn, uint8_t left, uint8_t right, T value)
      : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T{};
};

/* The older spelling: padding value as raw bits. */
struct DataCopyPadParams {
  DataCopyPadParams() = default;
  DataCopyPadParams(bool isPadIn, uint8_t left, uint8_t right, uint64_t value)
      : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
};

namespace ocimpl {
/* Local -> global: like the NPU's copy-out engine, large copies to a large
 * global tensor bypass the cache (non-temporal stores), so that streaming
 * kernels do not read their output lines before writing them. */
inline void CopyOut(void* dst, const void* src, size_t bytes, uint64_t dst_view_bytes) {
#if defined(__SSE2__)
  if (bytes >= 8192 && dst_view_bytes >= (uint64_t{1} << 20) && reinterpret_cast<uintptr_t>(dst) % 16 == 0 &&
      reinterpret_cast<uintptr_t>(src) % 16 == 0) {
    auto* d = static_cast<__m128i*>(dst);
    auto* s = static_cast<const __m128i*>(src);
    size_t n = bytes / 16;
    for (size_t i = 0; i < n; ++i) _mm_stream_si128(d + i, _mm_load_si128(s + i));
    _mm_sfence();
    std::memcpy(static_cast<char*>(dst) + n * 16, static_cast<const char*>(src) + n * 16, bytes - n * 16);
    return;
  }
#else
  (void)dst_view_bytes;
#endif
  std::memcpy(dst, src, bytes);
}

/* Global -> local: a large copy out of a large global tensor also asks for
 * the bytes after it (the next tile of a streaming kernel) to be brought into
 * L2, 4 KiB of them before each 4 KiB it copies, so that the next copy-in
 * does not wait for DRAM (the NPU overlaps copy-in with compute in its own
 * pipe; here the prefetches do). */
inline void CopyIn(void* dst, const void* src, size_t bytes, uint64_t src_view_bytes) {
#if defined(__SSE2__)
  if (bytes >= 8192 && src_view_bytes >= (uint64_t{1} << 20) && src_view_bytes > bytes) {
    const char* s = static_cast<const char*>(src);
    char* d = static_cast<char*>(dst);
    const uint64_t ahead = std::min<uint64_t>(bytes, src_view_bytes - bytes);
    for (size_t c = 0; c < bytes; c += 4096) {
      const size_t n = std::min<size_t>(4096, bytes - c);
      for (uint64_t i = c; i < c + n && i < ahead; i += 64) _mm_prefetch(s + bytes + i, _MM_HINT_T1);
      std::memcpy(d + c, s + c, n);
    }
    return;
  }
#else
  (void)src_view_bytes;
#endif
  std::memcpy(dst, src, bytes);
}

template <typename T>
inline void CheckWholeBlocks(const char* api, uint64_t count) {
#if ASCENDC_OC_CHECK
  if ((count * sizeof(T)) % ONE_BLK_SIZE)
    Fail(api, Format("%llu elements of %s are %llu bytes, not a multiple of 32: DataCopy moves whole 32-byte "
                     "blocks (use DataCopyPad for other lengths)",
                     static_cast<unsigned long long>(count), TypeName<T>::Get(),
                     static_cast<unsigned long long>(count * sizeof(T))));
#else
  (void)api, (void)count;
#endif
}
}  // namespace ocimpl

/* ---- count form --------------------------------------------------------- */
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
  ocimpl::CheckWholeBlocks<T>("DataCopy", count);
  dst.CheckAligned("DataCopy");
  dst.Check("DataCopy (destination)", 0, count);
  src.Check("DataCopy (source)", 0, count);
  ocimpl::CopyIn(dst.GetPhyAddr(), src.GetPhyAddr(), size_t{count} * sizeof(T), src.GetSize() * sizeof(T));
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
  ocimpl::CheckWholeBlocks<T>("DataCopy", count);
  src.CheckAligned("DataCopy");
  src.Check("DataCopy (source)", 0, count);
  dst.Check("DataCopy (destination)", 0, count);
  ocimpl::CopyOut(dst.GetPhyAddr(), src.GetPhyAddr(), size_t{count} * sizeof(T), dst.GetSize() * sizeof(T));
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
  ocimpl::CheckWholeBlocks<T>("DataCopy", count);
  dst.CheckAligned("DataCopy");
  src.CheckAligned("DataCopy");
  dst.Check("DataCopy (destination)", 0, count);
  src.Check("DataCopy (source)", 0, count);
  std::memmove(dst.GetPhyAddr(), src.GetPhyAddr(), size_t{count} * sizeof(T));
}

/* ---- block/stride form ---------------------------------------------------- */
namespace ocimpl {
template <typename D, typename S>
inline void StridedCopy(const char* api, const D& dst, const S& src, const DataCopyParams& p) {
  constexpr uint32_t e = ONE_BLK_SIZE / sizeof(typename D::PrimType);
  uint64_t len = uint64_t{p.blockLen} * e;
  uint64_t src_pitch = len + uint64_t{p.srcStride} * e, dst_pitch = len + uint64_t{p.dstStride} * e;
  if (p.blockCount == 0 || p.blockLen == 0) return;
  src.Check(api, 0, (p.blockCount - 1) * src_pitch + len);
  dst.Check(api, 0, (p.blockCount - 1) * dst_pitch + len);
  for (uint32_t i = 0; i < p.blockCount; ++i)
    std::memmove(dst.GetPhyAddr() + i * dst_pitch, src.GetPhyAddr() + i * src_pitch,
                 len * sizeof(typename D::PrimType));
}
}  // namespace ocimpl
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& params) {
  dst.CheckAligned("DataCopy");
  ocimpl::StridedCopy("DataCopy", dst, src, params);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params) {
  src.CheckAligned("DataCopy");
  ocimpl::StridedCopy("DataCopy", dst, src, params);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params) {
  dst.CheckAligned("DataCopy");
  src.CheckAligned("DataCopy");
  ocimpl::StridedCopy("DataCopy", dst, src, params);
}

/* ---- DataCopyPad ------------------------------------------------------------ */
/* Global -> local: each block of blockLen bytes lands at a 32-byte boundary,
 * after leftPadding elements and before rightPadding ones (filled with the
 * padding value when isPad), the rest of its last 32-byte unit left as is. */
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad) {
  const char* api = "DataCopyPad";
  dst.CheckAligned(api);
  if (p.blockLen % sizeof(T))
    ocimpl::Fail(api, ocimpl::Format("blockLen %u bytes is not a whole number of %s elements", p.blockLen,
                                     ocimpl::TypeName<T>::Get()));
  if ((pad.leftPadding + pad.rightPadding) * sizeof(T) > ONE_BLK_SIZE)
    ocimpl::Fail(api, ocimpl::Format("left + right padding (%u + %u elements) exceed one 32-byte block",
                                     pad.leftPadding, pad.rightPadding));
  uint64_t n = p.blockLen / sizeof(T);
  uint64_t row = ocimpl::Align32(static_cast<uint32_t>((pad.leftPadding + n + pad.rightPadding) * sizeof(T))) /
                 sizeof(T);
  uint64_t dst_pitch = row + uint64_t{p.dstStride} * (ONE_BLK_SIZE / sizeof(T));
  uint64_t src_pitch_bytes = uint64_t{p.blockLen} + p.srcStride;
  if (p.blockCount == 0) return;
  dst.Check(api, 0, (p.blockCount - 1) * dst_pitch + row);
  if (src_pitch_bytes % sizeof(T))
    ocimpl::Fail(api, ocimpl::Format("srcStride %u bytes leaves blocks misaligned for %s", p.srcStride,
                                     ocimpl::TypeName<T>::Get()));
  uint64_t src_pitch = src_pitch_bytes / sizeof(T);
  src.Check(api, 0, (p.blockCount - 1) * src_pitch + n);
  for (uint32_t i = 0; i < p.blockCount; ++i) {
    T* d = dst.GetPhyAddr() + i * dst_pitch;
    if (pad.isPad)
      for (uint32_t k = 0; k < pad.leftPadding; ++k) d[k] = pad.paddingValue;
    std::memcpy(d + pad.leftPadding, src.GetPhyAddr() + i * src_pitch, n * sizeof(T));
    if (pad.isPad)
      for (uint32_t k = 0; k < pad.rightPadding; ++k) d[pad.leftPadding + n + k] = pad.paddingValue;
  }
}
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad) {
  T value;
  std::memcpy(&value, &pad.paddingValue, sizeof(T));
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0),
              DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, value));
}
/* Local -> global: blockLen bytes of each block (which starts at a 32-byte
 * boundary locally, dstStride... the local gap in 32-byte units is srcStride). */
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
  const char* api = "DataCopyPad";
  src.CheckAligned(api);
  if (p.blockLen % sizeof(T) || p.dstStride % sizeof(T))
    ocimpl::Fail(api, ocimpl::Format("blockLen %u / dstStride %u bytes are not whole %s elements", p.blockLen,
                                     p.dstStride, ocimpl::TypeName<T>::Get()));
  uint64_t n = p.blockLen / sizeof(T);
  uint64_t row = ocimpl::Align32(p.blockLen) / sizeof(T);
  uint64_t src_pitch = row + uint64_t{p.srcStride} * (ONE_BLK_SIZE / sizeof(T));
  uint64_t dst_pitch = n + p.dstStride / sizeof(T);
  if (p.blockCount == 0) return;
  src.Check(api, 0, (p.blockCount - 1) * src_pitch + n);
  dst.Check(api, 0, (p.blockCount - 1) * dst_pitch + n);
  for (uint32_t i = 0; i < p.blockCount; ++i)
    std::memcpy(dst.GetPhyAddr() + i * dst_pitch, src.GetPhyAddr() + i * src_pitch, n * sizeof(T));
}
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0));
}

}  // namespace AscendC

#endif  // OPENCANN_ASCENDC_DATA_COPY_H_

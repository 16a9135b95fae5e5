/* printf and DumpTensor from inside a kernel: each call's output is written
 * whole (blocks run in parallel), DumpTensor's with the block that wrote it. */
#ifndef OPENCANN_ASCENDC_DEBUG_H_
#define OPENCANN_ASCENDC_DEBUG_H_

#include <cstdarg>

#include "ascendc_cpu/tensor.h"

namespace AscendC {

void printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#define PRINTF AscendC::printf

namespace ocimpl {
void DumpValues(const char* type, const char* where, uint32_t desc, const double* values, uint32_t count);
}

template <typename T>
inline void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize) {
  uint32_t n = std::min(dumpSize, tensor.GetSize());
  double v[1024];
  for (uint32_t done = 0; done < n || done == 0;) {
    uint32_t k = std::min<uint32_t>(n - done, 1024);
    for (uint32_t i = 0; i < k; ++i) v[i] = static_cast<double>(static_cast<ocimpl::Calc<T>>(tensor.GetPhyAddr()[done + i]));
    ocimpl::DumpValues(ocimpl::TypeName<T>::Get(), ocimpl::PositionName(tensor.GetPosition()), desc, v, k);
    done += k;
    if (k == 0) break;
  }
}
template <typename T>
inline void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize) {
  double v[1024];
  for (uint32_t done = 0; done < dumpSize;) {
    uint32_t k = std::min<uint32_t>(dumpSize - done, 1024);
    tensor.Check("DumpTensor", done, k);
    for (uint32_t i = 0; i < k; ++i) v[i] = static_cast<double>(static_cast<ocimpl::Calc<T>>(tensor.GetPhyAddr()[done + i]));
    ocimpl::DumpValues(ocimpl::TypeName<T>::Get(), "GM", desc, v, k);
    done += k;
  }
}

}  // namespace AscendC

#endif  // OPENCANN_ASCENDC_DEBUG_H_

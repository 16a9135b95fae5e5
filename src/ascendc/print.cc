// printf and DumpTensor from kernels: each call's text is written in one piece
// under a lock, since blocks run in parallel.
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>

#include "kernel_operator.h"

namespace AscendC {

namespace {
std::mutex g_print_mu;
}

void printf(const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  std::lock_guard<std::mutex> lock(g_print_mu);
  std::fwrite(buf, 1, std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1), stdout);
  std::fflush(stdout);
}

namespace ocimpl {
void DumpValues(const char* type, const char* where, uint32_t desc, const double* values, uint32_t count) {
  std::string out = Format("DumpTensor: kernel %s, block %lld, desc=%u, position=%s, data_type=%s, count=%u\n[",
                           Current().kernel, static_cast<long long>(Current().idx), desc, where, type, count);
  for (uint32_t i = 0; i < count; ++i) out += Format(i ? ", %.9g" : "%.9g", values[i]);
  out += "]\n";
  std::lock_guard<std::mutex> lock(g_print_mu);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}
}  // namespace ocimpl

}  // namespace AscendC

// The Winograd transforms of conv_winograd_impl.h built with avx512 code
// generation (the build adds the target flags); called only when SelectedIsa() allows.
#include "ops/cpu/conv/conv_winograd_impl.h"

namespace oc {

void WinogradInputAvx512(const WinogradJob& job, int64_t tb, int64_t te) { WinogradInputImpl(job, tb, te); }
void WinogradOutputAvx512(const WinogradJob& job, int64_t tb, int64_t te) { WinogradOutputImpl(job, tb, te); }

}  // namespace oc

// TPipe: carving queues and TBufs out of the block's on-chip memories.
#include "ascendc/context.h"
#include "kernel_operator.h"

namespace AscendC {

TPipe::TPipe() {
  ocimpl::Block& b = ocimpl::Current();
  if (!b.in_kernel) ocimpl::Fail("TPipe", "a TPipe can only be created inside a running kernel");
  if (b.pipe)
    ocimpl::Fail("TPipe", "a second TPipe while another is live: a kernel has one TPipe (pass it by pointer)");
  b.pipe = this;
}

TPipe::~TPipe() {
  ocimpl::Block& b = ocimpl::Current();
  if (b.pipe == this) b.pipe = nullptr;
}

void TPipe::Reset() {
  for (uint32_t& u : used_) u = 0;
  count_ = 0;
  buffers_ = 0;
}

uint8_t* TPipe::Carve(TPosition pos, uint32_t num, uint32_t aligned, uint32_t len, const char* what) {
  ocimpl::Block& b = ocimpl::Current();
  ocimpl::MemKind m = ocimpl::MemOf(pos);
  if (len == 0) ocimpl::Fail("TPipe::InitBuffer", ocimpl::Format("a %s buffer of 0 bytes", what));
  if (buffers_ + static_cast<int>(num) > ocimpl::kMaxPipeBuffers)
    ocimpl::Fail("TPipe::InitBuffer", ocimpl::Format("%d buffers in all would exceed the %d a TPipe manages",
                                                     buffers_ + static_cast<int>(num), ocimpl::kMaxPipeBuffers));
  uint64_t need = uint64_t{num} * aligned;
  uint32_t cap = b.mem[m].size;
  if (used_[m] + need > cap)
    ocimpl::Fail("TPipe::InitBuffer",
                 ocimpl::Format("%u x %u bytes (%u requested, 32-byte aligned) for a %s at %s need %llu bytes of the "
                                "%s, but %u of its %u bytes (%s) are already taken by earlier InitBuffer calls",
                                num, aligned, len, what, ocimpl::PositionName(pos),
                                static_cast<unsigned long long>(need), ocimpl::MemName(m), used_[m], cap, b.soc));
  uint8_t* base = b.mem[m].base + used_[m];
  used_[m] += static_cast<uint32_t>(need);
  buffers_ = static_cast<int16_t>(buffers_ + num);
  ++count_;
  return base;
}

}  // namespace AscendC

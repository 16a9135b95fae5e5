// Run-time CPU feature detection, done once per process. Kernels pick their
// micro-kernel from this; OPENCANN_ISA=scalar|avx2|avx512 caps the choice
// (for testing every path on one machine).
#pragma once

namespace oc {

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kNeon = 3 };

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_bf16 = false;
  bool avx512_vnni = false;
  // AMX units whose tile state the OS enables (XCR0 bits 17-18). Linux also
  // wants a per-process arch_prctl(ARCH_REQ_XCOMP_PERM) before the first tile
  // instruction: the AMX kernels ask for it themselves.
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;
  bool neon = false;
};

const CpuFeatures& GetCpuFeatures();
// The best ISA allowed by the CPU and by OPENCANN_ISA.
Isa SelectedIsa();
const char* IsaName(Isa isa);

}  // namespace oc

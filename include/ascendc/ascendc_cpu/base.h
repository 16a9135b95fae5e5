/* OpenCANN's Ascend C on the CPU: qualifiers, scalar types, enums and the block
 * context every other part of the kernel interface uses (docs/ascendc.md).
 *
 * The names, signatures and enum values follow Huawei's public Ascend C
 * interface so that kernel sources compile unchanged; the text and the
 * implementation are OpenCANN's own. Kernels run natively: a block is a task
 * on the host's thread pool, the on-chip buffers are per-thread arenas of the
 * selected chip's sizes, and every limit the NPU has is checked (checking mode,
 * the default unless NDEBUG is defined) or the structural ones only (fast mode).
 */
#ifndef OPENCANN_ASCENDC_BASE_H_
#define OPENCANN_ASCENDC_BASE_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

/* ---- qualifiers: meaningful to the NPU compiler, empty here ---------------- */
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif

/* Checking mode: every access is checked against the limits of the chip. */
#ifndef ASCENDC_OC_CHECK
#ifdef NDEBUG
#define ASCENDC_OC_CHECK 0
#else
#define ASCENDC_OC_CHECK 1
#endif
#endif

/* ---- scalar types ---------------------------------------------------------- */
using half = _Float16;

/* bfloat16: stored as the top 16 bits of a float; arithmetic in float, rounded
 * to nearest even on every store, as the vector unit does. */
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) : bits(FromFloat(f)) {}  // NOLINT: implicit, like a builtin type
  bfloat16_t(double d) : bits(FromFloat(static_cast<float>(d))) {}
  bfloat16_t(int v) : bits(FromFloat(static_cast<float>(v))) {}
  operator float() const {  // NOLINT
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t FromFloat(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }
  static bfloat16_t FromBits(uint16_t b) {
    bfloat16_t r;
    r.bits = b;
    return r;
  }
  bfloat16_t& operator+=(bfloat16_t o) { return *this = bfloat16_t(float(*this) + float(o)); }
  bfloat16_t& operator-=(bfloat16_t o) { return *this = bfloat16_t(float(*this) - float(o)); }
  bfloat16_t& operator*=(bfloat16_t o) { return *this = bfloat16_t(float(*this) * float(o)); }
  bfloat16_t& operator/=(bfloat16_t o) { return *this = bfloat16_t(float(*this) / float(o)); }
};
inline bfloat16_t operator+(bfloat16_t a, bfloat16_t b) { return bfloat16_t(float(a) + float(b)); }
inline bfloat16_t operator-(bfloat16_t a, bfloat16_t b) { return bfloat16_t(float(a) - float(b)); }
inline bfloat16_t operator*(bfloat16_t a, bfloat16_t b) { return bfloat16_t(float(a) * float(b)); }
inline bfloat16_t operator/(bfloat16_t a, bfloat16_t b) { return bfloat16_t(float(a) / float(b)); }
inline bfloat16_t operator-(bfloat16_t a) { return bfloat16_t::FromBits(static_cast<uint16_t>(a.bits ^ 0x8000)); }

/* ---- pipes and kernel types (builtins on the NPU) -------------------------- */
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2,
              PIPE_FIX, PIPE_NUM };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY = 0, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2
};
/* The kernel's core type matters to the NPU's scheduler only. */
#define KERNEL_TASK_TYPE_DEFAULT(type) ((void)(type))
#define KERNEL_TASK_TYPE(key, type) ((void)(key), (void)(type))
/* True in the branch of the tiling key the launch runs with (the NPU compiles
 * one kernel per key; here one kernel tests the key). */
#define TILING_KEY_IS(key) (::AscendC::ocimpl::Current().tiling_key == static_cast<uint64_t>(key))
enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };

namespace AscendC {

using ::KernelMode;

enum class TPosition : uint8_t {
  GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX,
};
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
  MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3,
  MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S,
  MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX,
};
using TEventID = int8_t;

enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

/* One repeat of a vector instruction covers 256 bytes: 8 data blocks of 32. */
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint16_t DEFAULT_DATA_COPY_NBURST = 1;
constexpr uint16_t DEFAULT_DATA_COPY_STRIDE = 0;
constexpr uint32_t MAX_REPEAT_TIMES = 255;

namespace ocimpl {

/* The on-chip memories a TPosition lives in. */
enum MemKind : int { kUB = 0, kL1, kL0A, kL0B, kL0C, kBT, kMemKinds };

inline MemKind MemOf(TPosition p) {
  switch (p) {
    case TPosition::A1: case TPosition::B1: case TPosition::C1: case TPosition::TSCM: return kL1;
    case TPosition::A2: return kL0A;
    case TPosition::B2: return kL0B;
    case TPosition::CO1: return kL0C;
    case TPosition::C2: return kBT;
    default: return kUB;
  }
}
const char* PositionName(TPosition p);
const char* MemName(MemKind m);

struct Arena {
  uint8_t* base = nullptr;
  uint32_t size = 0;  // the chip's capacity of this memory, bytes
};

struct KernelCall;

/* What the running block knows about itself (one per worker thread). */
struct Block {
  const char* kernel = "(no kernel)";
  int64_t idx = 0;
  int64_t num = 1;
  Arena mem[kMemKinds];
  const char* soc = "Ascend910B";
  void* pipe = nullptr;     // the live TPipe (the NPU has one per kernel)
  uint8_t* workspace = nullptr;
  bool in_kernel = false;
  const KernelCall* call = nullptr;  // the launch, for naming global memory
  uint64_t tiling_key = 0;
};

/* The calling thread's block; outside a launch, a block of one with no memory. */
Block& Current();
/* Stops the kernel: throws a fault that the launcher turns into an error
 * naming the kernel, the block and `api`. */
[[noreturn]] void Fail(const char* api, const std::string& what);
/* Bytes from `p` to the end of the GM allocation holding it (GmAlloc or device
 * memory); 0 when unknown. */
uint64_t GmExtent(const void* p);
/* "kernel argument 'x' + 4096 bytes" (or the address) for messages. */
std::string DescribeGm(const void* p);

template <typename T> struct TypeName { static const char* Get() { return "T"; } };
#define ASCENDC_OC_TYPE_NAME(T, s) \
  template <> struct TypeName<T> { static const char* Get() { return s; } };
ASCENDC_OC_TYPE_NAME(float, "float")
ASCENDC_OC_TYPE_NAME(half, "half")
ASCENDC_OC_TYPE_NAME(bfloat16_t, "bfloat16_t")
ASCENDC_OC_TYPE_NAME(double, "double")
ASCENDC_OC_TYPE_NAME(int8_t, "int8_t")
ASCENDC_OC_TYPE_NAME(uint8_t, "uint8_t")
ASCENDC_OC_TYPE_NAME(int16_t, "int16_t")
ASCENDC_OC_TYPE_NAME(uint16_t, "uint16_t")
ASCENDC_OC_TYPE_NAME(int32_t, "int32_t")
ASCENDC_OC_TYPE_NAME(uint32_t, "uint32_t")
ASCENDC_OC_TYPE_NAME(int64_t, "int64_t")
ASCENDC_OC_TYPE_NAME(uint64_t, "uint64_t")
#undef ASCENDC_OC_TYPE_NAME

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace ocimpl

/* ---- system variables ------------------------------------------------------- */
inline int64_t GetBlockIdx() { return ocimpl::Current().idx; }
inline int64_t GetBlockNum() { return ocimpl::Current().num; }
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetTaskRation() { return 1; }
inline GM_ADDR GetSysWorkSpacePtr() { return ocimpl::Current().workspace; }
void SetSysWorkspace(GM_ADDR workspace);
void SetKernelMode(KernelMode mode);

/* ---- synchronisation: the CPU runs a block's pipes in program order -------- */
template <pipe_t pipe> inline void PipeBarrier() {}
template <HardEvent event> inline void SetFlag(int32_t) {}
template <HardEvent event> inline void WaitFlag(int32_t) {}
inline void SyncAll() {
  if (GetBlockNum() > 1) ocimpl::Fail("SyncAll", "a barrier across blocks is not supported yet on the CPU");
}

}  // namespace AscendC

/* The NPU's builtin barrier, as older kernels spell it. */
inline void pipe_barrier(pipe_t) {}

#endif  // OPENCANN_ASCENDC_BASE_H_

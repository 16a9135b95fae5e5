// The block context, chip profiles, fault reporting and global-memory
// bookkeeping of Ascend C on the CPU (include/ascendc/ascendc_cpu/base.h).
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "acl/acl_hooks.h"
#include "ascendc/context.h"
#include "kernel_operator.h"
#include "tikicpulib.h"

namespace AscendC {
namespace ocimpl {

namespace {

const SocProfile kProfiles[] = {
    // name          UB          L1           L0A        L0B        L0C         bias table
    {"Ascend910B", {192 << 10, 512 << 10, 64 << 10, 64 << 10, 128 << 10, 1 << 10}},
    {"Ascend910", {256 << 10, 1024 << 10, 64 << 10, 64 << 10, 256 << 10, 1 << 10}},
    {"Ascend310P", {256 << 10, 1024 << 10, 64 << 10, 64 << 10, 256 << 10, 1 << 10}},
};

// GmAlloc's allocations: start -> size.
std::mutex g_gm_mu;
std::map<uintptr_t, size_t> g_gm;

thread_local Block t_block;

}  // namespace

const SocProfile& ActiveProfile() {
  static const SocProfile* chosen = [] {
    const char* want = std::getenv("OPENCANN_ASCENDC_SOC");
    if (want && *want) {
      for (const auto& p : kProfiles)
        if (std::string(want) == p.name) return &p;
      std::fprintf(stderr, "[WARNING] OPENCANN_ASCENDC_SOC=%s is not a known chip (Ascend910B, Ascend910, "
                           "Ascend310P); using Ascend910B\n", want);
    }
    return &kProfiles[0];
  }();
  return *chosen;
}

Block& Current() { return t_block; }

std::string Format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return fmt;
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  big.resize(static_cast<size_t>(n));
  return big;
}

void Fail(const char* api, const std::string& what) {
  const Block& b = t_block;
  // Outside a launch nothing would catch the fault: report it and stop.
  if (!b.in_kernel) ExitWithError(Format("Ascend C (outside a kernel launch): %s: %s", api, what.c_str()));
  throw KernelFault{Format("Ascend C kernel '%s', block %lld of %lld: %s: %s", b.kernel,
                           static_cast<long long>(b.idx), static_cast<long long>(b.num), api, what.c_str())};
}

const char* PositionName(TPosition p) {
  switch (p) {
    case TPosition::GM: return "GM";
    case TPosition::A1: return "A1";
    case TPosition::A2: return "A2";
    case TPosition::B1: return "B1";
    case TPosition::B2: return "B2";
    case TPosition::C1: return "C1";
    case TPosition::C2: return "C2";
    case TPosition::CO1: return "CO1";
    case TPosition::CO2: return "CO2";
    case TPosition::VECIN: return "VECIN";
    case TPosition::VECOUT: return "VECOUT";
    case TPosition::VECCALC: return "VECCALC";
    case TPosition::SPM: return "SPM";
    case TPosition::TSCM: return "TSCM";
    default: return "?";
  }
}

const char* MemName(MemKind m) {
  static const char* const kNames[kMemKinds] = {"Unified Buffer", "L1 buffer", "L0A buffer", "L0B buffer",
                                                "L0C buffer", "bias table"};
  return m >= 0 && m < kMemKinds ? kNames[m] : "?";
}

std::string Describe(const BufferInfo* info, const void* data, TPosition pos) {
  const Block& b = t_block;
  MemKind m = MemOf(pos);
  long long off = b.mem[m].base ? static_cast<long long>(static_cast<const uint8_t*>(data) - b.mem[m].base) : -1;
  if (!info) return Format("%s at %s offset %lld", PositionName(pos), MemName(m), off);
  long long in_buf = static_cast<long long>(static_cast<const uint8_t*>(data) - info->base);
  return Format("%s #%d buffer %d (%s, %u bytes at %s offset %lld)%s", info->kind, info->owner, info->index,
                PositionName(info->pos), info->bytes, MemName(m), off - in_buf,
                in_buf ? Format(" + %lld bytes", in_buf).c_str() : "");
}

uint64_t GmExtent(const void* p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> lock(g_gm_mu);
    auto it = g_gm.upper_bound(a);
    if (it != g_gm.begin()) {
      --it;
      if (a < it->first + it->second) return it->first + it->second - a;
    }
  }
  return aclrtOcMemExtent(p);
}

std::string DescribeGm(const void* p) {
  const Block& b = t_block;
  if (b.call && b.call->args) {
    std::vector<std::string> names = SplitArgNames(b.call->arg_names);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (int i = 0; i < b.call->nargs; ++i) {
      uintptr_t base = reinterpret_cast<uintptr_t>(b.call->args[i]);
      if (!base || a < base) continue;
      uint64_t extent = GmExtent(b.call->args[i]);
      if (extent ? a < base + extent : a == base) {
        std::string name = i < static_cast<int>(names.size()) ? "'" + names[i] + "'" : Format("%d", i);
        return a == base ? Format("kernel argument %s", name.c_str())
                         : Format("kernel argument %s + %llu bytes", name.c_str(),
                                  static_cast<unsigned long long>(a - base));
      }
    }
  }
  return Format("%p", p);
}

std::vector<std::string> SplitArgNames(const char* names) {
  std::vector<std::string> out;
  if (!names) return out;
  std::string cur;
  int depth = 0;
  for (const char* c = names;; ++c) {
    if (*c == '\0' || (*c == ',' && depth == 0)) {
      size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
      out.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
      cur.clear();
      if (*c == '\0') break;
      continue;
    }
    if (*c == '(' || *c == '[' || *c == '{') ++depth;
    if (*c == ')' || *c == ']' || *c == '}') --depth;
    cur += *c;
  }
  return out;
}

void ExitWithError(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "[ERROR] %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(EXIT_FAILURE);
}

}  // namespace ocimpl

void SetSysWorkspace(GM_ADDR workspace) { ocimpl::Current().workspace = workspace; }
void SetKernelMode(KernelMode) {}

void* GmAlloc(size_t size) {
  size_t bytes = (std::max<size_t>(size, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) return nullptr;
  std::lock_guard<std::mutex> lock(ocimpl::g_gm_mu);
  ocimpl::g_gm[reinterpret_cast<uintptr_t>(p)] = size;
  return p;
}

void GmFree(void* ptr) {
  if (!ptr) return;
  {
    std::lock_guard<std::mutex> lock(ocimpl::g_gm_mu);
    auto it = ocimpl::g_gm.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == ocimpl::g_gm.end()) {
      std::fprintf(stderr, "[ERROR] AscendC::GmFree: %p was not returned by GmAlloc (or is already freed)\n", ptr);
      return;
    }
    ocimpl::g_gm.erase(it);
  }
  std::free(ptr);
}

}  // namespace AscendC

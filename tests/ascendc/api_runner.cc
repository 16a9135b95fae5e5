// Runs one Ascend C vector API call inside a one-block kernel, for
// tests/python/test_ascendc.py, which checks it against numpy:
//   ascendc_api_runner OP FORM DTYPE [key=value ...] in0.bin in1.bin out.bin
// OP is the API's name; FORM count | mask (continuous) | bits (bit mask).
// Keys: count, n0, n1, nout (elements of the local buffers), mask, mask0, mask1,
// repeat, dblk, s0blk, s1blk, drep, s0rep, s1rep, scalar, round, cmp, sel,
// index, dst (Cast's destination type). Inputs are raw little-endian arrays.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tikicpulib.h"

using namespace AscendC;

namespace {

std::map<std::string, std::string> g_kv;
std::string g_op, g_form, g_dtype;

double Num(const char* k, double def = 0) {
  auto it = g_kv.find(k);
  return it == g_kv.end() ? def : std::strtod(it->second.c_str(), nullptr);
}
uint64_t U64(const char* k, uint64_t def = 0) {
  auto it = g_kv.find(k);
  return it == g_kv.end() ? def : std::strtoull(it->second.c_str(), nullptr, 0);
}
std::string Str(const char* k, const char* def = "") {
  auto it = g_kv.find(k);
  return it == g_kv.end() ? def : it->second;
}

size_t SizeOf(const std::string& t) {
  if (t == "float" || t == "int32" || t == "uint32") return 4;
  if (t == "half" || t == "bfloat16" || t == "int16" || t == "uint16") return 2;
  if (t == "int8" || t == "uint8") return 1;
  if (t == "int64") return 8;
  std::fprintf(stderr, "unknown dtype %s\n", t.c_str());
  std::exit(2);
}

template <typename F>
void WithType(const std::string& t, F f) {
  if (t == "float") f(float{});
  else if (t == "half") f(half{});
  else if (t == "bfloat16") f(bfloat16_t{});
  else if (t == "int8") f(int8_t{});
  else if (t == "uint8") f(uint8_t{});
  else if (t == "int16") f(int16_t{});
  else if (t == "uint16") f(uint16_t{});
  else if (t == "int32") f(int32_t{});
  else if (t == "uint32") f(uint32_t{});
  else if (t == "int64") f(int64_t{});
  else {
    std::fprintf(stderr, "unknown dtype %s\n", t.c_str());
    std::exit(2);
  }
}

RoundMode Round() {
  static const std::map<std::string, RoundMode> m = {
      {"none", RoundMode::CAST_NONE}, {"rint", RoundMode::CAST_RINT}, {"floor", RoundMode::CAST_FLOOR},
      {"ceil", RoundMode::CAST_CEIL}, {"round", RoundMode::CAST_ROUND}, {"trunc", RoundMode::CAST_TRUNC},
      {"odd", RoundMode::CAST_ODD}};
  return m.at(Str("round", "none"));
}
CMPMODE Cmp() {
  static const std::map<std::string, CMPMODE> m = {{"lt", CMPMODE::LT}, {"gt", CMPMODE::GT}, {"eq", CMPMODE::EQ},
                                                   {"le", CMPMODE::LE}, {"ge", CMPMODE::GE}, {"ne", CMPMODE::NE}};
  return m.at(Str("cmp", "lt"));
}

BinaryRepeatParams BinParams() {
  return BinaryRepeatParams(U64("dblk", 1), U64("s0blk", 1), U64("s1blk", 1), U64("drep", 8), U64("s0rep", 8),
                            U64("s1rep", 8));
}
UnaryRepeatParams UnParams() {
  return UnaryRepeatParams(U64("dblk", 1), U64("s0blk", 1), U64("drep", 8), U64("s0rep", 8));
}

// Runs the binary op `op` on typed tensors in the chosen form.
#define BINARY_CASE(Name)                                                                  \
  if (g_op == #Name) {                                                                     \
    if (g_form == "count") Name(d, a, b, static_cast<int32_t>(U64("count")));              \
    else if (g_form == "mask") Name(d, a, b, U64("mask"), U64("repeat"), BinParams());     \
    else Name(d, a, b, masks, U64("repeat"), BinParams());                                 \
    return true;                                                                           \
  }
#define SCALAR_CASE(Name)                                                                  \
  if (g_op == #Name) {                                                                     \
    if (g_form == "count") Name(d, a, s, static_cast<int32_t>(U64("count")));              \
    else if (g_form == "mask") Name(d, a, s, U64("mask"), U64("repeat"), UnParams());      \
    else Name(d, a, s, masks, U64("repeat"), UnParams());                                  \
    return true;                                                                           \
  }
#define UNARY_CASE(Name)                                                                   \
  if (g_op == #Name) {                                                                     \
    if (g_form == "count") Name(d, a, static_cast<int32_t>(U64("count")));                 \
    else if (g_form == "mask") Name(d, a, U64("mask"), U64("repeat"), UnParams());         \
    else Name(d, a, masks, U64("repeat"), UnParams());                                     \
    return true;                                                                           \
  }

template <typename T>
bool RunTyped(const LocalTensor<uint8_t>& in0, const LocalTensor<uint8_t>& in1, const LocalTensor<uint8_t>& out) {
  LocalTensor<T> a = in0.ReinterpretCast<T>(), b = in1.ReinterpretCast<T>(), d = out.ReinterpretCast<T>();
  uint64_t masks[2] = {U64("mask0"), U64("mask1")};
  T s = static_cast<T>(Num("scalar"));
  constexpr bool kInt = std::is_integral_v<T>;
  constexpr bool kFloat = !kInt;
  constexpr bool kWide = sizeof(T) >= 2;
  if constexpr (kWide) {
    BINARY_CASE(Add) BINARY_CASE(Sub) BINARY_CASE(Mul) BINARY_CASE(Max) BINARY_CASE(Min)
    BINARY_CASE(AddRelu) BINARY_CASE(SubRelu)
    SCALAR_CASE(Adds) SCALAR_CASE(Muls) SCALAR_CASE(Maxs) SCALAR_CASE(Mins)
    UNARY_CASE(Relu)
    if (g_op == "Duplicate") {
      if (g_form == "count") Duplicate(d, s, static_cast<int32_t>(U64("count")));
      else if (g_form == "mask") Duplicate(d, s, U64("mask"), U64("repeat"), U64("dblk", 1), U64("drep", 8));
      else Duplicate(d, s, masks, U64("repeat"), U64("dblk", 1), U64("drep", 8));
      return true;
    }
  }
  if constexpr (kFloat) {
    BINARY_CASE(Div)
    SCALAR_CASE(LeakyRelu)
    UNARY_CASE(Exp) UNARY_CASE(Ln) UNARY_CASE(Abs) UNARY_CASE(Sqrt) UNARY_CASE(Rsqrt) UNARY_CASE(Reciprocal)
    if (g_op == "MulAddDst") {
      MulAddDst(d, a, b, static_cast<int32_t>(U64("count")));
      return true;
    }
    if (g_op == "Axpy") {
      Axpy(d, a, s, static_cast<int32_t>(U64("count")));
      return true;
    }
  }
  if constexpr (kInt && kWide) {
    BINARY_CASE(And) BINARY_CASE(Or)
    UNARY_CASE(Not)
    SCALAR_CASE(ShiftLeft) SCALAR_CASE(ShiftRight)
  }
  if (g_op == "CreateVecIndex") {
    CreateVecIndex(d, s, U64("count"));
    return true;
  }
  if constexpr (kWide) {
    uint32_t n = U64("count");
    if (g_op == "Compare") {
      Compare(out, a, b, Cmp(), n);
      return true;
    }
    if (g_op == "CompareScalar") {
      CompareScalar(out, a, s, Cmp(), n);
      return true;
    }
    if (g_op == "Select") {  // in1 holds src1 then, 256 bytes on, the mask
      LocalTensor<uint8_t> sel = in1[U64("maskat")];
      if (Str("sel") == "scalar") Select(d, sel, a, s, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
      else Select(d, sel, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
      return true;
    }
    if (g_op == "ReduceSum") {
      ReduceSum(d, a, b, static_cast<int32_t>(n));
      return true;
    }
    if (g_op == "ReduceMax") {
      ReduceMax(d, a, b, static_cast<int32_t>(n), U64("index") != 0);
      return true;
    }
    if (g_op == "ReduceMin") {
      ReduceMin(d, a, b, static_cast<int32_t>(n), U64("index") != 0);
      return true;
    }
    if (g_op == "WholeReduceSum") {
      WholeReduceSum(d, a, static_cast<int32_t>(U64("mask")), static_cast<int32_t>(U64("repeat")),
                     static_cast<int32_t>(U64("drep", 1)), static_cast<int32_t>(U64("s0blk", 1)),
                     static_cast<int32_t>(U64("s0rep", 8)));
      return true;
    }
  }
  if (g_op == "DataCopyParams") {  // local -> local, blocks and gaps in 32-byte units
    DataCopy(d, a, DataCopyParams(U64("bcount"), U64("blen"), U64("sstride"), U64("dstride")));
    return true;
  }
  if (g_op == "Cast") {
    bool done = false;
    WithType(Str("dst"), [&](auto dv) {
      using D = decltype(dv);
      Cast(out.ReinterpretCast<D>(), a, Round(), static_cast<uint32_t>(U64("count")));
      done = true;
    });
    return done;
  }
  return false;
}

struct Buffers {
  uint8_t* in0;
  uint8_t* in1;
  uint8_t* out;
  size_t b0, b1, bout;
};
Buffers g_buf;
bool g_ran = false;

size_t Align32(size_t n) { return (n + 31) / 32 * 32; }

extern "C" __global__ __aicore__ void api_kernel(GM_ADDR in0, GM_ADDR in1, GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> t0, t1, t2;
  pipe.InitBuffer(t0, Align32(g_buf.b0));
  pipe.InitBuffer(t1, Align32(g_buf.b1));
  pipe.InitBuffer(t2, Align32(g_buf.bout));
  LocalTensor<uint8_t> a = t0.Get<uint8_t>(), b = t1.Get<uint8_t>(), d = t2.Get<uint8_t>();
  GlobalTensor<uint8_t> g0, g1, go;
  g0.SetGlobalBuffer(in0, Align32(g_buf.b0));
  g1.SetGlobalBuffer(in1, Align32(g_buf.b1));
  go.SetGlobalBuffer(out, Align32(g_buf.bout));
  DataCopy(a, g0, Align32(g_buf.b0));
  DataCopy(b, g1, Align32(g_buf.b1));
  DataCopy(d, go, Align32(g_buf.bout));  // the output's old contents: masked-off elements keep them
  if (g_op == "DataCopyPadIn" || g_op == "DataCopyPadOut") {  // global <-> local of any byte length
    WithType(g_dtype, [&](auto v) {
      using T = decltype(v);
      GlobalTensor<T> src, dst;
      src.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(in0), g_buf.b0 / sizeof(T));
      dst.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out), g_buf.bout / sizeof(T));
      DataCopyExtParams p(U64("bcount"), U64("blen"), U64("sstride"), U64("dstride"), 0);
      if (g_op == "DataCopyPadIn") {
        DataCopyPadExtParams<T> pad(U64("ispad") != 0, U64("left"), U64("right"), static_cast<T>(Num("scalar")));
        DataCopyPad(d.ReinterpretCast<T>(), src, p, pad);
      } else {
        DataCopyPad(dst, a.ReinterpretCast<T>(), p);
      }
    });
    g_ran = true;
    if (g_op == "DataCopyPadOut") return;
  } else {
    WithType(g_dtype, [&](auto v) { g_ran = RunTyped<decltype(v)>(a, b, d); });
  }
  DataCopy(go, d, Align32(g_buf.bout));
}

std::vector<uint8_t> Read(const char* path) {
  FILE* f = std::fopen(path, "rb");
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path);
    std::exit(2);
  }
  std::vector<uint8_t> v;
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s OP FORM DTYPE [key=value...] in0.bin in1.bin out.bin\n", argv[0]);
    return 2;
  }
  g_op = argv[1];
  g_form = argv[2];
  g_dtype = argv[3];
  for (int i = 4; i < argc - 3; ++i) {
    std::string kv = argv[i];
    size_t eq = kv.find('=');
    if (eq == std::string::npos) return 2;
    g_kv[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<uint8_t> a = Read(argv[argc - 3]), b = Read(argv[argc - 2]), o = Read(argv[argc - 1]);
  g_buf.b0 = a.size();
  g_buf.b1 = b.size();
  g_buf.bout = o.size();
  auto* ga = static_cast<uint8_t*>(GmAlloc(Align32(a.size())));
  auto* gb = static_cast<uint8_t*>(GmAlloc(Align32(b.size())));
  auto* go = static_cast<uint8_t*>(GmAlloc(Align32(o.size())));
  std::memcpy(ga, a.data(), a.size());
  std::memcpy(gb, b.data(), b.size());
  std::memcpy(go, o.data(), o.size());
  ICPU_RUN_KF(api_kernel, 1, ga, gb, go);
  if (!g_ran) {
    std::fprintf(stderr, "no case for %s %s %s\n", g_op.c_str(), g_form.c_str(), g_dtype.c_str());
    return 3;
  }
  FILE* f = std::fopen(argv[argc - 1], "wb");
  std::fwrite(go, 1, o.size(), f);
  std::fclose(f);
  GmFree(ga);
  GmFree(gb);
  GmFree(go);
  return 0;
}
